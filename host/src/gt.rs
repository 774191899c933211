//! GT — sparse scaled dot-product attention over graph edges — forward and backward, fused.
//!
//! ```text
//! s_ij = c·q_i·k_j      α_ij = softmax_j(s_ij)      o_i = Σ_j α_ij·v_j        (c = 1/√F by default)
//! ```
//! The forward saves only the per-(row, head) log-sum-exp; the backward recomputes α from it:
//! a row pass gives dq (and D = dO·o), a column pass over the CSC gives dk and dv. Attention
//! dropout ([`Gt::set_dropout`]) multiplies α by a mask the backward regenerates. No float
//! atomics: results are bit-identical run after run.

use dfgnn_device::abi::{
    ColumnGrads, DropoutParams, ForwardOut, GroupParams, GtBwdColsParams, GtBwdRowsParams, GtFwdParams, GtGroupParams,
    NormalizeGrads, RowGrads,
};
use dfgnn_device::kernels::gt::{self, GtVariant, VARIANTS};
use dfgnn_device::simt::GSlice;

use crate::backend::Buffer;
use crate::baseline;
use crate::error::{Error, Result};
use crate::fused::{DevicePass, Fused, Side, dropout_params, partial_view};
use crate::graph::DeviceGraph;
use crate::plan::{self, Plan, PlanOptions, Schedule};
use crate::tiles::{BlocksIo, DeviceBlocks, DeviceTiles, TileIo};

/// How to build a [`Gt`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GtConfig {
    /// Heads `H` (at least 1).
    pub heads: u32,
    /// Features per head `F` (at least 1).
    pub feat: u32,
    /// The score scale `c`; `None` for `1/√F`.
    pub scale: Option<f32>,
    /// Overrides of the scheduler's choices.
    pub plan: PlanOptions,
}

impl GtConfig {
    /// `heads` × `feat` with the default scale and schedule.
    pub fn new(heads: u32, feat: u32) -> Self {
        Self { heads, feat, ..Self::default() }
    }

    /// The score scale `c` this config asks for (`1/√F` by default); a non-finite one is
    /// [`Error::Unsupported`].
    pub(crate) fn score_scale(&self) -> Result<f32> {
        let scale = self.scale.unwrap_or(1.0 / (self.feat as f32).sqrt());
        if !scale.is_finite() {
            return Err(Error::Unsupported { what: format!("score scale {scale}") });
        }
        Ok(scale)
    }
}

/// The output of [`Gt::forward`] and what the backward needs: views of the inputs (borrowed for
/// `'a`), the score scale and the per-(row, head) log-sum-exp.
pub struct GtForward<'a> {
    /// `[N_dst, H, F]` the attention output.
    pub out: Buffer<f32>,
    /// `[N_dst, H]` log-sum-exp of each row's scores (−∞ for an empty row).
    pub lse: Buffer<f32>,
    /// `[N_dst, H, 2]` the fused forward's (max score in base-2 units, 1/sum), from which the
    /// fused backward recomputes α exactly as the forward weighted (empty after a baseline
    /// forward, whose backward recomputes α itself).
    stats: Buffer<f32>,
    q: GSlice<f32>,
    k: GSlice<f32>,
    v: GSlice<f32>,
    scale: f32,
    /// The attention dropout the forward ran with (the backward regenerates its mask).
    dropout: DropoutParams,
    _inputs: std::marker::PhantomData<&'a Buffer<f32>>,
}

impl GtForward<'_> {
    /// `[N_dst, H, 2]` the fused forward's softmax state (empty after a baseline forward): what
    /// [`Gt::saved_forward`] takes back with `out` and `lse`.
    pub fn stats(&self) -> &Buffer<f32> {
        &self.stats
    }
}

/// The gradients of [`Gt::backward`].
pub struct GtGrads {
    /// `[N_dst, H, F]`.
    pub dq: Buffer<f32>,
    /// `[N_src, H, F]`.
    pub dk: Buffer<f32>,
    /// `[N_src, H, F]`.
    pub dv: Buffer<f32>,
}

/// What [`Gt::backward_with_keys`] made: the three gradients, or (the fused column pass carried
/// the key gradient through AGNN's normalisation) the features' whole gradient, its shares of
/// dβ written.
pub(crate) enum KeyedGrads {
    /// `dq`, `dk` and `dv`, for the caller to take through the normalisation.
    Attention(GtGrads),
    /// `[N_src, H, F]` the features' gradient (AGNN's result `dh`).
    Features(Buffer<f32>),
}

/// GT attention on one prepared graph and feature shape, with its plan.
pub struct Gt<'g, 'b> {
    fused: Fused<'g, 'b>,
    /// The fused kernels without dropout: GT's table, or AGNN's ([`Gt::with_table`]).
    table: &'static [GtVariant],
    /// Whether the fused kernels' keys are `[N_src, H]` scalars (AGNN's inverse norms) rather than
    /// `[N_src, H, F]` vectors; the tiles and the baselines read vectors.
    scalar_keys: bool,
    /// The forward's tiles, when the plan has them (used without dropout).
    tiles: Option<DeviceTiles>,
    /// The backward's closed blocks, when the plan has them (after the forward over dense
    /// tiles; used without dropout).
    blocks: Option<DeviceBlocks>,
    scale: f32,
    dropout: DropoutParams,
}

impl<'g, 'b> Gt<'g, 'b> {
    /// Plans GT on `graph` for `config` (once) and uploads the plan's work lists.
    pub fn new(graph: &'g DeviceGraph<'b>, config: &GtConfig) -> Result<Self> {
        Self::with_table(graph, config, VARIANTS, false)
    }

    /// [`Gt::new`] with the fused kernels of `table` (a table of GT's shapes and parameter
    /// structs: AGNN's), whose keys are scalars when `scalar_keys`.
    pub(crate) fn with_table(
        graph: &'g DeviceGraph<'b>,
        config: &GtConfig,
        table: &'static [GtVariant],
        scalar_keys: bool,
    ) -> Result<Self> {
        let limits = graph.backend().limits();
        let shape = graph.shape();
        let mut plan = plan::plan(table, &shape, config.heads, config.feat, limits, &config.plan)?;
        plan::plan_tiles(&mut plan, &shape, limits, &config.plan, &plan::TileModel::GT)?;
        plan::plan_blocks(&mut plan, &shape, limits, &config.plan)?;
        let scale = config.score_scale()?;
        // The tiles restate their maxima in the backward row pass's arithmetic (its load width),
        // unless the backward runs over closed blocks, which repeat the tiles' own arithmetic.
        let score_width = match (&plan.blocks, &plan.backward_rows) {
            (None, Ok(p)) => p.layout.width,
            _ => 0,
        };
        let tiles = plan.tiles.as_ref().map(|t| DeviceTiles::upload(graph, t, score_width)).transpose()?;
        let blocks = plan.blocks.as_ref().map(|b| DeviceBlocks::upload(graph, b)).transpose()?;
        let fused = Fused::new(graph, plan)?;
        Ok(Self { fused, table, scalar_keys, tiles, blocks, scale, dropout: DropoutParams::OFF })
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

    /// The variant the pass was planned on, from this op's table, or from GT's dropout table (the
    /// same rows, compiled with the mask) when `dropout` is on.
    fn variant(&self, pass: &DevicePass, dropout: &DropoutParams) -> Result<&'static GtVariant> {
        pass.variant(if dropout.threshold != 0 { gt::dropout::VARIANTS } else { self.table })
    }

    /// The elements of the fused kernels' keys of `nodes` source nodes.
    fn fused_keys(&self, nodes: usize) -> usize {
        if self.scalar_keys { nodes * self.fused.plan.heads as usize } else { self.fused.features(nodes) }
    }

    /// `len` against the keys of `nodes` nodes that the fused kernels read when `fused`, else
    /// vectors.
    fn check_keys(&self, op: &'static str, len: usize, nodes: usize, fused: bool) -> Result<()> {
        let expected = if fused { self.fused_keys(nodes) } else { self.fused.features(nodes) };
        if len != expected {
            return Err(Error::ShapeMismatch { op, what: "k", expected, got: len });
        }
        Ok(())
    }

    /// The plan the scheduler chose.
    pub fn plan(&self) -> &Plan {
        &self.fused.plan
    }

    /// The score scale `c`.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// The graph this GT was planned on.
    pub fn graph(&self) -> &'g DeviceGraph<'b> {
        self.fused.graph
    }

    fn check_view(&self, op: &'static str, what: &'static str, len: usize, nodes: usize) -> Result<()> {
        let expected = self.fused.features(nodes);
        if len != expected {
            return Err(Error::ShapeMismatch { op, what, expected, got: len });
        }
        Ok(())
    }

    /// `out = softmax(c·q·kᵀ over the edges)·v`, plus the log-sum-exp the backward needs.
    /// `q` is `[N_dst, H, F]`, `k` and `v` are `[N_src, H, F]`.
    pub fn forward<'a>(&self, q: &'a Buffer<f32>, k: &'a Buffer<f32>, v: &'a Buffer<f32>) -> Result<GtForward<'a>> {
        self.forward_views(q.view(), k.view(), v.view(), self.dropout)
    }

    /// [`Gt::forward`] with `dropout` instead of the one set ([`crate::external`]'s calls share
    /// one planned op across callers and pass theirs).
    pub(crate) fn forward_with<'a>(
        &self,
        q: &'a Buffer<f32>,
        k: &'a Buffer<f32>,
        v: &'a Buffer<f32>,
        dropout: DropoutParams,
    ) -> Result<GtForward<'a>> {
        self.forward_views(q.view(), k.view(), v.view(), dropout)
    }

    /// The forward with an explicit dropout, on views whose buffers the caller keeps alive for
    /// `'a` (AGNN keeps its queries and keys in the struct that holds the result).
    pub(crate) fn forward_views<'a>(
        &self,
        q: GSlice<f32>,
        k: GSlice<f32>,
        v: GSlice<f32>,
        dropout: DropoutParams,
    ) -> Result<GtForward<'a>> {
        let scale = self.scale;
        let g = self.fused.graph;
        self.check_view("gt forward", "q", q.len(), g.num_dst())?;
        self.check_keys("gt forward", k.len(), g.num_src(), self.forward_runs_rows(&dropout))?;
        self.check_view("gt forward", "v", v.len(), g.num_src())?;
        let backend = g.backend();
        let (heads, feat) = (self.fused.plan.heads, self.fused.plan.feat);
        let result =
            |out, lse, stats| GtForward { out, lse, stats, q, k, v, scale, dropout, _inputs: std::marker::PhantomData };
        let Some(pass) = &self.fused.forward else {
            self.fused.check_baseline_dropout(&dropout)?;
            let inputs = baseline::Inputs { q, k, v, heads, feat, scale };
            let (out, lse) = baseline::forward(g, &inputs, self.fused.plan.schedule == Schedule::EdgeParallel)?;
            return Ok(result(out, lse, backend.alloc::<f32>(0)?));
        };
        let nh = g.num_dst() * heads as usize;
        let mut out = backend.result("out", self.fused.features(g.num_dst()))?;
        let mut lse = backend.result("lse", nh)?;
        let mut stats = backend.result("stats", nh * 2)?;
        let (out_v, lse_v, stats_v) = (out.view_mut(), lse.view_mut(), stats.view_mut());
        let scale_log2 = scale * std::f32::consts::LOG2_E;
        if let Some(tiles) = self.tiles.as_ref().filter(|_| dropout.threshold == 0) {
            let io = TileIo { q, k, v, out: out_v, lse: lse_v, stats: stats_v };
            tiles.gt_forward(g, heads, feat, scale_log2, io)?;
            return Ok(result(out, lse, stats));
        }
        let variant = self.variant(pass, &dropout)?;
        if let Some(groups) = &self.fused.groups {
            let params = GtGroupParams {
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
                q,
                k,
                v,
                scale_log2,
            };
            // SAFETY: as in `Fused::run_pass`; the groups are this plan's.
            unsafe { self.fused.launch_groups(groups, &variant.group, &params)? };
        }
        self.fused.run_forward_pass(
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
                GtFwdParams { edges: self.fused.edges(pass, Side::Rows, units, dropout), q, k, v, dst, scale_log2 }
            },
        )?;
        Ok(result(out, lse, stats))
    }

    /// Whether a forward with `dropout` runs the fused row kernels (not a baseline, not the tiles,
    /// which run without dropout only): the kernels whose keys are scalars where
    /// [`Gt::with_table`] said so.
    pub(crate) fn forward_runs_rows(&self, dropout: &DropoutParams) -> bool {
        self.fused.forward.is_some() && (self.tiles.is_none() || dropout.threshold != 0)
    }

    /// A forward's result rebuilt from what a caller saved of it (`out` `[N_dst, H, F]`, `lse`
    /// `[N_dst, H]`, `stats` `[N_dst, H, 2]`, as [`Gt::forward`] made them, over the same `q`,
    /// `k`, `v`), for [`Gt::backward`] without running the forward again. `stats` is ignored when
    /// this plan's forward is not fused (its backward recomputes α itself). The backward
    /// regenerates the dropout mask set now ([`Gt::set_dropout`]): set the forward's probability
    /// and seed before calling.
    pub fn saved_forward<'a>(
        &self,
        q: &'a Buffer<f32>,
        k: &'a Buffer<f32>,
        v: &'a Buffer<f32>,
        out: Buffer<f32>,
        lse: Buffer<f32>,
        stats: Buffer<f32>,
    ) -> Result<GtForward<'a>> {
        self.saved_forward_with(q, k, v, (out, lse, stats), self.dropout)
    }

    /// [`Gt::saved_forward`] of a forward that ran with `dropout`.
    pub(crate) fn saved_forward_with<'a>(
        &self,
        q: &'a Buffer<f32>,
        k: &'a Buffer<f32>,
        v: &'a Buffer<f32>,
        (out, lse, stats): (Buffer<f32>, Buffer<f32>, Buffer<f32>),
        dropout: DropoutParams,
    ) -> Result<GtForward<'a>> {
        let g = self.fused.graph;
        let nh = g.num_dst() * self.fused.plan.heads as usize;
        self.check_view("gt backward", "q", q.len(), g.num_dst())?;
        self.check_view("gt backward", "k", k.len(), g.num_src())?;
        self.check_view("gt backward", "v", v.len(), g.num_src())?;
        self.check_view("gt backward", "out", out.len(), g.num_dst())?;
        for (what, buffer, expected) in [("lse", &lse, nh), ("stats", &stats, 2 * nh)] {
            if buffer.len() != expected {
                return Err(Error::ShapeMismatch { op: "gt backward", what, expected, got: buffer.len() });
            }
        }
        let stats = if self.fused.forward.is_some() { stats } else { g.backend().alloc::<f32>(0)? };
        let (q, k, v, scale) = (q.view(), k.view(), v.view(), self.scale);
        Ok(GtForward { out, lse, stats, q, k, v, scale, dropout, _inputs: std::marker::PhantomData })
    }

    /// The gradients of `Σ d_out ⊙ out` with respect to q, k and v.
    pub fn backward(&self, fwd: &GtForward<'_>, d_out: &Buffer<f32>) -> Result<GtGrads> {
        match self.backward_with_keys(fwd, |_| Ok(fwd.k), None, d_out)? {
            KeyedGrads::Attention(grads) => Ok(grads),
            KeyedGrads::Features(_) => unreachable!("no normalisation to carry the key gradient through"),
        }
    }

    /// [`Gt::backward`] with the keys `keys(fused)` instead of the forward's, `fused` saying
    /// whether the fused passes run (resolved once, here): then their keys (scalars, where
    /// [`Gt::with_table`] said so), else vectors for the baseline (AGNN's forward keys may be
    /// either; the closed blocks read vectors too). With `normalize` (AGNN's; its `dq` is filled
    /// in here, with the row pass's), the fused column pass also carries the key gradient
    /// through the normalisation: then the result is the features' whole gradient
    /// ([`KeyedGrads::Features`]) and the shares are written; else ([`KeyedGrads::Attention`],
    /// the baselines and the closed blocks) the caller does that from `dq`, `dk` and `dv`.
    pub(crate) fn backward_with_keys(
        &self,
        fwd: &GtForward<'_>,
        keys: impl FnOnce(bool) -> Result<GSlice<f32>>,
        normalize: Option<NormalizeGrads>,
        d_out: &Buffer<f32>,
    ) -> Result<KeyedGrads> {
        // The summed query and key gradients carry the score scale.
        let grad_scale = fwd.scale;
        let g = self.fused.graph;
        self.check_view("gt backward", "d_out", d_out.len(), g.num_dst())?;
        let (heads, feat) = (self.fused.plan.heads, self.fused.plan.feat);
        // The closed blocks (after the forward over dense tiles, without dropout) read vector
        // keys and leave the normalisation's backward, if any, to the caller.
        let blocks = self.blocks.as_ref().filter(|_| fwd.dropout.threshold == 0 && !fwd.stats.is_empty());
        let fused = match blocks {
            Some(_) => None,
            None => self.fused.backward_kernels(&fwd.dropout, |pass| self.variant(pass, &fwd.dropout))?,
        };
        let fused = fused.filter(|_| !fwd.stats.is_empty());
        let k = keys(fused.is_some())?;
        self.check_keys("gt backward", k.len(), g.num_src(), fused.is_some())?;
        let backend = g.backend();
        let scale_log2 = fwd.scale * std::f32::consts::LOG2_E;
        if let Some(blocks) = blocks {
            let n = self.fused.features(g.num_dst());
            let (mut dq, mut dk, mut dv) =
                (backend.result("dq", n)?, backend.result("dk", n)?, backend.result("dv", n)?);
            let io = BlocksIo {
                q: fwd.q,
                k,
                v: fwd.v,
                stats: fwd.stats.view(),
                d_out: d_out.view(),
                dq: dq.view_mut(),
                dk: dk.view_mut(),
                dv: dv.view_mut(),
            };
            blocks.gt_backward(g, (heads, feat), (scale_log2, grad_scale), io)?;
            return Ok(KeyedGrads::Attention(GtGrads { dq, dk, dv }));
        }
        let Some((rows_pass, rows_kernel, cols_pass, cols_kernel)) = fused else {
            // The baseline schedules, and fused ones whose backward cannot hold the shape.
            self.fused.check_baseline_dropout(&fwd.dropout)?;
            let inputs = baseline::Inputs { q: fwd.q, k, v: fwd.v, heads, feat, scale: fwd.scale };
            let (dq, dk, dv) = baseline::backward(g, &inputs, d_out.view(), grad_scale)?;
            return Ok(KeyedGrads::Attention(GtGrads { dq, dk, dv }));
        };
        let width = heads as usize * feat as usize;

        // Row pass: dq and the row record (with D).
        let mut dq = backend.result("dq", self.fused.features(g.num_dst()))?;
        let mut record = backend.alloc::<f32>(4 * g.num_dst() * heads as usize)?;
        let (dq_v, record_v) = (dq.view_mut(), record.view_mut());
        self.fused.run_pass(
            rows_pass,
            &rows_kernel.0,
            rows_kernel.1.as_ref(),
            &[width],
            |units, partials| GtBwdRowsParams {
                edges: self.fused.edges(rows_pass, Side::Rows, units, fwd.dropout),
                q: fwd.q,
                k,
                v: fwd.v,
                grads: RowGrads {
                    out: fwd.out.view(),
                    stats: fwd.stats.view(),
                    d_out: d_out.view(),
                    record: record_v,
                    d_row: dq_v,
                    partial: partial_view(partials, 0),
                },
                scale_log2,
                grad_scale,
            },
            |split, partials| self.fused.sum_partials(split, rows_pass, &[(&partials[0], dq_v, feat, grad_scale)]),
        )?;

        // Column pass: dk and dv, or (normalize) the features' whole gradient alone, in `dv`.
        let folded = normalize.is_some();
        let n_src = self.fused.features(g.num_src());
        let mut dk = if folded { backend.alloc::<f32>(0)? } else { backend.result("dk", n_src)? };
        let mut dv = backend.result(if folded { "dh" } else { "dv" }, n_src)?;
        let (dk_v, dv_v) = (dk.view_mut(), dv.view_mut());
        let normalize = normalize.map_or(NormalizeGrads::NONE, |n| NormalizeGrads { dq: dq.view(), ..n });
        // The value's partials come first; the key's, where kept, after them.
        let partial_widths: &[usize] = if folded { &[width] } else { &[width, width] };
        self.fused.run_pass(
            cols_pass,
            &cols_kernel.0,
            cols_kernel.1.as_ref(),
            partial_widths,
            |units, partials| GtBwdColsParams {
                edges: self.fused.edges(cols_pass, Side::Columns, units, fwd.dropout),
                q: fwd.q,
                k,
                v: fwd.v,
                grads: ColumnGrads {
                    record: record.view(),
                    d_out: d_out.view(),
                    d_key: dk_v,
                    d_value: dv_v,
                    partial_d_key: partial_view(partials, 1),
                    partial_d_value: partial_view(partials, 0),
                },
                scale_log2,
                grad_scale,
                normalize,
            },
            |split, partials| {
                if folded {
                    return self.fused.sum_partials(split, cols_pass, &[(&partials[0], dv_v, feat, 1.0)]);
                }
                let sums = [(&partials[1], dk_v, feat, grad_scale), (&partials[0], dv_v, feat, 1.0)];
                self.fused.sum_partials(split, cols_pass, &sums)
            },
        )?;
        Ok(if folded { KeyedGrads::Features(dv) } else { KeyedGrads::Attention(GtGrads { dq, dk, dv }) })
    }
}
