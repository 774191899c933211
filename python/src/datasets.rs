//! Molecules for `dfgnn.datasets`: MOSES files and SMILES strings parsed by `dfgnn-graphs`
//! (`moses`, `smiles`), packed block-diagonally into flat per-atom and per-edge arrays.
//!
//! Each array goes to Python as a `bytearray` of native-endian values, which the Python layer
//! views as a tensor (`torch.frombuffer`, no copy); the names, types and meanings are those of
//! `dfgnn/datasets.py`. The edges are both directions of every bond, molecule after molecule,
//! each molecule's in CSR order (by destination, then source), with node ids of the whole set.

use std::path::PathBuf;

use dfgnn_graphs::GraphError;
use dfgnn_graphs::moses::{self, Split};
use dfgnn_graphs::smiles::{self, BondOrder, Molecule};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict};

/// Molecules as flat arrays, in order.
#[derive(Default)]
struct Arrays {
    atomic_number: Vec<u8>,
    aromatic: Vec<u8>,
    charge: Vec<i8>,
    hydrogens: Vec<u8>,
    src: Vec<i64>,
    dst: Vec<i64>,
    bond_order: Vec<u8>,
    /// Where each molecule's atoms start (`molecules + 1`).
    atom_ptr: Vec<i64>,
    /// Where each molecule's edges start (`molecules + 1`).
    edge_ptr: Vec<i64>,
}

impl Arrays {
    fn new() -> Self {
        Self { atom_ptr: vec![0], edge_ptr: vec![0], ..Self::default() }
    }

    /// Appends one molecule.
    fn push(&mut self, molecule: &Molecule) {
        let base = self.atomic_number.len() as i64;
        for atom in &molecule.atoms {
            self.atomic_number.push(atom.atomic_number());
            self.aromatic.push(u8::from(atom.aromatic));
            self.charge.push(atom.charge);
            self.hydrogens.push(atom.hydrogens);
        }
        for (dst, src, order) in molecule.directed_bonds() {
            self.dst.push(base + i64::from(dst));
            self.src.push(base + i64::from(src));
            self.bond_order.push(bond_code(order));
        }
        self.atom_ptr.push(self.atomic_number.len() as i64);
        self.edge_ptr.push(self.src.len() as i64);
    }

    /// The arrays as a dict of `bytearray`s.
    fn into_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let dict = PyDict::new(py);
        let bytes = |values: &[u8]| PyByteArray::new(py, values);
        let wide = |values: &[i64]| {
            let raw: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            PyByteArray::new(py, &raw)
        };
        dict.set_item("atomic_number", bytes(&self.atomic_number))?;
        dict.set_item("aromatic", bytes(&self.aromatic))?;
        let charge: Vec<u8> = self.charge.iter().flat_map(|c| c.to_ne_bytes()).collect();
        dict.set_item("charge", bytes(&charge))?;
        dict.set_item("hydrogens", bytes(&self.hydrogens))?;
        dict.set_item("src", wide(&self.src))?;
        dict.set_item("dst", wide(&self.dst))?;
        dict.set_item("bond_order", bytes(&self.bond_order))?;
        dict.set_item("atom_ptr", wide(&self.atom_ptr))?;
        dict.set_item("edge_ptr", wide(&self.edge_ptr))?;
        Ok(dict)
    }
}

/// A bond order's index in `dfgnn.datasets.BOND_ORDERS`.
fn bond_code(order: BondOrder) -> u8 {
    match order {
        BondOrder::Single => 0,
        BondOrder::Double => 1,
        BondOrder::Triple => 2,
        BondOrder::Quadruple => 3,
        BondOrder::Aromatic => 4,
    }
}

/// Parses every string in order, naming the first that fails by `locate(index)`.
fn parse_all<S: AsRef<str>>(smiles: &[S], locate: impl Fn(usize) -> String) -> PyResult<Arrays> {
    let mut arrays = Arrays::new();
    for (k, s) in smiles.iter().enumerate() {
        let molecule = smiles::parse(s.as_ref()).map_err(|e| PyValueError::new_err(format!("{}: {e}", locate(k))))?;
        arrays.push(&molecule);
    }
    Ok(arrays)
}

/// A file error as the Python exception of its kind.
fn file_error(e: GraphError) -> PyErr {
    match &e {
        GraphError::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(e.to_string())
        }
        GraphError::Io { .. } => PyOSError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// The first `count` molecules (all with `None`) of the MOSES split `split` (`train`, `test`,
/// `test_scaffolds`) in `dir`, as arrays (see the module's header). A molecule that does not
/// parse is named by its file and line.
#[pyfunction]
#[pyo3(signature = (dir, split, count))]
fn _moses_molecules<'py>(
    py: Python<'py>,
    dir: PathBuf,
    split: &str,
    count: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let split = match split {
        "train" => Split::Train,
        "test" => Split::Test,
        "test_scaffolds" => Split::TestScaffolds,
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown MOSES split {split:?}: one of \"train\", \"test\", \"test_scaffolds\""
            )));
        }
    };
    let path = dir.join(split.file_name());
    let arrays = py.detach(|| {
        let smiles = moses::read_smiles(&path, count).map_err(file_error)?;
        // The header is line 1: molecule k is on line k + 2.
        parse_all(&smiles, |k| format!("{}:{}", path.display(), k + 2))
    })?;
    arrays.into_dict(py)
}

/// The molecules of SMILES strings, as arrays (see the module's header). A string that does not
/// parse is named by its index.
#[pyfunction]
fn _smiles_molecules(py: Python<'_>, smiles: Vec<String>) -> PyResult<Bound<'_, PyDict>> {
    let arrays = py.detach(|| parse_all(&smiles, |k| format!("smiles[{k}]")))?;
    arrays.into_dict(py)
}

/// Adds the functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_moses_molecules, m)?)?;
    m.add_function(wrap_pyfunction!(_smiles_molecules, m)?)?;
    Ok(())
}
