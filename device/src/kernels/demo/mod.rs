//! Two small kernels that prove the GPU/emulator chain and exercise every `simt` primitive:
//! a warp-per-row softmax over CSR rows and a block-cooperative segmented reduction.

mod row_softmax;
mod segment_sum;

pub use row_softmax::*;
pub use segment_sum::*;
