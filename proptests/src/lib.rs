//! Property tests of dfgnn: every model × schedule × backend against the `f64` reference.
//!
//! The layout follows cubecl's testgen pattern: this crate holds the check bodies, generic over
//! the [`Backend`](dfgnn::Backend), and [`testgen_all!`] turns them into `#[test]`s;
//! `tests/emulator.rs` instantiates them on the SIMT emulator and `tests/gpu.rs` on CUDA device 0
//! (skipping with a message when there is none).
//!
//! | module | what |
//! |---|---|
//! | [`gt`], [`agnn`] | one check: run forward + backward through the public API, compare every result with the reference |
//! | [`tolerance`] | the rule: error ≤ 2 × the naive f32 error + 1e-5 · max(1, \|ref\|), both against f64 |
//! | [`inputs`] | seeded features, output gradients, β |
//! | [`cases`] | shapes, forced plan options, graphs, budgets, proptest strategies |
//! | [`suite`], [`errors`] | the test bodies |
//! | [`report`] | what a check returns: the plan and every comparison |
//!
//! Every check also requires: no NaN in any result (the emulator fills unwritten device memory
//! with NaN), `lse = −∞` exactly on empty rows, and a clean run (any defect the emulator finds —
//! a race, an out-of-bounds access, a divergent barrier — is an `Err` from the API and fails it).

pub mod agnn;
pub mod cases;
pub mod errors;
pub mod gt;
pub mod inputs;
pub mod report;
pub mod suite;
pub mod tolerance;

pub use agnn::{AgnnResults, check_agnn, check_agnn_repeatable, run_agnn};
pub use gt::{GtCase, GtResults, check_gt, check_gt_case, check_gt_repeatable, run_gt};
pub use report::Report;

/// Generates the whole suite as `#[test]`s for one backend.
///
/// `$backend` is an expression giving `Option<Backend>` (`None`: print why and skip), `$budget`
/// a [`cases::Budget`]. Use once per test file:
/// ```ignore
/// fn backend() -> Option<dfgnn::Backend> { Some(dfgnn::Backend::emulator()) }
/// dfgnn_proptests::testgen_all!(backend(), dfgnn_proptests::cases::Budget::EMULATOR);
/// ```
#[macro_export]
macro_rules! testgen_all {
    ($backend:expr, $budget:expr) => {
        #[test]
        fn gt_random_power_law_graphs() {
            if let Some(b) = $backend {
                $crate::suite::gt_random_power_law_graphs(&b, $budget, file!());
            }
        }

        #[test]
        fn agnn_random_power_law_graphs() {
            if let Some(b) = $backend {
                $crate::suite::agnn_random_power_law_graphs(&b, $budget, file!());
            }
        }

        #[test]
        fn gt_random_bipartite_graphs() {
            if let Some(b) = $backend {
                $crate::suite::gt_random_bipartite_graphs(&b, $budget, file!());
            }
        }

        #[test]
        fn gt_every_schedule_and_shape() {
            if let Some(b) = $backend {
                $crate::suite::every_schedule_and_shape(&b, $crate::suite::Model::Gt);
            }
        }

        #[test]
        fn agnn_every_schedule_and_shape() {
            if let Some(b) = $backend {
                $crate::suite::every_schedule_and_shape(&b, $crate::suite::Model::Agnn);
            }
        }

        #[test]
        fn gt_forced_options_on_every_schedule() {
            if let Some(b) = $backend {
                $crate::suite::forced_options_on_every_schedule(&b, $crate::suite::Model::Gt);
            }
        }

        #[test]
        fn agnn_forced_options_on_every_schedule() {
            if let Some(b) = $backend {
                $crate::suite::forced_options_on_every_schedule(&b, $crate::suite::Model::Agnn);
            }
        }

        #[test]
        fn gt_corner_cases() {
            if let Some(b) = $backend {
                $crate::suite::corner_cases(&b, $budget, $crate::suite::Model::Gt);
            }
        }

        #[test]
        fn agnn_corner_cases() {
            if let Some(b) = $backend {
                $crate::suite::corner_cases(&b, $budget, $crate::suite::Model::Agnn);
            }
        }

        #[test]
        fn agnn_refuses_bipartite_graphs() {
            if let Some(b) = $backend {
                $crate::suite::agnn_refuses_bipartite_graphs(&b);
            }
        }

        #[test]
        fn results_are_bit_identical_run_after_run() {
            if let Some(b) = $backend {
                $crate::suite::results_are_bit_identical_run_after_run(&b, $budget);
            }
        }

        #[test]
        fn wide_features_fall_back_or_error() {
            if let Some(b) = $backend {
                $crate::suite::wide_features_fall_back_or_error(&b);
            }
        }

        #[test]
        fn bad_inputs_give_clear_errors() {
            if let Some(b) = $backend {
                $crate::errors::bad_inputs_give_clear_errors(&b);
            }
        }

        #[test]
        fn zero_heads_or_features_are_errors() {
            if let Some(b) = $backend {
                $crate::errors::zero_heads_or_features_are_errors(&b);
            }
        }

        #[test]
        fn wide_heads_run_or_are_refused() {
            if let Some(b) = $backend {
                $crate::errors::wide_heads_run_or_are_refused(&b);
            }
        }

        #[test]
        fn fused_backward_keeps_naive_accuracy_at_large_scores() {
            if let Some(b) = $backend {
                $crate::suite::fused_backward_keeps_naive_accuracy_at_large_scores(&b);
            }
        }

        #[test]
        fn max_slots_outside_the_kernel_table_run_or_are_refused() {
            if let Some(b) = $backend {
                $crate::errors::max_slots_outside_the_kernel_table_run_or_are_refused(&b);
            }
        }
    };
}
