//! Parameters of the fused GT / AGNN kernels (`kernels::gt`): GT's own inputs (queries, keys,
//! values, the score scale) beside the pieces every fused pass shares ([`super::attention`]).
//!
//! Shapes: `N_dst` destination rows, `N_src` source nodes, `E` edges, `H` heads, `F` features per
//! head; features `[N, H, F]` row-major, per-node scalars `[N, H]`.

use super::LaunchParams;
use super::agnn::NormalizeGrads;
use super::attention::{ColumnGrads, ForwardOut, GroupParams, PassEdges, RowGrads};
use crate::simt::GSlice;

/// `gt_fwd_*`: fused SDDMM → online softmax → SpMM over the units' edges of the CSR.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtFwdParams {
    /// The rows (CSR) this launch covers.
    pub edges: PassEdges,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// Where the results go.
    pub dst: ForwardOut,
    /// The score scale times log2(e): scores are `scale · q·k` in natural units.
    pub scale_log2: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtFwdParams {}
const _: () = assert!(core::mem::size_of::<GtFwdParams>() == 296);

/// `gt_bwd_rows_*`: the row pass of the backward: dq, and the row record (with D = dO·o) for the column pass.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtBwdRowsParams {
    /// The rows (CSR) this launch covers.
    pub edges: PassEdges,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// The forward's state, `dO`, and where D and dq go (`d_row` is dq).
    pub grads: RowGrads,
    /// The score scale times log2(e), as in the forward.
    pub scale_log2: f32,
    /// The factor of the summed gradient: `dq = grad_scale·Σ ds·k` (GT: the score scale `c`).
    pub grad_scale: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtBwdRowsParams {}
const _: () = assert!(core::mem::size_of::<GtBwdRowsParams>() == 296);

/// `gt_bwd_cols_*`: the column pass of the backward over the CSC: dk and dv.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtBwdColsParams {
    /// The columns (CSC) this launch covers: `edges.neighbours` are the destination rows.
    pub edges: PassEdges,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// The forward's state, D, `dO`, and where dk (`d_key`) and dv (`d_value`) go.
    pub grads: ColumnGrads,
    /// The score scale times log2(e), as in the forward.
    pub scale_log2: f32,
    /// The factor of the summed gradient: `dk = grad_scale·Σ ds·q` (GT: the score scale `c`).
    pub grad_scale: f32,
    /// AGNN's: its normalisation's backward, done by the column pass ([`NormalizeGrads::NONE`]
    /// for GT).
    pub normalize: NormalizeGrads,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtBwdColsParams {}
const _: () = assert!(core::mem::size_of::<GtBwdColsParams>() == 368);

/// `gt_group_*`: the `row_group` forward of GT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtGroupParams {
    /// The groups, their edges, and where the results go.
    pub group: GroupParams,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// The score scale times log2(e).
    pub scale_log2: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtGroupParams {}
const _: () = assert!(core::mem::size_of::<GtGroupParams>() == 264);
