//! SNAP-style edge lists: one `src dst` pair per line, meaning the edge `src -> dst`, so `dst`
//! is the destination row and `src` its column.
//!
//! - Lines starting with `#` or `%` (after blanks) are comments; blank lines are skipped.
//! - Tokens are separated by any blanks (spaces, tabs, `\r`); columns after the second (weights,
//!   timestamps) are ignored.
//! - Ids are kept as given (no relabelling): the graph has `max id + 1` nodes, unless a comment
//!   line `# dfgnn: num_dst=<a> num_src=<b>` before the first edge gives the shape (the writer
//!   emits one, so bipartite graphs and trailing isolated nodes survive a round trip).
//! - Rows keep the order of the lines (a stable counting sort by destination).
//!
//! The reader parses 8 MiB chunks of whole lines on all cores with a hand-written byte parser;
//! pieces are joined in file order, so the result does not depend on the thread count.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use super::Edges;
use super::text::{LineChunks, parse_uint, skip_blanks, split_lines, write_pairs};
use crate::csr::{Csr, MAX_NODES};
use crate::error::{GraphError, Result};

/// The header comment that carries the shape.
const HEADER: &[u8] = b"# dfgnn:";

/// Reads an edge list file.
///
/// # Errors
/// [`GraphError::Io`] or [`GraphError::Text`] naming the file and line.
pub fn read(path: impl AsRef<Path>) -> Result<Csr> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| GraphError::io(&name, e))?;
    read_from(file, &name)
}

/// The per-piece result of the parser.
struct Piece {
    /// `(dst, src)` pairs in line order.
    edges: Vec<(u32, u32)>,
    /// Lines in the piece.
    lines: u64,
    /// The largest id seen.
    max_id: u64,
}

/// Reads an edge list from a stream with the default [`super::ReadOptions`]; `name` is used in
/// error messages.
///
/// # Errors
/// [`GraphError::Io`] or [`GraphError::Text`] naming `name` and the line;
/// [`GraphError::SparseIds`] for ids far above the edge count.
pub fn read_from<R: Read>(reader: R, name: &str) -> Result<Csr> {
    Ok(read_edges(reader, name)?.finish(name, &super::ReadOptions::default())?.graph)
}

/// Parses the edges: every vector the parser fills grows with the lines it has read, so memory
/// is bounded by the input; the node counts are checked when the graph is built.
pub(crate) fn read_edges<R: Read>(reader: R, name: &str) -> Result<Edges> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let mut chunks = LineChunks::new(reader);
    let mut parts: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut lines_before = 0u64;
    let mut max_id = 0u64;
    let mut any_edge = false;
    let mut shape: Option<(u64, u64)> = None;
    let mut first = true;
    while let Some(chunk) = chunks.next_chunk().map_err(|e| GraphError::io(name, e))? {
        if first {
            shape = leading_header(chunk).map_err(|(line, msg)| GraphError::text(name, line, msg))?;
            first = false;
        }
        let limits = shape.unwrap_or((MAX_NODES, MAX_NODES));
        let pieces = if chunk.len() < (1 << 20) { vec![chunk] } else { split_lines(chunk, threads) };
        let results: Vec<std::result::Result<Piece, (u64, String)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = pieces[1..].iter().map(|&p| scope.spawn(move || parse_piece(p, limits))).collect();
            let mut out = vec![parse_piece(pieces[0], limits)];
            out.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err((0, "edge list parser thread panicked".into())))),
            );
            out
        });
        for result in results {
            match result {
                Ok(piece) => {
                    any_edge |= !piece.edges.is_empty();
                    max_id = max_id.max(piece.max_id);
                    parts.push(piece.edges);
                    lines_before += piece.lines;
                }
                Err((line, message)) => {
                    return Err(GraphError::text(name, lines_before + line, message));
                }
            }
        }
    }
    let (num_dst, num_src) = match shape {
        Some((d, s)) => (d, s),
        None if any_edge => (max_id + 1, max_id + 1),
        None => (0, 0),
    };
    Ok(Edges { num_dst, num_src, parts, sort_rows: false })
}

/// Looks for a `# dfgnn: num_dst=<a> num_src=<b>` line among the leading comments and blank
/// lines.
fn leading_header(chunk: &[u8]) -> std::result::Result<Option<(u64, u64)>, (u64, String)> {
    for (k, line) in chunk.split(|&b| b == b'\n').enumerate() {
        let mut pos = 0;
        skip_blanks(line, &mut pos);
        let line = &line[pos..];
        if line.starts_with(HEADER) {
            return parse_header(&line[HEADER.len()..]).map(Some).map_err(|m| (k as u64 + 1, m));
        }
        if !(line.is_empty() || line[0] == b'#' || line[0] == b'%') {
            break;
        }
    }
    Ok(None)
}

/// Parses ` num_dst=<a> num_src=<b>`.
fn parse_header(rest: &[u8]) -> std::result::Result<(u64, u64), String> {
    let text = String::from_utf8_lossy(rest);
    let mut dst = None;
    let mut src = None;
    for field in text.split_whitespace() {
        let (key, value) = field.split_once('=').unwrap_or((field, ""));
        let value: u64 = value
            .parse()
            .ok()
            .filter(|&v| v <= MAX_NODES)
            .ok_or_else(|| format!("bad header field {field:?} (want a count <= 2^32)"))?;
        match key {
            "num_dst" => dst = Some(value),
            "num_src" => src = Some(value),
            _ => return Err(format!("unknown header field {field:?}")),
        }
    }
    dst.zip(src).ok_or_else(|| "the dfgnn header needs num_dst=<a> num_src=<b>".to_string())
}

/// Parses whole lines; ids must be below `limits = (num_dst, num_src)`. Errors carry the
/// 1-based line within the piece.
fn parse_piece(piece: &[u8], limits: (u64, u64)) -> std::result::Result<Piece, (u64, String)> {
    let mut edges = Vec::with_capacity(piece.len() / 10);
    let mut max_id = 0u64;
    let mut lines = 0u64;
    let mut pos = 0;
    let len = piece.len();
    while pos < len {
        lines += 1;
        let line_end = memchr_newline(piece, pos);
        let line = &piece[..line_end];
        skip_blanks(line, &mut pos);
        if pos < line_end && line[pos] != b'#' && line[pos] != b'%' {
            let src = parse_uint(line, &mut pos, "source id").map_err(|m| (lines, m))?;
            skip_blanks(line, &mut pos);
            let dst = parse_uint(line, &mut pos, "destination id").map_err(|m| (lines, m))?;
            if dst >= limits.0 || src >= limits.1 {
                return Err((
                    lines,
                    format!(
                        "edge {src} -> {dst} is out of range: the graph has {} destination and {} source nodes",
                        limits.0, limits.1
                    ),
                ));
            }
            max_id = max_id.max(src).max(dst);
            edges.push((dst as u32, src as u32));
        }
        pos = line_end + 1;
    }
    Ok(Piece { edges, lines, max_id })
}

/// The index of the next newline at or after `from`, or the length.
#[inline]
fn memchr_newline(bytes: &[u8], from: usize) -> usize {
    bytes[from..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |k| from + k)
}

/// Writes an edge list file.
///
/// # Errors
/// [`GraphError::Io`] naming the file.
pub fn write(path: impl AsRef<Path>, g: &Csr) -> Result<()> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::create(path).map_err(|e| GraphError::io(&name, e))?;
    write_to(file, g).map_err(|e| GraphError::io(&name, e))
}

/// Writes the `# dfgnn:` shape header, then `src dst` per edge in edge-id order.
///
/// # Errors
/// Any I/O error of the writer.
pub fn write_to<W: Write>(writer: W, g: &Csr) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, writer);
    writeln!(w, "# dfgnn: num_dst={} num_src={}", g.num_dst(), g.num_src())?;
    writeln!(w, "# src dst: the edge src -> dst (dst is the CSR row); {} edges", g.nnz())?;
    write_pairs(&mut w, g.edges().map(|(dst, src)| (src as u64, dst as u64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Csr> {
        read_from(text.as_bytes(), "mem.txt")
    }

    #[test]
    fn reads_snap_style_lines() {
        let g = parse("# Directed graph\n% other comment\n\n0 1\n 2\t1  \r\n1 0 0.5 extra\n2 1\n").unwrap();
        assert_eq!((g.num_dst(), g.num_src(), g.nnz()), (3, 3, 4));
        assert_eq!(g.row(1), &[0, 2, 2], "row = dst, duplicates kept in line order");
        assert_eq!(g.row(0), &[1]);
        assert_eq!(parse("").unwrap().num_dst(), 0);
        assert_eq!(parse("# only comments\n").unwrap().num_dst(), 0);
        assert_eq!(parse("5 7").unwrap().num_dst(), 8, "no trailing newline");
    }

    #[test]
    fn header_sets_the_shape() {
        let g = parse("# dfgnn: num_dst=2 num_src=9\n8 1\n").unwrap();
        assert_eq!((g.num_dst(), g.num_src()), (2, 9));
        let e = parse("# dfgnn: num_dst=2 num_src=9\n0 1\n1 2\n").unwrap_err();
        assert!(e.to_string().contains("mem.txt:3:"), "{e}");
        assert!(parse("# dfgnn: num_dst=x num_src=1\n").is_err());
        assert!(parse("# dfgnn: num_src=1\n").is_err());
    }

    #[test]
    fn malformed_lines_name_the_line() {
        for (text, line, needle) in [
            ("0 1\n1 x\n", 2, "\"x\""),
            ("0 1\n\n# c\n7\n", 4, "missing destination id"),
            ("0 1\n-1 2\n", 2, "\"-1\""),
            ("0 1\n1 4294967296\n", 2, "out of range"),
            ("0 99999999999999999999999\n", 1, "too large"),
            ("1.5 2\n", 1, "\"1.5\""),
            ("0 1\n1 2\n3 4x\n", 3, "\"4x\""),
        ] {
            let e = parse(text).unwrap_err();
            let GraphError::Text { line: l, ref message, .. } = e else { panic!("{e}") };
            assert_eq!(l, line, "{text:?}: {e}");
            assert!(message.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn round_trip_keeps_shape_and_order() {
        let g = crate::corner::bipartite();
        let mut bytes = Vec::new();
        write_to(&mut bytes, &g).unwrap();
        assert_eq!(read_from(&bytes[..], "rt").unwrap(), g);
        let d = crate::corner::duplicates();
        let mut bytes = Vec::new();
        write_to(&mut bytes, &d).unwrap();
        assert_eq!(read_from(&bytes[..], "rt").unwrap(), d);
    }

    #[test]
    fn large_input_uses_several_pieces_and_counts_lines() {
        let g = crate::generate::erdos_renyi(50_000, 30.0, 1).unwrap();
        let mut bytes = Vec::new();
        write_to(&mut bytes, &g).unwrap();
        assert!(bytes.len() > 2 * super::super::text::CHUNK);
        assert_eq!(read_from(&bytes[..], "big").unwrap(), g);
        // Corrupt one late line: the error must name it exactly.
        let target_line = 1_400_000u64;
        let start = bytes.split(|&b| b == b'\n').take(target_line as usize - 1).map(|l| l.len() + 1).sum::<usize>();
        bytes[start] = b'z';
        let e = read_from(&bytes[..], "big").unwrap_err();
        assert!(e.to_string().starts_with(&format!("big:{target_line}:")), "{e}");
    }
}
