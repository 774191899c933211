//! Parameters of the GATv2 kernels (`kernels::gatv2`): the fused passes with GATv2's own inputs
//! (the destinations' features `xr`, the sources' `xl`, the attention vector `a`, the LeakyReLU
//! slope) beside the pieces every fused pass shares ([`super::attention`]), and the edge kernels
//! of the baseline schedules.
//!
//! Shapes: `N_dst` destination rows, `N_src` source nodes, `E` edges, `H` heads, `F` features per
//! head; features `[N, H, F]` row-major, the attention vector `[H, F]`.

use super::LaunchParams;
use super::attention::{ColumnGrads, ForwardOut, GroupParams, PassEdges, RowGrads};
use crate::simt::{GSlice, GSliceMut};

/// `gatv2_fwd_*`: fused scores → online softmax → aggregation over the units' edges of the CSR.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatV2FwdParams {
    /// The rows (CSR) this launch covers.
    pub edges: PassEdges,
    /// `[N_dst, H, F]` destination features `xr`.
    pub xr: GSlice<f32>,
    /// `[N_src, H, F]` source features `xl` (scored and aggregated).
    pub xl: GSlice<f32>,
    /// `[H, F]` attention vector.
    pub a: GSlice<f32>,
    /// Where the results go.
    pub dst: ForwardOut,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatV2FwdParams {}
const _: () = assert!(core::mem::size_of::<GatV2FwdParams>() == 296);

/// `gatv2_group_*`: the `row_group` forward of GATv2.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatV2GroupParams {
    /// The groups, their edges, and where the results go.
    pub group: GroupParams,
    /// `[N_dst, H, F]` destination features `xr`.
    pub xr: GSlice<f32>,
    /// `[N_src, H, F]` source features `xl`.
    pub xl: GSlice<f32>,
    /// `[H, F]` attention vector.
    pub a: GSlice<f32>,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatV2GroupParams {}
const _: () = assert!(core::mem::size_of::<GatV2GroupParams>() == 264);

/// `gatv2_bwd_rows_*`: the row pass of the backward: `d xr`, each row's term of `d a`, and
/// the row record (with D = dO·o) for the column pass.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatV2BwdRowsParams {
    /// The rows (CSR) this launch covers.
    pub edges: PassEdges,
    /// `[N_dst, H, F]` destination features `xr`.
    pub xr: GSlice<f32>,
    /// `[N_src, H, F]` source features `xl`.
    pub xl: GSlice<f32>,
    /// `[H, F]` attention vector.
    pub a: GSlice<f32>,
    /// The forward's state, `dO`, and where D and `d xr` (`d_row`) go.
    pub grads: RowGrads,
    /// `[N_dst, H, F]` each whole row's term `Σ_j ds_ij·LeakyReLU(xl_j + xr_i)` of `d a`.
    pub d_a: GSliceMut<f32>,
    /// `[U, H, F]` the same of each chunk of a split row (empty when nothing is split).
    pub partial_d_a: GSliceMut<f32>,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatV2BwdRowsParams {}
const _: () = assert!(core::mem::size_of::<GatV2BwdRowsParams>() == 328);

/// `gatv2_bwd_cols_*`: the column pass of the backward over the CSC: `d xl`, through the scores
/// (`d_key`) and through the aggregation (`d_value`), as two arrays.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatV2BwdColsParams {
    /// The columns (CSC) this launch covers: `edges.neighbours` are the destination rows.
    pub edges: PassEdges,
    /// `[N_dst, H, F]` destination features `xr`.
    pub xr: GSlice<f32>,
    /// `[N_src, H, F]` source features `xl`.
    pub xl: GSlice<f32>,
    /// `[H, F]` attention vector.
    pub a: GSlice<f32>,
    /// The forward's state, D, `dO`, and where `d xl` goes: `d_value` (the sum of its parts
    /// through the scores and the aggregation) and its partials; the key's arrays stay empty.
    pub grads: ColumnGrads,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatV2BwdColsParams {}
const _: () = assert!(core::mem::size_of::<GatV2BwdColsParams>() == 296);

/// `gatv2_edge_scores` (baselines): `scores[e, h] = ⟨a[h], LeakyReLU(xl[col(e), h] + xr[row(e), h])⟩`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatV2EdgeScoresParams {
    /// `[N_src, H, F]` source features.
    pub xl: GSlice<f32>,
    /// `[N_dst, H, F]` destination features.
    pub xr: GSlice<f32>,
    /// `[H, F]` attention vector.
    pub a: GSlice<f32>,
    /// `[E]` the row of every edge.
    pub coo_rows: GSlice<u32>,
    /// `[E]` CSR columns.
    pub columns: GSlice<u32>,
    /// `[E, H]` the scores.
    pub out: GSliceMut<f32>,
    /// Edges `E`.
    pub num_edges: u64,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatV2EdgeScoresParams {}
const _: () = assert!(core::mem::size_of::<GatV2EdgeScoresParams>() == 120);

/// `gatv2_edge_grads` (baselines' backward): per node `n` (a row of the CSR, or a column of the
/// CSC), `dx[n] = base[n] + Σ_e ds[e]·a⊙LeakyReLU'(z_e)` and, for rows, `d_a[n] = Σ_e
/// ds[e]·LeakyReLU(z_e)`, with `z_e = xl[col(e)] + xr[row(e)]`, over its edges in order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatV2EdgeGradsParams {
    /// `[N + 1]` the node's edge range: row offsets (CSR) or column offsets (CSC).
    pub offsets: GSlice<u64>,
    /// `[E]` the other end of each edge slot: CSR columns, or CSC rows.
    pub neighbours: GSlice<u32>,
    /// `[E]` the CSR edge of each CSC slot (columns); empty for rows (the slot is the edge).
    pub edge_ids: GSlice<u32>,
    /// `[N_src, H, F]` source features.
    pub xl: GSlice<f32>,
    /// `[N_dst, H, F]` destination features.
    pub xr: GSlice<f32>,
    /// `[H, F]` attention vector.
    pub a: GSlice<f32>,
    /// `[E, H]` gradient of the edge scores.
    pub d_scores: GSlice<f32>,
    /// `[N, H, F]` a gradient to add to, or empty for none.
    pub base: GSlice<f32>,
    /// `[N, H, F]` the features' gradient.
    pub dx: GSliceMut<f32>,
    /// `[N, H, F]` the rows' terms of `d a` (rows only; empty for columns).
    pub d_a: GSliceMut<f32>,
    /// Nodes `N` (rows or columns).
    pub nodes: u32,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
    /// 1 when the nodes are columns (CSC), 0 for rows (CSR).
    pub columns: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatV2EdgeGradsParams {}
const _: () = assert!(core::mem::size_of::<GatV2EdgeGradsParams>() == 184);
