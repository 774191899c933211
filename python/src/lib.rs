//! `dfgnn._dfgnn`: the extension module behind the `dfgnn` Python package.
//!
//! It links no libtorch: the pure-Python layer (`dfgnn/`) checks every tensor (dtype, device,
//! contiguity, 16-byte alignment, shape) and passes its `data_ptr()` here as an integer, with the
//! sizes. Those functions are private (`_`-prefixed) for that reason: their safety rests on the
//! Python layer's checks.
//!
//! Nothing here touches CUDA at import time. CPU tensors run on the SIMT emulator; CUDA tensors on
//! their own device, in its primary context (PyTorch's), with one [`Backend`] per device made on
//! first use and made anew in a forked child (whose parent's CUDA state is not its own). Every op
//! call runs on the stream the Python layer passes (`torch.cuda.current_stream(device)`, read
//! on each call) with a workspace it allocated (`torch.empty`), so the Rust side allocates
//! nothing per call: called without a workspace, an op only measures the bytes it needs
//! (`dfgnn::external`). A prepared graph keeps its op objects (plan and work lists) per kind and
//! shape, made on first use on the backend's own stream and waited for there.
//!
//! `datasets`: molecules (MOSES files, SMILES strings) as flat arrays for `dfgnn.datasets`.

mod datasets;

use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, OnceLock};

use dfgnn::external::{self, Call, Dropout, External, Saved};
use dfgnn::{
    Agnn, AgnnConfig, Backend, BackendKind, DeviceGraph, Gat, GatConfig, GatV2, GatV2Config, Gt, GtConfig, Workspace,
};
use dfgnn_graphs::Csr;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The one emulator of the process, made on first use.
fn emulator() -> &'static Backend {
    static EMULATOR: OnceLock<Backend> = OnceLock::new();
    EMULATOR.get_or_init(Backend::emulator)
}

/// The CUDA backend of device `ordinal` for this process, made on first use. Backends live as
/// long as the process (graphs borrow them); a forked child forgets its parent's without
/// touching them.
fn cuda(ordinal: u32) -> dfgnn::Result<&'static Backend> {
    /// (process id, device, backend).
    static DEVICES: Mutex<Vec<(u32, u32, &'static Backend)>> = Mutex::new(Vec::new());
    let pid = std::process::id();
    let mut devices = DEVICES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    devices.retain(|&(owner, _, _)| owner == pid);
    if let Some(&(_, _, backend)) = devices.iter().find(|&&(_, device, _)| device == ordinal) {
        return Ok(backend);
    }
    let backend: &'static Backend = Box::leak(Box::new(Backend::cuda(ordinal as usize)?));
    devices.push((pid, ordinal, backend));
    Ok(backend)
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

/// An op planned on one graph for one shape.
enum Op {
    Gt(Gt<'static, 'static>),
    Gat(Gat<'static, 'static>),
    GatV2(GatV2<'static, 'static>),
    Agnn(Agnn<'static, 'static>),
}

/// Which op, heads, features, and its parameter's bits (GT's scale, GAT's and GATv2's slope; 0
/// for AGNN).
type OpKey = (&'static str, u32, u32, u32);

/// A graph prepared on a backend: CSR by destination, its CSC, statistics, and its planned ops.
#[pyclass(module = "dfgnn._dfgnn", frozen)]
struct PreparedGraph {
    /// Ops borrow `graph`: dropped first (see `Drop`).
    ops: ManuallyDrop<Mutex<HashMap<OpKey, Arc<Op>>>>,
    /// Boxed so that its address, which the ops hold, never moves.
    graph: ManuallyDrop<Box<DeviceGraph<'static>>>,
    /// The process that prepared it (a forked child must not free its parent's device memory).
    pid: u32,
}

impl Drop for PreparedGraph {
    fn drop(&mut self) {
        if self.pid != std::process::id() && self.graph.backend().kind() == BackendKind::Cuda {
            // A forked child: the memory is the parent's; leave it alone.
            return;
        }
        let backend = self.graph.backend();
        // PyTorch may be using another device as this thread's current one: keep it.
        backend.keeping_current_context(|| {
            // Kernels queued on PyTorch's streams may still read the graph: wait for them before
            // freeing (an error here has no one to report to; the memory is freed regardless).
            let _ = backend.synchronize_device();
            // SAFETY: each field is dropped once, here, the ops (which borrow the graph) first.
            unsafe {
                ManuallyDrop::drop(&mut self.ops);
                ManuallyDrop::drop(&mut self.graph);
            }
        });
    }
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

impl PreparedGraph {
    /// The prepared graph, valid as long as `self`.
    fn graph(&self) -> &DeviceGraph<'static> {
        &self.graph
    }

    /// Refuses a graph of another process's CUDA context.
    fn check_process(&self) -> PyResult<()> {
        if self.pid != std::process::id() && self.graph.backend().kind() == BackendKind::Cuda {
            return Err(PyRuntimeError::new_err(
                "this dfgnn graph was prepared on CUDA in the parent process: prepare it again in this one",
            ));
        }
        Ok(())
    }

    /// The op of `key`, planned by `make` on first use (on the backend's own stream, waited for,
    /// so later calls on any stream see its work lists).
    fn op(
        &self,
        key: OpKey,
        make: impl FnOnce(&'static DeviceGraph<'static>) -> dfgnn::Result<Op>,
    ) -> PyResult<Arc<Op>> {
        self.check_process()?;
        let mut ops = self.ops.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(op) = ops.get(&key) {
            return Ok(op.clone());
        }
        // SAFETY: the graph is boxed (its address never moves) and outlives every op: ops are
        // dropped before it (`Drop`), and an `Arc<Op>` handed out here never leaves a method that
        // borrows `self`.
        let graph: &'static DeviceGraph<'static> = unsafe { &*(self.graph() as *const DeviceGraph<'static>) };
        let op = Arc::new(make(graph).map_err(to_py)?);
        graph.backend().synchronize().map_err(to_py)?;
        ops.insert(key, op.clone());
        Ok(op)
    }
}

#[pymethods]
impl PreparedGraph {
    /// Prepares a graph from CSR arrays in CPU memory: `offsets` (`num_dst + 1` int64) and
    /// `columns` (`nnz` int64), given by address, on `device` (a CUDA device index; `None` for the
    /// emulator). Every rule of a CSR is checked.
    #[new]
    #[pyo3(signature = (device, num_dst, num_src, offsets, columns, nnz))]
    fn new(
        py: Python<'_>,
        device: Option<u32>,
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
        let graph = py.detach(|| {
            let backend = match device {
                None => emulator(),
                Some(ordinal) => cuda(ordinal)?,
            };
            let graph = DeviceGraph::new(backend, &csr)?;
            // Uploaded on the backend's own stream: done before any PyTorch stream reads it.
            backend.synchronize()?;
            Ok::<_, dfgnn::Error>(graph)
        });
        Ok(Self {
            ops: ManuallyDrop::new(Mutex::default()),
            graph: ManuallyDrop::new(Box::new(graph.map_err(to_py)?)),
            pid: std::process::id(),
        })
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

    /// Device bytes of the prepared graph's arrays (memory of the extension, not of PyTorch's
    /// allocator; the planned ops' work lists are not counted).
    #[getter]
    fn device_bytes(&self) -> usize {
        self.graph.device_bytes()
    }
}

/// `[nodes, heads, feat]` floats at `addr`.
fn features(addr: usize, nodes: usize, heads: u32, feat: u32) -> External {
    External { addr: addr as u64, len: nodes * heads as usize * feat as usize }
}

/// The call: on `stream` (a `CUstream` as an integer; `None` on the emulator), with the workspace
/// `(address, bytes)`, or measuring when there is none.
fn call(stream: Option<u64>, workspace: Option<(usize, usize)>) -> Call {
    let workspace = match workspace {
        None => Workspace::Measure,
        Some((addr, len)) => Workspace::Borrowed { addr: addr as u64, len },
    };
    Call { stream, workspace }
}

/// The saved state `(out, lse, stats)` of a forward over `nodes` destinations.
fn saved((out, lse, stats): (usize, usize, usize), nodes: usize, heads: u32, feat: u32) -> Saved {
    Saved {
        out: features(out, nodes, heads, feat),
        lse: features(lse, nodes, heads, 1),
        stats: features(stats, nodes, heads, 2),
    }
}

/// Runs `f` on the GT op of this shape and scale (planned on first use).
fn with_gt<R>(
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    scale: f32,
    f: impl FnOnce(&Gt<'static, 'static>) -> PyResult<R>,
) -> PyResult<R> {
    let op = graph.op(("gt", heads, feat, scale.to_bits()), |g| {
        Gt::new(g, &GtConfig { scale: Some(scale), ..GtConfig::new(heads, feat) }).map(Op::Gt)
    })?;
    let Op::Gt(gt) = &*op else { unreachable!("the op of a GT key is a GT") };
    f(gt)
}

/// Runs `f` on the GAT op of this shape and slope (planned on first use).
fn with_gat<R>(
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    slope: f32,
    f: impl FnOnce(&Gat<'static, 'static>) -> PyResult<R>,
) -> PyResult<R> {
    let op = graph.op(("gat", heads, feat, slope.to_bits()), |g| {
        Gat::new(g, &GatConfig { slope, ..GatConfig::new(heads, feat) }).map(Op::Gat)
    })?;
    let Op::Gat(gat) = &*op else { unreachable!("the op of a GAT key is a GAT") };
    f(gat)
}

/// Runs `f` on the GATv2 op of this shape and slope (planned on first use).
fn with_gatv2<R>(
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    slope: f32,
    f: impl FnOnce(&GatV2<'static, 'static>) -> PyResult<R>,
) -> PyResult<R> {
    let op = graph.op(("gatv2", heads, feat, slope.to_bits()), |g| {
        GatV2::new(g, &GatV2Config { slope, ..GatV2Config::new(heads, feat) }).map(Op::GatV2)
    })?;
    let Op::GatV2(gatv2) = &*op else { unreachable!("the op of a GATv2 key is a GATv2") };
    f(gatv2)
}

/// Runs `f` on the AGNN op of this shape (planned on first use).
fn with_agnn<R>(
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    f: impl FnOnce(&Agnn<'static, 'static>) -> PyResult<R>,
) -> PyResult<R> {
    let op = graph.op(("agnn", heads, feat, 0), |g| Agnn::new(g, &AgnnConfig::new(heads, feat)).map(Op::Agnn))?;
    let Op::Agnn(agnn) = &*op else { unreachable!("the op of an AGNN key is an AGNN") };
    f(agnn)
}

/// The attention dropout `(p, seed)` of a call.
fn dropout_of((p, seed): (f32, u64)) -> Dropout {
    Dropout { p, seed }
}

/// GT forward with attention dropout `(p, seed)`: `out`, `lse`, `stats` (addresses of contiguous, 16-byte aligned float32 tensors on
/// the graph's device). Returns the workspace bytes (all it does without a workspace).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gt_forward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    scale: f32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, usize, usize),
    dropout: (f32, u64),
    out: (usize, usize, usize),
) -> PyResult<usize> {
    let (q, k, v) = inputs;
    let dropout = dropout_of(dropout);
    with_gt(graph, heads, feat, scale, |gt| {
        let (dst, src) = (gt.graph().num_dst(), gt.graph().num_src());
        let f = |addr, nodes| features(addr, nodes, heads, feat);
        let (q, k, v, out) = (f(q, dst), f(k, src), f(v, src), saved(out, dst, heads, feat));
        // SAFETY: ops.py passes the data of live, contiguous, 16-byte aligned float32 tensors of these
        // shapes on the graph's device (checked there), kept alive across this call and the work it
        // queues (PyTorch's stream order); the outputs and the workspace are fresh `torch.empty`
        // tensors; `stream` is the device's current PyTorch stream.
        py.detach(|| unsafe { external::gt_forward(gt, call(stream, workspace), q, k, v, dropout, out) }).map_err(to_py)
    })
}

/// GT backward into `dq`, `dk`, `dv` from the forward's saved state (as `_gt_forward`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gt_backward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    scale: f32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, usize, usize),
    dropout: (f32, u64),
    out: (usize, usize, usize),
    d_out: usize,
    grads: (usize, usize, usize),
) -> PyResult<usize> {
    let ((q, k, v), (dq, dk, dv)) = (inputs, grads);
    let dropout = dropout_of(dropout);
    with_gt(graph, heads, feat, scale, |gt| {
        let (dst, src) = (gt.graph().num_dst(), gt.graph().num_src());
        let f = |addr, nodes| features(addr, nodes, heads, feat);
        let inputs = (f(q, dst), f(k, src), f(v, src));
        let grads = (f(dq, dst), f(dk, src), f(dv, src));
        let (out, d_out) = (saved(out, dst, heads, feat), f(d_out, dst));
        // SAFETY: as in `_gt_forward`; `dq`, `dk` and `dv` are three fresh `torch.empty` tensors.
        py.detach(|| unsafe { external::gt_backward(gt, call(stream, workspace), inputs, dropout, out, d_out, grads) })
            .map_err(to_py)
    })
}

/// GAT forward from node scores `el` (`[N_dst, H]`) and `er` (`[N_src, H]`) over `h`
/// (`[N_src, H, F]`), with attention dropout `(p, seed)`, into `out`, `lse`, `stats` (as
/// `_gt_forward`), and with `part` (`o⁺` `[N_dst, H, F]`, `α⁺` `[N_dst, H]`: a forward for
/// training) the positive part its backward reads instead of gathering.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gat_forward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    slope: f32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, usize, usize),
    dropout: (f32, u64),
    out: (usize, usize, usize),
    part: Option<(usize, usize)>,
) -> PyResult<usize> {
    let (h, el, er) = inputs;
    let dropout = dropout_of(dropout);
    with_gat(graph, heads, feat, slope, |gat| {
        let (dst, src) = (gat.graph().num_dst(), gat.graph().num_src());
        let inputs = (features(h, src, heads, feat), features(el, dst, heads, 1), features(er, src, heads, 1));
        let (out, part) = (saved(out, dst, heads, feat), gat_part(part, dst, heads, feat));
        // SAFETY: as in `_gt_forward` (the part's two are the caller's outputs too).
        py.detach(|| unsafe { external::gat_forward(gat, call(stream, workspace), inputs, dropout, out, part) })
            .map_err(to_py)
    })
}

/// Whether GAT's forward of this shape and slope saves the positive part when asked (a forward
/// for training): where its plan sums it (`Gat::plans_part`). The op's tensors for the part are
/// allocated only then.
#[pyfunction]
fn _gat_saves_part(graph: &PreparedGraph, heads: u32, feat: u32, slope: f32) -> PyResult<bool> {
    with_gat(graph, heads, feat, slope, |gat| Ok(gat.plans_part()))
}

/// GAT's positive part `(o⁺, α⁺)` at `(addresses)` for `nodes` destinations, if given.
fn gat_part(part: Option<(usize, usize)>, nodes: usize, heads: u32, feat: u32) -> Option<(External, External)> {
    part.map(|(o, w)| (features(o, nodes, heads, feat), features(w, nodes, heads, 1)))
}

/// GAT backward into `dh`, `d_el`, `d_er` from the forward's saved state (with its positive part
/// when it saved one) and dropout (as `_gt_backward`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gat_backward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    slope: f32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, usize, usize),
    dropout: (f32, u64),
    out: (usize, usize, usize),
    part: Option<(usize, usize)>,
    d_out: usize,
    grads: (usize, usize, usize),
) -> PyResult<usize> {
    let ((h, el, er), (dh, d_el, d_er)) = (inputs, grads);
    let dropout = dropout_of(dropout);
    with_gat(graph, heads, feat, slope, |gat| {
        let (dst, src) = (gat.graph().num_dst(), gat.graph().num_src());
        let f = |addr, nodes, width| features(addr, nodes, heads, width);
        let inputs = (f(h, src, feat), f(el, dst, 1), f(er, src, 1));
        let grads = (f(dh, src, feat), f(d_el, dst, 1), f(d_er, src, 1));
        let (out, d_out) = (saved(out, dst, heads, feat), f(d_out, dst, feat));
        let saved = (out, gat_part(part, dst, heads, feat));
        // SAFETY: as in `_gt_backward`.
        py.detach(|| unsafe {
            external::gat_backward(gat, call(stream, workspace), inputs, dropout, saved, d_out, grads)
        })
        .map_err(to_py)
    })
}

/// GAT forward from the features: `h` (`[N_src, H, F]`), `h_dst` (`[N_dst, H, F]`, or `None`
/// when it is `h`) and the attention vectors `a_dst`, `a_src` (`[H, F]`), the node scores
/// computed by dfgnn, with attention dropout `(p, seed)`, into `out`, `lse`, `stats` (as
/// `_gt_forward`), the positive part `part` (as `_gat_forward`) and the node scores `el`
/// (`[N_dst, H]`), `er` (`[N_src, H]`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gat_nodes_forward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    slope: f32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, Option<usize>, usize, usize),
    dropout: (f32, u64),
    out: (usize, usize, usize),
    part: Option<(usize, usize)>,
    scores: (usize, usize),
) -> PyResult<usize> {
    let dropout = dropout_of(dropout);
    with_gat(graph, heads, feat, slope, |gat| {
        let (dst, src) = (gat.graph().num_dst(), gat.graph().num_src());
        let inputs = gat_node_inputs(inputs, (dst, src), heads, feat);
        let (out, part) = (saved(out, dst, heads, feat), gat_part(part, dst, heads, feat));
        let scores = gat_scores(scores, (dst, src), heads);
        // SAFETY: as in `_gt_forward` (the part's two and the scores are the caller's outputs too).
        py.detach(|| unsafe {
            external::gat_nodes_forward(gat, call(stream, workspace), inputs, dropout, out, part, scores)
        })
        .map_err(to_py)
    })
}

/// GAT's node scores `(el, er)` at their addresses, for `(N_dst, N_src)` nodes.
fn gat_scores((el, er): (usize, usize), (dst, src): (usize, usize), heads: u32) -> (External, External) {
    (features(el, dst, heads, 1), features(er, src, heads, 1))
}

/// GAT's feature inputs `(h, h_dst, a_dst, a_src)` at their addresses, for `(N_dst, N_src)` nodes.
fn gat_node_inputs(
    (h, h_dst, a_dst, a_src): (usize, Option<usize>, usize, usize),
    (dst, src): (usize, usize),
    heads: u32,
    feat: u32,
) -> external::GatNodeInputs {
    let f = |addr, nodes| features(addr, nodes, heads, feat);
    (f(h, src), h_dst.map(|x| f(x, dst)), f(a_dst, 1), f(a_src, 1))
}

/// GAT backward after `_gat_nodes_forward`, from its saved state, part and node scores: into `dh`,
/// `dh_dst` (only when the forward had `h_dst`), `da_dst` and `da_src`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gat_nodes_backward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    slope: f32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, Option<usize>, usize, usize),
    dropout: (f32, u64),
    out: (usize, usize, usize),
    part: Option<(usize, usize)>,
    scores: (usize, usize),
    d_out: usize,
    grads: (usize, Option<usize>, usize, usize),
) -> PyResult<usize> {
    let dropout = dropout_of(dropout);
    with_gat(graph, heads, feat, slope, |gat| {
        let (dst, src) = (gat.graph().num_dst(), gat.graph().num_src());
        let inputs = gat_node_inputs(inputs, (dst, src), heads, feat);
        let grads = gat_node_inputs(grads, (dst, src), heads, feat);
        let scores = gat_scores(scores, (dst, src), heads);
        let state = (saved(out, dst, heads, feat), gat_part(part, dst, heads, feat), scores);
        let d_out = features(d_out, dst, heads, feat);
        // SAFETY: as in `_gt_backward`.
        py.detach(|| unsafe {
            external::gat_nodes_backward(gat, call(stream, workspace), inputs, dropout, state, d_out, grads)
        })
        .map_err(to_py)
    })
}

/// GATv2 forward over `xl` (`[N_src, H, F]`), `xr` (`[N_dst, H, F]`) and `a` (`[H, F]`), with
/// attention dropout `(p, seed)`, into `out`, `lse`, `stats` (as `_gt_forward`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gatv2_forward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    slope: f32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, usize, usize),
    dropout: (f32, u64),
    out: (usize, usize, usize),
) -> PyResult<usize> {
    let (xl, xr, a) = inputs;
    let dropout = dropout_of(dropout);
    with_gatv2(graph, heads, feat, slope, |gatv2| {
        let (dst, src) = (gatv2.graph().num_dst(), gatv2.graph().num_src());
        let f = |addr, nodes| features(addr, nodes, heads, feat);
        let (inputs, out) = ((f(xl, src), f(xr, dst), f(a, 1)), saved(out, dst, heads, feat));
        // SAFETY: as in `_gt_forward`.
        py.detach(|| unsafe { external::gatv2_forward(gatv2, call(stream, workspace), inputs, dropout, out) })
            .map_err(to_py)
    })
}

/// GATv2 backward into `dxl`, `dxr`, `da` from the forward's saved state and dropout (as
/// `_gt_backward`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _gatv2_backward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    slope: f32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, usize, usize),
    dropout: (f32, u64),
    out: (usize, usize, usize),
    d_out: usize,
    grads: (usize, usize, usize),
) -> PyResult<usize> {
    let ((xl, xr, a), (dxl, dxr, da)) = (inputs, grads);
    let dropout = dropout_of(dropout);
    with_gatv2(graph, heads, feat, slope, |gatv2| {
        let (dst, src) = (gatv2.graph().num_dst(), gatv2.graph().num_src());
        let f = |addr, nodes| features(addr, nodes, heads, feat);
        let inputs = (f(xl, src), f(xr, dst), f(a, 1));
        let grads = (f(dxl, src), f(dxr, dst), f(da, 1));
        let (out, d_out) = (saved(out, dst, heads, feat), f(d_out, dst));
        // SAFETY: as in `_gt_backward`.
        py.detach(|| unsafe {
            external::gatv2_backward(gatv2, call(stream, workspace), inputs, dropout, out, d_out, grads)
        })
        .map_err(to_py)
    })
}

/// AGNN forward into `out` (as `_gt_forward`; the graph must be square), β read by the kernels
/// from `beta` (the address of one float32 on the graph's device; the host never reads it).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _agnn_forward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    h: usize,
    beta: usize,
    out: usize,
) -> PyResult<usize> {
    with_agnn(graph, heads, feat, |agnn| {
        let nodes = agnn.graph().num_dst();
        let (h, out) = (features(h, nodes, heads, feat), features(out, nodes, heads, feat));
        let beta = External { addr: beta as u64, len: 1 };
        // SAFETY: as in `_gt_forward` (`beta` too: a live, 16-byte aligned float32 on the device).
        py.detach(|| unsafe { external::agnn_forward(agnn, call(stream, workspace), h, beta, out) }).map_err(to_py)
    })
}

/// AGNN backward into `dh` and `d_beta` (one float32); returns the workspace bytes.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _agnn_backward(
    py: Python<'_>,
    graph: &PreparedGraph,
    heads: u32,
    feat: u32,
    stream: Option<u64>,
    workspace: Option<(usize, usize)>,
    inputs: (usize, usize),
    d_out: usize,
    grads: (usize, usize),
) -> PyResult<usize> {
    let ((h, beta), (dh, d_beta)) = (inputs, grads);
    with_agnn(graph, heads, feat, |agnn| {
        let nodes = agnn.graph().num_dst();
        let f = |addr| features(addr, nodes, heads, feat);
        let scalar = |addr: usize| External { addr: addr as u64, len: 1 };
        let (inputs, d_out, grads) = ((f(h), scalar(beta)), f(d_out), (f(dh), scalar(d_beta)));
        // SAFETY: as in `_agnn_forward`; `dh` and `d_beta` are fresh `torch.empty` tensors.
        py.detach(|| unsafe { external::agnn_backward(agnn, call(stream, workspace), inputs, d_out, grads) })
            .map_err(to_py)
    })
}

/// The kernels' attention-dropout mask of `num_edges` CSR edges × `heads` heads under
/// probability `p` and `seed`, edge-major, one byte each (1 kept, 0 dropped): what the tests'
/// references multiply by (the kernels regenerate it; nothing stores it).
#[pyfunction]
fn _dropout_keep(py: Python<'_>, p: f32, seed: u64, num_edges: u64, heads: u32) -> PyResult<Vec<u8>> {
    let dropout = Dropout { p, seed };
    py.detach(|| {
        let mut mask = Vec::with_capacity(num_edges as usize * heads as usize);
        for edge in 0..num_edges {
            for head in 0..heads {
                mask.push(u8::from(external::dropout_keep(dropout, edge, head)?));
            }
        }
        Ok(mask)
    })
    .map_err(to_py)
}

/// The module: the prepared graph type, the op entry points and the molecule readers.
#[pymodule]
fn _dfgnn(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PreparedGraph>()?;
    m.add_function(wrap_pyfunction!(_gt_forward, m)?)?;
    m.add_function(wrap_pyfunction!(_gt_backward, m)?)?;
    m.add_function(wrap_pyfunction!(_gat_forward, m)?)?;
    m.add_function(wrap_pyfunction!(_gat_backward, m)?)?;
    m.add_function(wrap_pyfunction!(_gat_saves_part, m)?)?;
    m.add_function(wrap_pyfunction!(_gat_nodes_forward, m)?)?;
    m.add_function(wrap_pyfunction!(_gat_nodes_backward, m)?)?;
    m.add_function(wrap_pyfunction!(_gatv2_forward, m)?)?;
    m.add_function(wrap_pyfunction!(_gatv2_backward, m)?)?;
    m.add_function(wrap_pyfunction!(_agnn_forward, m)?)?;
    m.add_function(wrap_pyfunction!(_agnn_backward, m)?)?;
    m.add_function(wrap_pyfunction!(_dropout_keep, m)?)?;
    datasets::register(m)
}
