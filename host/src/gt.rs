//! GT — sparse scaled dot-product attention over graph edges — forward and backward, fused.
//!
//! ```text
//! s_ij = c·q_i·k_j      α_ij = softmax_j(s_ij)      o_i = Σ_j α_ij·v_j        (c = 1/√F by default)
//! ```
//! The forward saves only the per-(row, head) log-sum-exp; the backward recomputes α from it:
//! a row pass gives dq (and D = dO·o), a column pass over the CSC gives dk and dv. No float
//! atomics: results are bit-identical run after run.

use dfgnn_device::abi::{
    FeatureShape, GtBwdColsParams, GtBwdRowsParams, GtCombineParams, GtFwdParams, GtGroupParams, LaunchParams, Units,
};
use dfgnn_device::kernels::gt::{self as kernels, variant_index};
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

/// The work lists of one pass, on the device.
struct DeviceRows {
    whole: Option<Buffer<u32>>,
    whole_count: usize,
    split: Option<DeviceSplit>,
}

struct DeviceSplit {
    rows: Buffer<u32>,
    first_unit: Buffer<u32>,
    unit_rows: Buffer<u32>,
    unit_chunks: Buffer<u32>,
    units: usize,
    chunk_edges: u32,
}

impl DeviceRows {
    fn upload(backend: &Backend, rows: &RowPlan) -> Result<Self> {
        let whole = rows.whole.as_ref().map(|w| backend.upload(w)).transpose()?;
        let split = match &rows.split {
            None => None,
            Some(s) => Some(DeviceSplit {
                rows: backend.upload(&s.rows)?,
                first_unit: backend.upload(&s.first_unit)?,
                unit_rows: backend.upload(&s.unit_rows)?,
                unit_chunks: backend.upload(&s.unit_chunks)?,
                units: s.units(),
                chunk_edges: s.chunk_edges,
            }),
        };
        Ok(Self { whole, whole_count: rows.whole_count, split })
    }

    fn whole_units(&self, units_per_block: u32) -> Units {
        Units {
            unit_rows: self.whole.as_ref().map_or(GSlice::empty(), Buffer::view),
            unit_chunks: GSlice::empty(),
            num_units: self.whole_count as u32,
            chunk_edges: 0,
            units_per_block,
        }
    }
}

impl DeviceSplit {
    fn units(&self, units_per_block: u32) -> Units {
        Units {
            unit_rows: self.unit_rows.view(),
            unit_chunks: self.unit_chunks.view(),
            num_units: self.units as u32,
            chunk_edges: self.chunk_edges,
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

    fn variant(&self) -> usize {
        variant_index(self.plan.layout.width, self.plan.layout.slots).expect("the planner picks existing variants")
    }
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
/// `'a`) and the per-(row, head) log-sum-exp.
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

impl<'g, 'b> Gt<'g, 'b> {
    /// Plans GT on `graph` for `config` (once) and uploads the plan's work lists.
    pub fn new(graph: &'g DeviceGraph<'b>, config: &GtConfig) -> Result<Self> {
        let limits = graph.backend().limits();
        let plan = plan::plan(&graph.shape(), config.heads, config.feat, limits.max_shared_per_block, &config.plan)?;
        let backend = graph.backend();
        let pass = |p: &PassPlan| -> Result<DevicePass> {
            Ok(DevicePass { plan: p.clone(), rows: DeviceRows::upload(backend, &p.rows)? })
        };
        let fused = plan.schedule.is_fused();
        let forward = plan.forward.as_ref().ok().filter(|_| fused).map(pass).transpose()?;
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
        let backward_rows = plan.backward_rows.as_ref().ok().filter(|_| fused).map(pass).transpose()?;
        let backward_cols = plan.backward_cols.as_ref().ok().filter(|_| fused).map(pass).transpose()?;
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

    /// `out = softmax(c·q·kᵀ over the edges)·v`, plus the log-sum-exp the backward needs.
    /// `q` is `[N_dst, H, F]`, `k` and `v` are `[N_src, H, F]`.
    pub fn forward<'a>(&self, q: &'a Buffer<f32>, k: &'a Buffer<f32>, v: &'a Buffer<f32>) -> Result<GtForward<'a>> {
        self.forward_scaled(q.view(), k.view(), v.view(), self.scale)
    }

    /// The forward with an explicit scale, on views whose buffers the caller keeps alive for
    /// `'a` (AGNN keeps its normalised features in the struct that holds the result).
    pub(crate) fn forward_scaled<'a>(
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
        let Some(pass) = &self.forward else {
            let inputs = baseline::Inputs { q, k, v, heads, feat, scale };
            let (out, lse) = baseline::forward(g, &inputs, self.plan.schedule == Schedule::EdgeParallel)?;
            let stats = backend.alloc::<f32>(0)?;
            return Ok(GtForward { out, lse, stats, q, k, v, _inputs: std::marker::PhantomData });
        };
        let mut out = backend.alloc::<f32>(self.features(g.num_dst()))?;
        let mut lse = backend.alloc::<f32>(g.num_dst() * heads as usize)?;
        let mut stats = backend.alloc::<f32>(g.num_dst() * heads as usize * 2)?;
        let kernel = kernels::FWD[pass.variant()].expect("every forward variant exists");
        let params = |units: Units,
                      partial_acc: GSliceMut<f32>,
                      partial_ml: GSliceMut<f32>,
                      out: GSliceMut<f32>,
                      lse: GSliceMut<f32>,
                      stats: GSliceMut<f32>| GtFwdParams {
            offsets: g.d_row_offsets.view(),
            columns: g.d_columns.view(),
            units,
            shape: pass.shape(heads, feat),
            q,
            k,
            v,
            out,
            lse,
            stats,
            partial_acc,
            partial_ml,
            scale_log2: scale * std::f32::consts::LOG2_E,
        };
        if let Some(groups) = &self.groups {
            // row_group: the groups take every row that is not split.
            let kernel = kernels::GROUP[pass.variant()].expect("every row_group variant exists");
            let gp = &groups.plan;
            let params = GtGroupParams {
                offsets: g.d_row_offsets.view(),
                columns: g.d_columns.view(),
                coo_rows: g.d_coo_rows.view(),
                group_first: groups.first.view(),
                group_end: groups.end.view(),
                stage_first: groups.stage_first.view(),
                stage_count: groups.stage_count.view(),
                shape: pass.shape(heads, feat),
                q,
                k,
                v,
                out: out.view_mut(),
                lse: lse.view_mut(),
                stats: stats.view_mut(),
                num_groups: gp.first.len() as u32,
                scale_log2: scale * std::f32::consts::LOG2_E,
            };
            if !gp.first.is_empty() {
                let config = LaunchConfig {
                    grid: Dim3::x(gp.first.len() as u32),
                    block: Dim3::x(gp.block_threads),
                    shared_bytes: gp.shared_bytes,
                };
                // SAFETY: as below; the shared memory holds the largest group's scores and
                // staged rows (the planner sized it), and every neighbour of a staged group lies
                // in its staged range (the planner took the range from the rows' columns).
                unsafe { backend.launch(&kernel, &config, &params)? };
            }
        } else {
            let whole = params(
                pass.rows.whole_units(pass.plan.units_per_block),
                GSliceMut::empty(),
                GSliceMut::empty(),
                out.view_mut(),
                lse.view_mut(),
                stats.view_mut(),
            );
            // SAFETY: every slice views a live buffer of this backend with the length the kernel
            // indexes by (shapes checked above, the graph's offsets validated when prepared);
            // inputs are read-only and distinct from the outputs; one warp per unit.
            unsafe {
                launch_warps(
                    backend,
                    &kernel,
                    pass.rows.whole_count,
                    pass.plan.block_threads,
                    pass.plan.units_per_block,
                    &whole,
                )?
            };
        }
        if let Some(split) = &pass.rows.split {
            let mut partial_acc = backend.alloc::<f32>(self.features(split.units))?;
            let mut partial_ml = backend.alloc::<f32>(split.units * heads as usize * 2)?;
            let chunks = params(
                split.units(pass.plan.block_threads / WARP_SIZE),
                partial_acc.view_mut(),
                partial_ml.view_mut(),
                GSliceMut::empty(),
                GSliceMut::empty(),
                GSliceMut::empty(),
            );
            // SAFETY: as above; the partials hold one [H, F] (and [H, 2]) block per unit.
            unsafe {
                launch_warps(
                    backend,
                    &kernel,
                    split.units,
                    pass.plan.block_threads,
                    pass.plan.block_threads / WARP_SIZE,
                    &chunks,
                )?
            };
            let combine = GtCombineParams {
                rows: split.rows.view(),
                first_unit: split.first_unit.view(),
                partial_acc: partial_acc.view(),
                partial_ml: partial_ml.view(),
                out: out.view_mut(),
                lse: lse.view_mut(),
                stats: stats.view_mut(),
                heads,
                feat,
                num_rows: split.rows.len() as u32,
                factor: 1.0,
            };
            // SAFETY: `first_unit` indexes the partials just written; one warp per split row.
            unsafe {
                launch_warps(
                    backend,
                    &kernels::GT_FWD_COMBINE,
                    split.rows.len() * self.combine_slices(),
                    pass.plan.block_threads,
                    pass.plan.block_threads / WARP_SIZE,
                    &combine,
                )?
            };
        }
        Ok(GtForward { out, lse, stats, q, k, v, _inputs: std::marker::PhantomData })
    }

    /// The gradients of `Σ d_out ⊙ out` with respect to q, k and v.
    pub fn backward(&self, fwd: &GtForward<'_>, d_out: &Buffer<f32>) -> Result<GtGrads> {
        self.backward_scaled(fwd, d_out, self.scale, None)
    }

    /// The backward with an explicit scale; with `ds_dot`, also each row's (and chunk's)
    /// `Σ_j ds·q·k` per head, summed into one number (AGNN's dβ).
    pub(crate) fn backward_scaled(
        &self,
        fwd: &GtForward<'_>,
        d_out: &Buffer<f32>,
        scale: f32,
        ds_dot: Option<&mut f64>,
    ) -> Result<GtGrads> {
        let g = self.graph;
        self.check_view("gt backward", "d_out", d_out.len(), g.num_dst())?;
        let (Some(rows_pass), Some(cols_pass)) = (&self.backward_rows, &self.backward_cols) else {
            // The baseline schedules, and fused ones whose backward cannot hold the shape.
            let inputs =
                baseline::Inputs { q: fwd.q, k: fwd.k, v: fwd.v, heads: self.plan.heads, feat: self.plan.feat, scale };
            let (dq, dk, dv) = baseline::backward(g, &inputs, d_out.view(), ds_dot)?;
            return Ok(GtGrads { dq, dk, dv });
        };
        let backend = g.backend();
        let (heads, feat) = (self.plan.heads, self.plan.feat);
        let nh_dst = g.num_dst() * heads as usize;
        let mut dq = backend.alloc::<f32>(self.features(g.num_dst()))?;
        let mut delta = backend.alloc::<f32>(nh_dst)?;
        let want_ds_dot = ds_dot.is_some();
        let mut ds_dot_rows = backend.zeros::<f32>(if want_ds_dot { nh_dst } else { 0 })?;

        // Row pass: dq and D.
        let kernel = kernels::BWD_ROWS[rows_pass.variant()].expect("the planner only picks existing backward variants");
        let row_params = |units: Units,
                          dq: GSliceMut<f32>,
                          delta: GSliceMut<f32>,
                          partial: GSliceMut<f32>,
                          ds_dot: GSliceMut<f32>| GtBwdRowsParams {
            offsets: g.d_row_offsets.view(),
            columns: g.d_columns.view(),
            units,
            shape: rows_pass.shape(heads, feat),
            q: fwd.q,
            k: fwd.k,
            v: fwd.v,
            out: fwd.out.view(),
            stats: fwd.stats.view(),
            d_out: d_out.view(),
            dq,
            delta,
            partial,
            ds_dot,
            scale,
        };
        let whole = row_params(
            rows_pass.rows.whole_units(rows_pass.plan.units_per_block),
            dq.view_mut(),
            delta.view_mut(),
            GSliceMut::empty(),
            ds_dot_rows.view_mut(),
        );
        // SAFETY: as in the forward; `ds_dot` is empty or [N_dst, H].
        unsafe {
            launch_warps(
                backend,
                &kernel,
                rows_pass.rows.whole_count,
                rows_pass.plan.block_threads,
                rows_pass.plan.units_per_block,
                &whole,
            )?
        };
        let mut ds_dot_chunks = backend.zeros::<f32>(0)?;
        if let Some(split) = &rows_pass.rows.split {
            let mut partial = backend.alloc::<f32>(self.features(split.units))?;
            ds_dot_chunks = backend.zeros::<f32>(if want_ds_dot { split.units * heads as usize } else { 0 })?;
            let chunks = row_params(
                split.units(rows_pass.plan.block_threads / WARP_SIZE),
                GSliceMut::empty(),
                delta.view_mut(),
                partial.view_mut(),
                ds_dot_chunks.view_mut(),
            );
            // SAFETY: as above; partials are one [H, F] block per unit.
            unsafe {
                launch_warps(
                    backend,
                    &kernel,
                    split.units,
                    rows_pass.plan.block_threads,
                    rows_pass.plan.block_threads / WARP_SIZE,
                    &chunks,
                )?
            };
            self.sum_partials(split, &partial, &mut dq, scale, rows_pass.plan.block_threads)?;
        }

        // Column pass: dk and dv.
        let mut dk = backend.alloc::<f32>(self.features(g.num_src()))?;
        let mut dv = backend.alloc::<f32>(self.features(g.num_src()))?;
        let kernel = kernels::BWD_COLS[cols_pass.variant()].expect("the planner only picks existing backward variants");
        let col_params = |units: Units,
                          dk: GSliceMut<f32>,
                          dv: GSliceMut<f32>,
                          partial_dk: GSliceMut<f32>,
                          partial_dv: GSliceMut<f32>,
                          delta: GSlice<f32>| GtBwdColsParams {
            csc_offsets: g.d_col_offsets.view(),
            csc_rows: g.d_csc_rows.view(),
            units,
            shape: cols_pass.shape(heads, feat),
            q: fwd.q,
            k: fwd.k,
            v: fwd.v,
            stats: fwd.stats.view(),
            delta,
            d_out: d_out.view(),
            dk,
            dv,
            partial_dk,
            partial_dv,
            scale,
        };
        let whole = col_params(
            cols_pass.rows.whole_units(cols_pass.plan.units_per_block),
            dk.view_mut(),
            dv.view_mut(),
            GSliceMut::empty(),
            GSliceMut::empty(),
            delta.view(),
        );
        // SAFETY: as in the forward, over the CSC; `delta` was completed by the row pass.
        unsafe {
            launch_warps(
                backend,
                &kernel,
                cols_pass.rows.whole_count,
                cols_pass.plan.block_threads,
                cols_pass.plan.units_per_block,
                &whole,
            )?
        };
        if let Some(split) = &cols_pass.rows.split {
            let mut partial_dk = backend.alloc::<f32>(self.features(split.units))?;
            let mut partial_dv = backend.alloc::<f32>(self.features(split.units))?;
            let chunks = col_params(
                split.units(cols_pass.plan.block_threads / WARP_SIZE),
                GSliceMut::empty(),
                GSliceMut::empty(),
                partial_dk.view_mut(),
                partial_dv.view_mut(),
                delta.view(),
            );
            // SAFETY: as above.
            unsafe {
                launch_warps(
                    backend,
                    &kernel,
                    split.units,
                    cols_pass.plan.block_threads,
                    cols_pass.plan.block_threads / WARP_SIZE,
                    &chunks,
                )?
            };
            self.sum_partials(split, &partial_dk, &mut dk, scale, cols_pass.plan.block_threads)?;
            self.sum_partials(split, &partial_dv, &mut dv, 1.0, cols_pass.plan.block_threads)?;
        }

        if let Some(total) = ds_dot {
            // A fixed-order sum in f64 on the host: deterministic, and tiny next to the passes.
            *total = backend
                .download(&ds_dot_rows)?
                .iter()
                .chain(backend.download(&ds_dot_chunks)?.iter())
                .map(|&x| x as f64)
                .sum();
        }
        Ok(GtGrads { dq, dk, dv })
    }

    /// Warps per split row of the combine kernels: one per 32 features.
    fn combine_slices(&self) -> usize {
        (self.plan.heads as usize * self.plan.feat as usize).div_ceil(WARP_SIZE as usize)
    }

    /// Sums the partials of the split rows of `split` into `out` (times `factor`).
    fn sum_partials(
        &self,
        split: &DeviceSplit,
        partial: &Buffer<f32>,
        out: &mut Buffer<f32>,
        factor: f32,
        block_threads: u32,
    ) -> Result<()> {
        let params = GtCombineParams {
            rows: split.rows.view(),
            first_unit: split.first_unit.view(),
            partial_acc: partial.view(),
            partial_ml: GSlice::empty(),
            out: out.view_mut(),
            lse: GSliceMut::empty(),
            stats: GSliceMut::empty(),
            heads: self.plan.heads,
            feat: self.plan.feat,
            num_rows: split.rows.len() as u32,
            factor,
        };
        let units = split.rows.len() * self.combine_slices();
        // SAFETY: `first_unit` indexes `partial`, which holds one [H, F] block per unit of the
        // split rows, written by the launch before; `out` is [N, H, F] and distinct from it; one
        // warp per (split row, 32 features).
        unsafe {
            launch_warps(
                self.graph.backend(),
                &kernels::GT_SUM_COMBINE,
                units,
                block_threads,
                block_threads / WARP_SIZE,
                &params,
            )
        }
    }
}
