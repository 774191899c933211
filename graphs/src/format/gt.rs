//! graph-tool's binary `.gt` format (and `.gt.gz`), as documented by graph-tool ("The gt file
//! format").
//!
//! Layout: the magic `⛾ gt` (6 bytes), version 1, an endianness byte (0 little, 1 big), a
//! comment string, a directed flag, the vertex count `N` (u64), then per vertex its out-degree
//! (u64) and out-neighbours, each in the smallest unsigned width that holds `N - 1` (1 byte when
//! `N < 2^8`, 2 when `N < 2^16`, 4 when `N < 2^32`, else 8). Property maps follow: a u64 count,
//! then per map a key type (0 graph, 1 vertex, 2 edge), a name, a value type (0 bool ... 14
//! python object) and the values (1, N or E of them). Strings and vectors are a u64 length and
//! the elements.
//!
//! Orientation: vertex `v` listing `t` is the edge `v -> t`, so `t` is the destination row and
//! `v` its column. Undirected graphs store each edge once; the reader adds both directions (a
//! self loop once). Property maps are parsed (so a malformed file is caught) and dropped, except
//! the graph properties `dfgnn_num_dst` and `dfgnn_num_src` (int64) that the writer adds to keep
//! a bipartite shape. The reader returns rows sorted by source (the file's vertex order).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use super::Edges;
use crate::csr::{Csr, MAX_NODES};
use crate::error::{GraphError, Result};
use crate::limits::Limits;

/// The magic string `⛾ gt` in UTF-8.
const MAGIC: &[u8] = b"\xe2\x9b\xbe gt";
/// The graph property names that carry a bipartite shape.
const NUM_DST: &str = "dfgnn_num_dst";
const NUM_SRC: &str = "dfgnn_num_src";

/// Reads a `.gt` file.
///
/// # Errors
/// [`GraphError::Io`] or [`GraphError::Binary`] naming the file and byte offset.
pub fn read(path: impl AsRef<Path>) -> Result<Csr> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| GraphError::io(&name, e))?;
    read_from(file, &name)
}

/// A byte stream with position tracking and the file's endianness.
struct Input<R> {
    reader: BufReader<R>,
    offset: u64,
    big_endian: bool,
    file: String,
    scratch: Vec<u8>,
    limits: Limits,
}

impl<R: Read> Input<R> {
    fn bad(&self, offset: u64, msg: impl Into<String>) -> GraphError {
        GraphError::binary(&self.file, offset, msg)
    }

    /// Fills `scratch` with the next `n` bytes.
    fn fill(&mut self, n: usize, what: &str) -> Result<()> {
        self.scratch.clear();
        let got = (&mut self.reader)
            .take(n as u64)
            .read_to_end(&mut self.scratch)
            .map_err(|e| GraphError::io(&self.file, e))?;
        if got < n {
            return Err(self.bad(self.offset + got as u64, format!("truncated file while reading {what}")));
        }
        self.offset += n as u64;
        Ok(())
    }

    fn uint(&mut self, width: usize, what: &str) -> Result<u64> {
        self.fill(width, what)?;
        Ok(decode(&self.scratch, self.big_endian))
    }

    fn u8(&mut self, what: &str) -> Result<u8> {
        self.fill(1, what)?;
        Ok(self.scratch[0])
    }

    /// Skips `n` bytes, in bounded steps so a bogus length cannot exhaust memory.
    fn skip(&mut self, mut n: u64, what: &str) -> Result<()> {
        while n > 0 {
            let step = n.min(1 << 20);
            let got = io::copy(&mut (&mut self.reader).take(step), &mut io::sink())
                .map_err(|e| GraphError::io(&self.file, e))?;
            self.offset += got;
            if got < step {
                return Err(self.bad(self.offset, format!("truncated file while skipping {what}")));
            }
            n -= step;
        }
        Ok(())
    }

    fn string(&mut self, what: &str) -> Result<Vec<u8>> {
        let at = self.offset;
        let len = self.uint(8, what)?;
        if len > 1 << 32 || self.limits.check("a .gt string", len).is_err() {
            return Err(self.bad(at, format!("{what} claims {len} bytes")));
        }
        self.fill(len as usize, what)?;
        Ok(std::mem::take(&mut self.scratch))
    }
}

/// Decodes an unsigned integer of 1 to 8 bytes.
fn decode(bytes: &[u8], big_endian: bool) -> u64 {
    let fold = |acc: u64, &b: &u8| (acc << 8) | b as u64;
    if big_endian { bytes.iter().fold(0, fold) } else { bytes.iter().rev().fold(0, fold) }
}

/// The adjacency width graph-tool uses for `n` vertices.
fn width(n: u64) -> usize {
    match n {
        n if n < 1 << 8 => 1,
        n if n < 1 << 16 => 2,
        n if n < 1 << 32 => 4,
        _ => 8,
    }
}

/// Reads a `.gt` stream (uncompressed) with the default [`super::ReadOptions`]; `name` is used
/// in error messages.
///
/// # Errors
/// [`GraphError::Io`] or [`GraphError::Binary`] naming `name` and the byte offset.
pub fn read_from<R: Read>(reader: R, name: &str) -> Result<Csr> {
    let options = super::ReadOptions::default();
    Ok(read_edges(reader, name, &options.limits)?.finish(name, &options)?.graph)
}

/// Parses the file. Declared lengths are promises: vectors grow with the bytes actually read,
/// and a string longer than the budget is refused before it is read.
pub(crate) fn read_edges<R: Read>(reader: R, name: &str, limits: &Limits) -> Result<Edges> {
    let mut input = Input {
        reader: BufReader::with_capacity(1 << 20, reader),
        offset: 0,
        big_endian: false,
        file: name.to_string(),
        scratch: Vec::new(),
        limits: *limits,
    };
    input.fill(6, "the magic string")?;
    if input.scratch != MAGIC {
        return Err(input.bad(0, "not a graph-tool file (missing the \"\u{26fe} gt\" magic)"));
    }
    let version = input.u8("the version")?;
    if version != 1 {
        return Err(input.bad(6, format!("unsupported gt version {version}")));
    }
    input.big_endian = match input.u8("the endianness")? {
        0 => false,
        1 => true,
        b => return Err(input.bad(7, format!("bad endianness byte {b}"))),
    };
    input.string("the comment")?;
    let at = input.offset;
    let directed = match input.u8("the directed flag")? {
        0 => false,
        1 => true,
        b => return Err(input.bad(at, format!("bad directed flag {b}"))),
    };
    let at = input.offset;
    let n = input.uint(8, "the vertex count")?;
    if n > MAX_NODES {
        return Err(input.bad(at, format!("{n} vertices exceed 2^32 (u32 ids)")));
    }
    let w = width(n);
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut stored = 0u64;
    for v in 0..n {
        let at = input.offset;
        let degree = input.uint(8, "an out-degree")?;
        if degree > 1 << 40 {
            return Err(input.bad(at, format!("vertex {v} claims {degree} out-edges")));
        }
        let mut left = degree;
        while left > 0 {
            let step = left.min(1 << 16);
            let list_at = input.offset;
            input.fill(step as usize * w, "an adjacency list")?;
            for (k, raw) in input.scratch.chunks_exact(w).enumerate() {
                let t = decode(raw, input.big_endian);
                if t >= n {
                    return Err(input.bad(
                        list_at + (k * w) as u64,
                        format!("vertex {v} lists neighbour {t}, but there are {n} vertices"),
                    ));
                }
                edges.push((t as u32, v as u32));
                if !directed && t != v {
                    edges.push((v as u32, t as u32));
                }
            }
            left -= step;
        }
        stored += degree;
    }
    let shape = read_properties(&mut input, n, stored)?;
    let mut probe = [0u8; 1];
    if input.reader.read(&mut probe).map_err(|e| GraphError::io(name, e))? != 0 {
        return Err(input.bad(input.offset, "trailing data after the property maps"));
    }
    let (num_dst, num_src) = shape.unwrap_or((n, n));
    Ok(Edges { num_dst, num_src, parts: vec![edges], sort_rows: !directed })
}

/// Parses (and drops) the property maps; returns the dfgnn shape if both properties are there.
fn read_properties<R: Read>(input: &mut Input<R>, n: u64, edges: u64) -> Result<Option<(u64, u64)>> {
    let count = input.uint(8, "the property map count")?;
    let (mut num_dst, mut num_src) = (None, None);
    for _ in 0..count {
        let at = input.offset;
        let key = input.u8("a property key type")?;
        let values = match key {
            0 => 1,
            1 => n,
            2 => edges,
            k => return Err(input.bad(at, format!("bad property key type {k}"))),
        };
        let name = String::from_utf8_lossy(&input.string("a property name")?).into_owned();
        let at = input.offset;
        let value_type = input.u8("a property value type")?;
        if key == 0 && value_type == 3 && (name == NUM_DST || name == NUM_SRC) {
            let v = input.uint(8, "a shape property")?;
            if v > MAX_NODES {
                return Err(input.bad(at + 1, format!("{name} = {v} exceeds 2^32")));
            }
            if name == NUM_DST {
                num_dst = Some(v)
            } else {
                num_src = Some(v)
            }
            continue;
        }
        skip_values(input, value_type, values, at)?;
    }
    let shape = num_dst.zip(num_src);
    if let Some((d, s)) = shape
        && d.max(s) != n
    {
        return Err(input.bad(input.offset, format!("shape {d} x {s} does not match {n} vertices")));
    }
    Ok(shape)
}

/// Skips `count` values of a property value type.
fn skip_values<R: Read>(input: &mut Input<R>, value_type: u8, count: u64, at: u64) -> Result<()> {
    // Scalar sizes by type index: bool, int16, int32, int64, double, long double.
    const SCALAR: [u64; 6] = [1, 2, 4, 8, 8, 16];
    match value_type {
        0..=5 => input.skip(count.saturating_mul(SCALAR[value_type as usize]), "property values"),
        6 | 14 => (0..count).try_for_each(|_| input.string("a string value").map(drop)),
        7..=12 => (0..count).try_for_each(|_| {
            let len_at = input.offset;
            let len = input.uint(8, "a vector length")?;
            let size = SCALAR[(value_type - 7) as usize];
            let bytes =
                len.checked_mul(size).ok_or_else(|| input.bad(len_at, format!("vector length {len} is too large")))?;
            input.skip(bytes, "vector values")
        }),
        13 => (0..count).try_for_each(|_| {
            let len = input.uint(8, "a vector length")?;
            (0..len).try_for_each(|_| input.string("a string").map(drop))
        }),
        t => Err(input.bad(at, format!("bad property value type {t}"))),
    }
}

/// Writes a `.gt` file.
///
/// # Errors
/// [`GraphError::Io`] naming the file.
pub fn write(path: impl AsRef<Path>, g: &Csr) -> Result<()> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::create(path).map_err(|e| GraphError::io(&name, e))?;
    write_to(file, g).map_err(|e| GraphError::io(&name, e))
}

/// Writes a directed, little-endian graph with `max(num_dst, num_src)` vertices; vertex `j`
/// lists the destinations of its out-edges in CSR edge-id order. A bipartite graph also gets the
/// int64 graph properties `dfgnn_num_dst` and `dfgnn_num_src`.
///
/// # Errors
/// Any I/O error of the writer.
pub fn write_to<W: Write>(writer: W, g: &Csr) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, writer);
    let n = g.num_dst().max(g.num_src()) as u64;
    let comment = format!(
        "written by dfgnn-graphs: {n} vertices, {} edges, directed (edge v -> t stored at v; t is the CSR row)",
        g.nnz()
    );
    w.write_all(MAGIC)?;
    w.write_all(&[1, 0])?;
    w.write_all(&(comment.len() as u64).to_le_bytes())?;
    w.write_all(comment.as_bytes())?;
    w.write_all(&[1])?;
    w.write_all(&n.to_le_bytes())?;
    let t = g.transpose();
    let width = width(n);
    let mut buf = Vec::with_capacity(1 << 16);
    for v in 0..n as usize {
        let column = if v < t.num_src() { t.column(v) } else { &[] };
        w.write_all(&(column.len() as u64).to_le_bytes())?;
        for chunk in column.chunks(1 << 14) {
            buf.clear();
            for &dst in chunk {
                buf.extend_from_slice(&(dst as u64).to_le_bytes()[..width]);
            }
            w.write_all(&buf)?;
        }
    }
    if g.is_square() {
        w.write_all(&0u64.to_le_bytes())?;
    } else {
        w.write_all(&2u64.to_le_bytes())?;
        for (name, value) in [(NUM_DST, g.num_dst()), (NUM_SRC, g.num_src())] {
            w.write_all(&[0])?;
            w.write_all(&(name.len() as u64).to_le_bytes())?;
            w.write_all(name.as_bytes())?;
            w.write_all(&[3])?;
            w.write_all(&(value as i64).to_le_bytes())?;
        }
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<Csr> {
        read_from(bytes, "t.gt")
    }

    /// The undirected 3-vertex file graph-tool 2.45 writes for edges (0, 2), (2, 1), (1, 1),
    /// with an empty comment.
    fn undirected_example() -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&0u64.to_le_bytes());
        b.push(0);
        b.extend_from_slice(&3u64.to_le_bytes());
        for (count, nbr) in [(1u64, 2u8), (1, 1), (1, 1)] {
            b.extend_from_slice(&count.to_le_bytes());
            b.push(nbr);
        }
        b.extend_from_slice(&0u64.to_le_bytes());
        b
    }

    #[test]
    fn reads_undirected_both_ways() {
        let g = parse(&undirected_example()).unwrap();
        assert_eq!(g.row(0), &[2]);
        assert_eq!(g.row(1), &[1, 2], "self loop once");
        assert_eq!(g.row(2), &[0, 1]);
    }

    #[test]
    fn round_trip_every_corner_case() {
        for (name, g) in crate::corner::all() {
            let mut bytes = Vec::new();
            write_to(&mut bytes, &g).unwrap();
            assert_eq!(parse(&bytes).unwrap(), g.sort_rows(), "{name}");
        }
        // 300 vertices need 2-byte neighbour ids.
        let g = crate::generate::erdos_renyi(300, 3.0, 1).unwrap();
        let mut bytes = Vec::new();
        write_to(&mut bytes, &g).unwrap();
        assert_eq!(parse(&bytes).unwrap(), g);
    }

    #[test]
    fn property_maps_are_parsed_and_skipped() {
        let mut b = undirected_example();
        b.truncate(b.len() - 8);
        b.extend_from_slice(&3u64.to_le_bytes());
        // Vertex property "label": strings.
        b.push(1);
        b.extend_from_slice(&5u64.to_le_bytes());
        b.extend_from_slice(b"label");
        b.push(6);
        for s in ["a", "bc", ""] {
            b.extend_from_slice(&(s.len() as u64).to_le_bytes());
            b.extend_from_slice(s.as_bytes());
        }
        // Edge property "w": vector<double>, one per stored edge (3).
        b.push(2);
        b.extend_from_slice(&1u64.to_le_bytes());
        b.push(b'w');
        b.push(11);
        for len in [0u64, 2, 1] {
            b.extend_from_slice(&len.to_le_bytes());
            b.extend(std::iter::repeat_n(0u8, 8 * len as usize));
        }
        // Graph property "v": long double.
        b.push(0);
        b.extend_from_slice(&1u64.to_le_bytes());
        b.push(b'v');
        b.push(5);
        b.extend_from_slice(&[0; 16]);
        assert_eq!(parse(&b).unwrap(), parse(&undirected_example()).unwrap());
        // Every truncation of this file is an error, never a panic.
        for cut in 0..b.len() {
            assert!(parse(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = b.clone();
        extra.push(0);
        assert!(parse(&extra).unwrap_err().to_string().contains("trailing"));
    }

    #[test]
    fn malformed_headers_and_ids() {
        let good = undirected_example();
        let with = |at: usize, byte: u8| {
            let mut b = good.clone();
            b[at] = byte;
            b
        };
        for (bytes, needle) in [
            (with(0, b'x'), "magic"),
            (with(6, 2), "version"),
            (with(7, 5), "endianness"),
            (with(16, 9), "directed flag"),
            (with(33, 7), "neighbour 7"),
            (with(good.len() - 8, 1), "truncated"),
        ] {
            let e = parse(&bytes).unwrap_err();
            assert!(e.to_string().contains(needle), "{needle}: {e}");
            assert!(e.to_string().contains("at byte"), "{e}");
        }
    }
}
