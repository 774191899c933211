//! GT through cuSPARSE (feature `cusparse`): the DGL-sparse-style baseline, cuSPARSE's SDDMM and
//! SpMM around dfgnn's own edge-softmax kernels (those of the `unfused` baseline), forward and
//! backward, on a CUDA device only.
//!
//! ```text
//! forward, per head h:   S_h = c·q_h·k_hᵀ ∘ spy(A)   (SDDMM)     α_h = softmax_rows(S_h)   (kernel)
//!                        o_h = α_h·v_h                (SpMM)
//! backward, per head h:  dα_h = dO_h·v_hᵀ ∘ spy(A)    (SDDMM)     ds_h = α_h∘(dα_h − rowsum(α_h∘dα_h))  (kernel)
//!                        dq_h = c·ds_h·k_h            (SpMM over the CSR)
//!                        dk_h = c·ds_hᵀ·q_h, dv_h = α_hᵀ·dO_h   (SpMM over the CSC, values gathered into its order)
//! ```
//!
//! Layout: q, k, v and every result stay `[N, H, F]` row-major; cuSPARSE reads and writes one head
//! in place as the `N × F` matrix of leading dimension `H·F` starting `h·F` elements in (no copies).
//! A head's scores, α, dα and ds are a contiguous run of `E` values (`[H, E]` arrays), since
//! cuSPARSE's CSR values have no stride; the softmax kernels run once per head over their run.
//! The forward keeps α for the backward, as an autograd framework does (`4·E·H` bytes).
//!
//! The pattern: the graph's CSR with the columns of each row sorted (what cuSPARSE's CSR
//! routines expect; the results do not depend on the order within a row) and its transpose, both
//! with 32-bit indices, plus the transpose's slot → CSR entry permutation that gathers values into
//! its order. They are built on the host and uploaded once, in [`CusparseGt::new`].
//!
//! Deterministic: no product over the transposed matrix (which cuSPARSE documents as possibly
//! varying run to run) is asked for, and SpMM is `CUSPARSE_SPMM_CSR_ALG3`, the CSR algorithm
//! cuSPARSE documents as bit-reproducible ([`SpmmAlgorithm`]). The products' outputs are zeroed
//! before they write them (the softmax kernels write every value of theirs).
//!
//! For the GPU test only (hidden from the docs): [`CusparseGt::with_spmm_algorithm`] picks another
//! SpMM algorithm, [`CusparseGt::with_synchronized_calls`] waits for the stream after every step,
//! and [`CusparseGt::stages`] returns every intermediate (scores, α, out, dα, ds, dq, dk, dv), so
//! that two runs can be compared stage by stage.

mod library;

use dfgnn_device::abi::{EdgeSoftmaxBackwardParams, EdgeSoftmaxParams};
use dfgnn_device::kernels::unfused::{EDGE_SOFTMAX, EDGE_SOFTMAX_BACKWARD};
use dfgnn_device::simt::{GSlice, GSliceMut};
use dfgnn_graphs::Csr;

use crate::backend::{BackendKind, Buffer};
use crate::baseline::{edge_team_lanes, launch_items};
use crate::error::{Error, Result};
use crate::graph::DeviceGraph;
use crate::gt::{GtConfig, GtGrads};
#[doc(hidden)]
pub use library::SpmmAlgorithm;
use library::{Csr32, Handle, Head};

/// GT on one prepared graph and feature shape through cuSPARSE.
pub struct CusparseGt<'g, 'b> {
    graph: &'g DeviceGraph<'b>,
    handle: Handle,
    /// The CSR, columns sorted within each row.
    rows: Csr32,
    /// Its transpose (the CSC as a CSR of `Aᵀ`).
    columns: Csr32,
    /// For each entry of `columns`, the entry of `rows` it is.
    to_columns: Buffer<i32>,
    heads: u32,
    feat: u32,
    scale: f32,
    /// The SpMM algorithm ([`SpmmAlgorithm::Csr3`] unless a test picks another).
    spmm: SpmmAlgorithm,
    /// Whether every step waits for the stream when queued (a test's check for ordering races).
    synchronized: bool,
}

/// The output of [`CusparseGt::forward`] and what its backward needs.
pub struct CusparseForward<'a> {
    /// `[N_dst, H, F]` the attention output.
    pub out: Buffer<f32>,
    /// `[H, E]` the attention weights, in the sorted CSR's entry order.
    alpha: Buffer<f32>,
    q: &'a Buffer<f32>,
    k: &'a Buffer<f32>,
    v: &'a Buffer<f32>,
}

impl<'g, 'b> CusparseGt<'g, 'b> {
    /// Prepares the cuSPARSE path on `graph` for `config`'s heads, features and scale
    /// (`config.plan` does not apply: cuSPARSE picks its own kernels). Refused under the emulator
    /// ([`Error::Unsupported`]), on graphs past cuSPARSE's 32-bit indices, and when `libcusparse`
    /// cannot be loaded ([`Error::Cusparse`]).
    pub fn new(graph: &'g DeviceGraph<'b>, config: &GtConfig) -> Result<Self> {
        let backend = graph.backend();
        if backend.kind() != BackendKind::Cuda {
            return Err(Error::Unsupported {
                what: "the cuSPARSE path on the emulator (it runs on a CUDA device only)".to_string(),
            });
        }
        let (heads, feat) = (config.heads, config.feat);
        if heads == 0 || feat == 0 {
            return Err(Error::Unsupported { what: format!("{heads} heads x {feat} features (at least 1 each)") });
        }
        let scale = config.score_scale()?;
        library::index(graph.nnz(), "edges")?;
        library::index(graph.num_dst(), "destination nodes")?;
        library::index(graph.num_src(), "source nodes")?;
        let handle = Handle::new(backend)?;
        let mut columns = backend.download(&graph.d_columns)?;
        for row in graph.row_offsets().windows(2) {
            columns[row[0] as usize..row[1] as usize].sort_unstable();
        }
        let sorted = Csr::new(graph.num_dst(), graph.num_src(), graph.row_offsets().to_vec(), columns)?;
        let transpose = sorted.try_transpose(&dfgnn_graphs::Limits::default())?;
        // Every entry id is below the edge count, which fits 32-bit indices (checked above).
        let to_columns: Vec<i32> = transpose.edge_ids_u32()?.into_iter().map(|e| e as i32).collect();
        Ok(Self {
            graph,
            rows: Csr32::upload(backend, graph.num_dst(), graph.num_src(), sorted.offsets(), sorted.columns())?,
            columns: Csr32::upload(backend, graph.num_src(), graph.num_dst(), transpose.offsets(), transpose.rows())?,
            to_columns: backend.upload(&to_columns)?,
            handle,
            heads,
            feat,
            scale,
            spmm: SpmmAlgorithm::Csr3,
            synchronized: false,
        })
    }

    /// The path with SpMM through `algorithm` instead of [`SpmmAlgorithm::Csr3`] (for the GPU
    /// test, which checks which algorithms give the same bits on every run).
    #[doc(hidden)]
    pub fn with_spmm_algorithm(mut self, algorithm: SpmmAlgorithm) -> Self {
        self.spmm = algorithm;
        self
    }

    /// The path waiting for the stream after every cuSPARSE call and kernel when `on` (for the
    /// GPU test: bits that then agree across runs but otherwise do not point at an ordering race).
    #[doc(hidden)]
    pub fn with_synchronized_calls(mut self, on: bool) -> Self {
        self.synchronized = on;
        self
    }

    /// The SpMM algorithm in use.
    #[doc(hidden)]
    pub fn spmm_algorithm(&self) -> SpmmAlgorithm {
        self.spmm
    }

    /// Runs the forward and the backward and returns every stage's output, downloaded, in the
    /// order they are computed: `scores` and `alpha` (`[H, E]`, sorted CSR order), `out`,
    /// `d_alpha`, `ds` (`[H, E]`), `dq`, `dk`, `dv`. For the GPU test: the first stage whose bits
    /// differ between two runs is the one that varies.
    #[doc(hidden)]
    pub fn stages(
        &self,
        q: &Buffer<f32>,
        k: &Buffer<f32>,
        v: &Buffer<f32>,
        d_out: &Buffer<f32>,
    ) -> Result<Vec<(&'static str, Vec<f32>)>> {
        let backend = self.graph.backend();
        let (fwd, scores) = self.forward_keeping(q, k, v)?;
        let (grads, d_alpha, ds) = self.backward_keeping(&fwd, d_out)?;
        let mut stages = Vec::new();
        for (name, buffer) in [
            ("scores", &scores),
            ("alpha", &fwd.alpha),
            ("out", &fwd.out),
            ("d_alpha", &d_alpha),
            ("ds", &ds),
            ("dq", &grads.dq),
            ("dk", &grads.dk),
            ("dv", &grads.dv),
        ] {
            stages.push((name, backend.download(buffer)?));
        }
        Ok(stages)
    }

    /// Waits for the stream when the path is synchronized ([`CusparseGt::with_synchronized_calls`]).
    fn step(&self) -> Result<()> {
        if self.synchronized { self.graph.backend().synchronize() } else { Ok(()) }
    }

    /// The score scale `c`.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Heads and features per head.
    pub fn shape(&self) -> (u32, u32) {
        (self.heads, self.feat)
    }

    /// One line saying what runs, for reports.
    pub fn summary(&self) -> String {
        format!(
            "cusparse: per head, cuSPARSE SDDMM (CSR) + dfgnn edge softmax + cuSPARSE SpMM ({}; the \
             backward's transposes over the CSC), {}x{}",
            self.spmm.name(),
            self.heads,
            self.feat
        )
    }

    fn head(&self, head: u32) -> Head {
        Head { heads: self.heads, feat: self.feat, head }
    }

    /// `out = softmax(c·q·kᵀ over the edges)·v`; `q` is `[N_dst, H, F]`, `k` and `v` are
    /// `[N_src, H, F]`.
    pub fn forward<'a>(
        &self,
        q: &'a Buffer<f32>,
        k: &'a Buffer<f32>,
        v: &'a Buffer<f32>,
    ) -> Result<CusparseForward<'a>> {
        Ok(self.forward_keeping(q, k, v)?.0)
    }

    /// [`CusparseGt::forward`], also returning the `[H, E]` scores.
    fn forward_keeping<'a>(
        &self,
        q: &'a Buffer<f32>,
        k: &'a Buffer<f32>,
        v: &'a Buffer<f32>,
    ) -> Result<(CusparseForward<'a>, Buffer<f32>)> {
        let g = self.graph;
        let backend = g.backend();
        let width = self.heads as usize * self.feat as usize;
        for (what, array, nodes) in [("q", q, g.num_dst()), ("k", k, g.num_src()), ("v", v, g.num_src())] {
            if array.len() != nodes * width {
                return Err(Error::ShapeMismatch {
                    op: "cusparse forward",
                    what,
                    expected: nodes * width,
                    got: array.len(),
                });
            }
        }
        let edges = g.nnz() * self.heads as usize;
        let mut scores = backend.zeros::<f32>(edges)?;
        let mut alpha = backend.alloc::<f32>(edges)?;
        let mut out = backend.zeros::<f32>(g.num_dst() * width)?;
        for head in 0..self.heads {
            let at = self.head(head);
            library::sddmm(backend, &self.handle, &self.rows, (q, k), at, self.scale, &mut scores)?;
            self.step()?;
            let params = EdgeSoftmaxParams {
                offsets: g.d_row_offsets.view(),
                scores: self.run(&scores, head)?,
                alpha: self.run_mut(&mut alpha, head)?,
                lse: GSliceMut::empty(),
                num_rows: g.num_dst() as u32,
                heads: 1,
                team_lanes: edge_team_lanes(g.nnz(), g.num_dst()),
            };
            // SAFETY: the head's runs of E scores and E weights lie in two distinct live `[H, E]`
            // buffers (`run`); the offsets are the graph's validated ones, whose rows the sorted
            // CSR shares; no lse is written.
            unsafe { launch_items(backend, &EDGE_SOFTMAX, g.num_dst() as u64, params.team_lanes, &params)? };
            self.step()?;
            library::spmm(
                backend,
                &self.handle,
                &self.rows,
                (&alpha, self.heads as usize, head as usize),
                v,
                at,
                (1.0, self.spmm),
                &mut out,
            )?;
            self.step()?;
        }
        Ok((CusparseForward { out, alpha, q, k, v }, scores))
    }

    /// The gradients of `Σ d_out ⊙ out` with respect to q, k and v.
    pub fn backward(&self, fwd: &CusparseForward<'_>, d_out: &Buffer<f32>) -> Result<GtGrads> {
        Ok(self.backward_keeping(fwd, d_out)?.0)
    }

    /// [`CusparseGt::backward`], also returning the `[H, E]` dα and ds.
    fn backward_keeping(
        &self,
        fwd: &CusparseForward<'_>,
        d_out: &Buffer<f32>,
    ) -> Result<(GtGrads, Buffer<f32>, Buffer<f32>)> {
        let g = self.graph;
        let backend = g.backend();
        let width = self.heads as usize * self.feat as usize;
        if d_out.len() != g.num_dst() * width {
            return Err(Error::ShapeMismatch {
                op: "cusparse backward",
                what: "d_out",
                expected: g.num_dst() * width,
                got: d_out.len(),
            });
        }
        let (heads, edges) = (self.heads as usize, g.nnz() * self.heads as usize);
        let mut d_alpha = backend.zeros::<f32>(edges)?;
        let mut ds = backend.alloc::<f32>(edges)?;
        let mut in_columns = backend.alloc::<f32>(g.nnz())?;
        let mut dq = backend.zeros::<f32>(g.num_dst() * width)?;
        let mut dk = backend.zeros::<f32>(g.num_src() * width)?;
        let mut dv = backend.zeros::<f32>(g.num_src() * width)?;
        for head in 0..self.heads {
            let (at, part) = (self.head(head), head as usize);
            library::sddmm(backend, &self.handle, &self.rows, (d_out, fwd.v), at, 1.0, &mut d_alpha)?;
            self.step()?;
            let params = EdgeSoftmaxBackwardParams {
                offsets: g.d_row_offsets.view(),
                alpha: self.run(&fwd.alpha, head)?,
                d_alpha: self.run(&d_alpha, head)?,
                d_scores: self.run_mut(&mut ds, head)?,
                num_rows: g.num_dst() as u32,
                heads: 1,
                team_lanes: edge_team_lanes(g.nnz(), g.num_dst()),
            };
            // SAFETY: the head's runs of E values lie in three distinct live `[H, E]` buffers
            // (`run`), ds written, α and dα read; the offsets are the graph's validated ones.
            unsafe { launch_items(backend, &EDGE_SOFTMAX_BACKWARD, g.num_dst() as u64, params.team_lanes, &params)? };
            self.step()?;
            let (scaled, plain) = ((self.scale, self.spmm), (1.0, self.spmm));
            library::spmm(backend, &self.handle, &self.rows, (&ds, heads, part), fwd.k, at, scaled, &mut dq)?;
            self.step()?;
            library::gather(backend, &self.handle, (&ds, heads, part), &self.to_columns, &mut in_columns)?;
            self.step()?;
            library::spmm(backend, &self.handle, &self.columns, (&in_columns, 1, 0), fwd.q, at, scaled, &mut dk)?;
            self.step()?;
            library::gather(backend, &self.handle, (&fwd.alpha, heads, part), &self.to_columns, &mut in_columns)?;
            self.step()?;
            library::spmm(backend, &self.handle, &self.columns, (&in_columns, 1, 0), d_out, at, plain, &mut dv)?;
            self.step()?;
        }
        Ok((GtGrads { dq, dk, dv }, d_alpha, ds))
    }

    /// Head `head`'s run of `E` values of the `[H, E]` array `values`, as a kernel view.
    fn run(&self, values: &Buffer<f32>, head: u32) -> Result<GSlice<f32>> {
        let (start, len) = self.run_range(values.len(), head)?;
        if len == 0 {
            return Ok(GSlice::empty());
        }
        // SAFETY: `start..start + len` lies within the live buffer (`run_range`); the launch that
        // takes the view keeps the buffer alive until it is queued, and device memory is freed in
        // stream order after it.
        Ok(unsafe { GSlice::from_raw_parts(values.device_addr() + start, len) })
    }

    /// [`CusparseGt::run`], writable.
    fn run_mut(&self, values: &mut Buffer<f32>, head: u32) -> Result<GSliceMut<f32>> {
        let (start, len) = self.run_range(values.len(), head)?;
        if len == 0 {
            return Ok(GSliceMut::empty());
        }
        // SAFETY: as in `run`; `&mut` makes this the buffer's only writable view.
        Ok(unsafe { GSliceMut::from_raw_parts(values.device_addr() + start, len) })
    }

    /// The byte offset and length of head `head`'s run of `E` values in an `[H, E]` array of `len`.
    fn run_range(&self, len: usize, head: u32) -> Result<(u64, usize)> {
        let nnz = self.graph.nnz();
        let expected = nnz * self.heads as usize;
        if len != expected || head >= self.heads {
            return Err(Error::ShapeMismatch { op: "cusparse", what: "[H, E] values", expected, got: len });
        }
        Ok(((head as usize * nnz * std::mem::size_of::<f32>()) as u64, nnz))
    }
}
