//! GAT — graph attention with LeakyReLU scores of per-node scores — forward and backward, fused.
//!
//! ```text
//! el_i = ⟨h_dst_i, a_dst⟩   er_j = ⟨h_j, a_src⟩   s_ij = LeakyReLU(el_i + er_j)   α_ij = softmax_j(s_ij)   o_i = Σ_j α_ij·h_j
//! ```
//! per head. A node kernel computes `el` and `er` (`[N, H]`); the fused passes read per edge one
//! feature row and one scalar per head. The forward saves `el`, `er` and per-(row, head) state
//! only (O(N·H)); the backward's row pass gives `d el`, its column pass `d er` and the
//! aggregation's `dh`, and one node kernel carries `d er` (and `d el` when `h_dst` is `h`) to the
//! features, added to `dh` in place, and from the same read of `h` to the attention vectors as
//! per-block partials, summed in a fixed order by one more launch (when `h_dst` is another
//! array, a second node launch makes `dh_dst` and `da_dst`'s partials from it). No float atomics:
//! results are bit-identical run after run. [`Gat::forward_precomputed`] takes `el` and `er`
//! instead.

use dfgnn_device::abi::{
    ColumnGrads, DropoutParams, ForwardOut, GatBwdColsParams, GatBwdRowsParams, GatEdgeScoresParams, GatFwdParams,
    GatGroupParams, GatNodeBackwardParams, GatNodeScoresParams, GatPartRowsParams, GatVectorSumParams, GroupParams,
    PartOut, RowGrads,
};
use dfgnn_device::kernels::common::node_rows::{GAT_LANES, NodeLanes};
use dfgnn_device::kernels::gat::part::{GAT_PART_ROWS, GAT_PART_ROWS_W4};
use dfgnn_device::kernels::gat::{
    self, GAT_EDGE_SCORES, GAT_EDGE_SCORES_BACKWARD, GAT_NODE_BACKWARD, GAT_NODE_SCORES, GAT_NODE_SCORES_W4,
    GAT_VECTOR_GRAD_SUM, GatVariant, VECTOR_SUM_ELEMENTS, VECTOR_SUM_WARPS,
};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, LaunchConfig, WARP_SIZE};

use crate::backend::{Backend, Buffer};
use crate::baseline;
use crate::error::{Error, Result};
use crate::fused::{DevicePass, Fused, PassKernel, Side, dropout_params, partial_view};
use crate::graph::DeviceGraph;
use crate::plan::{self, Plan, PlanOptions, Schedule};
use crate::tiles::{DeviceTiles, GatTileColsIo, GatTileIo};

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
    /// What [`Gat::forward`] took beside `h`; `None` after [`Gat::forward_precomputed`].
    full: Option<NodeInputs>,
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

/// The inputs of [`Gat::forward`] beside `h`, for [`Gat::backward`].
#[derive(Clone, Copy)]
struct NodeInputs {
    /// `[N_dst, H, F]`, or `None` when the forward was given `h` itself as `h_dst` (both node
    /// scores came from one read of it, and so do their gradients).
    h_dst: Option<GSlice<f32>>,
    /// `[H, F]`.
    a_dst: GSlice<f32>,
    /// `[H, F]`.
    a_src: GSlice<f32>,
}

/// The feature inputs a [`Gat::forward`] took, as its caller kept them: `h`, `h_dst` (`None`
/// when it was `h`), `a_dst`, `a_src`.
pub(crate) type SavedNodeInputs<'a> = (&'a Buffer<f32>, Option<&'a Buffer<f32>>, &'a Buffer<f32>, &'a Buffer<f32>);

/// The gradients of [`Gat::backward`].
pub struct GatGrads {
    /// `[N_src, H, F]`: through the aggregation and through `er`, and through `el` too when the
    /// forward was given `h` itself as `h_dst`.
    pub dh: Buffer<f32>,
    /// `[N_dst, H, F]`: through `el`. `None` when h_dst was h: its gradient is folded into `dh`.
    pub dh_dst: Option<Buffer<f32>>,
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
    /// The forward's tiles, when the plan has them (used without dropout).
    tiles: Option<DeviceTiles>,
    /// The backward column pass's tiles of the CSC, when the plan has them (used without
    /// dropout); boxed, as the planned op is moved around by value.
    column_tiles: Option<Box<DeviceTiles>>,
    slope: f32,
    dropout: DropoutParams,
    saves_part: bool,
}

/// Warps over groups of `per_warp` (node, head) pairs (`NodeLanes::rows_per_warp`): one warp
/// per group, as many blocks as the groups need (a version striding over groups was slower on
/// the H200 for the node scores, GAT er-1M-d16 4×64 forward 5.42 → 5.56–5.66 ms).
fn node_config(nodes: usize, heads: u32, per_warp: usize) -> Result<LaunchConfig> {
    let warps = (nodes as u64 * heads as u64).div_ceil(per_warp as u64);
    let blocks = warps.div_ceil((NODE_BLOCK / WARP_SIZE) as u64).max(1);
    if blocks > i32::MAX as u64 {
        return Err(Error::Unsupported { what: format!("{} node-heads in one launch", nodes as u64 * heads as u64) });
    }
    Ok(LaunchConfig { grid: Dim3::x(blocks as u32), block: Dim3::x(NODE_BLOCK), shared_bytes: 0 })
}

impl<'g, 'b> Gat<'g, 'b> {
    /// Plans GAT on `graph` for `config` (once) and uploads the plan's work lists.
    pub fn new(graph: &'g DeviceGraph<'b>, config: &GatConfig) -> Result<Self> {
        if !config.slope.is_finite() {
            return Err(Error::Unsupported { what: format!("LeakyReLU slope {}", config.slope) });
        }
        let limits = graph.backend().limits();
        let shape = graph.shape();
        let mut plan = plan::plan(gat::VARIANTS, &shape, config.heads, config.feat, limits, &config.plan)?;
        plan::plan_tiles(&mut plan, &shape, limits, &config.plan, &plan::TileModel::GAT)?;
        plan::plan_column_tiles(&mut plan, &graph.csc_shape(), limits, &config.plan);
        plan::plan_positive_part(&mut plan, &shape, &config.plan);
        plan::plan_gat_backward(&mut plan, &shape, &config.plan);
        let tiles = plan.tiles.as_ref().map(|t| DeviceTiles::upload(graph, t, 0)).transpose()?;
        let column_tiles = plan
            .column_tiles
            .as_ref()
            .map(|t| DeviceTiles::upload_columns(graph, t, plan.feat).map(Box::new))
            .transpose()?;
        Ok(Self {
            fused: Fused::new(graph, plan)?,
            tiles,
            column_tiles,
            slope: config.slope,
            dropout: DropoutParams::OFF,
            saves_part: true,
        })
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
    /// same reads of `x`; the results (see [`Backend::result`]) are named `el` when `a` is
    /// `a_dst` (`dst`), else `er`, and `er` for `a2`'s.
    fn node_scores(
        &self,
        x: GSlice<f32>,
        (a, dst): (GSlice<f32>, bool),
        a2: Option<GSlice<f32>>,
        nodes: usize,
    ) -> Result<(Buffer<f32>, Option<Buffer<f32>>)> {
        let (heads, feat) = (self.heads(), self.fused.plan.feat);
        let mut scores = self.backend().result(if dst { "el" } else { "er" }, nodes * heads as usize)?;
        let mut scores2 = a2.map(|_| self.backend().result("er", nodes * heads as usize)).transpose()?;
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
            let layout = NodeLanes::new(feat as usize, GAT_LANES);
            let config = node_config(nodes, heads, layout.rows_per_warp())?;
            let kernel = if layout.width == 4 { &GAT_NODE_SCORES_W4 } else { &GAT_NODE_SCORES };
            // SAFETY: x is [nodes, H, F], a and a2 (when given) are [H, F] (checked by the
            // caller), scores and scores2 are [nodes, H] and distinct; each warp takes the
            // layout's (node, head) pairs and skips those past the last; the 16-byte kernel
            // only for `F % 4 == 0` (the layout's width), on 16-byte aligned buffers.
            unsafe { self.backend().launch(kernel, &config, &params)? };
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
        self.forward_with(h, h_dst, a_dst, a_src, self.dropout, self.saves_part)
    }

    /// [`Gat::forward`] with `dropout` and whether to save the positive part instead of the ones
    /// set (as [`Gat::forward_precomputed_with`]).
    pub(crate) fn forward_with<'a>(
        &self,
        h: &'a Buffer<f32>,
        h_dst: &'a Buffer<f32>,
        a_dst: &'a Buffer<f32>,
        a_src: &'a Buffer<f32>,
        dropout: DropoutParams,
        saves_part: bool,
    ) -> Result<GatForward<'a>> {
        let g = self.graph();
        let f = &self.fused;
        self.check("gat forward", "h", h.len(), f.features(g.num_src()))?;
        self.check("gat forward", "h_dst", h_dst.len(), f.features(g.num_dst()))?;
        self.check("gat forward", "a_dst", a_dst.len(), f.features(1))?;
        self.check("gat forward", "a_src", a_src.len(), f.features(1))?;
        // On a square graph called with one feature buffer, both scores come from one read of it.
        let one_array = std::ptr::eq(h, h_dst);
        let (el, er) = if one_array {
            let (el, er) = self.node_scores(h.view(), (a_dst.view(), true), Some(a_src.view()), g.num_src())?;
            (el, er.expect("asked for the second scores"))
        } else {
            (
                self.node_scores(h_dst.view(), (a_dst.view(), true), None, g.num_dst())?.0,
                self.node_scores(h.view(), (a_src.view(), false), None, g.num_src())?.0,
            )
        };
        // The score buffers move into the result with the views of them; device memory does
        // not move.
        let mut fwd = self.attention(h.view(), el.view(), er.view(), dropout, saves_part)?;
        fwd.scores = Some((el, er));
        fwd.full =
            Some(NodeInputs { h_dst: (!one_array).then(|| h_dst.view()), a_dst: a_dst.view(), a_src: a_src.view() });
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
    /// of the ones set ([`crate::external`]'s calls share one planned op across callers and pass
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
    /// the fused schedules but `row_group`, on graphs of enough edges per row, as the planner
    /// decided ([`plan::plan_positive_part`]).
    pub fn plans_part(&self) -> bool {
        self.fused.plan.positive_part
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

    /// A [`Gat::forward`] result rebuilt from what a caller saved of it, its node scores `el`,
    /// `er` included, for [`Gat::backward`]: as [`Gat::saved_forward_with`], with the forward's
    /// `h_dst` (`None` when it was `h`) and attention vectors.
    pub(crate) fn saved_full_forward<'a>(
        &self,
        (h, h_dst, a_dst, a_src): SavedNodeInputs<'a>,
        (el, er): (&'a Buffer<f32>, &'a Buffer<f32>),
        saved: (Buffer<f32>, Buffer<f32>, Buffer<f32>),
        part: Option<(Buffer<f32>, Buffer<f32>)>,
        dropout: DropoutParams,
    ) -> Result<GatForward<'a>> {
        let f = &self.fused;
        if let Some(h_dst) = h_dst {
            self.check("gat backward", "h_dst", h_dst.len(), f.features(self.graph().num_dst()))?;
        }
        self.check("gat backward", "a_dst", a_dst.len(), f.features(1))?;
        self.check("gat backward", "a_src", a_src.len(), f.features(1))?;
        let mut fwd = self.saved_forward_with(h, el, er, saved, part, dropout)?;
        fwd.full = Some(NodeInputs { h_dst: h_dst.map(Buffer::view), a_dst: a_dst.view(), a_src: a_src.view() });
        Ok(fwd)
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
        let mut out = backend.result("out", f.features(g.num_dst()))?;
        let mut lse = backend.result("lse", nh)?;
        let mut stats = backend.result("stats", nh * 2)?;
        let (out_v, lse_v, stats_v) = (out.view_mut(), lse.view_mut(), stats.view_mut());
        let (el_v, er_v, slope) = (el, er, self.slope);
        if let Some(tiles) = self.tiles.as_ref().filter(|_| dropout.threshold == 0) {
            let mut part = (saves_part && self.plans_part())
                .then(|| {
                    Ok::<_, Error>((
                        backend.result("part out", f.features(g.num_dst()))?,
                        backend.result("part weight", nh)?,
                    ))
                })
                .transpose()?;
            let part_v =
                part.as_mut().map_or((GSliceMut::empty(), GSliceMut::empty()), |(o, w)| (o.view_mut(), w.view_mut()));
            let io = GatTileIo { el, er, h, out: out_v, lse: lse_v, stats: stats_v, part: part_v };
            tiles.gat_forward(g, (heads, feat), slope, io)?;
            return Ok(GatForward { part, ..result(out, lse, stats) });
        }
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
            .map(|_| {
                Ok::<_, Error>((
                    backend.result("part out", f.features(g.num_dst()))?,
                    backend.result("part weight", nh)?,
                ))
            })
            .transpose()?;
        let (part_out_v, part_weight_v) =
            part.as_mut().map_or((GSliceMut::empty(), GSliceMut::empty()), |(o, w)| (o.view_mut(), w.view_mut()));
        let (kernel, packed) = match part_variant {
            Some(p) => (&p.forward, p.packed.as_ref()),
            None => (&variant.forward, variant.packed.as_ref().map(|p| &p.forward)),
        };
        let (hf, widths) = (heads as usize * feat as usize, if part.is_some() { 4 } else { 2 });
        f.run_forward_pass(
            pass,
            kernel,
            packed,
            &[hf, heads as usize * 2, hf, heads as usize][..widths],
            |units, partials, arrivals| {
                let dst = ForwardOut {
                    out: out_v,
                    lse: lse_v,
                    stats: stats_v,
                    partial_acc: partial_view(partials, 0),
                    partial_ml: partial_view(partials, 1),
                    arrivals,
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
    /// [`Gat::forward`]). When the forward was given `h` itself as `h_dst`, `dh` is the whole
    /// gradient of `h` and `dh_dst` is `None`.
    pub fn backward(&self, fwd: &GatForward<'_>, d_out: &Buffer<f32>) -> Result<GatGrads> {
        let Some(inputs) = fwd.full else {
            return Err(Error::Unsupported {
                what: "the full GAT backward after a forward from precomputed scores (use backward_precomputed)"
                    .to_string(),
            });
        };
        let g = self.graph();
        let backend = self.backend();
        let (shape, len) = ((self.heads(), self.fused.plan.feat), self.fused.features(1));
        let pre = self.backward_precomputed(fwd, d_out)?;
        // h_dst is h only where both hold the same number of nodes, so num_dst sizes both cases.
        let mut src_partials = VectorPartials::new(backend, g.num_src(), len)?;
        let mut dst_partials = VectorPartials::new(backend, g.num_dst(), len)?;
        let src = (ScoreGrad { d: pre.d_er.view(), a: inputs.a_src }, &mut src_partials);
        let dst = (ScoreGrad { d: pre.d_el.view(), a: inputs.a_dst }, &mut dst_partials);
        // dh, the aggregation's, += d er·a_src in place, with da_src's partials from h; d el's
        // terms from the same read of h when it is h_dst, else into dh_dst from h_dst.
        let mut dh = pre.dh;
        let dh_dst = match inputs.h_dst {
            None => {
                node_backward(backend, shape, fwd.h, g.num_src(), FeatureGrad::Add(&mut dh), src, Some(dst))?;
                None
            }
            Some(h_dst) => {
                let mut dh_dst = backend.result("dh_dst", self.fused.features(g.num_dst()))?;
                node_backward(backend, shape, fwd.h, g.num_src(), FeatureGrad::Add(&mut dh), src, None)?;
                node_backward(backend, shape, h_dst, g.num_dst(), FeatureGrad::Write(&mut dh_dst), dst, None)?;
                Some(dh_dst)
            }
        };
        let (mut da_src, mut da_dst) = (backend.result("da_src", len)?, backend.result("da_dst", len)?);
        sum_vectors(backend, len, (&src_partials, &mut da_src), Some((&dst_partials, &mut da_dst)))?;
        Ok(GatGrads { dh, dh_dst, da_dst, da_src })
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
        let fused = f.backward_kernels(&fwd.dropout, |pass| Self::variant(pass, &fwd.dropout))?;
        let Some((rows_pass, rows_kernel, cols_pass, cols_kernel)) = fused.filter(|_| !fwd.stats.is_empty()) else {
            return self.baseline_backward(fwd, d_out);
        };
        let (el, er, h, slope) = (fwd.el, fwd.er, fwd.h, self.slope);

        // Row pass: d el and the row record (with D).
        let mut d_el = backend.result("d_el", nh(g.num_dst()))?;
        let mut record = backend.alloc::<f32>(4 * nh(g.num_dst()))?;
        let (d_el_v, record_v) = (d_el.view_mut(), record.view_mut());
        if let Some((part_out, part_weight)) = &fwd.part {
            self.part_rows(fwd, part_out, part_weight, d_out, d_el_v, record_v)?;
        } else {
            self.gather_rows(fwd, d_out, (rows_pass, &rows_kernel), d_el_v, record_v)?;
        }

        // Column pass: d er and the aggregation's dh.
        let mut d_er = backend.result("d_er", nh(g.num_src()))?;
        let mut dh = backend.result("dh", f.features(g.num_src()))?;
        let (d_er_v, dh_v) = (d_er.view_mut(), dh.view_mut());
        if let Some(tiles) = self.column_tiles.as_ref().filter(|_| fwd.dropout.threshold == 0) {
            let io = GatTileColsIo { er, h, record: record.view(), d_out: d_out.view(), d_er: d_er_v, dh: dh_v };
            tiles.gat_backward_cols(g, (heads, feat), slope, io)?;
            return Ok(GatPrecomputedGrads { dh, d_el, d_er });
        }
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
                    record: record.view(),
                    d_out: d_out.view(),
                    d_key: d_er_v,
                    d_value: dh_v,
                    partial_d_key: partial_view(partials, 0),
                    partial_d_value: partial_view(partials, 1),
                },
                slope,
            },
            |split, partials| {
                f.sum_partials(split, cols_pass, &[(&partials[0], d_er_v, 1, 1.0), (&partials[1], dh_v, feat, 1.0)])
            },
        )?;
        Ok(GatPrecomputedGrads { dh, d_el, d_er })
    }

    /// The backward's row pass over the CSR: `d el` and the row record (with D), recomputing α
    /// and gathering every edge's `h_j` (after a forward that saved no positive part).
    fn gather_rows(
        &self,
        fwd: &GatForward<'_>,
        d_out: &Buffer<f32>,
        (rows_pass, rows_kernel): (&DevicePass, &PassKernel<GatBwdRowsParams>),
        d_el_v: GSliceMut<f32>,
        record_v: GSliceMut<f32>,
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
                    record: record_v,
                    d_row: d_el_v,
                    partial: partial_view(partials, 0),
                },
                slope,
            },
            |split, partials| f.sum_partials(split, rows_pass, &[(&partials[0], d_el_v, 1, 1.0)]),
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
        record: GSliceMut<f32>,
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
            stats: fwd.stats.view(),
            el: fwd.el,
            record,
            d_el,
            nodes: nodes as u32,
            heads,
            feat,
            slope: self.slope,
        };
        let layout = NodeLanes::new(feat as usize, GAT_LANES);
        let config = node_config(nodes, heads, layout.rows_per_warp())?;
        let kernel = if layout.width == 4 { &GAT_PART_ROWS_W4 } else { &GAT_PART_ROWS };
        // SAFETY: out, part_out and d_out are [N_dst, H, F], part_weight, el and d_el [N_dst, H],
        // stats [N_dst, H, 2] and record [N_dst, H, 4] (the forward's, the checked d_out and this
        // backward's), the outputs distinct from the inputs;
        // the warps take the layout's (node, head) pairs, none past the last; the 16-byte kernel
        // only for `F % 4 == 0` (the layout's width), on 16-byte aligned buffers.
        unsafe { self.backend().launch(kernel, &config, &params) }
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
        let mut d_el = backend.result("d_el", g.num_dst() * heads as usize)?;
        let mut d_er = backend.result("d_er", g.num_src() * heads as usize)?;
        let mut dh = backend.result("dh", self.fused.features(g.num_src()))?;
        baseline::spmm(g, heads, 1, &d_e, ones_src.view(), 1.0, &mut d_el)?;
        baseline::spmm_transposed(g, heads, 1, &d_e, ones_dst.view(), 1.0, &mut d_er)?;
        baseline::spmm_transposed(g, heads, feat, &alpha, d_out.view(), 1.0, &mut dh)?;
        Ok(GatPrecomputedGrads { dh, d_el, d_er })
    }
}

/// What [`node_backward`] does with the features' gradient `[nodes, H, F]`.
enum FeatureGrad<'a> {
    /// None is made (only the attention vectors' partials).
    None,
    /// Written from the node scores' terms alone.
    Write(&'a mut Buffer<f32>),
    /// It holds a gradient (the aggregation's); the node scores' terms are added to it in place.
    Add(&'a mut Buffer<f32>),
}

/// One node score's gradient for [`node_backward`]: `d` (`[nodes, H]`; empty for ones, only with
/// [`FeatureGrad::None`]) and its attention vector `a` (`[H, F]`; read only with a features'
/// gradient).
#[derive(Clone, Copy)]
struct ScoreGrad {
    d: GSlice<f32>,
    a: GSlice<f32>,
}

/// `(blocks, nodes per block)` of [`node_backward`] over `nodes` nodes: fixed ranges of about 64
/// nodes, at most [`MAX_VECTOR_PARTIALS`] of them, at least one (an empty one for no nodes). A
/// function of `nodes` alone, and so is the order of every sum.
fn node_blocks(nodes: usize) -> (usize, usize) {
    let blocks = nodes.div_ceil(64).clamp(1, MAX_VECTOR_PARTIALS);
    (blocks, nodes.div_ceil(blocks).max(1))
}

/// One attention vector's gradient `Σ_n d[n]·x[n]` as per-block partials: [`node_backward`]
/// writes them, [`sum_vectors`] sums them.
struct VectorPartials {
    /// `[blocks, H·F]`.
    partial: Buffer<f32>,
    blocks: usize,
}

impl VectorPartials {
    /// Room for the partials of `nodes` nodes of `len` (head, feature) elements.
    fn new(backend: &Backend, nodes: usize, len: usize) -> Result<Self> {
        let (blocks, _) = node_blocks(nodes);
        Ok(Self { partial: backend.alloc::<f32>(blocks * len)?, blocks })
    }
}

/// The backward of the node scores `⟨x[n, h, :], a[h, :]⟩` for `nodes` nodes of `heads` × `feat`,
/// in one pass over `x` (`[nodes, H, F]`): the features' gradient `dx (+)= d·a` over `first` and
/// `second`'s terms (as `dx` says), and each one's attention-vector gradient `Σ_n d[n]·x[n]`
/// into its partials (made by [`VectorPartials::new`] for these `nodes`).
fn node_backward(
    backend: &Backend,
    (heads, feat): (u32, u32),
    x: GSlice<f32>,
    nodes: usize,
    dx: FeatureGrad<'_>,
    first: (ScoreGrad, &mut VectorPartials),
    second: Option<(ScoreGrad, &mut VectorPartials)>,
) -> Result<()> {
    let (blocks, per_block) = node_blocks(nodes);
    let len = heads as usize * feat as usize;
    for p in std::iter::once(&first.1).chain(second.as_ref().map(|s| &s.1)) {
        if p.partial.len() != blocks * len {
            let (expected, got) = (blocks * len, p.partial.len());
            return Err(Error::ShapeMismatch { op: "gat node backward", what: "partials", expected, got });
        }
    }
    let (dx, accumulate) = match dx {
        FeatureGrad::None => (GSliceMut::empty(), false),
        FeatureGrad::Write(dx) => (dx.view_mut(), false),
        FeatureGrad::Add(dx) => (dx.view_mut(), true),
    };
    let (term, partials) = first;
    let (term2, partial2) = match second {
        Some((term2, partials2)) => (term2, partials2.partial.view_mut()),
        None => (ScoreGrad { d: GSlice::empty(), a: GSlice::empty() }, GSliceMut::empty()),
    };
    let params = GatNodeBackwardParams {
        x,
        dx,
        d_scores: term.d,
        a: term.a,
        partial: partials.partial.view_mut(),
        d_scores2: term2.d,
        a2: term2.a,
        partial2,
        nodes: nodes as u32,
        heads,
        feat,
        nodes_per_block: per_block as u32,
        accumulate: accumulate as u32,
    };
    // One thread per element up to NODE_BLOCK (fewer elements: no idle warps, more blocks
    // resident); a thread's sums do not depend on the block's size.
    let threads = len.next_multiple_of(WARP_SIZE as usize).min(NODE_BLOCK as usize) as u32;
    let config = LaunchConfig { grid: Dim3::x(blocks as u32), block: Dim3::x(threads), shared_bytes: 0 };
    // SAFETY: x [nodes, H, F]; dx empty or [nodes, H, F]; d empty or [nodes, H] and d2 [nodes, H]
    // or empty; a, a2 [H, F] where read; the partials [blocks, H, F] (checked above); the
    // writable ones distinct from each other and from the inputs. Block b writes row b of the
    // partials and its own nodes' rows of dx, each element by one thread (read, then written).
    unsafe { backend.launch(&GAT_NODE_BACKWARD, &config, &params) }
}

/// `out = Σ_b partial[b]` for each of one or two vectors' partials (`len` elements each), one
/// launch, blocks in order.
fn sum_vectors(
    backend: &Backend,
    len: usize,
    (partials, out): (&VectorPartials, &mut Buffer<f32>),
    second: Option<(&VectorPartials, &mut Buffer<f32>)>,
) -> Result<()> {
    let vectors = 1 + second.is_some() as usize;
    let (partial2, out2, blocks2) = match second {
        Some((p, out)) => (p.partial.view(), out.view_mut(), p.blocks),
        None => (GSlice::empty(), GSliceMut::empty(), 0),
    };
    let params = GatVectorSumParams {
        partial: partials.partial.view(),
        out: out.view_mut(),
        partial2,
        out2,
        blocks: partials.blocks as u32,
        blocks2: blocks2 as u32,
        len: len as u32,
    };
    let chunks = len.div_ceil(VECTOR_SUM_ELEMENTS as usize) * vectors;
    let config = LaunchConfig {
        grid: Dim3::x(chunks as u32),
        block: Dim3::x(VECTOR_SUM_WARPS * WARP_SIZE),
        shared_bytes: VECTOR_SUM_WARPS * VECTOR_SUM_ELEMENTS * 4,
    };
    // SAFETY: the partials [blocks, len] and [blocks2, len] written by node_backward, the outputs
    // [len] distinct from them and each other; a lane per element of each vector, the shared
    // memory the kernel's warps' sums.
    unsafe { backend.launch(&GAT_VECTOR_GRAD_SUM, &config, &params) }
}

/// `Σ_n x[n, h, f]` over `nodes` nodes of `heads` × `feat` (GATv2's `d a` from its rows' terms),
/// as the result `what` (see [`Backend::result`]): per-block partials over fixed node ranges,
/// then their sum in a fixed order (deterministic).
pub(crate) fn sum_over_nodes(
    backend: &Backend,
    heads: u32,
    feat: u32,
    x: GSlice<f32>,
    nodes: usize,
    what: &'static str,
) -> Result<Buffer<f32>> {
    let len = heads as usize * feat as usize;
    let mut partials = VectorPartials::new(backend, nodes, len)?;
    let term = ScoreGrad { d: GSlice::empty(), a: GSlice::empty() };
    node_backward(backend, (heads, feat), x, nodes, FeatureGrad::None, (term, &mut partials), None)?;
    let mut out = backend.result(what, len)?;
    sum_vectors(backend, len, (&partials, &mut out), None)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! The node backward ([`node_backward`], [`sum_vectors`]: `GAT_NODE_BACKWARD` and
    //! `GAT_VECTOR_GRAD_SUM`) on the emulator against the reference's node-score backward in
    //! `f64`, under the tolerance rule: node counts around the unroll and a block's nodes (0, 1, 5,
    //! 64, 67, 131) and past the most partials (blocks of more than 64 nodes), `H·F` past the
    //! block's threads, F = 1, H = 3, F = 33; each way it is called (both scores from one array,
    //! one score added to a gradient, one written alone, the plain sum over nodes); the same bits
    //! on a second run.

    use super::*;
    use dfgnn_reference::{Dims, compare, gat_node_scores_backward, upcast};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// How [`node_backward`] is called.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Call {
        /// GAT with `h_dst` being `h`: `dx += d·a + d2·a2`, two vectors.
        Folded,
        /// GAT's sources: `dx += d·a`, one vector.
        Add,
        /// GAT's separate destinations: `dx = d·a`, one vector.
        Write,
        /// GATv2's `d a`: the plain sum over nodes, no `dx`.
        Sum,
    }

    /// `(dx, [da, da2])`, downloaded (`dx` empty for [`Call::Sum`], `da2` for one vector).
    fn run(
        backend: &Backend,
        call: Call,
        (heads, feat): (u32, u32),
        nodes: usize,
        inputs: &[Vec<f32>; 6],
    ) -> Vec<Vec<f32>> {
        let len = (heads * feat) as usize;
        let [x, base, d, a, d2, a2] = inputs.each_ref().map(|v| backend.upload(v).unwrap());
        if call == Call::Sum {
            let da = sum_over_nodes(backend, heads, feat, x.view(), nodes, "da").unwrap();
            return vec![Vec::new(), backend.download(&da).unwrap()];
        }
        let mut dx = if call == Call::Write { backend.alloc::<f32>(nodes * len).unwrap() } else { base };
        let grad = if call == Call::Write { FeatureGrad::Write(&mut dx) } else { FeatureGrad::Add(&mut dx) };
        let (mut p, mut p2) =
            (VectorPartials::new(backend, nodes, len).unwrap(), VectorPartials::new(backend, nodes, len).unwrap());
        let second = (call == Call::Folded).then_some((ScoreGrad { d: d2.view(), a: a2.view() }, &mut p2));
        node_backward(
            backend,
            (heads, feat),
            x.view(),
            nodes,
            grad,
            (ScoreGrad { d: d.view(), a: a.view() }, &mut p),
            second,
        )
        .unwrap();
        let (mut da, mut da2) = (backend.alloc::<f32>(len).unwrap(), backend.alloc::<f32>(len).unwrap());
        let second = (call == Call::Folded).then_some((&p2, &mut da2));
        sum_vectors(backend, len, (&p, &mut da), second).unwrap();
        let mut out = vec![backend.download(&dx).unwrap(), backend.download(&da).unwrap()];
        if call == Call::Folded {
            out.push(backend.download(&da2).unwrap());
        }
        out
    }

    /// What [`run`] should give, from the reference's node-score backward in `T`.
    fn expected<T: num_traits::Float>(call: Call, dims: Dims, nodes: usize, inputs: &[Vec<T>; 6]) -> Vec<Vec<T>> {
        let [x, base, d, a, d2, a2] = inputs;
        let add = |u: &[T], v: &[T]| u.iter().zip(v).map(|(&p, &q)| p + q).collect::<Vec<T>>();
        let ones = vec![T::one(); nodes * dims.heads];
        let first = gat_node_scores_backward(nodes, dims, x, a, if call == Call::Sum { &ones } else { d }).unwrap();
        match call {
            Call::Folded => {
                let second = gat_node_scores_backward(nodes, dims, x, a2, d2).unwrap();
                vec![add(&add(base, &first.dh), &second.dh), first.da, second.da]
            }
            Call::Add => vec![add(base, &first.dh), first.da],
            Call::Write => vec![first.dh, first.da],
            Call::Sum => vec![Vec::new(), first.da],
        }
    }

    fn check(backend: &Backend, call: Call, heads: u32, feat: u32, nodes: usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(nodes as u64 * 131 + heads as u64 * 7 + feat as u64);
        let len = (heads * feat) as usize;
        let mut random = |n: usize| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
        let inputs = [
            random(nodes * len),
            random(nodes * len),
            random(nodes * heads as usize),
            random(len),
            random(nodes * heads as usize),
            random(len),
        ];
        let got = run(backend, call, (heads, feat), nodes, &inputs);
        let dims = Dims { heads: heads as usize, feat: feat as usize };
        let naive = expected(call, dims, nodes, &inputs);
        let reference = expected(call, dims, nodes, &inputs.each_ref().map(|v| upcast(v)));
        let context = format!("{call:?} H={heads} F={feat} nodes={nodes}");
        for (((name, got), naive), reference) in ["dx", "da", "da2"].iter().zip(&got).zip(&naive).zip(&reference) {
            let c = compare(*name, got, naive, reference);
            assert!(c.passed(), "{context}: {c}");
        }
        assert_eq!(got.len(), reference.len(), "{context}");
        assert_eq!(run(backend, call, (heads, feat), nodes, &inputs), got, "{context}: a second run's bits");
    }

    #[test]
    fn node_backward_matches_the_reference_on_the_emulator() {
        let backend = Backend::emulator();
        for call in [Call::Folded, Call::Add, Call::Write, Call::Sum] {
            for (heads, feat) in [(1, 1), (3, 1), (3, 33), (1, 300), (2, 7)] {
                for nodes in [0, 1, 5, 64, 67, 131] {
                    check(&backend, call, heads, feat, nodes);
                }
            }
            // Past the most partials: blocks of 65 and 64 nodes, the last of them short.
            check(&backend, call, 3, 1, MAX_VECTOR_PARTIALS * 64 + 37);
        }
    }
}
