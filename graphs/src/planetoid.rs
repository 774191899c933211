//! Cora and Citeseer (the Planetoid split) from `<data dir>/planetoid/{cora,citeseer}.npz`.
//!
//! Each archive holds `indptr` (int64), `indices` (int32) and `shape`: a symmetric CSR
//! adjacency, so rows are destinations as everywhere else; plus `features` (float32 `[N, F]`),
//! `labels` (int64 `[N]`, -1 for unlabelled nodes) and `train_mask`, `val_mask`, `test_mask`
//! (bool `[N]`). Where the data comes from and how the archives are laid out: the crate README's
//! "Data" section. The library has no default location: the caller passes the directory, or
//! reads it from `DFGNN_DATA_DIR` with [`data_dir`].

use std::path::{Path, PathBuf};

use crate::csr::Csr;
use crate::error::{GraphError, Result};
use crate::format::npz::NpzArchive;

/// The environment variable that overrides the data directory.
pub const DATA_DIR_ENV: &str = "DFGNN_DATA_DIR";

/// A Planetoid data set.
#[derive(Clone, Debug, PartialEq)]
pub struct Planetoid {
    /// The citation graph (symmetric, rows = destinations).
    pub graph: Csr,
    /// Node features, row-major `[num_nodes, num_features]`.
    pub features: Vec<f32>,
    /// The number of features per node.
    pub num_features: usize,
    /// The class of every node, -1 where unknown.
    pub labels: Vec<i64>,
    /// Training nodes.
    pub train_mask: Vec<bool>,
    /// Validation nodes.
    pub val_mask: Vec<bool>,
    /// Test nodes.
    pub test_mask: Vec<bool>,
}

impl Planetoid {
    /// The number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.graph.num_dst()
    }

    /// The number of classes (largest label + 1).
    pub fn num_classes(&self) -> usize {
        self.labels.iter().copied().max().map_or(0, |m| (m + 1).max(0) as usize)
    }
}

/// `$DFGNN_DATA_DIR`, if it is set: the directory holding `planetoid/cora.npz` and
/// `planetoid/citeseer.npz`. There is no default.
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os(DATA_DIR_ENV).map(PathBuf::from)
}

/// The path of a Planetoid archive by name (`"cora"`, `"citeseer"`) in the data directory `dir`:
/// `<dir>/planetoid/<name>.npz`.
pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join("planetoid").join(format!("{name}.npz"))
}

/// Loads a Planetoid archive.
///
/// # Errors
/// [`GraphError::Io`] when it cannot be read, [`GraphError::Content`] or
/// [`GraphError::Binary`] when arrays are missing, malformed or of inconsistent sizes.
pub fn load(path: impl AsRef<Path>) -> Result<Planetoid> {
    let mut npz = NpzArchive::open(path.as_ref())?;
    let file = path.as_ref().display().to_string();
    let graph = npz.csr()?;
    let n = graph.num_dst();
    if !graph.is_square() {
        return Err(GraphError::content(&file, format!("adjacency is {} x {}, not square", n, graph.num_src())));
    }
    let features = npz.array("features")?;
    let num_features = match features.shape[..] {
        [rows, cols] if rows == n => cols,
        _ => {
            return Err(GraphError::content(&file, format!("features have shape {:?}, want [{n}, F]", features.shape)));
        }
    };
    let features = features.to_f32(&npz.member_name("features"))?;
    let labels: Vec<i64> = npz.array("labels")?.to_ints(&npz.member_name("labels"), -1, i64::MAX as i128)?;
    let mut masks = Vec::with_capacity(3);
    for key in ["train_mask", "val_mask", "test_mask"] {
        masks.push(npz.array(key)?.to_bools(&npz.member_name(key))?);
    }
    for (key, len) in [
        ("labels", labels.len()),
        ("train_mask", masks[0].len()),
        ("val_mask", masks[1].len()),
        ("test_mask", masks[2].len()),
    ] {
        if len != n {
            return Err(GraphError::content(&file, format!("{key} has {len} entries for {n} nodes")));
        }
    }
    let test_mask = masks.pop().unwrap_or_default();
    let val_mask = masks.pop().unwrap_or_default();
    let train_mask = masks.pop().unwrap_or_default();
    Ok(Planetoid { graph, features, num_features, labels, train_mask, val_mask, test_mask })
}
