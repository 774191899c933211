//! Launch-parameter structs: the ABI between the host library and the kernels.
//!
//! Each kernel takes one `#[repr(C)]` struct by value. The host library depends on this crate as
//! an rlib and builds the very same types, so the two sides cannot drift; the `const` assertions
//! pin each layout. Every field says its shape and meaning. Pointers are device addresses on the
//! GPU and host addresses under the emulator.

use crate::simt::{GSlice, GSliceMut};

/// A parameter struct a kernel takes by value.
///
/// # Safety
/// Implementors are `#[repr(C)]`, `Copy`, hold only plain data and global slices, and have the
/// same layout on the host and on `nvptx64` (both 64-bit, little-endian).
pub unsafe trait LaunchParams: Copy + Sync + 'static {}

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
