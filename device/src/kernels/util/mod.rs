//! Utility kernels: inputs for tests and benchmarks made on the device, and the deterministic
//! sum of an array into one value.

mod fill;
mod sum;

pub use fill::*;
pub use sum::*;
