//! GT — sparse scaled dot-product attention over graph edges — forward and backward, fused.
//!
//! ```text
//! s_ij = c·q_i·k_j      α_ij = softmax_j(s_ij)      o_i = Σ_j α_ij·v_j        (c = 1/√F by default)
//! ```
//! The forward saves only the per-(row, head) log-sum-exp; the backward recomputes α from it:
//! a row pass gives dq (and D = dO·o), a column pass over the CSC gives dk and dv. No float
//! atomics: results are bit-identical run after run.

use dfgnn_device::abi::{
    ColumnGrads, CombineParams, FeatureShape, ForwardOut, GroupParams, GtBwdColsParams, GtBwdRowsParams, GtFwdParams,
    GtGroupParams, LaunchParams, PassEdges, RowGrads, Units,
};
use dfgnn_device::kernels::attention::{ATTENTION_FWD_COMBINE, ATTENTION_SUM_COMBINE};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, KernelRef, LaunchConfig, WARP_SIZE};

use crate::backend::{Backend, Buffer};
use crate::baseline;
use crate::error::{Error, Result};
use crate::graph::DeviceGraph;
use crate::plan::{self, PassPlan, Plan, PlanOptions, RowPlan, Schedule};

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
}

/// The work list of one pass, on the device: its units (long whole rows, then the chunks of
/// split rows, then the other whole rows) and what the combine step needs of the split rows.
struct DeviceRows {
    unit_rows: Option<Buffer<u32>>,
    unit_chunks: Option<Buffer<u32>>,
    num_units: usize,
    split_first: usize,
    split: Option<DeviceSplit>,
}

/// The split rows of a pass: which they are and where each one's partials start.
struct DeviceSplit {
    rows: Buffer<u32>,
    first_unit: Buffer<u32>,
    units: usize,
    chunk_edges: u32,
}

impl DeviceRows {
    /// Uploads the work of `rows`; without `whole`, only the chunks of split rows (the
    /// `row_group` forward, whose groups take the whole rows).
    fn upload(backend: &Backend, rows: &RowPlan, whole: bool) -> Result<Self> {
        let (lead, rest): (&[u32], &[u32]) = match (&rows.whole, whole) {
            (Some(w), true) => w.split_at(rows.lead.min(w.len())),
            _ => (&[], &[]),
        };
        let whole_count = if whole { rows.whole_count } else { 0 };
        let Some(s) = &rows.split else {
            let unit_rows = rows.whole.as_ref().filter(|_| whole).map(|w| backend.upload(w)).transpose()?;
            return Ok(Self { unit_rows, unit_chunks: None, num_units: whole_count, split_first: 0, split: None });
        };
        let list: Vec<u32> = lead.iter().chain(&s.unit_rows).chain(rest).copied().collect();
        Ok(Self {
            unit_rows: Some(backend.upload(&list)?),
            unit_chunks: Some(backend.upload(&s.unit_chunks)?),
            num_units: list.len(),
            split_first: lead.len(),
            split: Some(DeviceSplit {
                rows: backend.upload(&s.rows)?,
                first_unit: backend.upload(&s.first_unit)?,
                units: s.units(),
                chunk_edges: s.chunk_edges,
            }),
        })
    }

    fn units(&self, units_per_block: u32) -> Units {
        Units {
            unit_rows: self.unit_rows.as_ref().map_or(GSlice::empty(), Buffer::view),
            unit_chunks: self.unit_chunks.as_ref().map_or(GSlice::empty(), Buffer::view),
            num_units: self.num_units as u32,
            split_first: self.split_first as u32,
            split_count: self.split.as_ref().map_or(0, |s| s.units as u32),
            chunk_edges: self.split.as_ref().map_or(0, |s| s.chunk_edges),
            units_per_block,
        }
    }
}

/// The `row_group` groups on the device.
struct DeviceGroups {
    plan: plan::GroupPlan,
    first: Buffer<u32>,
    end: Buffer<u32>,
    stage_first: Buffer<u32>,
    stage_count: Buffer<u32>,
}

/// The device side of a pass plan: kernel choice, lane map and work lists.
struct DevicePass {
    plan: PassPlan,
    rows: DeviceRows,
}

impl DevicePass {
    fn shape(&self, heads: u32, feat: u32) -> FeatureShape {
        FeatureShape { heads, feat, lanes: self.plan.layout.map }
    }
}

/// A view of partial buffer `i`, or an empty one when the pass splits nothing.
fn partial_view(partials: &mut [Buffer<f32>], i: usize) -> GSliceMut<f32> {
    partials.get_mut(i).map_or(GSliceMut::empty(), Buffer::view_mut)
}

/// Launches `units_per_block` units per block (each taken by one warp).
///
/// # Safety
/// As [`Backend::launch`]; the kernel's warps take the block's units in turn and ignore units
/// past `units`.
unsafe fn launch_warps<P: LaunchParams>(
    backend: &Backend,
    kernel: &KernelRef<P>,
    units: usize,
    block_threads: u32,
    units_per_block: u32,
    params: &P,
) -> Result<()> {
    if units == 0 {
        return Ok(());
    }
    // The block size is a request: a kernel whose registers cannot fill it gets the largest block
    // it can run (its warps then take more of the block's units each; the results are the same).
    let limit = backend.max_threads_per_block(kernel)? / WARP_SIZE * WARP_SIZE;
    let block_threads = block_threads.min(limit.max(WARP_SIZE));
    let blocks = units.div_ceil(units_per_block.max(block_threads / WARP_SIZE) as usize);
    if blocks > i32::MAX as usize {
        return Err(Error::Unsupported { what: format!("{units} warps of work in one launch") });
    }
    let config = LaunchConfig { grid: Dim3::x(blocks as u32), block: Dim3::x(block_threads), shared_bytes: 0 };
    // SAFETY: forwarded contract.
    unsafe { backend.launch(kernel, &config, params) }
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
    _inputs: std::marker::PhantomData<&'a Buffer<f32>>,
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

/// GT attention on one prepared graph and feature shape, with its plan.
pub struct Gt<'g, 'b> {
    graph: &'g DeviceGraph<'b>,
    plan: Plan,
    scale: f32,
    forward: Option<DevicePass>,
    groups: Option<DeviceGroups>,
    backward_rows: Option<DevicePass>,
    backward_cols: Option<DevicePass>,
}

/// Which side of the graph a pass iterates: rows over the CSR, or columns over the CSC.
#[derive(Clone, Copy)]
enum Side {
    Rows,
    Columns,
}

impl<'g, 'b> Gt<'g, 'b> {
    /// Plans GT on `graph` for `config` (once) and uploads the plan's work lists.
    pub fn new(graph: &'g DeviceGraph<'b>, config: &GtConfig) -> Result<Self> {
        let limits = graph.backend().limits();
        let plan = plan::plan(&graph.shape(), config.heads, config.feat, limits, &config.plan)?;
        let backend = graph.backend();
        let pass = |p: &PassPlan, whole: bool| -> Result<DevicePass> {
            Ok(DevicePass { plan: p.clone(), rows: DeviceRows::upload(backend, &p.rows, whole)? })
        };
        let fused = plan.schedule.is_fused();
        // row_group: the groups take every row that is not split.
        let whole = plan.groups.is_none();
        let forward = plan.forward.as_ref().ok().filter(|_| fused).map(|p| pass(p, whole)).transpose()?;
        let groups = match &plan.groups {
            Some(g) => Some(DeviceGroups {
                plan: g.clone(),
                first: backend.upload(&g.first)?,
                end: backend.upload(&g.end)?,
                stage_first: backend.upload(&g.stage_first)?,
                stage_count: backend.upload(&g.stage_count)?,
            }),
            None => None,
        };
        let backward_rows = plan.backward_rows.as_ref().ok().filter(|_| fused).map(|p| pass(p, true)).transpose()?;
        let backward_cols = plan.backward_cols.as_ref().ok().filter(|_| fused).map(|p| pass(p, true)).transpose()?;
        let scale = config.scale.unwrap_or(1.0 / (config.feat as f32).sqrt());
        if !scale.is_finite() {
            return Err(Error::Unsupported { what: format!("score scale {scale}") });
        }
        Ok(Self { graph, plan, scale, forward, groups, backward_rows, backward_cols })
    }

    /// The plan the scheduler chose.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The score scale `c`.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    fn features(&self, nodes: usize) -> usize {
        nodes * self.plan.heads as usize * self.plan.feat as usize
    }

    fn check_view(&self, op: &'static str, what: &'static str, len: usize, nodes: usize) -> Result<()> {
        let expected = self.features(nodes);
        if len != expected {
            return Err(Error::ShapeMismatch { op, what, expected, got: len });
        }
        Ok(())
    }

    /// The edges of `pass` over `side` for `units`.
    fn edges(&self, pass: &DevicePass, side: Side, units: Units) -> PassEdges {
        let g = self.graph;
        let (offsets, neighbours) = match side {
            Side::Rows => (g.d_row_offsets.view(), g.d_columns.view()),
            Side::Columns => (g.d_col_offsets.view(), g.d_csc_rows.view()),
        };
        PassEdges { offsets, neighbours, units, shape: pass.shape(self.plan.heads, self.plan.feat) }
    }

    /// Runs one fused pass: one launch over all its units, whole rows writing the outputs and
    /// chunks of split rows writing one block of `partial_widths[i]` floats each into partial
    /// buffer `i` (`params` gets the partials; none when nothing is split), then `combine` to
    /// merge the partials into the outputs.
    fn run_pass<P: LaunchParams>(
        &self,
        pass: &DevicePass,
        kernel: &KernelRef<P>,
        partial_widths: &[usize],
        params: impl FnOnce(Units, &mut [Buffer<f32>]) -> P,
        combine: impl FnOnce(&DeviceSplit, &[Buffer<f32>]) -> Result<()>,
    ) -> Result<()> {
        let backend = self.graph.backend();
        let rows = &pass.rows;
        let mut partials = match &rows.split {
            Some(split) => {
                partial_widths.iter().map(|&w| backend.alloc::<f32>(split.units * w)).collect::<Result<Vec<_>>>()?
            }
            None => Vec::new(),
        };
        let params = params(rows.units(pass.plan.units_per_block), &mut partials);
        // SAFETY: every slice of the parameters views a live buffer of this backend with the
        // length the kernel indexes by (shapes checked by the caller, the graph's offsets
        // validated when prepared, each partial buffer one block of its width per chunk unit);
        // inputs are read-only and distinct from the outputs; one warp per unit.
        unsafe {
            launch_warps(backend, kernel, rows.num_units, pass.plan.block_threads, pass.plan.units_per_block, &params)?
        };
        match &rows.split {
            Some(split) => combine(split, &partials),
            None => Ok(()),
        }
    }

    /// `out = softmax(c·q·kᵀ over the edges)·v`, plus the log-sum-exp the backward needs.
    /// `q` is `[N_dst, H, F]`, `k` and `v` are `[N_src, H, F]`.
    pub fn forward<'a>(&self, q: &'a Buffer<f32>, k: &'a Buffer<f32>, v: &'a Buffer<f32>) -> Result<GtForward<'a>> {
        self.forward_views(q.view(), k.view(), v.view(), self.scale)
    }

    /// The forward with an explicit score scale, on views whose buffers the caller keeps alive
    /// for `'a` (AGNN keeps its normalised features in the struct that holds the result).
    pub(crate) fn forward_views<'a>(
        &self,
        q: GSlice<f32>,
        k: GSlice<f32>,
        v: GSlice<f32>,
        scale: f32,
    ) -> Result<GtForward<'a>> {
        let g = self.graph;
        self.check_view("gt forward", "q", q.len(), g.num_dst())?;
        self.check_view("gt forward", "k", k.len(), g.num_src())?;
        self.check_view("gt forward", "v", v.len(), g.num_src())?;
        let backend = g.backend();
        let (heads, feat) = (self.plan.heads, self.plan.feat);
        let result = |out, lse, stats| GtForward { out, lse, stats, q, k, v, scale, _inputs: std::marker::PhantomData };
        let Some(pass) = &self.forward else {
            let inputs = baseline::Inputs { q, k, v, heads, feat, scale };
            let (out, lse) = baseline::forward(g, &inputs, self.plan.schedule == Schedule::EdgeParallel)?;
            return Ok(result(out, lse, backend.alloc::<f32>(0)?));
        };
        let nh = g.num_dst() * heads as usize;
        let mut out = backend.alloc::<f32>(self.features(g.num_dst()))?;
        let mut lse = backend.alloc::<f32>(nh)?;
        let mut stats = backend.alloc::<f32>(nh * 2)?;
        let (out_v, lse_v, stats_v) = (out.view_mut(), lse.view_mut(), stats.view_mut());
        let variant = pass.plan.layout.variant;
        let scale_log2 = scale * std::f32::consts::LOG2_E;
        if let Some(groups) = &self.groups {
            let gp = &groups.plan;
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
                    num_groups: gp.first.len() as u32,
                },
                q,
                k,
                v,
                scale_log2,
            };
            if !gp.first.is_empty() {
                let config = LaunchConfig {
                    grid: Dim3::x(gp.first.len() as u32),
                    block: Dim3::x(gp.block_threads),
                    shared_bytes: gp.shared_bytes,
                };
                // SAFETY: as in `run_pass`; the shared memory holds the largest group's scores
                // and staged rows (the planner sized it), and every neighbour of a staged group
                // lies in its staged range (the planner took the range from the rows' columns).
                unsafe { backend.launch(&variant.group, &config, &params)? };
            }
        }
        self.run_pass(
            pass,
            &variant.forward,
            &[heads as usize * feat as usize, heads as usize * 2],
            |units, partials| {
                let dst = ForwardOut {
                    out: out_v,
                    lse: lse_v,
                    stats: stats_v,
                    partial_acc: partial_view(partials, 0),
                    partial_ml: partial_view(partials, 1),
                };
                GtFwdParams { edges: self.edges(pass, Side::Rows, units), q, k, v, dst, scale_log2 }
            },
            |split, partials| {
                let combine = CombineParams {
                    rows: split.rows.view(),
                    first_unit: split.first_unit.view(),
                    partial_acc: partials[0].view(),
                    partial_ml: partials[1].view(),
                    out: out_v,
                    lse: lse_v,
                    stats: stats_v,
                    heads,
                    feat,
                    num_rows: split.rows.len() as u32,
                    factor: 1.0,
                };
                // SAFETY: `first_unit` indexes the partials just written; one warp per
                // (split row, 32 features).
                unsafe { self.launch_combine(&ATTENTION_FWD_COMBINE, split, pass, &combine) }
            },
        )?;
        Ok(result(out, lse, stats))
    }

    /// The gradients of `Σ d_out ⊙ out` with respect to q, k and v.
    pub fn backward(&self, fwd: &GtForward<'_>, d_out: &Buffer<f32>) -> Result<GtGrads> {
        self.backward_scaled(fwd, d_out, fwd.scale)
    }

    /// The backward with the summed query and key gradients multiplied by `grad_scale` (GT: the
    /// score scale; AGNN: 1, folding β into its normalisation's backward).
    pub(crate) fn backward_scaled(&self, fwd: &GtForward<'_>, d_out: &Buffer<f32>, grad_scale: f32) -> Result<GtGrads> {
        let g = self.graph;
        self.check_view("gt backward", "d_out", d_out.len(), g.num_dst())?;
        let (heads, feat) = (self.plan.heads, self.plan.feat);
        let fused = match (&self.backward_rows, &self.backward_cols) {
            (Some(rows), Some(cols)) => match (rows.plan.layout.variant.backward, cols.plan.layout.variant.backward) {
                (Some(r), Some(c)) => Some((rows, r.rows, cols, c.cols)),
                _ => None,
            },
            _ => None,
        };
        let Some((rows_pass, rows_kernel, cols_pass, cols_kernel)) = fused.filter(|_| !fwd.stats.is_empty()) else {
            // The baseline schedules, and fused ones whose backward cannot hold the shape.
            let inputs = baseline::Inputs { q: fwd.q, k: fwd.k, v: fwd.v, heads, feat, scale: fwd.scale };
            let (dq, dk, dv) = baseline::backward(g, &inputs, d_out.view(), grad_scale)?;
            return Ok(GtGrads { dq, dk, dv });
        };
        let backend = g.backend();
        let width = heads as usize * feat as usize;
        let scale_log2 = fwd.scale * std::f32::consts::LOG2_E;

        // Row pass: dq and D.
        let mut dq = backend.alloc::<f32>(self.features(g.num_dst()))?;
        let mut delta = backend.alloc::<f32>(g.num_dst() * heads as usize)?;
        let (dq_v, delta_v) = (dq.view_mut(), delta.view_mut());
        self.run_pass(
            rows_pass,
            &rows_kernel,
            &[width],
            |units, partials| GtBwdRowsParams {
                edges: self.edges(rows_pass, Side::Rows, units),
                q: fwd.q,
                k: fwd.k,
                v: fwd.v,
                grads: RowGrads {
                    out: fwd.out.view(),
                    stats: fwd.stats.view(),
                    d_out: d_out.view(),
                    delta: delta_v,
                    d_row: dq_v,
                    partial: partial_view(partials, 0),
                },
                scale_log2,
                grad_scale,
            },
            |split, partials| self.sum_partials(split, rows_pass, &partials[0], dq_v, grad_scale),
        )?;

        // Column pass: dk and dv.
        let mut dk = backend.alloc::<f32>(self.features(g.num_src()))?;
        let mut dv = backend.alloc::<f32>(self.features(g.num_src()))?;
        let (dk_v, dv_v) = (dk.view_mut(), dv.view_mut());
        self.run_pass(
            cols_pass,
            &cols_kernel,
            &[width, width],
            |units, partials| GtBwdColsParams {
                edges: self.edges(cols_pass, Side::Columns, units),
                q: fwd.q,
                k: fwd.k,
                v: fwd.v,
                grads: ColumnGrads {
                    stats: fwd.stats.view(),
                    delta: delta.view(),
                    d_out: d_out.view(),
                    d_key: dk_v,
                    d_value: dv_v,
                    partial_d_key: partial_view(partials, 0),
                    partial_d_value: partial_view(partials, 1),
                },
                scale_log2,
                grad_scale,
            },
            |split, partials| {
                self.sum_partials(split, cols_pass, &partials[0], dk_v, grad_scale)?;
                self.sum_partials(split, cols_pass, &partials[1], dv_v, 1.0)
            },
        )?;
        Ok(GtGrads { dq, dk, dv })
    }

    /// Launches a combine kernel: one warp per (split row, 32 features).
    ///
    /// # Safety
    /// As [`Backend::launch`]: `params` views live buffers; `first_unit` indexes its partials.
    unsafe fn launch_combine(
        &self,
        kernel: &KernelRef<CombineParams>,
        split: &DeviceSplit,
        pass: &DevicePass,
        params: &CombineParams,
    ) -> Result<()> {
        let slices = (self.plan.heads as usize * self.plan.feat as usize).div_ceil(WARP_SIZE as usize);
        let threads = pass.plan.block_threads;
        // SAFETY: forwarded contract.
        unsafe {
            launch_warps(self.graph.backend(), kernel, split.rows.len() * slices, threads, threads / WARP_SIZE, params)
        }
    }

    /// Sums the partials of the split rows of `split` into `out` (times `factor`).
    fn sum_partials(
        &self,
        split: &DeviceSplit,
        pass: &DevicePass,
        partial: &Buffer<f32>,
        out: GSliceMut<f32>,
        factor: f32,
    ) -> Result<()> {
        let params = CombineParams {
            rows: split.rows.view(),
            first_unit: split.first_unit.view(),
            partial_acc: partial.view(),
            partial_ml: GSlice::empty(),
            out,
            lse: GSliceMut::empty(),
            stats: GSliceMut::empty(),
            heads: self.plan.heads,
            feat: self.plan.feat,
            num_rows: split.rows.len() as u32,
            factor,
        };
        // SAFETY: `first_unit` indexes `partial`, which holds one [H, F] block per unit of the
        // split rows, written by the launch before; `out` is [N, H, F] and distinct from it.
        unsafe { self.launch_combine(&ATTENTION_SUM_COMBINE, split, pass, &params) }
    }
}
