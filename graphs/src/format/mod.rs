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
mod text;

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use crate::csr::Csr;
use crate::error::{GraphError, Result};

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

/// Reads a graph, choosing the format by the extension.
///
/// # Errors
/// [`GraphError::UnknownFormat`], or the format reader's error.
pub fn read_path(path: impl AsRef<Path>) -> Result<Csr> {
    let path = path.as_ref();
    let (format, gz) = detect(path)?;
    let name = path.display().to_string();
    if format == Format::Npz {
        return npz::read(path);
    }
    let file = File::open(path).map_err(|e| GraphError::io(&name, e))?;
    let reader: Box<dyn Read> =
        if gz { Box::new(MultiGzDecoder::new(BufReader::with_capacity(1 << 20, file))) } else { Box::new(file) };
    match format {
        Format::MatrixMarket => mtx::read_from(reader, &name),
        Format::EdgeList => edge_list::read_from(reader, &name),
        Format::GraphTool => gt::read_from(reader, &name),
        Format::Npz => unreachable!("handled above"),
    }
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
