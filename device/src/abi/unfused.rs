//! Parameters of the baseline GT schedules (`kernels::unfused`): the DGL-sparse-style `unfused`
//! pipeline (SDDMM, edge softmax, SpMM, with per-edge arrays in global memory) and the
//! `edge_parallel` schedule (SDDMM, then one softmax + aggregation row kernel).
//!
//! Shapes: node features `[N, H, F]` row-major f32, per-edge arrays `[E, H]` (`e·H + h`), per-node
//! scalars `[N, H]`. `team_lanes` is the number of lanes that work on one item (an edge-head or a
//! node-head pair): a power of two from 1 to 32 (the warp size); the host picks it (see each
//! kernel's `# Grid mapping`). When `feat % 4 == 0` the kernels read and write node features as
//! 16-byte vectors, so every feature array must then start 16-byte aligned.

use super::LaunchParams;
use crate::simt::{GSlice, GSliceMut};

/// [`crate::kernels::unfused::unfused_sddmm`]: `scores[e, h] = scale · a[row(e), h, :] · b[col(e), h, :]`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SddmmParams {
    /// `[num_dst, H, F]` destination-side features (q, or dO in the backward).
    pub a: GSlice<f32>,
    /// `[num_src, H, F]` source-side features (k, or v in the backward).
    pub b: GSlice<f32>,
    /// `[E]` CSR row (destination node) of each edge.
    pub coo_rows: GSlice<u32>,
    /// `[E]` CSR column (source node) of each edge.
    pub columns: GSlice<u32>,
    /// `[E, H]` output: the scaled dot product of each edge and head.
    pub scores: GSliceMut<f32>,
    /// Number of edges E.
    pub num_edges: u64,
    /// Heads H (at least 1).
    pub heads: u32,
    /// Features per head F (at least 1).
    pub feat: u32,
    /// The factor c applied to each dot product (1/√F for GT scores, 1 for dα).
    pub scale: f32,
    /// Lanes per (edge, head) item: a power of two, 1 to 32.
    pub team_lanes: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for SddmmParams {}
const _: () = assert!(core::mem::size_of::<SddmmParams>() == 104);

/// [`crate::kernels::unfused::unfused_edge_softmax`]: per (row, head) softmax of the row's scores.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EdgeSoftmaxParams {
    /// `[num_rows + 1]` CSR row offsets.
    pub offsets: GSlice<u64>,
    /// `[E, H]` edge scores.
    pub scores: GSlice<f32>,
    /// `[E, H]` output: the softmax of each row's scores, per head (0 in a row of all `−∞`).
    pub alpha: GSliceMut<f32>,
    /// `[num_rows, H]` output: each row's log-sum-exp (`−∞` for an empty row); an empty slice
    /// skips it (the backward's recomputation of alpha).
    pub lse: GSliceMut<f32>,
    /// Number of CSR rows (destination nodes).
    pub num_rows: u32,
    /// Heads H (at least 1).
    pub heads: u32,
    /// Lanes per (row, head) item, striding over the row's edges: a power of two, 1 to 32.
    pub team_lanes: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for EdgeSoftmaxParams {}
const _: () = assert!(core::mem::size_of::<EdgeSoftmaxParams>() == 80);

/// [`crate::kernels::unfused::unfused_spmm`]: `out[i, h, :] = scale · Σ_{e in row i} w[e, h] · x[col(e), h, :]`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SpmmParams {
    /// `[num_rows + 1]` CSR row offsets.
    pub offsets: GSlice<u64>,
    /// `[E]` CSR column (source node) of each edge.
    pub columns: GSlice<u32>,
    /// `[E, H]` edge weights (alpha for the output, ds for dq).
    pub weights: GSlice<f32>,
    /// `[num_src, H, F]` source features (v for the output, k for dq).
    pub x: GSlice<f32>,
    /// `[num_rows, H, F]` output; every element is written (empty rows get 0).
    pub out: GSliceMut<f32>,
    /// Number of CSR rows (destination nodes).
    pub num_rows: u32,
    /// Heads H (at least 1).
    pub heads: u32,
    /// Features per head F (at least 1).
    pub feat: u32,
    /// The factor c applied to each sum (1 for the output, the GT scale for dq).
    pub scale: f32,
    /// Lanes per (row, head) item, striding over the features: a power of two, 1 to 32.
    pub team_lanes: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for SpmmParams {}
const _: () = assert!(core::mem::size_of::<SpmmParams>() == 104);

/// [`crate::kernels::unfused::unfused_edge_softmax_backward`]:
/// `ds[e, h] = alpha[e, h] · (d_alpha[e, h] − Σ_{e' in row} alpha[e', h] · d_alpha[e', h])`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EdgeSoftmaxBackwardParams {
    /// `[num_rows + 1]` CSR row offsets.
    pub offsets: GSlice<u64>,
    /// `[E, H]` the forward softmax.
    pub alpha: GSlice<f32>,
    /// `[E, H]` gradient of the loss with respect to alpha.
    pub d_alpha: GSlice<f32>,
    /// `[E, H]` output: gradient of the loss with respect to the scores.
    pub d_scores: GSliceMut<f32>,
    /// Number of CSR rows (destination nodes).
    pub num_rows: u32,
    /// Heads H (at least 1).
    pub heads: u32,
    /// Lanes per (row, head) item, striding over the row's edges: a power of two, 1 to 32.
    pub team_lanes: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for EdgeSoftmaxBackwardParams {}
const _: () = assert!(core::mem::size_of::<EdgeSoftmaxBackwardParams>() == 80);

/// [`crate::kernels::unfused::unfused_spmm_transposed`]: the column pass
/// `out[j, h, :] = scale · Σ_{CSC slots k of column j} w[edge_id(k), h] · x[row(k), h, :]`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SpmmTransposedParams {
    /// `[num_cols + 1]` CSC column offsets.
    pub csc_offsets: GSlice<u64>,
    /// `[E]` destination row of each CSC slot.
    pub csc_rows: GSlice<u32>,
    /// `[E]` CSR edge id of each CSC slot (increasing within a column).
    pub csc_edge_ids: GSlice<u32>,
    /// `[E, H]` edge weights, indexed by CSR edge id (ds for dk, alpha for dv).
    pub weights: GSlice<f32>,
    /// `[num_rows, H, F]` destination features (q for dk, dO for dv).
    pub x: GSlice<f32>,
    /// `[num_cols, H, F]` output; every element is written (empty columns get 0).
    pub out: GSliceMut<f32>,
    /// Number of CSC columns (source nodes).
    pub num_cols: u32,
    /// Heads H (at least 1).
    pub heads: u32,
    /// Features per head F (at least 1).
    pub feat: u32,
    /// The factor c applied to each sum (the GT scale for dk, 1 for dv).
    pub scale: f32,
    /// Lanes per (column, head) item, striding over the features: a power of two, 1 to 32.
    pub team_lanes: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for SpmmTransposedParams {}
const _: () = assert!(core::mem::size_of::<SpmmTransposedParams>() == 120);

/// [`crate::kernels::unfused::edge_parallel_softmax_aggregate`]: the `edge_parallel` row kernel,
/// `out[i, h, :] = Σ_e softmax_row(scores)[e, h] · v[col(e), h, :]` and the row's log-sum-exp,
/// without writing alpha.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SoftmaxAggregateParams {
    /// `[num_rows + 1]` CSR row offsets.
    pub offsets: GSlice<u64>,
    /// `[E]` CSR column (source node) of each edge.
    pub columns: GSlice<u32>,
    /// `[E, H]` edge scores (already scaled).
    pub scores: GSlice<f32>,
    /// `[num_src, H, F]` values.
    pub v: GSlice<f32>,
    /// `[num_rows, H, F]` output; every element is written (empty rows get 0).
    pub out: GSliceMut<f32>,
    /// `[num_rows, H]` output: each row's log-sum-exp (`−∞` for an empty row).
    pub lse: GSliceMut<f32>,
    /// Number of CSR rows (destination nodes).
    pub num_rows: u32,
    /// Heads H (at least 1).
    pub heads: u32,
    /// Features per head F (at least 1).
    pub feat: u32,
    /// Lanes per (row, head) item, striding over edges and then features: a power of two, 1 to 32.
    pub team_lanes: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for SoftmaxAggregateParams {}
const _: () = assert!(core::mem::size_of::<SoftmaxAggregateParams>() == 112);
