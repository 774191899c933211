//! AGNN — attention by cosine similarity — forward and backward, on GT's fused passes.
//!
//! ```text
//! hn_i = h_i / max(‖h_i‖, eps)    s_ij = β·hn_i·hn_j    α_ij = softmax_j(s_ij)    o_i = Σ_j α_ij·h_j
//! ```
//! per head (norms over each head's `F` features; eps = 1e-12 as `torch.nn.functional.normalize`).
//! β lives in device memory (a one-element buffer): the kernels read it, the host never does, so
//! a call queues work without waiting and a captured CUDA graph reads the β of each replay
//! ([`Agnn::forward_device_beta`]; [`Agnn::forward`] uploads a host `f32`). The attention is GT's
//! with `q = β·hn`, `k = hn`, `v = h` and score scale 1, run by AGNN's fused kernels
//! (`dfgnn_device::kernels::agnn::VARIANTS`, GT's passes and shapes): their keys are the
//! per-(node, head) inverse norms, each made into `hn_j` from the gathered value `h_j`, so an
//! edge costs one gathered vector, not two, and `hn` is not stored. The forward normalises (one
//! kernel writes the queries, the norms and their inverses; also `hn` where GT's forward over
//! tiles or a baseline reads it), then runs the attention. The backward runs the attention's
//! backward and folds `β·dq + dk` through the normalisation (making `hn` from `h` again, bit for
//! bit), adds `dv`, and writes each node and head's share of `dβ = Σ ds·hn_i·hn_j = Σ_i
//! hn_i·dq_i`: on the fused schedules the column pass does that at the end of each source node
//! (the row pass has written `dq`), so `dk` and `dv` are never stored; after a baseline's
//! backward (on `hn`) one kernel does it from `dq`, `dk` and `dv`. The shares are summed on the
//! device in a fixed order ([`Backend::sum_into`]) into a one-element buffer.
//!
//! A non-finite β is refused where the host holds it ([`Agnn::forward`]); one in device memory
//! cannot be checked without a wait. It enters arithmetic only (no index, no size depends on it),
//! so it never faults or reads out of bounds: the fused schedules give NaN outputs and gradients,
//! and the baselines' softmax takes a row of NaN scores for an empty one (zeros).

use dfgnn_device::abi::{AgnnNormalizeBackwardParams, AgnnNormalizeParams, DropoutParams, NormalizeGrads};
use dfgnn_device::kernels::agnn::{self, AGNN_NORMALIZE, AGNN_NORMALIZE_BACKWARD, AGNN_NORMALIZE_W4};
use dfgnn_device::kernels::common::node_rows::{AGNN_LANES, NodeLanes};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, LaunchConfig, WARP_SIZE};

use crate::backend::{Backend, Buffer};
use crate::error::{Error, Result};
use crate::graph::DeviceGraph;
use crate::gt::{Gt, GtConfig, GtForward, KeyedGrads};
use crate::plan::{Plan, PlanOptions};

/// The clamp of the norm (as `torch.nn.functional.normalize`).
pub const AGNN_NORM_EPS: f32 = 1e-12;

/// Threads per block of the normalisation kernels (one warp per node and head).
const NORMALIZE_BLOCK: u32 = 256;

/// How to build an [`Agnn`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgnnConfig {
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// Overrides of the scheduler's choices.
    pub plan: PlanOptions,
}

impl AgnnConfig {
    /// `heads` × `feat` with the default schedule.
    pub fn new(heads: u32, feat: u32) -> Self {
        Self { heads, feat, ..Self::default() }
    }
}

/// AGNN attention on one prepared (square) graph and feature shape, with its plan.
pub struct Agnn<'g, 'b> {
    gt: Gt<'g, 'b>,
    graph: &'g DeviceGraph<'b>,
}

/// The output of [`Agnn::forward`] and what the backward needs (it borrows `h`, and β when it
/// came from the caller, for `'a`).
pub struct AgnnForward<'a> {
    /// `[N, H, F]` the normalised features where the forward wrote them (tiles, baselines), else
    /// empty; the queries `β·hn`; `[N, H]` the inverse norms (the fused kernels' keys). The
    /// attention state below views them, so they are private and live exactly as long as this
    /// struct.
    hn: Buffer<f32>,
    _queries: Buffer<f32>,
    inverse_norms: Buffer<f32>,
    norm: Buffer<f32>,
    attention: GtForward<'a>,
    /// `[N, H, F]` the features.
    h: GSlice<f32>,
    /// `[1]` β: the caller's buffer, or `beta_upload`.
    beta: GSlice<f32>,
    /// The upload of a host β ([`Agnn::forward`]), viewed by `beta`.
    _beta_upload: Option<Buffer<f32>>,
}

impl AgnnForward<'_> {
    /// `[N, H, F]` the output.
    pub fn out(&self) -> &Buffer<f32> {
        &self.attention.out
    }

    /// `[N, H]` log-sum-exp of each row's scores.
    pub fn lse(&self) -> &Buffer<f32> {
        &self.attention.lse
    }

    /// `[N, H]` the norms `‖h‖` (before the clamp).
    pub fn norms(&self) -> &Buffer<f32> {
        &self.norm
    }
}

/// The gradients of [`Agnn::backward`].
pub struct AgnnGrads {
    /// `[N, H, F]` gradient of the features.
    pub dh: Buffer<f32>,
    /// `[1]` gradient of β, on the device (download it to read it).
    pub d_beta: Buffer<f32>,
}

/// `per_warp` (node, head) pairs per warp.
fn normalize_config(nodes: usize, heads: u32, per_warp: usize) -> Result<LaunchConfig> {
    let warps = (nodes as u64 * heads as u64).div_ceil(per_warp as u64);
    let blocks = warps.div_ceil((NORMALIZE_BLOCK / WARP_SIZE) as u64);
    if blocks > i32::MAX as u64 {
        return Err(Error::Unsupported { what: format!("{} node-heads in one launch", nodes as u64 * heads as u64) });
    }
    Ok(LaunchConfig { grid: Dim3::x(blocks.max(1) as u32), block: Dim3::x(NORMALIZE_BLOCK), shared_bytes: 0 })
}

impl<'g, 'b> Agnn<'g, 'b> {
    /// Plans AGNN on `graph` (which must be square: every node is a source and a destination).
    pub fn new(graph: &'g DeviceGraph<'b>, config: &AgnnConfig) -> Result<Self> {
        if graph.num_dst() != graph.num_src() {
            return Err(Error::Unsupported {
                what: format!(
                    "AGNN on a bipartite graph ({} destinations, {} sources)",
                    graph.num_dst(),
                    graph.num_src()
                ),
            });
        }
        let gt = Gt::with_table(
            graph,
            &GtConfig { heads: config.heads, feat: config.feat, scale: Some(1.0), plan: config.plan.clone() },
            agnn::VARIANTS,
            true,
        )?;
        Ok(Self { gt, graph })
    }

    /// The plan of the attention kernels.
    pub fn plan(&self) -> &Plan {
        self.gt.plan()
    }

    fn backend(&self) -> &'b Backend {
        self.graph.backend()
    }

    /// The graph this AGNN was planned on.
    pub fn graph(&self) -> &'g DeviceGraph<'b> {
        self.graph
    }

    /// `out = softmax(β·cos(h_i, h_j) over the edges)·h`. `h` is `[N, H, F]`; β, a host value,
    /// must be finite, and is uploaded (see [`Agnn::forward_device_beta`] for one on the device).
    pub fn forward<'a>(&self, h: &'a Buffer<f32>, beta: f32) -> Result<AgnnForward<'a>> {
        if !beta.is_finite() {
            return Err(Error::Unsupported { what: format!("β = {beta}") });
        }
        let upload = self.backend().upload(&[beta])?;
        let view = upload.view();
        // The upload moves into the result with the view of it; its device memory does not move.
        self.forward_views(h, view, Some(upload))
    }

    /// [`Agnn::forward`] with β read by the kernels from `beta`, a one-element buffer on the
    /// device (the host reads nothing: no wait, and a captured CUDA graph reads the β of each
    /// replay). A non-finite β is not refused (that would need a wait): see the module's docs.
    pub fn forward_device_beta<'a>(&self, h: &'a Buffer<f32>, beta: &'a Buffer<f32>) -> Result<AgnnForward<'a>> {
        if beta.len() != 1 {
            return Err(Error::ShapeMismatch { op: "agnn forward", what: "beta", expected: 1, got: beta.len() });
        }
        self.forward_views(h, beta.view(), None)
    }

    fn forward_views<'a>(
        &self,
        h: &'a Buffer<f32>,
        beta: GSlice<f32>,
        beta_upload: Option<Buffer<f32>>,
    ) -> Result<AgnnForward<'a>> {
        let heads = self.gt.plan().heads;
        let nodes = self.graph.num_dst();
        let expected = self.features(nodes);
        if h.len() != expected {
            return Err(Error::ShapeMismatch { op: "agnn forward", what: "h", expected, got: h.len() });
        }
        let backend = self.backend();
        // The fused row kernels make their keys from `h` and the inverse norms; GT's forward over
        // tiles and the baselines read `hn`.
        let rows = self.gt.forward_runs_rows(&DropoutParams::OFF);
        let mut hn = backend.alloc::<f32>(if rows { 0 } else { expected })?;
        let mut q = backend.alloc::<f32>(expected)?;
        let mut inv = backend.alloc::<f32>(nodes * heads as usize)?;
        let mut norm = backend.alloc::<f32>(nodes * heads as usize)?;
        self.normalize(h.view(), beta, (hn.view_mut(), q.view_mut(), norm.view_mut(), inv.view_mut()))?;
        // `hn`, `q` and `inv` move into the result with the views of them; their device memory
        // does not move. The attention's scale is 1 (`Agnn::new`): β is in `q`.
        let keys = if rows { inv.view() } else { hn.view() };
        let attention = self.gt.forward_views(q.view(), keys, h.view(), DropoutParams::OFF)?;
        Ok(AgnnForward {
            hn,
            _queries: q,
            inverse_norms: inv,
            norm,
            attention,
            h: h.view(),
            beta,
            _beta_upload: beta_upload,
        })
    }

    /// `[N, H, F]` elements of `nodes` nodes.
    fn features(&self, nodes: usize) -> usize {
        nodes * self.gt.plan().heads as usize * self.gt.plan().feat as usize
    }

    /// Launches the normalisation of `h` into `(hn, q, norm, inv)` (`hn` unwritten when empty).
    fn normalize(
        &self,
        h: GSlice<f32>,
        beta: GSlice<f32>,
        (hn, q, norm, inv): (GSliceMut<f32>, GSliceMut<f32>, GSliceMut<f32>, GSliceMut<f32>),
    ) -> Result<()> {
        let (heads, feat) = (self.gt.plan().heads, self.gt.plan().feat);
        let nodes = self.graph.num_dst();
        if nodes == 0 {
            return Ok(());
        }
        let params =
            AgnnNormalizeParams { h, beta, hn, q, norm, inv, nodes: nodes as u32, heads, feat, eps: AGNN_NORM_EPS };
        let layout = NodeLanes::new(feat as usize, AGNN_LANES);
        let kernel = if layout.width == 4 { &AGNN_NORMALIZE_W4 } else { &AGNN_NORMALIZE };
        let config = normalize_config(nodes, heads, layout.rows_per_warp())?;
        // SAFETY: `h` is a live `[N, H, F]` buffer and `beta` one live element (checked by the
        // callers, or the upload); `hn` is a fresh `[N, H, F]` buffer or empty, `q` a fresh
        // `[N, H, F]` one, `norm` and `inv` fresh `[N, H]` ones, all distinct (16-byte aligned,
        // as every buffer); the warps take the layout's (node, head) pairs and skip those past
        // the last; the 16-byte kernel only for `F % 4 == 0` (the layout's width).
        unsafe { self.backend().launch(kernel, &config, &params) }
    }

    /// `[N, H, F]` the normalised features `h / max(‖h‖, eps)` of `fwd`'s `h`, written now by the
    /// normalisation the forward ran: the bits of the keys whose scores the forward computed.
    pub fn normalized(&self, fwd: &AgnnForward<'_>) -> Result<Buffer<f32>> {
        let backend = self.backend();
        let nodes = self.graph.num_dst();
        let node_heads = nodes * self.gt.plan().heads as usize;
        let mut hn = backend.alloc::<f32>(self.features(nodes))?;
        let mut q = backend.alloc::<f32>(self.features(nodes))?;
        let (mut norm, mut inv) = (backend.alloc::<f32>(node_heads)?, backend.alloc::<f32>(node_heads)?);
        self.normalize(fwd.h, fwd.beta, (hn.view_mut(), q.view_mut(), norm.view_mut(), inv.view_mut()))?;
        Ok(hn)
    }

    /// The gradients of `Σ d_out ⊙ out` with respect to `h` and β (on the device, as β).
    pub fn backward(&self, fwd: &AgnnForward<'_>, d_out: &Buffer<f32>) -> Result<AgnnGrads> {
        let (heads, feat) = (self.gt.plan().heads, self.gt.plan().feat);
        let nodes = self.graph.num_dst();
        let backend = self.backend();
        let mut shares = backend.alloc::<f32>(nodes * heads as usize)?;
        // The fused passes' keys are the inverse norms, and their column pass does the
        // normalisation's backward; the baseline's keys are `hn`: the forward's, or written now
        // with the forward's arithmetic (a fused forward whose backward cannot hold the shape).
        let mut written = None;
        let fold = NormalizeGrads {
            norm: fwd.norm.view(),
            beta: fwd.beta,
            dq: GSlice::empty(),
            d_beta_shares: shares.view_mut(),
            eps: AGNN_NORM_EPS,
        };
        let grads = self.gt.backward_with_keys(
            &fwd.attention,
            |fused| {
                Ok(if fused {
                    fwd.inverse_norms.view()
                } else if fwd.hn.len() == self.features(nodes) {
                    fwd.hn.view()
                } else {
                    written.insert(self.normalized(fwd)?).view()
                })
            },
            Some(fold),
            d_out,
        )?;
        let dh = match grads {
            KeyedGrads::Features(dh) => dh,
            KeyedGrads::Attention(grads) => {
                let mut dh = backend.result("dh", self.features(nodes))?;
                if nodes > 0 {
                    let params = AgnnNormalizeBackwardParams {
                        h: fwd.h,
                        norm: fwd.norm.view(),
                        beta: fwd.beta,
                        dq: grads.dq.view(),
                        dk: grads.dk.view(),
                        dv: grads.dv.view(),
                        dh: dh.view_mut(),
                        d_beta_shares: shares.view_mut(),
                        nodes: nodes as u32,
                        heads,
                        feat,
                        eps: AGNN_NORM_EPS,
                    };
                    // SAFETY: all inputs are live `[N, H, F]` (and `[N, H]`, and β's one element)
                    // buffers, `dh` and `shares` are fresh and distinct from them; one warp per (node, head).
                    unsafe { backend.launch(&AGNN_NORMALIZE_BACKWARD, &normalize_config(nodes, heads, 1)?, &params)? };
                }
                dh
            }
        };
        let mut d_beta = backend.result("d_beta", 1)?;
        backend.sum_into(&shares, &mut d_beta)?;
        Ok(AgnnGrads { dh, d_beta })
    }
}
