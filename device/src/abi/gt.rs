//! Parameters of the fused GT / AGNN kernels (`kernels::gt`).
//!
//! Shapes: `N_dst` destination rows, `N_src` source nodes, `E` edges, `H` heads, `F` features per
//! head; features `[N, H, F]` row-major, per-node scalars `[N, H]`.

use super::LaunchParams;
use crate::kernels::common::lanes::LaneMap;
use crate::simt::{GSlice, GSliceMut};

/// Which rows (or columns) a launch covers, and how: one warp per unit.
///
/// Whole-row mode (`chunk_edges == 0`): unit `u` is row `unit_rows[u]` (or row `u` when
/// `unit_rows` is empty), and results go straight to the outputs. Split mode (`chunk_edges > 0`):
/// unit `u` covers edges `[offsets[r] + c·chunk_edges, …)` of row `r = unit_rows[u]`, chunk
/// `c = unit_chunks[u]`, and writes a partial result at index `u` for a combine kernel to merge.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Units {
    /// `[U]` the row of each unit; empty for "unit u is row u".
    pub unit_rows: GSlice<u32>,
    /// `[U]` the chunk of each unit (split mode); empty otherwise.
    pub unit_chunks: GSlice<u32>,
    /// Number of units `U`.
    pub num_units: u32,
    /// Edges per chunk in split mode; 0 for whole rows.
    pub chunk_edges: u32,
    /// Units per block (at least the warps per block): block `b` takes units
    /// `[b·units_per_block, (b+1)·units_per_block)`, its warps in turn.
    pub units_per_block: u32,
}

/// The feature shape and lane mapping shared by all GT kernels.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FeatureShape {
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// How the lanes of a warp cover the heads and features of an edge.
    pub lanes: LaneMap,
}

/// `gt_fwd_*`: fused SDDMM → online softmax → SpMM over the units' edges.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtFwdParams {
    /// `[N_dst + 1]` CSR offsets (rows = destinations).
    pub offsets: GSlice<u64>,
    /// `[E]` CSR columns (source nodes).
    pub columns: GSlice<u32>,
    /// The work of this launch.
    pub units: Units,
    /// Heads, features, lane mapping.
    pub shape: FeatureShape,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// `[N_dst, H, F]` output (whole-row mode).
    pub out: GSliceMut<f32>,
    /// `[N_dst, H]` natural log-sum-exp of each row's scores, −∞ for an empty row (whole-row mode).
    pub lse: GSliceMut<f32>,
    /// `[N_dst, H, 2]` what the backward recomputes α from: the maximum score (base-2 units)
    /// and the reciprocal of the sum the output was normalised by (whole-row mode).
    pub stats: GSliceMut<f32>,
    /// `[U, H, F]` unnormalised partial outputs (split mode).
    pub partial_acc: GSliceMut<f32>,
    /// `[U, H, 2]` partial (max in log2 units, sum of 2^(s − max)) (split mode).
    pub partial_ml: GSliceMut<f32>,
    /// The score scale times log2(e): scores are `scale · q·k` in natural units.
    pub scale_log2: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtFwdParams {}
const _: () = assert!(core::mem::size_of::<GtFwdParams>() == 240);

/// `gt_fwd_combine`: merges the partial results of split rows into `out` and `lse`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtCombineParams {
    /// `[R]` the split rows.
    pub rows: GSlice<u32>,
    /// `[R + 1]` row `r`'s partials are `first_unit[r] .. first_unit[r + 1]`.
    pub first_unit: GSlice<u32>,
    /// `[U, H, F]` partial accumulators (forward) or partial gradients (backward).
    pub partial_acc: GSlice<f32>,
    /// `[U, H, 2]` partial (max, sum) (forward only; empty for a sum).
    pub partial_ml: GSlice<f32>,
    /// `[N, H, F]` the merged result.
    pub out: GSliceMut<f32>,
    /// `[N, H]` merged log-sum-exp (forward only; empty for a sum).
    pub lse: GSliceMut<f32>,
    /// `[N, H, 2]` merged (max, 1/sum) for the backward (forward only; empty for a sum).
    pub stats: GSliceMut<f32>,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// Number of split rows `R`.
    pub num_rows: u32,
    /// Factor applied to a summed result (backward: the score scale for dq and dk, 1 for dv).
    pub factor: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtCombineParams {}
const _: () = assert!(core::mem::size_of::<GtCombineParams>() == 128);

/// `gt_bwd_rows_*`: the row pass of the backward: dq, and D = dO·o for the column pass.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtBwdRowsParams {
    /// `[N_dst + 1]` CSR offsets.
    pub offsets: GSlice<u64>,
    /// `[E]` CSR columns.
    pub columns: GSlice<u32>,
    /// The work of this launch.
    pub units: Units,
    /// Heads, features, lane mapping.
    pub shape: FeatureShape,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// `[N_dst, H, F]` forward output.
    pub out: GSlice<f32>,
    /// `[N_dst, H, 2]` the forward's (max score in base-2 units, 1/sum) per row and head.
    pub stats: GSlice<f32>,
    /// `[N_dst, H, F]` gradient of the output.
    pub d_out: GSlice<f32>,
    /// `[N_dst, H, F]` dq (whole-row mode).
    pub dq: GSliceMut<f32>,
    /// `[N_dst, H]` D = dO·o per row and head (written by whole rows and by chunk 0 of split rows).
    pub delta: GSliceMut<f32>,
    /// `[U, H, F]` partial dq, unscaled (split mode).
    pub partial: GSliceMut<f32>,
    /// `[N_dst, H]` per-row Σ_j ds·(q·k) (for AGNN's dβ); empty when not wanted.
    pub ds_dot: GSliceMut<f32>,
    /// The score scale `c` (dq = c·Σ ds·k).
    pub scale: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtBwdRowsParams {}
const _: () = assert!(core::mem::size_of::<GtBwdRowsParams>() == 272);

/// `gt_bwd_cols_*`: the column pass of the backward over the CSC: dk and dv.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtBwdColsParams {
    /// `[N_src + 1]` CSC offsets (columns = sources).
    pub csc_offsets: GSlice<u64>,
    /// `[E]` the destination row of each CSC slot.
    pub csc_rows: GSlice<u32>,
    /// The work of this launch (units are columns).
    pub units: Units,
    /// Heads, features, lane mapping.
    pub shape: FeatureShape,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// `[N_dst, H, 2]` the forward's (max score in base-2 units, 1/sum) per row and head.
    pub stats: GSlice<f32>,
    /// `[N_dst, H]` D = dO·o from the row pass.
    pub delta: GSlice<f32>,
    /// `[N_dst, H, F]` gradient of the output.
    pub d_out: GSlice<f32>,
    /// `[N_src, H, F]` dk (whole-column mode).
    pub dk: GSliceMut<f32>,
    /// `[N_src, H, F]` dv (whole-column mode).
    pub dv: GSliceMut<f32>,
    /// `[U, H, F]` partial dk, unscaled (split mode).
    pub partial_dk: GSliceMut<f32>,
    /// `[U, H, F]` partial dv (split mode).
    pub partial_dv: GSliceMut<f32>,
    /// The score scale `c`.
    pub scale: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtBwdColsParams {}
const _: () = assert!(core::mem::size_of::<GtBwdColsParams>() == 272);

/// `gt_group_*`: DF-GNN's "hyper" schedule — a block owns a group of consecutive rows; its
/// scores live in shared memory; optionally the groups' source rows of `k` and `v` are staged in
/// shared memory first (batches of small graphs reuse each source row ~degree times).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtGroupParams {
    /// `[N_dst + 1]` CSR offsets.
    pub offsets: GSlice<u64>,
    /// `[E]` CSR columns.
    pub columns: GSlice<u32>,
    /// `[E]` the row of every edge.
    pub coo_rows: GSlice<u32>,
    /// `[G]` first row of each block's group.
    pub group_first: GSlice<u32>,
    /// `[G]` one past the last row of each block's group.
    pub group_end: GSlice<u32>,
    /// `[G]` first staged source node of each group; empty when nothing is staged.
    pub stage_first: GSlice<u32>,
    /// `[G]` staged source nodes of each group.
    pub stage_count: GSlice<u32>,
    /// Heads, features, lane mapping.
    pub shape: FeatureShape,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// `[N_dst, H, F]` output.
    pub out: GSliceMut<f32>,
    /// `[N_dst, H]` log-sum-exp.
    pub lse: GSliceMut<f32>,
    /// `[N_dst, H, 2]` (max score in base-2 units, 1/sum) for the backward.
    pub stats: GSliceMut<f32>,
    /// Number of groups `G` (= blocks).
    pub num_groups: u32,
    /// The score scale times log2(e).
    pub scale_log2: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtGroupParams {}
const _: () = assert!(core::mem::size_of::<GtGroupParams>() == 240);
