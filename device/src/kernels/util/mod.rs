//! Utility kernels: inputs for tests and benchmarks made on the device.

mod fill;

pub use fill::*;
