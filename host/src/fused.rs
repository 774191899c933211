//! What every model's fused attention shares on the host: a plan's work lists uploaded once
//! ([`Fused::new`]), and the launch of one pass — one launch over its units (long whole rows, then
//! the chunks of split rows, then short whole rows), then the backward's combine step that sums
//! the chunks' partials ([`Fused::run_pass`]; a forward's chunks merge themselves, counting their
//! arrivals: [`Fused::run_forward_pass`]). A model (GT in `gt.rs`, GAT in
//! `gat.rs`) builds its parameter structs and calls these; it never copies them.

use dfgnn_device::abi::{DropoutParams, FeatureShape, LaunchParams, PassEdges, SumCombineParams, SumTarget, Units};
use dfgnn_device::kernels::attention::ATTENTION_SUM_COMBINE;
use dfgnn_device::kernels::attention::variants::Variant;
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, KernelRef, LaunchConfig, WARP_SIZE};

use crate::backend::{Backend, Buffer};
use crate::error::{Error, Result};
use crate::graph::DeviceGraph;
use crate::plan::{self, PassPlan, Plan, RowPlan};

/// The work list of one pass, on the device: its units (long whole rows, then the chunks of
/// split rows, then the other whole rows) and what the combine step needs of the split rows.
pub(crate) struct DeviceRows {
    unit_rows: Option<Buffer<u32>>,
    unit_chunks: Option<Buffer<u32>>,
    num_units: usize,
    split_first: usize,
    /// The first unit taken one per team (`num_units` when none is).
    packed_first: usize,
    split: Option<DeviceSplit>,
}

/// The split rows of a pass: which they are and where each one's partials start.
pub(crate) struct DeviceSplit {
    pub(crate) rows: Buffer<u32>,
    pub(crate) first_unit: Buffer<u32>,
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
        // The packed rows end the list (the planner put them last among the whole rows).
        let packed = if whole { rows.packed } else { 0 };
        let Some(s) = &rows.split else {
            let unit_rows = rows.whole.as_ref().filter(|_| whole).map(|w| backend.upload(w)).transpose()?;
            let (num_units, packed_first) = (whole_count, whole_count - packed.min(whole_count));
            return Ok(Self { unit_rows, unit_chunks: None, num_units, split_first: 0, packed_first, split: None });
        };
        let list: Vec<u32> = lead.iter().chain(&s.unit_rows).chain(rest).copied().collect();
        Ok(Self {
            unit_rows: Some(backend.upload(&list)?),
            unit_chunks: Some(backend.upload(&s.unit_chunks)?),
            num_units: list.len(),
            split_first: lead.len(),
            packed_first: list.len() - packed.min(rest.len()),
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
            packed_first: self.packed_first as u32,
        }
    }
}

/// The `row_group` groups on the device.
pub(crate) struct DeviceGroups {
    pub(crate) plan: plan::GroupPlan,
    pub(crate) first: Buffer<u32>,
    pub(crate) end: Buffer<u32>,
    pub(crate) stage_first: Buffer<u32>,
    pub(crate) stage_count: Buffer<u32>,
}

/// The device side of a pass plan: kernel choice, lane map and work lists.
pub(crate) struct DevicePass {
    pub(crate) plan: PassPlan,
    pub(crate) rows: DeviceRows,
}

impl DevicePass {
    /// The model's variant this pass was planned on, from the model's `table` (the one it planned
    /// with).
    pub(crate) fn variant<V: plan::CompiledVariant>(&self, table: &'static [V]) -> Result<&'static V> {
        self.plan.layout.variant_in(table)
    }

    pub(crate) fn shape(&self, heads: u32, feat: u32) -> FeatureShape {
        FeatureShape { heads, feat, lanes: self.plan.layout.map }
    }
}

/// A view of partial buffer `i`, or an empty one when the pass splits nothing.
pub(crate) fn partial_view(partials: &mut [Buffer<f32>], i: usize) -> GSliceMut<f32> {
    partials.get_mut(i).map_or(GSliceMut::empty(), Buffer::view_mut)
}

/// The kernels' attention dropout of probability `p` under `seed` (`set_dropout` of every model
/// that offers it): the keep threshold `⌊p·2^32⌋` and the kept weights' scale `1 / (1 − p)`;
/// [`DropoutParams::OFF`] when `p` rounds to no dropped edge. `p` must be in `[0, 1)`.
pub(crate) fn dropout_params(p: f32, seed: u64) -> Result<DropoutParams> {
    if !(0.0..1.0).contains(&p) {
        return Err(Error::Unsupported { what: format!("dropout probability {p} (it must be in [0, 1))") });
    }
    let threshold = (f64::from(p) * 4_294_967_296.0).floor() as u32;
    Ok(if threshold == 0 {
        DropoutParams::OFF
    } else {
        DropoutParams { seed, threshold, scale: (1.0 / (1.0 - f64::from(p))) as f32 }
    })
}

/// Launches `units` warp tasks, `units_per_block` per block (each taken by one warp).
///
/// # Safety
/// As [`Backend::launch`]; the kernel's warps take the block's units in turn and ignore units
/// past `units`.
pub(crate) unsafe fn launch_warps<P: LaunchParams>(
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

/// Which side of the graph a pass iterates: rows over the CSR, or columns over the CSC.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Rows,
    Columns,
}

/// A plan and its device work lists, on one prepared graph.
pub(crate) struct Fused<'g, 'b> {
    pub(crate) graph: &'g DeviceGraph<'b>,
    pub(crate) plan: Plan,
    /// The forward's pass (fused schedules only).
    pub(crate) forward: Option<DevicePass>,
    /// The `row_group` groups.
    pub(crate) groups: Option<DeviceGroups>,
    /// The backward's row pass (fused schedules only).
    pub(crate) backward_rows: Option<DevicePass>,
    /// The backward's column pass (fused schedules only).
    pub(crate) backward_cols: Option<DevicePass>,
}

/// A kernel of a fused pass and its packed entry (where the variant has one).
pub(crate) type PassKernel<P> = (KernelRef<P>, Option<KernelRef<P>>);

/// The backward's fused row and column passes with their kernels.
pub(crate) type BackwardKernels<'a, R, C> = (&'a DevicePass, PassKernel<R>, &'a DevicePass, PassKernel<C>);

impl<'g, 'b> Fused<'g, 'b> {
    /// The backward's two fused passes and their kernels, with `variant` giving a pass's row of
    /// the model's table (the dropout table when dropout is on); `None` when the plan has no
    /// fused backward, when it runs the unfused one ([`Plan::unfused_backward`], which a backward
    /// with `dropout` overrides: the unfused kernels have none), or when the variants compile
    /// none (the baselines run it then).
    pub(crate) fn backward_kernels<F: 'static, G: 'static, R: 'static, C: 'static>(
        &self,
        dropout: &DropoutParams,
        variant: impl Fn(&DevicePass) -> Result<&'static Variant<F, G, R, C>>,
    ) -> Result<Option<BackwardKernels<'_, R, C>>> {
        if self.plan.unfused_backward && dropout.threshold == 0 {
            return Ok(None);
        }
        let (Some(rows), Some(cols)) = (&self.backward_rows, &self.backward_cols) else { return Ok(None) };
        Ok(match (variant(rows)?, variant(cols)?) {
            (
                Variant { backward: Some(r), packed: rows_packed, .. },
                Variant { backward: Some(c), packed: cols_packed, .. },
            ) => Some((rows, (r.rows, rows_packed.map(|p| p.rows)), cols, (c.cols, cols_packed.map(|p| p.cols)))),
            _ => None,
        })
    }

    /// Uploads the work lists of `plan` on `graph`.
    pub(crate) fn new(graph: &'g DeviceGraph<'b>, plan: Plan) -> Result<Self> {
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
        Ok(Self { graph, plan, forward, groups, backward_rows, backward_cols })
    }

    /// Refuses attention dropout on a path without the fused passes (the baselines have no mask):
    /// the baseline schedules, and the backward of a shape whose fused variant has none.
    pub(crate) fn check_baseline_dropout(&self, dropout: &DropoutParams) -> Result<()> {
        if dropout.threshold != 0 {
            return Err(Error::Unsupported {
                what: format!(
                    "attention dropout on a baseline path of the {} schedule (dropout runs in the fused kernels \
                     only: not on edge_parallel or unfused, nor in a backward wider than the fused ones hold)",
                    self.plan.schedule
                ),
            });
        }
        Ok(())
    }

    /// `[nodes, H, F]` elements.
    pub(crate) fn features(&self, nodes: usize) -> usize {
        nodes * self.plan.heads as usize * self.plan.feat as usize
    }

    /// Launches a `row_group` forward over its groups (nothing when there are none).
    ///
    /// # Safety
    /// As [`Backend::launch`]: `params` views live buffers of the shapes the kernel indexes by;
    /// the groups are these work lists.
    pub(crate) unsafe fn launch_groups<P: LaunchParams>(
        &self,
        groups: &DeviceGroups,
        kernel: &KernelRef<P>,
        params: &P,
    ) -> Result<()> {
        let gp = &groups.plan;
        if gp.first.is_empty() {
            return Ok(());
        }
        let config = LaunchConfig {
            grid: Dim3::x(gp.first.len() as u32),
            block: Dim3::x(gp.block_threads),
            shared_bytes: gp.shared_bytes,
        };
        // SAFETY: forwarded contract; the shared memory holds the largest group's scores and
        // staged rows (the planner sized it), and every neighbour of a staged group lies in its
        // staged range (the planner took the range from the rows' columns).
        unsafe { self.graph.backend().launch(kernel, &config, params) }
    }

    /// Runs a fused forward pass ([`Fused::run_pass`]): `params` also gets the zeroed arrival
    /// counts of the split rows' chunks ([`dfgnn_device::abi::ForwardOut::arrivals`]: one per
    /// chunk unit; empty when no row is split), by which the last chunk of each split row merges
    /// the row inside the pass, so no combine step follows.
    pub(crate) fn run_forward_pass<P: LaunchParams>(
        &self,
        pass: &DevicePass,
        kernel: &KernelRef<P>,
        packed_kernel: Option<&KernelRef<P>>,
        partial_widths: &[usize],
        params: impl FnOnce(Units, &mut [Buffer<f32>], GSliceMut<u32>) -> P,
    ) -> Result<()> {
        let mut arrivals =
            pass.rows.split.as_ref().map(|split| self.graph.backend().zeros::<u32>(split.units)).transpose()?;
        let arrivals_v = arrivals.as_mut().map_or(GSliceMut::empty(), Buffer::view_mut);
        self.run_pass(
            pass,
            kernel,
            packed_kernel,
            partial_widths,
            |units, partials| params(units, partials, arrivals_v),
            |_, _| Ok(()),
        )
    }

    /// The edges of `pass` over `side` for `units`, with attention dropout `dropout`.
    pub(crate) fn edges(&self, pass: &DevicePass, side: Side, units: Units, dropout: DropoutParams) -> PassEdges {
        let g = self.graph;
        let (offsets, neighbours, edge_ids) = match side {
            Side::Rows => (g.d_row_offsets.view(), g.d_columns.view(), GSlice::empty()),
            Side::Columns => (g.d_col_offsets.view(), g.d_csc_rows.view(), g.d_csc_edge_ids.view()),
        };
        let shape = pass.shape(self.plan.heads, self.plan.feat);
        PassEdges { offsets, neighbours, edge_ids, units, shape, dropout }
    }

    /// Runs one fused pass: one launch over its units (and one of `packed_kernel` over its packed
    /// units, when it has some), whole rows writing the outputs and
    /// chunks of split rows writing one block of `partial_widths[i]` floats each into partial
    /// buffer `i` (`params` gets the partials; none when nothing is split), then `combine` to
    /// merge the partials into the outputs (the backward's; the forwards run
    /// [`Fused::run_forward_pass`], whose last chunks merge).
    pub(crate) fn run_pass<P: LaunchParams>(
        &self,
        pass: &DevicePass,
        kernel: &KernelRef<P>,
        packed_kernel: Option<&KernelRef<P>>,
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
        let units = rows.units(pass.plan.units_per_block);
        let teams = pass.plan.layout.map.teams();
        let (tasks, packed_tasks) = (units.tasks(false, teams) as usize, units.tasks(true, teams) as usize);
        let packed_kernel = match packed_kernel {
            Some(k) => k,
            None if packed_tasks == 0 => kernel,
            None => {
                return Err(Error::Unsupported {
                    what: format!(
                        "{} packed rows planned for a variant without packed kernels",
                        rows.num_units - rows.packed_first
                    ),
                });
            }
        };
        let params = params(units, &mut partials);
        // SAFETY: every slice of the parameters views a live buffer of this backend with the
        // length the kernel indexes by (shapes checked by the caller, the graph's offsets
        // validated when prepared, each partial buffer one block of its width per chunk unit);
        // inputs are read-only and distinct from the outputs; one warp per task: a unit, or, for
        // the packed entry, one unit per team of the lane map the kernel reads.
        unsafe {
            launch_warps(backend, kernel, tasks, pass.plan.block_threads, pass.plan.units_per_block, &params)?;
            launch_warps(
                backend,
                packed_kernel,
                packed_tasks,
                pass.plan.block_threads,
                pass.plan.units_per_block,
                &params,
            )?;
        };
        match &rows.split {
            Some(split) => combine(split, &partials),
            None => Ok(()),
        }
    }

    /// Slices of 32 floats of one node's `[H, feat]`.
    fn slices(&self, feat: u32) -> usize {
        (self.plan.heads as usize * feat as usize).div_ceil(WARP_SIZE as usize)
    }

    /// Launches a combine kernel: `slices` warps per split row (one per 32 features).
    ///
    /// # Safety
    /// As [`Backend::launch`]: `params` views live buffers; `first_unit` indexes its partials.
    pub(crate) unsafe fn launch_combine<P: LaunchParams>(
        &self,
        kernel: &KernelRef<P>,
        split: &DeviceSplit,
        pass: &DevicePass,
        slices: usize,
        params: &P,
    ) -> Result<()> {
        let threads = pass.plan.block_threads;
        // SAFETY: forwarded contract.
        unsafe {
            launch_warps(self.graph.backend(), kernel, split.rows.len() * slices, threads, threads / WARP_SIZE, params)
        }
    }

    /// Sums the partials of the split rows of `split` into each of `sums` (one or two, in one
    /// launch): `(partial, out, feat, factor)` adds `partial`'s blocks into `out` times `factor`,
    /// `feat` floats per head (the model's feature width, or 1 for per-head scalars).
    pub(crate) fn sum_partials(
        &self,
        split: &DeviceSplit,
        pass: &DevicePass,
        sums: &[(&Buffer<f32>, GSliceMut<f32>, u32, f32)],
    ) -> Result<()> {
        if sums.is_empty() || sums.len() > 2 {
            return Err(Error::Unsupported { what: format!("a sum combine of {} arrays (one or two)", sums.len()) });
        }
        let target = |i: usize| {
            sums.get(i).map_or(SumTarget::NONE, |&(partial, out, feat, factor)| SumTarget {
                partial: partial.view(),
                out,
                feat,
                factor,
            })
        };
        let params = SumCombineParams {
            rows: split.rows.view(),
            first_unit: split.first_unit.view(),
            targets: [target(0), target(1)],
            heads: self.plan.heads,
            num_rows: split.rows.len() as u32,
        };
        let slices = params.targets.iter().map(|t| self.slices(t.feat)).sum();
        // SAFETY: `first_unit` indexes each target's `partial`, which holds one [H, feat] block
        // per unit of the split rows, written by the launch before; each `out` is [N, H, feat],
        // distinct from the partials and from the other `out`.
        unsafe { self.launch_combine(&ATTENTION_SUM_COMBINE, split, pass, slices, &params) }
    }
}
