//! `dfgnn._dfgnn`: the extension module behind the `dfgnn` Python package.
//!
//! It links no libtorch: the pure-Python layer (`dfgnn/`) checks every tensor (dtype, device,
//! contiguity, 16-byte alignment, shape) and passes its `data_ptr()` here as an integer, with the
//! sizes. Those functions are private (`_`-prefixed) for that reason: their safety rests on the
//! Python layer's checks. Nothing here touches CUDA at import time; CPU tensors run on the SIMT
//! emulator, read in place (see `dfgnn::external`).

use std::sync::OnceLock;

use dfgnn::external::{self, External};
use dfgnn::{AgnnConfig, Backend, DeviceGraph, GtConfig};
use dfgnn_graphs::Csr;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The one emulator of the process, made on first use.
fn emulator() -> &'static Backend {
    static EMULATOR: OnceLock<Backend> = OnceLock::new();
    EMULATOR.get_or_init(Backend::emulator)
}

/// A dfgnn error as the Python exception of its kind.
fn to_py(e: dfgnn::Error) -> PyErr {
    match e {
        dfgnn::Error::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        dfgnn::Error::ShapeMismatch { .. } | dfgnn::Error::Unsupported { .. } | dfgnn::Error::InvalidGraph(_) => {
            PyValueError::new_err(e.to_string())
        }
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// A graph prepared on the emulator: CSR by destination, its CSC, and statistics.
#[pyclass(module = "dfgnn._dfgnn", frozen)]
struct PreparedGraph {
    graph: DeviceGraph<'static>,
}

/// Copies `len` elements of `T` from host address `addr` (a live CPU tensor's data).
///
/// # Safety
/// `addr` holds `len` initialised, aligned elements of `T` for the length of the call.
unsafe fn read_host<T: Copy>(addr: usize, len: usize) -> Vec<T> {
    if len == 0 {
        return Vec::new();
    }
    // SAFETY: forwarded contract.
    unsafe { std::slice::from_raw_parts(addr as *const T, len) }.to_vec()
}

#[pymethods]
impl PreparedGraph {
    /// Prepares a graph from CSR arrays in CPU memory: `offsets` (`num_dst + 1` int64) and
    /// `columns` (`nnz` int64), given by address. Every rule of a CSR is checked.
    #[new]
    fn new(
        py: Python<'_>,
        num_dst: usize,
        num_src: usize,
        offsets: usize,
        columns: usize,
        nnz: usize,
    ) -> PyResult<Self> {
        let too_many =
            |what: &str, n: usize| PyValueError::new_err(format!("{n} {what}: at most {} are supported", u32::MAX - 1));
        if nnz >= u32::MAX as usize {
            return Err(too_many("edges", nnz));
        }
        for n in [num_dst, num_src] {
            if n >= u32::MAX as usize {
                return Err(too_many("nodes", n));
            }
        }
        // SAFETY: the Python layer passes the data of live, contiguous int64 CPU tensors of
        // `num_dst + 1` and `nnz` elements (graph.py, `_prepare`), kept alive across this call.
        let (offsets, columns) = unsafe { (read_host::<i64>(offsets, num_dst + 1), read_host::<i64>(columns, nnz)) };
        let offsets = offsets
            .into_iter()
            .map(|o| u64::try_from(o).map_err(|_| PyValueError::new_err(format!("negative CSR offset {o}"))))
            .collect::<PyResult<Vec<u64>>>()?;
        let columns = columns
            .into_iter()
            .map(|c| {
                u32::try_from(c)
                    .map_err(|_| PyValueError::new_err(format!("source node {c} out of range [0, {num_src})")))
            })
            .collect::<PyResult<Vec<u32>>>()?;
        let csr = Csr::new(num_dst, num_src, offsets, columns).map_err(|e| to_py(e.into()))?;
        let graph = py.detach(|| DeviceGraph::new(emulator(), &csr)).map_err(to_py)?;
        Ok(Self { graph })
    }

    /// Destination nodes.
    #[getter]
    fn num_dst(&self) -> usize {
        self.graph.num_dst()
    }

    /// Source nodes.
    #[getter]
    fn num_src(&self) -> usize {
        self.graph.num_src()
    }

    /// Edges.
    #[getter]
    fn num_edges(&self) -> usize {
        self.graph.nnz()
    }
}

/// `[nodes, heads, feat]` floats at `addr`.
fn features(addr: usize, nodes: usize, heads: u32, feat: u32) -> External {
    External { addr: addr as u64, len: nodes * heads as usize * feat as usize }
}

/// GT forward into `out` (addresses of contiguous, 16-byte aligned float32 CPU tensors).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gt_forward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    scale: f32,
    q: usize,
    k: usize,
    v: usize,
    out: usize,
) -> PyResult<()> {
    let g = &graph.graph;
    let config = GtConfig { scale: Some(scale), ..GtConfig::new(heads, feat) };
    let (dst, src) = (g.num_dst(), g.num_src());
    let (q, k, v, out) = (
        features(q, dst, heads, feat),
        features(k, src, heads, feat),
        features(v, src, heads, feat),
        features(out, dst, heads, feat),
    );
    // SAFETY: ops.py passes the data of live, contiguous, 16-byte aligned float32 CPU tensors of
    // these shapes (checked there), kept alive across this call; `out` is a fresh `torch.empty`.
    py.detach(|| unsafe { external::gt_forward(g, &config, q, k, v, out) }).map_err(to_py)
}

/// GT backward into `dq`, `dk`, `dv` (as `_gt_forward`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gt_backward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    scale: f32,
    q: usize,
    k: usize,
    v: usize,
    d_out: usize,
    dq: usize,
    dk: usize,
    dv: usize,
) -> PyResult<()> {
    let g = &graph.graph;
    let config = GtConfig { scale: Some(scale), ..GtConfig::new(heads, feat) };
    let (dst, src) = (g.num_dst(), g.num_src());
    let f = |addr, nodes| features(addr, nodes, heads, feat);
    let (q, k, v, d_out) = (f(q, dst), f(k, src), f(v, src), f(d_out, dst));
    let (dq, dk, dv) = (f(dq, dst), f(dk, src), f(dv, src));
    // SAFETY: as in `_gt_forward`; `dq`, `dk` and `dv` are three fresh `torch.empty` tensors.
    py.detach(|| unsafe { external::gt_backward(g, &config, q, k, v, d_out, dq, dk, dv) }).map_err(to_py)
}

/// AGNN forward into `out` (as `_gt_forward`; the graph must be square).
#[pyfunction]
fn _agnn_forward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    beta: f32,
    h: usize,
    out: usize,
) -> PyResult<()> {
    let g = &graph.graph;
    let config = AgnnConfig::new(heads, feat);
    let (h, out) = (features(h, g.num_dst(), heads, feat), features(out, g.num_dst(), heads, feat));
    // SAFETY: as in `_gt_forward`.
    py.detach(|| unsafe { external::agnn_forward(g, &config, h, beta, out) }).map_err(to_py)
}

/// AGNN backward into `dh`; returns the gradient of β.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _agnn_backward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    beta: f32,
    h: usize,
    d_out: usize,
    dh: usize,
) -> PyResult<f32> {
    let g = &graph.graph;
    let config = AgnnConfig::new(heads, feat);
    let f = |addr| features(addr, g.num_dst(), heads, feat);
    let (h, d_out, dh) = (f(h), f(d_out), f(dh));
    // SAFETY: as in `_gt_forward`; `dh` is a fresh `torch.empty` tensor.
    py.detach(|| unsafe { external::agnn_backward(g, &config, h, beta, d_out, dh) }).map_err(to_py)
}

/// The module: the prepared graph type and the op entry points.
#[pymodule]
fn _dfgnn(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PreparedGraph>()?;
    m.add_function(wrap_pyfunction!(_gt_forward, m)?)?;
    m.add_function(wrap_pyfunction!(_gt_backward, m)?)?;
    m.add_function(wrap_pyfunction!(_agnn_forward, m)?)?;
    m.add_function(wrap_pyfunction!(_agnn_backward, m)?)?;
    Ok(())
}
