//! Matrix Market coordinate files (`.mtx`).
//!
//! Orientation: entry `(i, j)` (1-based) is the edge `j -> i`: row `i` is the destination and
//! column `j` the source, so an `M x N` matrix is a graph with `M` destination and `N` source
//! nodes. Fields `pattern`, `real`/`double`, `integer` and `complex` are read (values are checked
//! for form and then dropped); `general` keeps entries as they are, `symmetric`,
//! `skew-symmetric` and `hermitian` add the mirrored entry `(j, i)` for every off-diagonal entry
//! (the diagonal once). Rows keep the order of the entries. The writer emits
//! `pattern general`.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use super::Edges;
use super::text::{LineChunks, is_blank, parse_uint, skip_blanks, token, write_pairs};
use crate::csr::{Csr, MAX_NODES};
use crate::error::{GraphError, Result};

/// Reads a Matrix Market file.
///
/// # Errors
/// [`GraphError::Io`] or [`GraphError::Text`] naming the file and line.
pub fn read(path: impl AsRef<Path>) -> Result<Csr> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| GraphError::io(&name, e))?;
    read_from(file, &name)
}

#[derive(Clone, Copy, PartialEq)]
enum Field {
    Pattern,
    Real,
    Integer,
    Complex,
}

/// What the parser expects next.
enum State {
    Banner,
    Size,
    Entries { rows: u64, cols: u64, expected: u64 },
}

/// Reads a Matrix Market stream with the default [`super::ReadOptions`]; `name` is used in
/// error messages.
///
/// # Errors
/// [`GraphError::Io`] or [`GraphError::Text`] naming `name` and the line;
/// [`GraphError::SparseIds`] for a size line far above the entry count.
pub fn read_from<R: Read>(reader: R, name: &str) -> Result<Csr> {
    Ok(read_edges(reader, name)?.finish(name, &super::ReadOptions::default())?.graph)
}

/// Parses the entries. The size line's counts are promises: the edge vector grows with the
/// entries actually read, and the node counts are checked when the graph is built.
pub(crate) fn read_edges<R: Read>(reader: R, name: &str) -> Result<Edges> {
    let mut chunks = LineChunks::new(reader);
    let mut state = State::Banner;
    let mut field = Field::Pattern;
    let mut symmetric = false;
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut entries = 0u64;
    let mut line_no = 0u64;
    let err = |line: u64, msg: String| GraphError::text(name, line, msg);
    while let Some(chunk) = chunks.next_chunk().map_err(|e| GraphError::io(name, e))? {
        let body = chunk.strip_suffix(b"\n").unwrap_or(chunk);
        for line in body.split(|&b| b == b'\n') {
            line_no += 1;
            match state {
                State::Banner => {
                    (field, symmetric) = parse_banner(line).map_err(|m| err(line_no, m))?;
                    state = State::Size;
                }
                State::Size => {
                    let mut pos = 0;
                    skip_blanks(line, &mut pos);
                    if pos == line.len() || line[pos] == b'%' {
                        continue;
                    }
                    let mut next = |what| {
                        skip_blanks(line, &mut pos);
                        parse_uint(line, &mut pos, what).map_err(|m| err(line_no, m))
                    };
                    let (rows, cols, expected) = (next("row count")?, next("column count")?, next("entry count")?);
                    skip_blanks(line, &mut pos);
                    if pos != line.len() {
                        return Err(err(line_no, format!("unexpected {} after the size line", token(line, pos))));
                    }
                    if rows > MAX_NODES || cols > MAX_NODES {
                        return Err(err(line_no, format!("{rows} x {cols} exceeds 2^32 nodes (u32 ids)")));
                    }
                    if symmetric && rows != cols {
                        return Err(err(line_no, format!("a symmetric matrix must be square, got {rows} x {cols}")));
                    }
                    edges.reserve(expected.min(1 << 16) as usize);
                    state = State::Entries { rows, cols, expected };
                }
                State::Entries { rows, cols, expected } => {
                    let mut pos = 0;
                    skip_blanks(line, &mut pos);
                    if pos == line.len() || line[pos] == b'%' {
                        continue;
                    }
                    if entries == expected {
                        return Err(err(line_no, format!("more entries than the {expected} announced")));
                    }
                    let i = parse_uint(line, &mut pos, "row index").map_err(|m| err(line_no, m))?;
                    skip_blanks(line, &mut pos);
                    let j = parse_uint(line, &mut pos, "column index").map_err(|m| err(line_no, m))?;
                    if i == 0 || i > rows || j == 0 || j > cols {
                        return Err(err(
                            line_no,
                            format!("entry ({i}, {j}) is outside the 1-based {rows} x {cols} matrix"),
                        ));
                    }
                    check_values(line, pos, field).map_err(|m| err(line_no, m))?;
                    entries += 1;
                    let (dst, src) = ((i - 1) as u32, (j - 1) as u32);
                    edges.push((dst, src));
                    if symmetric && dst != src {
                        edges.push((src, dst));
                    }
                }
            }
        }
    }
    match state {
        State::Banner => Err(err(1, "empty file: missing the %%MatrixMarket banner".into())),
        State::Size => Err(err(line_no, "missing the size line".into())),
        State::Entries { rows, cols, expected } => {
            if entries != expected {
                return Err(err(line_no, format!("file ends after {entries} of {expected} entries")));
            }
            Ok(Edges { num_dst: rows, num_src: cols, parts: vec![edges], sort_rows: false })
        }
    }
}

/// Parses `%%MatrixMarket matrix coordinate <field> <symmetry>`.
fn parse_banner(line: &[u8]) -> std::result::Result<(Field, bool), String> {
    let text = String::from_utf8_lossy(line).to_ascii_lowercase();
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        ["%%matrixmarket", "matrix", "coordinate", field, symmetry] => {
            let field = match *field {
                "pattern" => Field::Pattern,
                "real" | "double" => Field::Real,
                "integer" => Field::Integer,
                "complex" => Field::Complex,
                other => return Err(format!("unsupported field {other:?}")),
            };
            let symmetric = match *symmetry {
                "general" => false,
                "symmetric" | "skew-symmetric" | "hermitian" => true,
                other => return Err(format!("unsupported symmetry {other:?}")),
            };
            Ok((field, symmetric))
        }
        ["%%matrixmarket", "matrix", "array", ..] => {
            Err("dense (array) matrices are not graphs; need coordinate".into())
        }
        _ => Err(format!(
            "expected \"%%MatrixMarket matrix coordinate <field> <symmetry>\", found {}",
            crate::error::preview(line)
        )),
    }
}

/// Checks that the rest of an entry line holds the values its field needs.
fn check_values(line: &[u8], mut pos: usize, field: Field) -> std::result::Result<(), String> {
    let wanted = match field {
        Field::Pattern => 0,
        Field::Real | Field::Integer => 1,
        Field::Complex => 2,
    };
    for k in 0..wanted {
        skip_blanks(line, &mut pos);
        let start = pos;
        while pos < line.len() && !is_blank(line[pos]) {
            pos += 1;
        }
        let text = std::str::from_utf8(&line[start..pos]).unwrap_or("");
        let ok = match field {
            Field::Integer => text.parse::<i64>().is_ok(),
            _ => text.parse::<f64>().is_ok(),
        };
        if !ok {
            return Err(if start == pos {
                format!("missing value {} of the entry", k + 1)
            } else {
                format!("value {} is not a number", token(line, start))
            });
        }
    }
    skip_blanks(line, &mut pos);
    if pos != line.len() {
        return Err(format!("unexpected {} after the entry", token(line, pos)));
    }
    Ok(())
}

/// Writes a Matrix Market file.
///
/// # Errors
/// [`GraphError::Io`] naming the file.
pub fn write(path: impl AsRef<Path>, g: &Csr) -> Result<()> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::create(path).map_err(|e| GraphError::io(&name, e))?;
    write_to(file, g).map_err(|e| GraphError::io(&name, e))
}

/// Writes `pattern general` coordinates, one entry `dst+1 src+1` per edge in edge-id order.
///
/// # Errors
/// Any I/O error of the writer.
pub fn write_to<W: Write>(writer: W, g: &Csr) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, writer);
    writeln!(w, "%%MatrixMarket matrix coordinate pattern general")?;
    writeln!(w, "% written by dfgnn-graphs: row = destination node, column = source node")?;
    writeln!(w, "{} {} {}", g.num_dst(), g.num_src(), g.nnz())?;
    write_pairs(&mut w, g.edges().map(|(dst, src)| (dst as u64 + 1, src as u64 + 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Csr> {
        read_from(text.as_bytes(), "m.mtx")
    }

    #[test]
    fn reads_general_and_symmetric() {
        let g = parse("%%MatrixMarket matrix coordinate real general\n% c\n3 2 3\n1 2 0.5\n3 1 -1e3\n1 1 2\n").unwrap();
        assert_eq!((g.num_dst(), g.num_src()), (3, 2));
        assert_eq!(g.row(0), &[1, 0]);
        assert_eq!(g.row(2), &[0]);
        let s = parse("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 3\n3 1\n").unwrap();
        assert_eq!(s.row(0), &[1, 2]);
        assert_eq!(s.row(1), &[0]);
        assert_eq!(s.row(2), &[2, 0], "the diagonal entry once");
        let c = parse("%%MatrixMarket MATRIX Coordinate complex hermitian\n2 2 1\n2 1 1.0 -2\n").unwrap();
        assert_eq!(c.nnz(), 2);
        let i = parse("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 -7\n").unwrap();
        assert_eq!(i.nnz(), 1);
    }

    #[test]
    fn malformed_input_names_the_line() {
        for (text, line, needle) in [
            ("", 1, "banner"),
            ("%%MatrixMarket matrix array real general\n", 1, "array"),
            ("%%MatrixMarket matrix coordinate real weird\n", 1, "symmetry"),
            ("%%MatrixMarket matrix coordinate real general\n", 1, "size line"),
            ("%%MatrixMarket matrix coordinate real general\n2 2\n", 2, "entry count"),
            ("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", 3, "outside"),
            ("%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n", 3, "outside"),
            ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 abc\n", 3, "\"abc\""),
            ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", 3, "missing value"),
            ("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 5\n", 3, "unexpected"),
            ("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3, "not a number"),
            ("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1\n", 3, "1 of 2"),
            ("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n2 2\n", 4, "more entries"),
            ("%%MatrixMarket matrix coordinate pattern symmetric\n2 3 1\n", 2, "square"),
            ("%%MatrixMarket matrix coordinate pattern general\n2 x 1\n", 2, "\"x\""),
        ] {
            let e = parse(text).unwrap_err();
            let GraphError::Text { line: l, ref message, .. } = e else { panic!("{text:?}: {e}") };
            assert_eq!(l, line, "{text:?}: {e}");
            assert!(message.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn round_trip() {
        for (name, g) in crate::corner::all() {
            let mut bytes = Vec::new();
            write_to(&mut bytes, &g).unwrap();
            assert_eq!(read_from(&bytes[..], name).unwrap(), g, "{name}");
        }
    }
}
