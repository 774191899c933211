//! Property tests for dfgnn.
pub mod agnn;
pub mod gt;
pub mod inputs;
pub mod report;
pub mod tolerance;

pub use agnn::{check_agnn, check_agnn_repeatable, run_agnn};
pub use gt::{GtCase, check_gt, check_gt_case, check_gt_repeatable, run_gt};
pub use report::Report;
