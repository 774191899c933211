//! Parameters every fused attention pass shares, whatever the model's score: the edges a launch
//! covers ([`PassEdges`]), where a forward writes ([`ForwardOut`]), what the backward's row and
//! column passes read and write ([`RowGrads`], [`ColumnGrads`]), and the combine steps of split
//! rows ([`SumCombineParams`]). A model's parameter struct (e.g. [`super::GtFwdParams`]) holds these
//! plus its own inputs.
//!
//! Shapes: `N_dst` destination rows, `N_src` source nodes, `E` edges, `H` heads, `F` features per
//! head, `U` units of a launch; features `[N, H, F]` row-major, per-node scalars `[N, H]`.

use super::LaunchParams;
use super::lanes::LaneMap;
use crate::simt::{GSlice, GSliceMut};

/// Which rows (or columns) a launch covers, and how: one warp per unit.
///
/// Unit `u` belongs to row `unit_rows[u]` (or row `u` when `unit_rows` is empty). Units
/// `split_first .. split_first + split_count` are chunks of split rows: unit `split_first + i`
/// covers edges `[offsets[r] + c·chunk_edges, …)` of its row `r`, chunk `c = unit_chunks[i]`,
/// and writes partial result `i` for a combine kernel to merge. Every other unit is a whole row
/// and writes the outputs. Chunks sit between the long whole rows and the short ones, so that a
/// launch starts its longest units first.
///
/// Units from `packed_first` on (short whole rows, after every chunk) are **packed**: a launch of
/// a packed entry takes them `T` at a time, one per team of the lane map (`T = LaneMap::teams`),
/// so that a warp works on `T` rows at once instead of spreading one row's few edges over its
/// teams; a launch of an ordinary entry takes the units before `packed_first`, one per warp.
/// A warp's **task** is one unit or `T` packed units ([`Units::tasks`]); blocks own tasks.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Units {
    /// `[U]` the row of each unit; empty for "unit u is row u".
    pub unit_rows: GSlice<u32>,
    /// `[split_count]` the chunk index (within its row) of each chunk unit; empty when none.
    pub unit_chunks: GSlice<u32>,
    /// Number of units `U`.
    pub num_units: u32,
    /// The first chunk unit.
    pub split_first: u32,
    /// Number of chunk units.
    pub split_count: u32,
    /// Edges per chunk.
    pub chunk_edges: u32,
    /// Tasks per block (at least the warps per block): block `b` takes tasks
    /// `[b·units_per_block, (b+1)·units_per_block)`, its warps in turn.
    pub units_per_block: u32,
    /// The first packed unit (`num_units` when none is).
    pub packed_first: u32,
}

impl Units {
    /// The tasks of a launch: of an ordinary entry, the units before `packed_first`; of a
    /// `packed` one, one per `teams` units from it on.
    #[inline(always)]
    pub fn tasks(&self, packed: bool, teams: u32) -> u32 {
        let packed_first = self.packed_first.min(self.num_units);
        if packed { (self.num_units - packed_first).div_ceil(teams.max(1)) } else { packed_first }
    }
}

/// The feature shape and lane mapping of a launch.
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

/// Attention dropout of a launch: edge `e` (its CSR id) keeps head `h`'s weight, times
/// `scale = 1 / (1 − p)`, when the mask of `kernels::common::dropout` says so; `threshold` 0
/// ([`DropoutParams::OFF`]) keeps every weight as it is and skips the mask.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropoutParams {
    /// The mask's seed.
    pub seed: u64,
    /// `⌊p·2^32⌋` for dropout probability `p`; 0 for none.
    pub threshold: u32,
    /// `1 / (1 − p)`, the factor of a kept weight.
    pub scale: f32,
}

impl DropoutParams {
    /// No dropout.
    pub const OFF: Self = Self { seed: 0, threshold: 0, scale: 1.0 };
}

/// The edges a row pass (over the CSR) or a column pass (over the CSC) covers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PassEdges {
    /// `[N + 1]` offsets: CSR offsets (rows = destinations) or CSC offsets (columns = sources).
    pub offsets: GSlice<u64>,
    /// `[E]` each slot's neighbour: the source node (CSR) or the destination row (CSC).
    pub neighbours: GSlice<u32>,
    /// `[E]` the CSR edge id of each CSC slot (column passes, for the dropout mask); empty for
    /// row passes, whose slots are the CSR ids.
    pub edge_ids: GSlice<u32>,
    /// The work of this launch.
    pub units: Units,
    /// Heads, features, lane mapping.
    pub shape: FeatureShape,
    /// Attention dropout.
    pub dropout: DropoutParams,
}

/// Where a fused forward writes: whole rows straight to the outputs, chunks of split rows to
/// partials, which the last chunk of each split row to finish merges into the outputs
/// ([`crate::kernels::attention::combine`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ForwardOut {
    /// `[N_dst, H, F]` output (whole rows).
    pub out: GSliceMut<f32>,
    /// `[N_dst, H]` natural log-sum-exp of each row's scores, −∞ for an empty row (whole rows).
    pub lse: GSliceMut<f32>,
    /// `[N_dst, H, 2]` what the backward recomputes α from: the maximum score (base-2 units)
    /// and the reciprocal of the sum the output was normalised by (whole rows).
    pub stats: GSliceMut<f32>,
    /// `[U, H, F]` unnormalised partial outputs (chunk units).
    pub partial_acc: GSliceMut<f32>,
    /// `[U, H, 2]` partial (max in base-2 units, sum of 2^(s − max)) (chunk units).
    pub partial_ml: GSliceMut<f32>,
    /// `[U]` how many of each split row's chunks have finished, counted at the row's first
    /// chunk unit; zero at launch (chunk units; the launch leaves the counts it took).
    pub arrivals: GSliceMut<u32>,
}

/// What a fused forward also sums over the edges in its score's **part** (see
/// [`Score::in_part`](crate::kernels::attention::Score::in_part); GAT: the edges whose
/// LeakyReLU is in its identity half, `el_i + er_j > 0`), for a backward that needs no gather in
/// its row pass. Whole rows write `out = Σ_{j in part} α_ij·factor_ij·v_j` (normalised by the
/// whole row's sum, as the output) and `weight = Σ_{j in part} α_ij`; chunks of split rows write
/// the unnormalised sums beside the forward's partials, merged with them ([`CombinePart`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PartOut {
    /// `[N_dst, H, F]` the part of the output (whole rows).
    pub out: GSliceMut<f32>,
    /// `[N_dst, H]` the part's share of the attention weights (whole rows).
    pub weight: GSliceMut<f32>,
    /// `[U, H, F]` unnormalised partial sums (chunk units).
    pub partial_acc: GSliceMut<f32>,
    /// `[U, H]` partial sums of `2^(s − max)` over the part (chunk units; the max is the chunk's
    /// in [`ForwardOut::partial_ml`]).
    pub partial_weight: GSliceMut<f32>,
}

impl PartOut {
    /// No part (every model's forward but GAT's training one).
    pub const NONE: Self = Self {
        out: GSliceMut::empty(),
        weight: GSliceMut::empty(),
        partial_acc: GSliceMut::empty(),
        partial_weight: GSliceMut::empty(),
    };
}

/// What the backward's row pass reads of the forward and writes, whatever the model: the row
/// record per row and head (with `D = dO·o`), and the gradient of the row's own input (GT: dq).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RowGrads {
    /// `[N_dst, H, F]` forward output.
    pub out: GSlice<f32>,
    /// `[N_dst, H, 2]` the forward's (max score in base-2 units, 1/sum) per row and head.
    pub stats: GSlice<f32>,
    /// `[N_dst, H, F]` gradient of the output.
    pub d_out: GSlice<f32>,
    /// `[N_dst, H, 4]` the row record per row and head, for the column pass (written by whole
    /// rows and by chunk 0 of split rows): see [`ColumnGrads::record`].
    pub record: GSliceMut<f32>,
    /// `[N_dst, H, F]` gradient of the row's input (whole rows).
    pub d_row: GSliceMut<f32>,
    /// `[U, H, F]` partial gradient of the row's input, before the final scale (chunk units).
    pub partial: GSliceMut<f32>,
}

/// What the backward's column pass reads and writes, whatever the model: the gradients of a
/// source node's key (the score's input) and value (the aggregated features).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ColumnGrads {
    /// `[N_dst, H, 4]` the row record the row pass wrote per row and head, all an in-edge's
    /// row scalars in one 16-byte load: the forward's (max score in base-2 units, 1/sum),
    /// `D = dO·o`, and the row operand when it is a head's scalar (GAT's `el`; else 0).
    pub record: GSlice<f32>,
    /// `[N_dst, H, F]` gradient of the output.
    pub d_out: GSlice<f32>,
    /// `[N_src, H, F]` gradient of the keys (whole columns).
    pub d_key: GSliceMut<f32>,
    /// `[N_src, H, F]` gradient of the values (whole columns).
    pub d_value: GSliceMut<f32>,
    /// `[U, H, F]` partial key gradient, before the final scale (chunk units).
    pub partial_d_key: GSliceMut<f32>,
    /// `[U, H, F]` partial value gradient (chunk units).
    pub partial_d_value: GSliceMut<f32>,
}

/// One array an `attention_sum_combine` adds up: each split row's `[H, feat]` partial blocks into
/// its row of `out`, times `factor`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SumTarget {
    /// `[U, H, feat]` partial gradients (chunk units).
    pub partial: GSlice<f32>,
    /// `[N, H, feat]` the summed result.
    pub out: GSliceMut<f32>,
    /// Floats per head: the model's `F`, or 1 for per-head scalars; 0 for no array.
    pub feat: u32,
    /// The factor of the sum (the gradient scale of GT's query and key gradients, else 1).
    pub factor: f32,
}

impl SumTarget {
    /// No array (a combine of one).
    pub const NONE: Self = Self { partial: GSlice::empty(), out: GSliceMut::empty(), feat: 0, factor: 1.0 };
}

/// `attention_sum_combine`: sums the partial gradients of split rows (or columns) into one or
/// two arrays of the same pass in one launch (a pass's second array: GT's `dv` beside `dk`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SumCombineParams {
    /// `[R]` the split rows.
    pub rows: GSlice<u32>,
    /// `[R + 1]` row `r`'s partials are `first_unit[r] .. first_unit[r + 1]`.
    pub first_unit: GSlice<u32>,
    /// The arrays to sum; the second may be [`SumTarget::NONE`].
    pub targets: [SumTarget; 2],
    /// Heads `H`.
    pub heads: u32,
    /// Number of split rows `R`.
    pub num_rows: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for SumCombineParams {}
const _: () = assert!(core::mem::size_of::<SumCombineParams>() == 120);

/// The `row_group` forward's part of a model's parameters (DF-GNN's "hyper" schedule): a block
/// owns a group of consecutive rows; its scores live in shared memory; optionally the groups'
/// source rows of keys and values are staged in shared memory first (batches of small graphs
/// reuse each source row ~degree times).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GroupParams {
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
    /// `[N_dst, H, F]` output.
    pub out: GSliceMut<f32>,
    /// `[N_dst, H]` log-sum-exp.
    pub lse: GSliceMut<f32>,
    /// `[N_dst, H, 2]` (max score in base-2 units, 1/sum) for the backward.
    pub stats: GSliceMut<f32>,
    /// Number of groups `G` (= blocks).
    pub num_groups: u32,
    /// Attention dropout (applied in the aggregation; edges by CSR id).
    pub dropout: DropoutParams,
}
