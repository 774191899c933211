//! Utility kernels: inputs for tests and benchmarks made on the device, an element-wise sum, and
//! the deterministic sum of an array into one value.

mod add;
mod fill;
mod sum;

pub use add::*;
pub use fill::*;
pub use sum::*;
