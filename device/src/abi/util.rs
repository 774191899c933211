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

/// `add`: `out = a + b` element-wise.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AddParams {
    /// `[n]` the first term.
    pub a: GSlice<f32>,
    /// `[n]` the second term.
    pub b: GSlice<f32>,
    /// `[n]` the sum (distinct from both terms).
    pub out: GSliceMut<f32>,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for AddParams {}
const _: () = assert!(core::mem::size_of::<AddParams>() == 48);
