//! The unfused pipeline, one public function per step, forward and backward:
//! SDDMM (edge scores from node pairs), the row softmax, and SpMM (aggregation).
//!
//! The models in [`crate::gt`], [`crate::gat`] and [`crate::agnn`] are compositions of these steps,
//! so each step is also the ground truth for an unfused kernel.

mod sddmm;
mod softmax;
mod spmm;

pub use sddmm::{SddmmGrads, sddmm_backward, sddmm_dot};
pub use softmax::{
    alpha_from_lse, attention_delta, row_softmax, row_softmax_backward, row_softmax_backward_with_delta,
};
pub use spmm::{SpmmGrads, spmm, spmm_backward};
