//! Parameters of the chain-demo kernels (`kernels::demo`).

use super::LaunchParams;
use crate::simt::{GSlice, GSliceMut};

/// [`crate::kernels::demo::row_softmax`]: per-row softmax of CSR edge values, one warp per row.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RowSoftmaxParams {
    /// `[num_rows + 1]` CSR row offsets into `values`.
    pub offsets: GSlice<u64>,
    /// `[nnz]` one value per edge.
    pub values: GSlice<f32>,
    /// `[nnz]` softmax of `values` within each row.
    pub out: GSliceMut<f32>,
    /// `[num_rows]` log-sum-exp of each row (`-inf` for an empty row).
    pub lse: GSliceMut<f32>,
    /// Number of rows.
    pub num_rows: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for RowSoftmaxParams {}
const _: () = assert!(core::mem::size_of::<RowSoftmaxParams>() == 72);

/// [`crate::kernels::demo::segment_sum`]: sums and counts of CSR row segments, block-cooperative.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SegmentSumParams {
    /// `[num_segments + 1]` segment offsets into `values`.
    pub offsets: GSlice<u64>,
    /// `[nnz]` the values to sum.
    pub values: GSlice<f32>,
    /// `[num_segments]` the sum of each segment; zeroed by the host, accumulated atomically.
    pub sums: GSliceMut<f32>,
    /// `[num_segments]` the number of values of each segment; zeroed by the host.
    pub counts: GSliceMut<u32>,
    /// `[1]` values processed in all; zeroed by the host (a check that each is seen once).
    pub processed: GSliceMut<u32>,
    /// Number of segments.
    pub num_segments: u32,
    /// Values per block (the tile); a multiple of the block size.
    pub tile: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for SegmentSumParams {}
const _: () = assert!(core::mem::size_of::<SegmentSumParams>() == 88);
