//! GAT — graph attention with LeakyReLU scores of per-node scores — forward and backward, fused.
//!
//! ```text
//! el_i = ⟨h_dst_i, a_dst⟩   er_j = ⟨h_j, a_src⟩   s_ij = LeakyReLU(el_i + er_j)   α_ij = softmax_j(s_ij)   o_i = Σ_j α_ij·h_j
//! ```
//! per head. A node kernel computes `el` and `er` (`[N, H]`); the fused passes read per edge one
//! feature row and one scalar per head. The forward saves `el`, `er` and per-(row, head) state
//! only (O(N·H)); the backward's row pass gives `d el`, its column pass `d er` and the
//! aggregation's `dh`, and node kernels carry `d el`, `d er` to the features and, as per-block
//! partials summed in a fixed order, to the attention vectors. No float atomics: results are
//! bit-identical run after run. [`Gat::forward_precomputed`] takes `el` and `er` instead.

use dfgnn_device::abi::{
    ColumnGrads, DropoutParams, ForwardOut, GatBwdColsParams, GatBwdRowsParams, GatEdgeScoresParams, GatFwdParams,
    GatGroupParams, GatNodeScoresBackwardParams, GatNodeScoresParams, GatPartRowsParams, GatVectorGradParams,
    GatVectorSumParams, GroupParams, PartOut, RowGrads,
};
use dfgnn_device::kernels::gat::part::{GAT_PART_ROWS, PART_ROWS_PER_WARP};
use dfgnn_device::kernels::gat::{
    self, GAT_EDGE_SCORES, GAT_EDGE_SCORES_BACKWARD, GAT_NODE_SCORES, GAT_NODE_SCORES_BACKWARD,
    GAT_VECTOR_GRAD_PARTIALS, GAT_VECTOR_GRAD_SUM, GatVariant, NODE_HEADS_PER_WARP,
};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, LaunchConfig, WARP_SIZE};

use crate::backend::{Backend, Buffer};
use crate::baseline;
use crate::error::{Error, Result};
use crate::fused::{DevicePass, Fused, PassKernel, Side, dropout_params, partial_view};
use crate::graph::DeviceGraph;
use crate::plan::{self, Plan, PlanOptions, Schedule};

/// GAT's LeakyReLU negative slope by default.
pub const DEFAULT_GAT_SLOPE: f32 = 0.2;

/// Threads per block of the node kernels.
pub(crate) const NODE_BLOCK: u32 = 256;

/// Most partials of an attention vector's gradient (one per block of nodes).
const MAX_VECTOR_PARTIALS: usize = 1024;

/// How to build a [`Gat`].
#[derive(Clone, Debug, PartialEq)]
pub struct GatConfig {
    /// Heads `H` (at least 1).
    pub heads: u32,
    /// Features per head `F` (at least 1).
    pub feat: u32,
    /// The LeakyReLU negative slope (finite).
    pub slope: f32,
    /// Overrides of the scheduler's choices.
    pub plan: PlanOptions,
}

impl GatConfig {
    /// `heads` × `feat` with the default slope (0.2) and schedule.
    pub fn new(heads: u32, feat: u32) -> Self {
        Self { heads, feat, slope: DEFAULT_GAT_SLOPE, plan: PlanOptions::default() }
    }
}

/// The output of a GAT forward and what the backward needs (it borrows the inputs for `'a`).
pub struct GatForward<'a> {
    /// `[N_dst, H, F]` the attention output.
    pub out: Buffer<f32>,
    /// `[N_dst, H]` log-sum-exp of each row's scores (−∞ for an empty row).
    pub lse: Buffer<f32>,
    /// `[N_dst, H]` and `[N_src, H]`: the node scores `el`, `er` [`Gat::forward`] computed
    /// (the attention state below views them, so they live exactly as long as this struct).
    scores: Option<(Buffer<f32>, Buffer<f32>)>,
    el: GSlice<f32>,
    er: GSlice<f32>,
    /// `[N_dst, H, 2]` the fused forward's (max score in base-2 units, 1/sum); empty after a
    /// baseline forward.
    stats: Buffer<f32>,
    h: GSlice<f32>,
    /// `(h_dst, a_dst, a_src)` of [`Gat::forward`]; `None` after [`Gat::forward_precomputed`].
    full: Option<(GSlice<f32>, GSlice<f32>, GSlice<f32>)>,
    /// The attention dropout the forward ran with (the backward regenerates its mask).
    dropout: DropoutParams,
    /// `([N_dst, H, F], [N_dst, H])` the positive part `(o⁺, α⁺)` of a forward for training
    /// ([`Gat::set_saves_part`]), from which the backward's row pass needs no gather.
    part: Option<(Buffer<f32>, Buffer<f32>)>,
    _inputs: std::marker::PhantomData<&'a Buffer<f32>>,
}

impl GatForward<'_> {
    /// The node scores `(el, er)` ([`Gat::forward`]; `None` after
    /// [`Gat::forward_precomputed`], whose caller holds them).
    pub fn node_scores(&self) -> Option<(&Buffer<f32>, &Buffer<f32>)> {
        self.scores.as_ref().map(|(el, er)| (el, er))
    }

    /// `[N_dst, H, 2]` the fused forward's softmax state (empty after a baseline forward): what
    /// [`Gat::saved_forward`] takes back with `out` and `lse`.
    pub fn stats(&self) -> &Buffer<f32> {
        &self.stats
    }

    /// The positive part `(o⁺ [N_dst, H, F], α⁺ [N_dst, H])` the forward saved for the backward
    /// ([`Gat::set_saves_part`]), or `None`.
    pub fn part(&self) -> Option<(&Buffer<f32>, &Buffer<f32>)> {
        self.part.as_ref().map(|(o, a)| (o, a))
    }
}

/// The gradients of [`Gat::backward`].
pub struct GatGrads {
    /// `[N_src, H, F]`: through the aggregation and through `er`.
    pub dh: Buffer<f32>,
    /// `[N_dst, H, F]`: through `el` (on a square graph with one feature array, add it to `dh`).
    pub dh_dst: Buffer<f32>,
    /// `[H, F]`.
    pub da_dst: Buffer<f32>,
    /// `[H, F]`.
    pub da_src: Buffer<f32>,
}

/// The gradients of [`Gat::backward_precomputed`].
pub struct GatPrecomputedGrads {
    /// `[N_src, H, F]`: through the aggregation only.
    pub dh: Buffer<f32>,
    /// `[N_dst, H]`.
    pub d_el: Buffer<f32>,
    /// `[N_src, H]`.
    pub d_er: Buffer<f32>,
}

/// GAT attention on one prepared graph and feature shape, with its plan.
pub struct Gat<'g, 'b> {
    fused: Fused<'g, 'b>,
    slope: f32,
    dropout: DropoutParams,
    saves_part: bool,
}

/// One warp per `per_warp` (node, head) pairs.
fn node_config(nodes: usize, heads: u32, per_warp: usize) -> Result<LaunchConfig> {
    let warps = (nodes as u64 * heads as u64).div_ceil(per_warp as u64);
    let blocks = warps.div_ceil((NODE_BLOCK / WARP_SIZE) as u64);
    if blocks > i32::MAX as u64 {
        return Err(Error::Unsupported { what: format!("{} node-heads in one launch", nodes as u64 * heads as u64) });
    }
    Ok(LaunchConfig { grid: Dim3::x(blocks.max(1) as u32), block: Dim3::x(NODE_BLOCK), shared_bytes: 0 })
}

impl<'g, 'b> Gat<'g, 'b> {
    /// Plans GAT on `graph` for `config` (once) and uploads the plan's work lists.
    pub fn new(graph: &'g DeviceGraph<'b>, config: &GatConfig) -> Result<Self> {
        if !config.slope.is_finite() {
            return Err(Error::Unsupported { what: format!("LeakyReLU slope {}", config.slope) });
        }
        let limits = graph.backend().limits();
        let plan = plan::plan(gat::VARIANTS, &graph.shape(), config.heads, config.feat, limits, &config.plan)?;
        Ok(Self { fused: Fused::new(graph, plan)?, slope: config.slope, dropout: DropoutParams::OFF, saves_part: true })
    }

    /// Whether the next forwards also save each row's **positive part** for the backward (on by
    /// default): `o⁺_i = Σ α_ij·h_j` and `α⁺_i = Σ α_ij` over the edges with `el_i + er_j > 0`,
    /// one more `[N_dst, H, F]` and `[N_dst, H]` (see `dfgnn_device::kernels::gat::part`). With
    /// them the backward's row pass reads no neighbour's features; without, it gathers them
    /// again. Turn it off for inference. Only the fused forwards other than `row_group` save it.
    pub fn set_saves_part(&mut self, on: bool) {
        self.saves_part = on;
    }

    /// Attention dropout for the next forwards (and their backwards): each edge's weight of each
    /// head is dropped with probability `p` and the kept ones scaled by `1 / (1 − p)`, the mask a
    /// pure function of `seed`, the edge's CSR id and the head (the same on every schedule and
    /// backend; `dfgnn_reference::dropout_keep` computes it). `p = 0` turns dropout off.
    /// `p` must be in `[0, 1)`; dropout runs on the fused schedules only.
    pub fn set_dropout(&mut self, p: f32, seed: u64) -> Result<()> {
        self.dropout = dropout_params(p, seed)?;
        Ok(())
    }

    /// The GAT variant the pass was planned on, from the dropout table (the same rows, compiled
    /// with the mask) when `dropout` is on.
    fn variant(pass: &DevicePass, dropout: &DropoutParams) -> Result<&'static GatVariant> {
        pass.variant(if dropout.threshold != 0 { gat::dropout::VARIANTS } else { gat::VARIANTS })
    }

    /// The plan the scheduler chose.
    pub fn plan(&self) -> &Plan {
        &self.fused.plan
    }

    /// The LeakyReLU slope.
    pub fn slope(&self) -> f32 {
        self.slope
    }

    /// The graph this GAT was planned on.
    pub fn graph(&self) -> &'g DeviceGraph<'b> {
        self.fused.graph
    }

    fn backend(&self) -> &'b Backend {
        self.fused.graph.backend()
    }

    fn heads(&self) -> u32 {
        self.fused.plan.heads
    }

    fn check(&self, op: &'static str, what: &'static str, len: usize, expected: usize) -> Result<()> {
        if len != expected {
            return Err(Error::ShapeMismatch { op, what, expected, got: len });
        }
        Ok(())
    }

    /// `scores[n, h] = ⟨x[n, h, :], a[h, :]⟩` for `nodes` nodes, and with `a2` its scores from the
    /// same reads of `x`.
    fn node_scores(
        &self,
        x: GSlice<f32>,
        a: GSlice<f32>,
        a2: Option<GSlice<f32>>,
        nodes: usize,
    ) -> Result<(Buffer<f32>, Option<Buffer<f32>>)> {
        let (heads, feat) = (self.heads(), self.fused.plan.feat);
        let mut scores = self.backend().alloc::<f32>(nodes * heads as usize)?;
        let mut scores2 = a2.map(|_| self.backend().alloc::<f32>(nodes * heads as usize)).transpose()?;
        if nodes > 0 {
            let params = GatNodeScoresParams {
                x,
                a,
                scores: scores.view_mut(),
                a2: a2.unwrap_or(GSlice::empty()),
                scores2: scores2.as_mut().map_or(GSliceMut::empty(), Buffer::view_mut),
                nodes: nodes as u32,
                heads,
                feat,
            };
            let config = node_config(nodes, heads, NODE_HEADS_PER_WARP)?;
            // SAFETY: x is [nodes, H, F], a and a2 (when given) are [H, F] (checked by the
            // caller), scores and scores2 are [nodes, H] and distinct; each warp takes
            // NODE_HEADS_PER_WARP (node, head) pairs and skips those past the last.
            unsafe { self.backend().launch(&GAT_NODE_SCORES, &config, &params)? };
        }
        Ok((scores, scores2))
    }

    /// `out = softmax(LeakyReLU(el_i + er_j) over the edges)·h`, with `el = ⟨h_dst, a_dst⟩` and
    /// `er = ⟨h, a_src⟩` computed here. `h` is `[N_src, H, F]`, `h_dst` `[N_dst, H, F]` (`h`
    /// again on a square graph), `a_dst` and `a_src` `[H, F]`.
    pub fn forward<'a>(
        &self,
        h: &'a Buffer<f32>,
        h_dst: &'a Buffer<f32>,
        a_dst: &'a Buffer<f32>,
        a_src: &'a Buffer<f32>,
    ) -> Result<GatForward<'a>> {
        let g = self.graph();
        let f = &self.fused;
        self.check("gat forward", "h", h.len(), f.features(g.num_src()))?;
        self.check("gat forward", "h_dst", h_dst.len(), f.features(g.num_dst()))?;
        self.check("gat forward", "a_dst", a_dst.len(), f.features(1))?;
        self.check("gat forward", "a_src", a_src.len(), f.features(1))?;
        // On a square graph called with one feature buffer, both scores come from one read of it.
        let (el, er) = if std::ptr::eq(h, h_dst) {
            let (el, er) = self.node_scores(h.view(), a_dst.view(), Some(a_src.view()), g.num_src())?;
            (el, er.expect("asked for the second scores"))
        } else {
            (
                self.node_scores(h_dst.view(), a_dst.view(), None, g.num_dst())?.0,
                self.node_scores(h.view(), a_src.view(), None, g.num_src())?.0,
            )
        };
        // The score buffers move into the result with the views of them; device memory does
        // not move.
        let mut fwd = self.attention(h.view(), el.view(), er.view(), self.dropout, self.saves_part)?;
        fwd.scores = Some((el, er));
        fwd.full = Some((h_dst.view(), a_dst.view(), a_src.view()));
        Ok(fwd)
    }

    /// The forward from precomputed node scores: `el` is `[N_dst, H]`, `er` `[N_src, H]`, `h`
    /// `[N_src, H, F]`.
    pub fn forward_precomputed<'a>(
        &self,
        h: &'a Buffer<f32>,
        el: &'a Buffer<f32>,
        er: &'a Buffer<f32>,
    ) -> Result<GatForward<'a>> {
        self.forward_precomputed_with(h, el, er, self.dropout, self.saves_part)
    }

    /// [`Gat::forward_precomputed`] with `dropout` and whether to save the positive part instead
    /// of the ones set ([`dfgnn::external`]'s calls share one planned op across callers and pass
    /// theirs).
    pub(crate) fn forward_precomputed_with<'a>(
        &self,
        h: &'a Buffer<f32>,
        el: &'a Buffer<f32>,
        er: &'a Buffer<f32>,
        dropout: DropoutParams,
        saves_part: bool,
    ) -> Result<GatForward<'a>> {
        let g = self.graph();
        let nh = |n: usize| n * self.heads() as usize;
        self.check("gat forward", "h", h.len(), self.fused.features(g.num_src()))?;
        self.check("gat forward", "el", el.len(), nh(g.num_dst()))?;
        self.check("gat forward", "er", er.len(), nh(g.num_src()))?;
        self.attention(h.view(), el.view(), er.view(), dropout, saves_part)
    }

    /// A [`Gat::forward_precomputed`] result rebuilt from what a caller saved of it (`out`
    /// `[N_dst, H, F]`, `lse` `[N_dst, H]`, `stats` `[N_dst, H, 2]`, over the same `h`, `el`,
    /// `er`), for [`Gat::backward_precomputed`] without running the forward again. `stats` is
    /// ignored when this plan's forward is not fused. The backward regenerates the dropout mask
    /// set now ([`Gat::set_dropout`]): set the forward's probability and seed before calling.
    pub fn saved_forward<'a>(
        &self,
        h: &'a Buffer<f32>,
        el: &'a Buffer<f32>,
        er: &'a Buffer<f32>,
        out: Buffer<f32>,
        lse: Buffer<f32>,
        stats: Buffer<f32>,
    ) -> Result<GatForward<'a>> {
        self.saved_forward_with(h, el, er, (out, lse, stats), None, self.dropout)
    }

    /// [`Gat::saved_forward`] with the positive part the forward saved too ([`GatForward::part`]:
    /// `o⁺` `[N_dst, H, F]`, `α⁺` `[N_dst, H]`), so that the backward's row pass reads it instead
    /// of gathering. The part is ignored where this plan's forward saves none
    /// ([`Gat::plans_part`]).
    pub fn saved_forward_with_part<'a>(
        &self,
        (h, el, er): (&'a Buffer<f32>, &'a Buffer<f32>, &'a Buffer<f32>),
        (out, lse, stats): (Buffer<f32>, Buffer<f32>, Buffer<f32>),
        part: (Buffer<f32>, Buffer<f32>),
    ) -> Result<GatForward<'a>> {
        self.saved_forward_with(h, el, er, (out, lse, stats), Some(part), self.dropout)
    }

    /// Whether this plan's forward saves the positive part when asked ([`Gat::set_saves_part`]):
    /// the fused schedules but `row_group`.
    pub fn plans_part(&self) -> bool {
        self.fused.forward.is_some() && self.fused.groups.is_none()
    }

    /// [`Gat::saved_forward`] of a forward that ran with `dropout`, with its positive part if it
    /// saved one.
    pub(crate) fn saved_forward_with<'a>(
        &self,
        h: &'a Buffer<f32>,
        el: &'a Buffer<f32>,
        er: &'a Buffer<f32>,
        (out, lse, stats): (Buffer<f32>, Buffer<f32>, Buffer<f32>),
        part: Option<(Buffer<f32>, Buffer<f32>)>,
        dropout: DropoutParams,
    ) -> Result<GatForward<'a>> {
        let g = self.graph();
        let nh = |n: usize| n * self.heads() as usize;
        self.check("gat backward", "h", h.len(), self.fused.features(g.num_src()))?;
        self.check("gat backward", "el", el.len(), nh(g.num_dst()))?;
        self.check("gat backward", "er", er.len(), nh(g.num_src()))?;
        self.check("gat backward", "out", out.len(), self.fused.features(g.num_dst()))?;
        self.check("gat backward", "lse", lse.len(), nh(g.num_dst()))?;
        self.check("gat backward", "stats", stats.len(), 2 * nh(g.num_dst()))?;
        let stats = if self.fused.forward.is_some() { stats } else { self.backend().alloc::<f32>(0)? };
        let part = part.filter(|_| self.plans_part());
        if let Some((part_out, part_weight)) = &part {
            self.check("gat backward", "part out", part_out.len(), self.fused.features(g.num_dst()))?;
            self.check("gat backward", "part weight", part_weight.len(), nh(g.num_dst()))?;
        }
        Ok(GatForward {
            out,
            lse,
            scores: None,
            el: el.view(),
            er: er.view(),
            stats,
            h: h.view(),
            full: None,
            dropout,
            part,
            _inputs: std::marker::PhantomData,
        })
    }

    /// The attention of the node scores `el`, `er` over `h` (shapes checked by the caller), with
    /// the positive part where `saves_part` asks and the schedule can.
    fn attention<'a>(
        &self,
        h: GSlice<f32>,
        el: GSlice<f32>,
        er: GSlice<f32>,
        dropout: DropoutParams,
        saves_part: bool,
    ) -> Result<GatForward<'a>> {
        let g = self.graph();
        let f = &self.fused;
        let backend = self.backend();
        let (heads, feat) = (f.plan.heads, f.plan.feat);
        let result = |out, lse, stats| GatForward {
            out,
            lse,
            scores: None,
            el,
            er,
            stats,
            h,
            full: None,
            dropout,
            part: None,
            _inputs: std::marker::PhantomData,
        };
        let Some(pass) = &f.forward else {
            f.check_baseline_dropout(&dropout)?;
            let mut scores = backend.alloc::<f32>(g.nnz() * heads as usize)?;
            self.edge_scores(el, er, GSlice::empty(), &mut scores)?;
            let edge_parallel = f.plan.schedule == Schedule::EdgeParallel;
            let (out, lse) = baseline::forward_from_scores(g, &scores, h, heads, feat, edge_parallel)?;
            return Ok(result(out, lse, backend.alloc::<f32>(0)?));
        };
        let variant = Self::variant(pass, &dropout)?;
        let nh = g.num_dst() * heads as usize;
        let mut out = backend.alloc::<f32>(f.features(g.num_dst()))?;
        let mut lse = backend.alloc::<f32>(nh)?;
        let mut stats = backend.alloc::<f32>(nh * 2)?;
        let (out_v, lse_v, stats_v) = (out.view_mut(), lse.view_mut(), stats.view_mut());
        let (el_v, er_v, slope) = (el, er, self.slope);
        if let Some(groups) = &f.groups {
            let params = GatGroupParams {
                group: GroupParams {
                    offsets: g.d_row_offsets.view(),
                    columns: g.d_columns.view(),
                    coo_rows: g.d_coo_rows.view(),
                    group_first: groups.first.view(),
                    group_end: groups.end.view(),
                    stage_first: groups.stage_first.view(),
                    stage_count: groups.stage_count.view(),
                    shape: pass.shape(heads, feat),
                    out: out_v,
                    lse: lse_v,
                    stats: stats_v,
                    num_groups: groups.plan.first.len() as u32,
                    dropout,
                },
                el: el_v,
                er: er_v,
                h,
                slope,
            };
            // SAFETY: el [N_dst, H], er [N_src, H], h [N_src, H, F] live and read-only, the
            // outputs distinct; the groups are this plan's (staging sized for two [H, F] rows per
            // source, more than h and er need).
            unsafe { f.launch_groups(groups, &variant.group, &params)? };
        }
        // The positive part, where this forward can save it (every row in this pass).
        let part_table = if dropout.threshold != 0 { gat::part::dropout::VARIANTS } else { gat::part::VARIANTS };
        let part_variant = (saves_part && self.plans_part()).then(|| pass.variant(part_table)).transpose()?;
        let mut part = part_variant
            .map(|_| Ok::<_, Error>((backend.alloc::<f32>(f.features(g.num_dst()))?, backend.alloc::<f32>(nh)?)))
            .transpose()?;
        let (part_out_v, part_weight_v) =
            part.as_mut().map_or((GSliceMut::empty(), GSliceMut::empty()), |(o, w)| (o.view_mut(), w.view_mut()));
        let (kernel, packed) = match part_variant {
            Some(p) => (&p.forward, p.packed.as_ref()),
            None => (&variant.forward, variant.packed.as_ref().map(|p| &p.forward)),
        };
        let (hf, widths) = (heads as usize * feat as usize, if part.is_some() { 4 } else { 2 });
        f.run_pass(
            pass,
            kernel,
            packed,
            &[hf, heads as usize * 2, hf, heads as usize][..widths],
            |units, partials| {
                let dst = ForwardOut {
                    out: out_v,
                    lse: lse_v,
                    stats: stats_v,
                    partial_acc: partial_view(partials, 0),
                    partial_ml: partial_view(partials, 1),
                };
                let part = PartOut {
                    out: part_out_v,
                    weight: part_weight_v,
                    partial_acc: partial_view(partials, 2),
                    partial_weight: partial_view(partials, 3),
                };
                GatFwdParams {
                    edges: f.edges(pass, Side::Rows, units, dropout),
                    el: el_v,
                    er: er_v,
                    h,
                    dst,
                    part,
                    slope,
                }
            },
            |split, partials| {
                f.combine_forward(split, pass, partials, (out_v, lse_v, stats_v))?;
                if partials.len() == 4 {
                    f.combine_part(split, pass, partials, (part_out_v, part_weight_v))?;
                }
                Ok(())
            },
        )?;
        Ok(GatForward { part, ..result(out, lse, stats) })
    }

    /// The baselines' edge kernel: the scores (`d_scores` empty) or their gradient through the
    /// LeakyReLU, into `out` (`[E, H]`).
    fn edge_scores(
        &self,
        el: GSlice<f32>,
        er: GSlice<f32>,
        d_scores: GSlice<f32>,
        out: &mut Buffer<f32>,
    ) -> Result<()> {
        let g = self.graph();
        let heads = self.heads();
        let items = g.nnz() as u64 * heads as u64;
        if items == 0 {
            return Ok(());
        }
        let params = GatEdgeScoresParams {
            el,
            er,
            coo_rows: g.d_coo_rows.view(),
            columns: g.d_columns.view(),
            d_scores,
            out: out.view_mut(),
            num_edges: g.nnz() as u64,
            heads,
            slope: self.slope,
        };
        let kernel = if d_scores.is_empty() { &GAT_EDGE_SCORES } else { &GAT_EDGE_SCORES_BACKWARD };
        let blocks = items.div_ceil(NODE_BLOCK as u64).clamp(1, i32::MAX as u64);
        let config = LaunchConfig { grid: Dim3::x(blocks as u32), block: Dim3::x(NODE_BLOCK), shared_bytes: 0 };
        // SAFETY: el [N_dst, H], er [N_src, H], the graph's validated COO rows and columns,
        // d_scores empty or [E, H], out [E, H] distinct from them; the kernel sweeps grid-stride.
        unsafe { self.backend().launch(kernel, &config, &params) }
    }

    /// The gradients of `Σ d_out ⊙ out` with respect to `h`, `h_dst`, `a_dst` and `a_src` (after
    /// [`Gat::forward`]).
    pub fn backward(&self, fwd: &GatForward<'_>, d_out: &Buffer<f32>) -> Result<GatGrads> {
        let Some((h_dst, a_dst, a_src)) = fwd.full else {
            return Err(Error::Unsupported {
                what: "the full GAT backward after a forward from precomputed scores (use backward_precomputed)"
                    .to_string(),
            });
        };
        let g = self.graph();
        let pre = self.backward_precomputed(fwd, d_out)?;
        let dh = self.node_scores_backward(&pre.d_er, a_src, pre.dh.view(), g.num_src())?;
        let dh_dst = self.node_scores_backward(&pre.d_el, a_dst, GSlice::empty(), g.num_dst())?;
        let da_src = self.vector_grad(&pre.d_er, fwd.h, g.num_src())?;
        let da_dst = self.vector_grad(&pre.d_el, h_dst, g.num_dst())?;
        Ok(GatGrads { dh, dh_dst, da_dst, da_src })
    }

    /// `dx = base + d·a` per node and head (`base` empty for none).
    fn node_scores_backward(
        &self,
        d: &Buffer<f32>,
        a: GSlice<f32>,
        base: GSlice<f32>,
        nodes: usize,
    ) -> Result<Buffer<f32>> {
        let (heads, feat) = (self.heads(), self.fused.plan.feat);
        let mut dx = self.backend().alloc::<f32>(self.fused.features(nodes))?;
        if nodes > 0 {
            let params = GatNodeScoresBackwardParams {
                d_scores: d.view(),
                a,
                base,
                dx: dx.view_mut(),
                nodes: nodes as u32,
                heads,
                feat,
            };
            // SAFETY: d [nodes, H], a [H, F], base empty or [nodes, H, F], dx [nodes, H, F]
            // distinct from them; one warp per (node, head).
            unsafe { self.backend().launch(&GAT_NODE_SCORES_BACKWARD, &node_config(nodes, heads, 1)?, &params)? };
        }
        Ok(dx)
    }

    /// `da[h, f] = Σ_n d[n, h]·x[n, h, f]` ([`vector_grad`]).
    fn vector_grad(&self, d: &Buffer<f32>, x: GSlice<f32>, nodes: usize) -> Result<Buffer<f32>> {
        vector_grad(self.backend(), self.heads(), self.fused.plan.feat, d.view(), x, nodes)
    }

    /// The gradients of `Σ d_out ⊙ out` with respect to `h` (through the aggregation only), `el`
    /// and `er`.
    pub fn backward_precomputed(&self, fwd: &GatForward<'_>, d_out: &Buffer<f32>) -> Result<GatPrecomputedGrads> {
        let g = self.graph();
        let f = &self.fused;
        self.check("gat backward", "d_out", d_out.len(), f.features(g.num_dst()))?;
        let (heads, feat) = (f.plan.heads, f.plan.feat);
        let backend = self.backend();
        let nh = |n: usize| n * heads as usize;
        let fused = f.backward_kernels(|pass| Self::variant(pass, &fwd.dropout))?;
        let Some((rows_pass, rows_kernel, cols_pass, cols_kernel)) = fused.filter(|_| !fwd.stats.is_empty()) else {
            return self.baseline_backward(fwd, d_out);
        };
        let (el, er, h, slope) = (fwd.el, fwd.er, fwd.h, self.slope);

        // Row pass: d el and D.
        let mut d_el = backend.alloc::<f32>(nh(g.num_dst()))?;
        let mut delta = backend.alloc::<f32>(nh(g.num_dst()))?;
        let (d_el_v, delta_v) = (d_el.view_mut(), delta.view_mut());
        if let Some((part_out, part_weight)) = &fwd.part {
            self.part_rows(fwd, part_out, part_weight, d_out, d_el_v, delta_v)?;
        } else {
            self.gather_rows(fwd, d_out, (rows_pass, &rows_kernel), d_el_v, delta_v)?;
        }

        // Column pass: d er and the aggregation's dh.
        let mut d_er = backend.alloc::<f32>(nh(g.num_src()))?;
        let mut dh = backend.alloc::<f32>(f.features(g.num_src()))?;
        let (d_er_v, dh_v) = (d_er.view_mut(), dh.view_mut());
        f.run_pass(
            cols_pass,
            &cols_kernel.0,
            cols_kernel.1.as_ref(),
            &[heads as usize, heads as usize * feat as usize],
            |units, partials| GatBwdColsParams {
                edges: f.edges(cols_pass, Side::Columns, units, fwd.dropout),
                el,
                er,
                h,
                grads: ColumnGrads {
                    stats: fwd.stats.view(),
                    delta: delta.view(),
                    d_out: d_out.view(),
                    d_key: d_er_v,
                    d_value: dh_v,
                    partial_d_key: partial_view(partials, 0),
                    partial_d_value: partial_view(partials, 1),
                },
                slope,
            },
            |split, partials| {
                f.sum_partials(split, cols_pass, &partials[0], d_er_v, 1, 1.0)?;
                f.sum_partials(split, cols_pass, &partials[1], dh_v, feat, 1.0)
            },
        )?;
        Ok(GatPrecomputedGrads { dh, d_el, d_er })
    }

    /// The backward's row pass over the CSR: `d el` and D, recomputing α and gathering every
    /// edge's `h_j` (after a forward that saved no positive part).
    fn gather_rows(
        &self,
        fwd: &GatForward<'_>,
        d_out: &Buffer<f32>,
        (rows_pass, rows_kernel): (&DevicePass, &PassKernel<GatBwdRowsParams>),
        d_el_v: GSliceMut<f32>,
        delta_v: GSliceMut<f32>,
    ) -> Result<()> {
        let f = &self.fused;
        let (el, er, h, slope) = (fwd.el, fwd.er, fwd.h, self.slope);
        let heads = f.plan.heads;
        f.run_pass(
            rows_pass,
            &rows_kernel.0,
            rows_kernel.1.as_ref(),
            &[heads as usize],
            |units, partials| GatBwdRowsParams {
                edges: f.edges(rows_pass, Side::Rows, units, fwd.dropout),
                el,
                er,
                h,
                grads: RowGrads {
                    out: fwd.out.view(),
                    stats: fwd.stats.view(),
                    d_out: d_out.view(),
                    delta: delta_v,
                    d_row: d_el_v,
                    partial: partial_view(partials, 0),
                },
                slope,
            },
            |split, partials| f.sum_partials(split, rows_pass, &partials[0], d_el_v, 1, 1.0),
        )
    }

    /// The backward's row pass from the forward's positive part: per node and head, no gather
    /// (`dfgnn_device::kernels::gat::part`).
    fn part_rows(
        &self,
        fwd: &GatForward<'_>,
        part_out: &Buffer<f32>,
        part_weight: &Buffer<f32>,
        d_out: &Buffer<f32>,
        d_el: GSliceMut<f32>,
        delta: GSliceMut<f32>,
    ) -> Result<()> {
        let nodes = self.graph().num_dst();
        if nodes == 0 {
            return Ok(());
        }
        let (heads, feat) = (self.heads(), self.fused.plan.feat);
        let params = GatPartRowsParams {
            out: fwd.out.view(),
            part_out: part_out.view(),
            part_weight: part_weight.view(),
            d_out: d_out.view(),
            delta,
            d_el,
            nodes: nodes as u32,
            heads,
            feat,
            slope: self.slope,
        };
        // SAFETY: out, part_out and d_out are [N_dst, H, F], part_weight, delta and d_el
        // [N_dst, H] (the forward's and the checked d_out), the outputs distinct from the inputs;
        // each warp takes PART_ROWS_PER_WARP (node, head) pairs and skips those past the last.
        unsafe { self.backend().launch(&GAT_PART_ROWS, &node_config(nodes, heads, PART_ROWS_PER_WARP)?, &params) }
    }

    /// The unfused backward: α and ds `[E, H]` in memory, `d el`/`d er` as SpMMs of
    /// `ds·LeakyReLU'` with ones.
    fn baseline_backward(&self, fwd: &GatForward<'_>, d_out: &Buffer<f32>) -> Result<GatPrecomputedGrads> {
        self.fused.check_baseline_dropout(&fwd.dropout)?;
        let g = self.graph();
        let (heads, feat) = (self.heads(), self.fused.plan.feat);
        let backend = self.backend();
        let eh = g.nnz() * heads as usize;
        let mut scores = backend.alloc::<f32>(eh)?;
        self.edge_scores(fwd.el, fwd.er, GSlice::empty(), &mut scores)?;
        let (alpha, ds) = baseline::softmax_backward(g, scores, fwd.h, d_out.view(), heads, feat)?;
        let mut d_e = backend.alloc::<f32>(eh)?;
        self.edge_scores(fwd.el, fwd.er, ds.view(), &mut d_e)?;
        let mut ones_src = backend.alloc::<f32>(g.num_src() * heads as usize)?;
        let mut ones_dst = backend.alloc::<f32>(g.num_dst() * heads as usize)?;
        backend.fill(&mut ones_src, 1.0)?;
        backend.fill(&mut ones_dst, 1.0)?;
        let mut d_el = backend.alloc::<f32>(g.num_dst() * heads as usize)?;
        let mut d_er = backend.alloc::<f32>(g.num_src() * heads as usize)?;
        let mut dh = backend.alloc::<f32>(self.fused.features(g.num_src()))?;
        baseline::spmm(g, heads, 1, &d_e, ones_src.view(), 1.0, &mut d_el)?;
        baseline::spmm_transposed(g, heads, 1, &d_e, ones_dst.view(), 1.0, &mut d_er)?;
        baseline::spmm_transposed(g, heads, feat, &alpha, d_out.view(), 1.0, &mut dh)?;
        Ok(GatPrecomputedGrads { dh, d_el, d_er })
    }
}

/// `da[h, f] = Σ_n d[n, h]·x[n, h, f]` (`d` empty: `Σ_n x[n, h, f]`) for `nodes` nodes of
/// `heads` × `feat`: per-block partials over fixed node ranges, then their sum in block order
/// (deterministic).
pub(crate) fn vector_grad(
    backend: &Backend,
    heads: u32,
    feat: u32,
    d: GSlice<f32>,
    x: GSlice<f32>,
    nodes: usize,
) -> Result<Buffer<f32>> {
    let len = heads as usize * feat as usize;
    let blocks = nodes.div_ceil(64).clamp(1, MAX_VECTOR_PARTIALS);
    let per_block = nodes.div_ceil(blocks).max(1);
    let mut partial = backend.alloc::<f32>(blocks * len)?;
    let params = GatVectorGradParams {
        d_scores: d,
        x,
        partial: partial.view_mut(),
        nodes: nodes as u32,
        heads,
        feat,
        nodes_per_block: per_block as u32,
    };
    let config = LaunchConfig { grid: Dim3::x(blocks as u32), block: Dim3::x(NODE_BLOCK), shared_bytes: 0 };
    if nodes == 0 {
        backend.fill_zeros(&mut partial)?;
    } else {
        // SAFETY: d empty or [nodes, H], x [nodes, H, F], partial [blocks, H, F] distinct; block
        // b writes row b of the partials for its nodes.
        unsafe { backend.launch(&GAT_VECTOR_GRAD_PARTIALS, &config, &params)? };
    }
    let mut out = backend.alloc::<f32>(len)?;
    let sum =
        GatVectorSumParams { partial: partial.view(), out: out.view_mut(), blocks: blocks as u32, len: len as u32 };
    let config = LaunchConfig {
        grid: Dim3::x(len.div_ceil(NODE_BLOCK as usize) as u32),
        block: Dim3::x(NODE_BLOCK),
        shared_bytes: 0,
    };
    // SAFETY: partial [blocks, len] written above, out [len] distinct; one thread per element.
    unsafe { backend.launch(&GAT_VECTOR_GRAD_SUM, &config, &sum)? };
    Ok(out)
}
