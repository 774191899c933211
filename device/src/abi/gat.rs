//! Parameters of the GAT kernels (`kernels::gat`): the fused passes with GAT's own inputs (the
//! node scores `el`, `er`, the features `h`, the LeakyReLU slope) beside the pieces every fused
//! pass shares ([`super::attention`]), the node-score kernels and their backward, and the edge
//! kernels of the baseline schedules.
//!
//! Shapes: `N_dst` destination rows, `N_src` source nodes, `E` edges, `H` heads, `F` features per
//! head; features `[N, H, F]` row-major, per-node scalars `[N, H]`, attention vectors `[H, F]`.

use super::LaunchParams;
use super::attention::{ColumnGrads, ForwardOut, GroupParams, PartOut, PassEdges, RowGrads};
use crate::simt::{GSlice, GSliceMut};

/// `gat_fwd_*`: fused scores → online softmax → aggregation over the units' edges of the CSR.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatFwdParams {
    /// The rows (CSR) this launch covers.
    pub edges: PassEdges,
    /// `[N_dst, H]` destination scores `el`.
    pub el: GSlice<f32>,
    /// `[N_src, H]` source scores `er`.
    pub er: GSlice<f32>,
    /// `[N_src, H, F]` features (aggregated).
    pub h: GSlice<f32>,
    /// Where the results go.
    pub dst: ForwardOut,
    /// Where the positive part goes (`gat_part_fwd_*`; [`PartOut::NONE`] for the others).
    pub part: PartOut,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatFwdParams {}
const _: () = assert!(core::mem::size_of::<GatFwdParams>() == 360);

/// `gat_group_*`: the `row_group` forward of GAT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatGroupParams {
    /// The groups, their edges, and where the results go.
    pub group: GroupParams,
    /// `[N_dst, H]` destination scores `el`.
    pub el: GSlice<f32>,
    /// `[N_src, H]` source scores `er`.
    pub er: GSlice<f32>,
    /// `[N_src, H, F]` features.
    pub h: GSlice<f32>,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatGroupParams {}
const _: () = assert!(core::mem::size_of::<GatGroupParams>() == 264);

/// `gat_bwd_rows_*`: the row pass of the backward: `d el` and the row record (with D = dO·o) for the column pass.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatBwdRowsParams {
    /// The rows (CSR) this launch covers.
    pub edges: PassEdges,
    /// `[N_dst, H]` destination scores `el`.
    pub el: GSlice<f32>,
    /// `[N_src, H]` source scores `er`.
    pub er: GSlice<f32>,
    /// `[N_src, H, F]` features.
    pub h: GSlice<f32>,
    /// The forward's state, `dO`, and where D and `d el` go (`d_row`: `[N_dst, H]`; split-mode
    /// partials `[U, H]`).
    pub grads: RowGrads,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatBwdRowsParams {}
const _: () = assert!(core::mem::size_of::<GatBwdRowsParams>() == 296);

/// `gat_part_rows`: the backward's row pass from the forward's positive part, per node and
/// head with no gather: `D = dO·o` (into the row record) and `d el = (1 − slope)·(dO·o⁺ − D·α⁺)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatPartRowsParams {
    /// `[N_dst, H, F]` the forward's output.
    pub out: GSlice<f32>,
    /// `[N_dst, H, F]` its positive part `o⁺`.
    pub part_out: GSlice<f32>,
    /// `[N_dst, H]` the positive part's share of the weights `α⁺`.
    pub part_weight: GSlice<f32>,
    /// `[N_dst, H, F]` the output's gradient.
    pub d_out: GSlice<f32>,
    /// `[N_dst, H, 2]` the forward's (max score in base-2 units, 1/sum).
    pub stats: GSlice<f32>,
    /// `[N_dst, H]` the destination scores `el`.
    pub el: GSlice<f32>,
    /// `[N_dst, H, 4]` the row record for the column pass: `(m, 1/l, D, el)`
    /// ([`crate::abi::ColumnGrads::record`]).
    pub record: GSliceMut<f32>,
    /// `[N_dst, H]` the gradient of `el`.
    pub d_el: GSliceMut<f32>,
    /// Rows `N_dst`.
    pub nodes: u32,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatPartRowsParams {}
const _: () = assert!(core::mem::size_of::<GatPartRowsParams>() == 144);

/// `gat_bwd_cols_*`: the column pass of the backward over the CSC: `d er` and the features'
/// gradient through the aggregation.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatBwdColsParams {
    /// The columns (CSC) this launch covers: `edges.neighbours` are the destination rows.
    pub edges: PassEdges,
    /// `[N_dst, H]` destination scores `el`.
    pub el: GSlice<f32>,
    /// `[N_src, H]` source scores `er`.
    pub er: GSlice<f32>,
    /// `[N_src, H, F]` features.
    pub h: GSlice<f32>,
    /// The forward's state, D, `dO`, and where `d er` (`d_key`: `[N_src, H]`; partials `[U, H]`)
    /// and the aggregation's `dh` (`d_value`) go.
    pub grads: ColumnGrads,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatBwdColsParams {}
const _: () = assert!(core::mem::size_of::<GatBwdColsParams>() == 296);

/// `gat_node_scores`: `scores[n, h] = ⟨x[n, h, :], a[h, :]⟩` (`el` or `er`), and with a second
/// vector `scores2[n, h] = ⟨x[n, h, :], a2[h, :]⟩` from the same reads of `x` (both, when the
/// destinations' features are the sources').
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatNodeScoresParams {
    /// `[N, H, F]` features.
    pub x: GSlice<f32>,
    /// `[H, F]` attention vector.
    pub a: GSlice<f32>,
    /// `[N, H]` the node scores.
    pub scores: GSliceMut<f32>,
    /// `[H, F]` a second attention vector, or empty for none.
    pub a2: GSlice<f32>,
    /// `[N, H]` its node scores (empty when `a2` is).
    pub scores2: GSliceMut<f32>,
    /// Nodes `N`.
    pub nodes: u32,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatNodeScoresParams {}
const _: () = assert!(core::mem::size_of::<GatNodeScoresParams>() == 96);

/// `gat_node_backward`: over block `b`'s nodes `[b·nodes_per_block, (b+1)·nodes_per_block)`,
/// the features' gradient `dx[n, h, :] (+)= d_scores[n, h]·a[h, :] + d_scores2[n, h]·a2[h, :]`
/// and the attention vectors' partial gradients `partial[b, h, :] = Σ_n d_scores[n, h]·x[n, h, :]`
/// and `partial2` likewise with `d_scores2`, from one read of `x`, nodes in order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatNodeBackwardParams {
    /// `[N, H, F]` the features both partials read.
    pub x: GSlice<f32>,
    /// `[N, H, F]` the features' gradient, or empty for none (then only the partials are made, as
    /// GATv2 sums its rows' terms of `d a`).
    pub dx: GSliceMut<f32>,
    /// `[N, H]` the gradient of the node scores of `a`, or empty for ones (only without `dx`).
    pub d_scores: GSlice<f32>,
    /// `[H, F]` the attention vector of `d_scores` (read only with `dx`).
    pub a: GSlice<f32>,
    /// `[B, H, F]` the partials of the gradient of `a`, one per block.
    pub partial: GSliceMut<f32>,
    /// `[N, H]` the gradient of the second node scores `x` gave (GAT's `el` and `er` when the
    /// destinations' features are the sources'; unused when `partial2` is empty).
    pub d_scores2: GSlice<f32>,
    /// `[H, F]` its attention vector (unused when `partial2` is empty).
    pub a2: GSlice<f32>,
    /// `[B, H, F]` the partials of the gradient of `a2`, or empty for no second score.
    pub partial2: GSliceMut<f32>,
    /// Nodes `N`.
    pub nodes: u32,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// Nodes per block: block `b` takes `[b·nodes_per_block, (b+1)·nodes_per_block)`, cut at `N`.
    pub nodes_per_block: u32,
    /// 1: `dx` holds a gradient to add to (the aggregation's `dh`, updated in place); 0: `dx` is
    /// written from the node scores' terms alone.
    pub accumulate: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatNodeBackwardParams {}
const _: () = assert!(core::mem::size_of::<GatNodeBackwardParams>() == 152);

/// `gat_vector_grad_sum`: `out[i] = Σ_b partial[b, i]` and `out2[i] = Σ_b partial2[b, i]`, in an
/// order fixed by `B` alone (contiguous ranges of the partials in order, then the ranges' sums in
/// order).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatVectorSumParams {
    /// `[B, L]` the partials.
    pub partial: GSlice<f32>,
    /// `[L]` their sum.
    pub out: GSliceMut<f32>,
    /// `[B2, L]` a second vector's partials, or empty for none.
    pub partial2: GSlice<f32>,
    /// `[L]` their sum (empty when `partial2` is).
    pub out2: GSliceMut<f32>,
    /// Partials `B`.
    pub blocks: u32,
    /// Partials `B2` of the second vector.
    pub blocks2: u32,
    /// Elements per partial `L`.
    pub len: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatVectorSumParams {}
const _: () = assert!(core::mem::size_of::<GatVectorSumParams>() == 80);

/// `gat_edge_scores` (baselines): `scores[e, h] = LeakyReLU(el[row(e), h] + er[col(e), h])`;
/// with `d_scores` given (`gat_edge_scores_backward`), writes `d_scores·LeakyReLU'` instead.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatEdgeScoresParams {
    /// `[N_dst, H]` destination scores.
    pub el: GSlice<f32>,
    /// `[N_src, H]` source scores.
    pub er: GSlice<f32>,
    /// `[E]` the row of every edge.
    pub coo_rows: GSlice<u32>,
    /// `[E]` CSR columns.
    pub columns: GSlice<u32>,
    /// `[E, H]` gradient of the edge scores (backward only; empty in the forward).
    pub d_scores: GSlice<f32>,
    /// `[E, H]` the scores (forward) or their gradient through the LeakyReLU (backward).
    pub out: GSliceMut<f32>,
    /// Edges `E`.
    pub num_edges: u64,
    /// Heads `H`.
    pub heads: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatEdgeScoresParams {}
const _: () = assert!(core::mem::size_of::<GatEdgeScoresParams>() == 112);
