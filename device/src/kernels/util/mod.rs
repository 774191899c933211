//! Utility kernels: inputs for tests and benchmarks made on the device, and an element-wise sum.

mod add;
mod fill;

pub use add::*;
pub use fill::*;
