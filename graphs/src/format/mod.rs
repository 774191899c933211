//! Graph file formats, each in its own module, and [`read_path`] / [`write_path`] that pick
//! one by the file extension.
//!
//! | extension | module | orientation |
//! |---|---|---|
//! | `.npz` | [`npz`] (scipy sparse, CSR or CSC) | row = destination |
//! | `.mtx` | [`mtx`] (Matrix Market coordinate) | entry (i, j): row i = destination, column j = source |
//! | `.txt`, `.el`, `.edges`, `.tsv`, `.snap` | [`edge_list`] (SNAP) | line `src dst` = edge src -> dst |
//! | `.gt` | [`gt`] (graph-tool binary) | vertex v listing t = edge v -> t |
//!
//! The text formats and `.gt` may also be gzipped (`.mtx.gz`, `.txt.gz`, `.gt.gz`, ...).
//! Malformed input is an error naming the file and the line (text) or byte offset (binary; for
//! gzipped files, in the uncompressed stream), never a panic.

pub mod edge_list;
pub mod gt;
pub mod mtx;
pub mod npy;
pub mod npz;
pub(crate) mod text;

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use crate::csr::Csr;
use crate::error::{GraphError, Result};
use crate::limits::{Limits, bytes_of};
use crate::relabel::{IdMap, check_dense, compact};

/// How to read a graph file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The memory budget: a file that declares (or implies) more than this is an error before
    /// anything that large is allocated.
    pub limits: Limits,
    /// Compact the node ids to the ones the edges use, returning the mapping
    /// ([`Loaded::ids`]). Without it, a file whose node count is far above what its edges can
    /// use (more than 16 nodes per edge plus 2^20) is a [`GraphError::SparseIds`] error.
    pub relabel: bool,
    /// Refuse a graph without nodes ([`GraphError::Content`]): models cannot run on one. An
    /// empty edge list is otherwise a valid, empty graph.
    pub reject_empty: bool,
}

/// A graph read from a file, with the original ids when it was relabelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// The graph.
    pub graph: Csr,
    /// The original node ids ([`ReadOptions::relabel`]); `None` when ids were kept.
    pub ids: Option<IdMap>,
}

/// Edges as a reader found them, before the graph is built: `(dst, src)` pairs in pieces (in
/// file order) and the node counts the file declares or its ids imply.
pub(crate) struct Edges {
    pub(crate) num_dst: u64,
    pub(crate) num_src: u64,
    pub(crate) parts: Vec<Vec<(u32, u32)>>,
    /// Whether the graph's rows must be sorted by source afterwards.
    pub(crate) sort_rows: bool,
}

/// The bytes of a graph of these sizes plus its transpose, what a graph brings with it in use.
pub(crate) fn graph_bytes(num_dst: u64, num_src: u64, nnz: u64) -> u64 {
    bytes_of(&[(num_dst.saturating_add(1), 8), (nnz, 4), (num_src.saturating_add(1), 8), (nnz, 12)])
}

impl Edges {
    /// Builds the graph: relabels or checks the ids, checks the budget, then allocates.
    pub(crate) fn finish(mut self, name: &str, options: &ReadOptions) -> Result<Loaded> {
        let nnz: u64 = self.parts.iter().map(|p| p.len() as u64).sum();
        let mut ids = None;
        if options.relabel {
            let (d, s, map) = compact(&mut self.parts, self.num_dst == self.num_src, &options.limits)?;
            (self.num_dst, self.num_src, ids) = (d as u64, s as u64, Some(map));
        } else {
            check_dense(name, self.num_dst, self.num_src, nnz)?;
        }
        options.limits.check("the graph and its transpose", graph_bytes(self.num_dst, self.num_src, nnz))?;
        let slices: Vec<&[(u32, u32)]> = self.parts.iter().map(Vec::as_slice).collect();
        let graph = Csr::from_edge_slices(self.num_dst as usize, self.num_src as usize, &slices, &options.limits)
            .map_err(|e| GraphError::content(name, e.to_string()))?;
        let graph = if self.sort_rows { graph.sort_rows() } else { graph };
        finish_graph(graph, ids, name, options)
    }
}

/// Applies [`ReadOptions::reject_empty`].
fn finish_graph(graph: Csr, ids: Option<IdMap>, name: &str, options: &ReadOptions) -> Result<Loaded> {
    if options.reject_empty && graph.num_dst().max(graph.num_src()) == 0 {
        return Err(GraphError::content(name, "the graph is empty (no nodes): models cannot run on 0 nodes"));
    }
    Ok(Loaded { graph, ids })
}

/// Checks or relabels a graph a reader built directly (`.npz`).
pub(crate) fn finish_csr(graph: Csr, name: &str, options: &ReadOptions) -> Result<Loaded> {
    if options.relabel {
        let (graph, ids) = crate::relabel::relabel(&graph, &options.limits)?;
        return finish_graph(graph, Some(ids), name, options);
    }
    let (d, s, nnz) = (graph.num_dst() as u64, graph.num_src() as u64, graph.nnz() as u64);
    check_dense(name, d, s, nnz)?;
    options.limits.check("the graph's transpose", graph_bytes(0, s, nnz))?;
    finish_graph(graph, None, name, options)
}

/// A file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// scipy sparse `.npz`.
    Npz,
    /// Matrix Market coordinate `.mtx`.
    MatrixMarket,
    /// SNAP-style edge list.
    EdgeList,
    /// graph-tool binary `.gt`.
    GraphTool,
}

/// The supported extensions, for error messages.
const EXTENSIONS: &str = ".npz, .mtx, .txt, .el, .edges, .tsv, .snap, .gt, and .gz of all but .npz";

/// The format and compression of a path, from its extension.
///
/// # Errors
/// [`GraphError::UnknownFormat`] listing the supported extensions.
pub fn detect(path: &Path) -> Result<(Format, bool)> {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let (stem, gz) = match name.strip_suffix(".gz") {
        Some(stem) => (stem, true),
        None => (name.as_str(), false),
    };
    let ext = stem.rsplit_once('.').map_or("", |(_, e)| e);
    let format = match ext {
        "npz" if !gz => Format::Npz,
        "mtx" => Format::MatrixMarket,
        "txt" | "el" | "edges" | "tsv" | "snap" => Format::EdgeList,
        "gt" => Format::GraphTool,
        _ => {
            return Err(GraphError::UnknownFormat {
                file: path.display().to_string(),
                message: format!("supported: {EXTENSIONS}"),
            });
        }
    };
    Ok((format, gz))
}

/// Reads a graph, choosing the format by the extension, with the default [`ReadOptions`].
///
/// # Errors
/// [`GraphError::UnknownFormat`], or the format reader's error.
pub fn read_path(path: impl AsRef<Path>) -> Result<Csr> {
    Ok(read_path_with(path, &ReadOptions::default())?.graph)
}

/// Reads a graph, choosing the format by the extension.
///
/// # Errors
/// [`GraphError::UnknownFormat`], [`GraphError::Io`] (a missing file says "No such file"),
/// [`GraphError::SparseIds`], [`GraphError::OverBudget`], or the format reader's error.
pub fn read_path_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Loaded> {
    let path = path.as_ref();
    let (format, gz) = detect(path)?;
    let name = path.display().to_string();
    if format == Format::Npz {
        return npz::NpzArchive::open_with(path, options.limits)?.load(options);
    }
    let file = File::open(path).map_err(|e| GraphError::io(&name, e))?;
    let reader: Box<dyn Read> =
        if gz { Box::new(MultiGzDecoder::new(BufReader::with_capacity(1 << 20, file))) } else { Box::new(file) };
    read_stream(format, reader, &name, options)
}

/// Reads a text or `.gt` stream (not `.npz`, which needs to seek) of the given format.
///
/// # Errors
/// As [`read_path_with`].
pub fn read_stream<R: Read>(format: Format, reader: R, name: &str, options: &ReadOptions) -> Result<Loaded> {
    let edges = match format {
        Format::MatrixMarket => mtx::read_edges(reader, name)?,
        Format::EdgeList => edge_list::read_edges(reader, name)?,
        Format::GraphTool => gt::read_edges(reader, name, &options.limits)?,
        Format::Npz => {
            return Err(GraphError::UnknownFormat {
                file: name.to_string(),
                message: "an .npz archive is read from a file or bytes (npz::read, npz::read_bytes)".into(),
            });
        }
    };
    edges.finish(name, options)
}

/// Writes a graph, choosing the format by the extension.
///
/// # Errors
/// [`GraphError::UnknownFormat`], or [`GraphError::Io`] naming the file.
pub fn write_path(path: impl AsRef<Path>, g: &Csr) -> Result<()> {
    let path = path.as_ref();
    let (format, gz) = detect(path)?;
    if format == Format::Npz {
        return npz::write(path, g);
    }
    let name = path.display().to_string();
    let file = File::create(path).map_err(|e| GraphError::io(&name, e))?;
    let result = if gz {
        let mut enc = GzEncoder::new(file, Compression::fast());
        write_format(format, &mut enc, g).and_then(|()| enc.finish().map(drop))
    } else {
        write_format(format, file, g)
    };
    result.map_err(|e| GraphError::io(&name, e))
}

fn write_format<W: Write>(format: Format, w: W, g: &Csr) -> io::Result<()> {
    match format {
        Format::Npz => Err(io::Error::other("npz archives need a seekable writer: use npz::write")),
        Format::MatrixMarket => mtx::write_to(w, g),
        Format::EdgeList => edge_list::write_to(w, g),
        Format::GraphTool => gt::write_to(w, g),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_extension() {
        assert_eq!(detect(Path::new("a/b.NPZ")).unwrap(), (Format::Npz, false));
        assert_eq!(detect(Path::new("x.mtx.gz")).unwrap(), (Format::MatrixMarket, true));
        assert_eq!(detect(Path::new("x.edges")).unwrap(), (Format::EdgeList, false));
        assert_eq!(detect(Path::new("karate.gt.gz")).unwrap(), (Format::GraphTool, true));
        for bad in ["x.npz.gz", "x.csv", "noext", "x.gz"] {
            let e = detect(Path::new(bad)).unwrap_err();
            assert!(e.to_string().contains(".mtx"), "{bad}: {e}");
        }
    }
}
