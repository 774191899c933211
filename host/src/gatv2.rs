//! GATv2 — graph attention with a LeakyReLU inside the score (Brody et al., PyG's
//! `GATv2Conv`) — forward and backward, fused.
//!
//! ```text
//! s_ij = ⟨a, LeakyReLU(xl_j + xr_i)⟩   α_ij = softmax_j(s_ij)   o_i = Σ_j α_ij·xl_j
//! ```
//! per head: `xl` (`[N_src, H, F]`) is the sources' transform, scored and aggregated, `xr`
//! (`[N_dst, H, F]`) the destinations', `a` (`[H, F]`) the attention vector. The fused passes
//! read per edge one feature row (`xl_j`, the key and the value); the forward saves per-(row,
//! head) state only (O(N·H)). The backward's row pass gives `d xr` and each row's term of `d a`
//! (an `[N_dst, H, F]` temporary, summed over rows as per-block partials in a fixed order), its
//! column pass `d xl`, its two parts (through the scores, through the aggregation) summed in the
//! pass. No float atomics: results are bit-identical run after run.

use dfgnn_device::abi::{
    ColumnGrads, DropoutParams, ForwardOut, GatV2BwdColsParams, GatV2BwdRowsParams, GatV2EdgeGradsParams,
    GatV2EdgeScoresParams, GatV2FwdParams, GatV2GroupParams, GroupParams, RowGrads,
};
use dfgnn_device::kernels::gatv2::{self, GATV2_EDGE_GRADS, GATV2_EDGE_SCORES, GatV2Variant};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, LaunchConfig};

use crate::backend::{Backend, Buffer};
use crate::baseline;
use crate::error::{Error, Result};
use crate::fused::{DevicePass, Fused, Side, dropout_params, partial_view};
use crate::gat::{NODE_BLOCK, sum_over_nodes};
use crate::graph::DeviceGraph;
use crate::plan::{self, Plan, PlanOptions, Schedule};
use crate::tiles::{DeviceTiles, GatV2TileIo};

/// GATv2's LeakyReLU negative slope by default (PyG's `GATv2Conv`).
pub const DEFAULT_GATV2_SLOPE: f32 = 0.2;

/// How to build a [`GatV2`].
#[derive(Clone, Debug, PartialEq)]
pub struct GatV2Config {
    /// Heads `H` (at least 1).
    pub heads: u32,
    /// Features per head `F` (at least 1).
    pub feat: u32,
    /// The LeakyReLU negative slope (finite).
    pub slope: f32,
    /// Overrides of the scheduler's choices.
    pub plan: PlanOptions,
}

impl GatV2Config {
    /// `heads` × `feat` with the default slope (0.2) and schedule.
    pub fn new(heads: u32, feat: u32) -> Self {
        Self { heads, feat, slope: DEFAULT_GATV2_SLOPE, plan: PlanOptions::default() }
    }
}

/// The output of a GATv2 forward and what the backward needs (it borrows the inputs for `'a`).
pub struct GatV2Forward<'a> {
    /// `[N_dst, H, F]` the attention output.
    pub out: Buffer<f32>,
    /// `[N_dst, H]` log-sum-exp of each row's scores (−∞ for an empty row).
    pub lse: Buffer<f32>,
    /// `[N_dst, H, 2]` the fused forward's (max score in base-2 units, 1/sum); empty after a
    /// baseline forward.
    stats: Buffer<f32>,
    xl: GSlice<f32>,
    xr: GSlice<f32>,
    a: GSlice<f32>,
    /// The attention dropout the forward ran with (the backward regenerates its mask).
    dropout: DropoutParams,
    _inputs: std::marker::PhantomData<&'a Buffer<f32>>,
}

impl GatV2Forward<'_> {
    /// `[N_dst, H, 2]` the fused forward's softmax state (empty after a baseline forward): what
    /// [`GatV2::saved_forward`] takes back with `out` and `lse`.
    pub fn stats(&self) -> &Buffer<f32> {
        &self.stats
    }
}

/// The gradients of [`GatV2::backward`].
pub struct GatV2Grads {
    /// `[N_src, H, F]`: through the aggregation and through the scores.
    pub dxl: Buffer<f32>,
    /// `[N_dst, H, F]`: through the scores.
    pub dxr: Buffer<f32>,
    /// `[H, F]`.
    pub da: Buffer<f32>,
}

/// GATv2 attention on one prepared graph and feature shape, with its plan.
pub struct GatV2<'g, 'b> {
    fused: Fused<'g, 'b>,
    /// The forward's tiles, when the plan has them (used without dropout).
    tiles: Option<DeviceTiles>,
    slope: f32,
    dropout: DropoutParams,
}

/// A 1-D launch of `items` threads of [`NODE_BLOCK`] (grid-stride past the cap).
fn items_config(items: u64) -> LaunchConfig {
    let blocks = items.div_ceil(NODE_BLOCK as u64).clamp(1, i32::MAX as u64);
    LaunchConfig { grid: Dim3::x(blocks as u32), block: Dim3::x(NODE_BLOCK), shared_bytes: 0 }
}

impl<'g, 'b> GatV2<'g, 'b> {
    /// Plans GATv2 on `graph` for `config` (once) and uploads the plan's work lists.
    pub fn new(graph: &'g DeviceGraph<'b>, config: &GatV2Config) -> Result<Self> {
        if !config.slope.is_finite() {
            return Err(Error::Unsupported { what: format!("LeakyReLU slope {}", config.slope) });
        }
        let limits = graph.backend().limits();
        let shape = graph.shape();
        let mut plan = plan::plan(gatv2::VARIANTS, &shape, config.heads, config.feat, limits, &config.plan)?;
        plan::plan_tiles(&mut plan, &shape, limits, &config.plan, &plan::TileModel::GATV2)?;
        // The tiles restate their maxima in the backward row pass's arithmetic (its load width).
        let score_width = plan.backward_rows.as_ref().map_or(0, |p| p.layout.width);
        let tiles = plan.tiles.as_ref().map(|t| DeviceTiles::upload(graph, t, score_width)).transpose()?;
        Ok(Self { fused: Fused::new(graph, plan)?, tiles, slope: config.slope, dropout: DropoutParams::OFF })
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

    /// The plan the scheduler chose.
    pub fn plan(&self) -> &Plan {
        &self.fused.plan
    }

    /// The LeakyReLU slope.
    pub fn slope(&self) -> f32 {
        self.slope
    }

    /// The graph this GATv2 was planned on.
    pub fn graph(&self) -> &'g DeviceGraph<'b> {
        self.fused.graph
    }

    fn backend(&self) -> &'b Backend {
        self.fused.graph.backend()
    }

    fn check(&self, op: &'static str, what: &'static str, len: usize, expected: usize) -> Result<()> {
        if len != expected {
            return Err(Error::ShapeMismatch { op, what, expected, got: len });
        }
        Ok(())
    }

    /// The GATv2 variant the pass was planned on, from the dropout table (the same rows,
    /// compiled with the mask) when `dropout` is on.
    fn variant(pass: &DevicePass, dropout: &DropoutParams) -> Result<&'static GatV2Variant> {
        pass.variant(if dropout.threshold != 0 { gatv2::dropout::VARIANTS } else { gatv2::VARIANTS })
    }

    /// `out = softmax(⟨a, LeakyReLU(xl_j + xr_i)⟩ over the edges)·xl`: `xl` is `[N_src, H, F]`,
    /// `xr` `[N_dst, H, F]` (on a square graph both come from the same nodes), `a` `[H, F]`.
    pub fn forward<'a>(
        &self,
        xl: &'a Buffer<f32>,
        xr: &'a Buffer<f32>,
        a: &'a Buffer<f32>,
    ) -> Result<GatV2Forward<'a>> {
        self.forward_with(xl, xr, a, self.dropout)
    }

    /// [`GatV2::forward`] with `dropout` instead of the one set ([`crate::external`]'s calls
    /// share one planned op across callers and pass theirs).
    pub(crate) fn forward_with<'a>(
        &self,
        xl: &'a Buffer<f32>,
        xr: &'a Buffer<f32>,
        a: &'a Buffer<f32>,
        dropout: DropoutParams,
    ) -> Result<GatV2Forward<'a>> {
        let g = self.graph();
        let f = &self.fused;
        self.check("gatv2 forward", "xl", xl.len(), f.features(g.num_src()))?;
        self.check("gatv2 forward", "xr", xr.len(), f.features(g.num_dst()))?;
        self.check("gatv2 forward", "a", a.len(), f.features(1))?;
        let backend = self.backend();
        let (heads, feat) = (f.plan.heads, f.plan.feat);
        let (xl, xr, a, slope) = (xl.view(), xr.view(), a.view(), self.slope);
        let result =
            |out, lse, stats| GatV2Forward { out, lse, stats, xl, xr, a, dropout, _inputs: std::marker::PhantomData };
        let Some(pass) = &f.forward else {
            self.fused.check_baseline_dropout(&dropout)?;
            let scores = self.edge_scores(xl, xr, a)?;
            let edge_parallel = f.plan.schedule == Schedule::EdgeParallel;
            let (out, lse) = baseline::forward_from_scores(g, &scores, xl, heads, feat, edge_parallel)?;
            return Ok(result(out, lse, backend.alloc::<f32>(0)?));
        };
        let variant = Self::variant(pass, &dropout)?;
        let nh = g.num_dst() * heads as usize;
        let mut out = backend.result("out", f.features(g.num_dst()))?;
        let mut lse = backend.result("lse", nh)?;
        let mut stats = backend.result("stats", nh * 2)?;
        let (out_v, lse_v, stats_v) = (out.view_mut(), lse.view_mut(), stats.view_mut());
        if let Some(tiles) = self.tiles.as_ref().filter(|_| dropout.threshold == 0) {
            let io = GatV2TileIo { xr, xl, a, out: out_v, lse: lse_v, stats: stats_v };
            tiles.gatv2_forward(g, (heads, feat), slope, io)?;
            return Ok(result(out, lse, stats));
        }
        if let Some(groups) = &f.groups {
            let params = GatV2GroupParams {
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
                xr,
                xl,
                a,
                slope,
            };
            // SAFETY: xr [N_dst, H, F], xl [N_src, H, F], a [H, F] live and read-only, the
            // outputs distinct; the groups are this plan's (staging sized for two [H, F] rows per
            // source: xl as the key and as the value).
            unsafe { f.launch_groups(groups, &variant.group, &params)? };
        }
        f.run_forward_pass(
            pass,
            &variant.forward,
            variant.packed.as_ref().map(|p| &p.forward),
            &[heads as usize * feat as usize, heads as usize * 2],
            |units, partials, arrivals| {
                let dst = ForwardOut {
                    out: out_v,
                    lse: lse_v,
                    stats: stats_v,
                    partial_acc: partial_view(partials, 0),
                    partial_ml: partial_view(partials, 1),
                    arrivals,
                };
                GatV2FwdParams { edges: f.edges(pass, Side::Rows, units, dropout), xr, xl, a, dst, slope }
            },
        )?;
        Ok(result(out, lse, stats))
    }

    /// A [`GatV2::forward`] result rebuilt from what a caller saved of it (`out` `[N_dst, H, F]`,
    /// `lse` `[N_dst, H]`, `stats` `[N_dst, H, 2]`, over the same `xl`, `xr`, `a`), for
    /// [`GatV2::backward`] without running the forward again. `stats` is ignored when this
    /// plan's forward is not fused. The backward regenerates the dropout mask set now
    /// ([`GatV2::set_dropout`]): set the forward's probability and seed before calling.
    pub fn saved_forward<'a>(
        &self,
        xl: &'a Buffer<f32>,
        xr: &'a Buffer<f32>,
        a: &'a Buffer<f32>,
        out: Buffer<f32>,
        lse: Buffer<f32>,
        stats: Buffer<f32>,
    ) -> Result<GatV2Forward<'a>> {
        self.saved_forward_with(xl, xr, a, (out, lse, stats), self.dropout)
    }

    /// [`GatV2::saved_forward`] of a forward that ran with `dropout`.
    pub(crate) fn saved_forward_with<'a>(
        &self,
        xl: &'a Buffer<f32>,
        xr: &'a Buffer<f32>,
        a: &'a Buffer<f32>,
        (out, lse, stats): (Buffer<f32>, Buffer<f32>, Buffer<f32>),
        dropout: DropoutParams,
    ) -> Result<GatV2Forward<'a>> {
        let g = self.graph();
        let f = &self.fused;
        let nh = g.num_dst() * f.plan.heads as usize;
        self.check("gatv2 backward", "xl", xl.len(), f.features(g.num_src()))?;
        self.check("gatv2 backward", "xr", xr.len(), f.features(g.num_dst()))?;
        self.check("gatv2 backward", "a", a.len(), f.features(1))?;
        self.check("gatv2 backward", "out", out.len(), f.features(g.num_dst()))?;
        self.check("gatv2 backward", "lse", lse.len(), nh)?;
        self.check("gatv2 backward", "stats", stats.len(), 2 * nh)?;
        let stats = if f.forward.is_some() { stats } else { self.backend().alloc::<f32>(0)? };
        Ok(GatV2Forward {
            out,
            lse,
            stats,
            xl: xl.view(),
            xr: xr.view(),
            a: a.view(),
            dropout,
            _inputs: std::marker::PhantomData,
        })
    }

    /// The baselines' edge scores `[E, H]`.
    fn edge_scores(&self, xl: GSlice<f32>, xr: GSlice<f32>, a: GSlice<f32>) -> Result<Buffer<f32>> {
        let g = self.graph();
        let (heads, feat) = (self.fused.plan.heads, self.fused.plan.feat);
        let mut scores = self.backend().alloc::<f32>(g.nnz() * heads as usize)?;
        let items = g.nnz() as u64 * heads as u64;
        if items > 0 {
            let params = GatV2EdgeScoresParams {
                xl,
                xr,
                a,
                coo_rows: g.d_coo_rows.view(),
                columns: g.d_columns.view(),
                out: scores.view_mut(),
                num_edges: g.nnz() as u64,
                heads,
                feat,
                slope: self.slope,
            };
            // SAFETY: xl [N_src, H, F], xr [N_dst, H, F], a [H, F], the graph's validated COO
            // rows and columns, scores [E, H] distinct from them; the kernel sweeps grid-stride.
            unsafe { self.backend().launch(&GATV2_EDGE_SCORES, &items_config(items), &params)? };
        }
        Ok(scores)
    }

    /// The gradients of `Σ d_out ⊙ out` with respect to `xl`, `xr` and `a`.
    pub fn backward(&self, fwd: &GatV2Forward<'_>, d_out: &Buffer<f32>) -> Result<GatV2Grads> {
        let g = self.graph();
        let f = &self.fused;
        self.check("gatv2 backward", "d_out", d_out.len(), f.features(g.num_dst()))?;
        let (heads, feat) = (f.plan.heads, f.plan.feat);
        let backend = self.backend();
        let hf = heads as usize * feat as usize;
        let fused = f.backward_kernels(&fwd.dropout, |pass| Self::variant(pass, &fwd.dropout))?;
        let Some((rows_pass, rows_kernel, cols_pass, cols_kernel)) = fused.filter(|_| !fwd.stats.is_empty()) else {
            return self.baseline_backward(fwd, d_out);
        };
        let (xl, xr, a, slope) = (fwd.xl, fwd.xr, fwd.a, self.slope);

        // Row pass: d xr, the rows' terms of d a, and the row record (with D).
        let mut dxr = backend.result("dxr", f.features(g.num_dst()))?;
        let mut d_a_rows = backend.alloc::<f32>(f.features(g.num_dst()))?;
        let mut record = backend.alloc::<f32>(4 * g.num_dst() * heads as usize)?;
        let (dxr_v, d_a_v, record_v) = (dxr.view_mut(), d_a_rows.view_mut(), record.view_mut());
        f.run_pass(
            rows_pass,
            &rows_kernel.0,
            rows_kernel.1.as_ref(),
            &[hf, hf],
            |units, partials| GatV2BwdRowsParams {
                edges: f.edges(rows_pass, Side::Rows, units, fwd.dropout),
                xr,
                xl,
                a,
                grads: RowGrads {
                    out: fwd.out.view(),
                    stats: fwd.stats.view(),
                    d_out: d_out.view(),
                    record: record_v,
                    d_row: dxr_v,
                    partial: partial_view(partials, 0),
                },
                d_a: d_a_v,
                partial_d_a: partial_view(partials, 1),
                slope,
            },
            |split, partials| {
                f.sum_partials(split, rows_pass, &[(&partials[0], dxr_v, feat, 1.0), (&partials[1], d_a_v, feat, 1.0)])
            },
        )?;

        // Column pass: d xl through the scores and through the aggregation, summed in the pass
        // (the score's key is its value: ScoreGradient::key_into_value), so one array.
        let mut dxl = backend.result("dxl", f.features(g.num_src()))?;
        let dxl_v = dxl.view_mut();
        f.run_pass(
            cols_pass,
            &cols_kernel.0,
            cols_kernel.1.as_ref(),
            &[hf],
            |units, partials| GatV2BwdColsParams {
                edges: f.edges(cols_pass, Side::Columns, units, fwd.dropout),
                xr,
                xl,
                a,
                grads: ColumnGrads {
                    record: record.view(),
                    d_out: d_out.view(),
                    d_key: GSliceMut::empty(),
                    d_value: dxl_v,
                    partial_d_key: GSliceMut::empty(),
                    partial_d_value: partial_view(partials, 0),
                },
                slope,
            },
            |split, partials| f.sum_partials(split, cols_pass, &[(&partials[0], dxl_v, feat, 1.0)]),
        )?;
        let da = sum_over_nodes(backend, heads, feat, d_a_rows.view(), g.num_dst(), "da")?;
        Ok(GatV2Grads { dxl, dxr, da })
    }

    /// The unfused backward: α and ds `[E, H]` in memory, then per row `d xr` and the row's term
    /// of `d a`, per column the scores' part of `d xl` added to the aggregation's.
    fn baseline_backward(&self, fwd: &GatV2Forward<'_>, d_out: &Buffer<f32>) -> Result<GatV2Grads> {
        self.fused.check_baseline_dropout(&fwd.dropout)?;
        let g = self.graph();
        let (heads, feat) = (self.fused.plan.heads, self.fused.plan.feat);
        let backend = self.backend();
        let scores = self.edge_scores(fwd.xl, fwd.xr, fwd.a)?;
        let (alpha, ds) = baseline::softmax_backward(g, scores, fwd.xl, d_out.view(), heads, feat)?;
        let mut dxl_agg = backend.alloc::<f32>(self.fused.features(g.num_src()))?;
        baseline::spmm_transposed(g, heads, feat, &alpha, d_out.view(), 1.0, &mut dxl_agg)?;
        let mut dxr = backend.result("dxr", self.fused.features(g.num_dst()))?;
        let mut d_a_rows = backend.alloc::<f32>(self.fused.features(g.num_dst()))?;
        let mut dxl = backend.result("dxl", self.fused.features(g.num_src()))?;
        let edge_grads = |columns: bool, base: GSlice<f32>, dx: GSliceMut<f32>, d_a: GSliceMut<f32>| {
            let (offsets, neighbours, edge_ids, nodes) = if columns {
                (g.d_col_offsets.view(), g.d_csc_rows.view(), g.d_csc_edge_ids.view(), g.num_src())
            } else {
                (g.d_row_offsets.view(), g.d_columns.view(), GSlice::empty(), g.num_dst())
            };
            let items = nodes as u64 * heads as u64 * feat as u64;
            if items == 0 {
                return Ok(());
            }
            let params = GatV2EdgeGradsParams {
                offsets,
                neighbours,
                edge_ids,
                xl: fwd.xl,
                xr: fwd.xr,
                a: fwd.a,
                d_scores: ds.view(),
                base,
                dx,
                d_a,
                nodes: nodes as u32,
                heads,
                feat,
                slope: self.slope,
                columns: columns as u32,
            };
            // SAFETY: the graph's validated offsets, neighbours and CSC permutation; xl
            // [N_src, H, F], xr [N_dst, H, F], a [H, F], ds [E, H], base empty or [N, H, F], dx
            // and d_a [N, H, F] (d_a empty for columns) distinct from the inputs; grid-stride.
            unsafe { backend.launch(&GATV2_EDGE_GRADS, &items_config(items), &params) }
        };
        edge_grads(false, GSlice::empty(), dxr.view_mut(), d_a_rows.view_mut())?;
        edge_grads(true, dxl_agg.view(), dxl.view_mut(), GSliceMut::empty())?;
        let da = sum_over_nodes(backend, heads, feat, d_a_rows.view(), g.num_dst(), "da")?;
        Ok(GatV2Grads { dxl, dxr, da })
    }
}
