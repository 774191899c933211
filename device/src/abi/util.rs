//! Parameters of the utility kernels (`kernels::util`).

use super::LaunchParams;
use crate::simt::{GSlice, GSliceMut};

/// `fill_uniform`: pseudo-random values, uniform in `[low, high)`, from a counter-based hash.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FillUniformParams {
    /// `[n]` the values to fill.
    pub out: GSliceMut<f32>,
    /// The stream's seed: the same seed gives the same values on every machine.
    pub seed: u64,
    /// Lower bound.
    pub low: f32,
    /// Upper bound.
    pub high: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for FillUniformParams {}
const _: () = assert!(core::mem::size_of::<FillUniformParams>() == 32);

/// `sum_partials`: block `b` sums its range of `x` (`[b·per_block, (b+1)·per_block)`, cut at
/// `x.len()`) in f64 and writes it to `partial[b]`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SumPartialsParams {
    /// `[n]` the terms.
    pub x: GSlice<f32>,
    /// `[blocks]` each block's sum, as the bits of an `f64` (`f64::to_bits`); one per block of
    /// the grid.
    pub partial: GSliceMut<u64>,
    /// Terms per block.
    pub per_block: u64,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for SumPartialsParams {}
const _: () = assert!(core::mem::size_of::<SumPartialsParams>() == 40);

/// `sum_finish`: `out[0] = Σ_b partial[b]`, in f64, rounded to `f32` once.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SumFinishParams {
    /// `[blocks]` the partial sums of [`SumPartialsParams::partial`] (bits of `f64`s).
    pub partial: GSlice<u64>,
    /// `[1]` the sum.
    pub out: GSliceMut<f32>,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for SumFinishParams {}
const _: () = assert!(core::mem::size_of::<SumFinishParams>() == 32);
