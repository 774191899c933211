//! The MOSES molecule sets (PyPI package `molsets` 0.3.1, files `moses/dataset/data/*.csv.gz`)
//! as batches of molecular graphs.
//!
//! The files are gzipped CSV with a `SMILES` header column (train: 1,584,663 molecules; test:
//! 176,074; test_scaffolds: 176,225). The directory holding them is given by the environment
//! variable `DFGNN_MOSES_DIR`; nothing is downloaded.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::error::{GraphError, Result, preview};
use crate::smiles;
use crate::transform::Batch;

/// The environment variable naming the directory with the `.csv.gz` files.
pub const DIR_ENV: &str = "DFGNN_MOSES_DIR";

/// A MOSES split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// `train.csv.gz`.
    Train,
    /// `test.csv.gz`.
    Test,
    /// `test_scaffolds.csv.gz`.
    TestScaffolds,
}

impl Split {
    /// The file name of the split.
    pub fn file_name(self) -> &'static str {
        match self {
            Split::Train => "train.csv.gz",
            Split::Test => "test.csv.gz",
            Split::TestScaffolds => "test_scaffolds.csv.gz",
        }
    }
}

/// `$DFGNN_MOSES_DIR`, if it is set and names a directory.
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os(DIR_ENV).map(PathBuf::from).filter(|p| p.is_dir())
}

/// Reads up to `limit` SMILES strings (all with `None`) from a MOSES `.csv.gz` file: the first
/// comma-separated column of every line after the header.
///
/// # Errors
/// [`GraphError::Io`] (including a corrupt gzip stream) or [`GraphError::Text`] when the header
/// is not `SMILES` or a line is empty.
pub fn read_smiles(path: impl AsRef<Path>, limit: Option<usize>) -> Result<Vec<String>> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| GraphError::io(&name, e))?;
    let mut lines = BufReader::with_capacity(1 << 20, MultiGzDecoder::new(file)).lines();
    let header = lines.next().transpose().map_err(|e| GraphError::io(&name, e))?.unwrap_or_default();
    if header.split(',').next().map(str::trim) != Some("SMILES") {
        return Err(GraphError::text(
            &name,
            1,
            format!("expected a SMILES header, found {}", preview(header.as_bytes())),
        ));
    }
    let mut out = Vec::new();
    for (k, line) in lines.enumerate() {
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
        let line = line.map_err(|e| GraphError::io(&name, e))?;
        let smiles = line.split(',').next().unwrap_or("").trim();
        if smiles.is_empty() {
            return Err(GraphError::text(&name, k as u64 + 2, "empty SMILES"));
        }
        out.push(smiles.to_string());
    }
    Ok(out)
}

/// The first `count` molecules of a split in `dir`, parsed and packed block-diagonally.
///
/// # Errors
/// As [`read_smiles`], plus [`GraphError::Smiles`] for a molecule that does not parse.
pub fn load_batch(dir: impl AsRef<Path>, split: Split, count: usize) -> Result<Batch> {
    let smiles = read_smiles(dir.as_ref().join(split.file_name()), Some(count))?;
    smiles::batch(&smiles)
}
