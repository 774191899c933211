//! Property tests of dfgnn: every model × schedule × backend against the `f64` reference.
//!
//! The layout follows cubecl's testgen pattern: this crate holds the check bodies, generic over
//! the [`Backend`](dfgnn::Backend), and [`testgen_all!`] turns them into `#[test]`s;
//! `tests/emulator.rs` instantiates them on the SIMT emulator and `tests/gpu.rs` on CUDA device 0
//! (ignored unless asked for with `--ignored`, where a missing device fails them).
//!
//! | module | what |
//! |---|---|
//! | [`gt`], [`agnn`], [`gat`], [`gatv2`] | one check: run forward + backward through the public API, compare every result with the reference |
//! | [`inputs`] | seeded features, output gradients, β, attention vectors |
//! | [`cases`] | shapes, forced plan options, graphs, budgets, proptest strategies |
//! | [`suite`], [`errors`] | the test bodies |
//! | [`report`] | what a check returns: the plan and every comparison |
//!
//! Every comparison is the project's tolerance rule, [`dfgnn_reference::precision`]: error ≤ 2 × the
//! naive f32 error + a floor, both against f64.
//!
//! Every check also requires: no NaN in any result (the emulator fills unwritten device memory
//! with NaN), `lse = −∞` exactly on empty rows, and a clean run (any defect the emulator finds —
//! a race, an out-of-bounds access, a divergent barrier — is an `Err` from the API and fails it).

pub mod agnn;
pub mod cases;
pub mod errors;
pub mod gat;
pub mod gatv2;
pub mod gt;
pub mod inputs;
pub mod report;
pub mod suite;

pub use agnn::{AgnnResults, check_agnn, check_agnn_repeatable, run_agnn};
pub use gat::{GatCase, GatResults, check_gat, check_gat_case, check_gat_repeatable, run_gat};
pub use gatv2::{GatV2Case, GatV2Results, check_gatv2, check_gatv2_case, check_gatv2_repeatable, run_gatv2};
pub use gt::{GtCase, GtResults, check_gt, check_gt_case, check_gt_repeatable, run_gt};
pub use report::Report;

/// Generates the whole suite as `#[test]`s for one backend.
///
/// `$backend` is an expression giving the [`Backend`](dfgnn::Backend) (evaluated in each test),
/// `$budget` a [`cases::Budget`], and any attributes after them go on every test: the GPU suite
/// passes `#[ignore = "needs a CUDA device: ..."]` so that a machine without one lists the tests
/// as ignored rather than passed. Use once per test file:
/// ```ignore
/// dfgnn_proptests::testgen_all!(dfgnn::Backend::emulator(), dfgnn_proptests::cases::Budget::EMULATOR);
/// ```
#[macro_export]
macro_rules! testgen_all {
    ($backend:expr, $budget:expr $(, #[$attr:meta])* $(,)?) => {
        #[test]
        $(#[$attr])*
        fn gt_random_power_law_graphs() {
            $crate::suite::gt_random_power_law_graphs(&$backend, $budget, file!());
        }

        #[test]
        $(#[$attr])*
        fn agnn_random_power_law_graphs() {
            $crate::suite::agnn_random_power_law_graphs(&$backend, $budget, file!());
        }

        #[test]
        $(#[$attr])*
        fn gat_random_power_law_graphs() {
            $crate::suite::gat_random_power_law_graphs(&$backend, $budget, file!());
        }

        #[test]
        $(#[$attr])*
        fn gat_random_bipartite_graphs() {
            $crate::suite::gat_random_bipartite_graphs(&$backend, $budget, file!());
        }

        #[test]
        $(#[$attr])*
        fn gat_every_schedule_and_shape() {
            $crate::suite::every_schedule_and_shape(&$backend, $crate::suite::Model::Gat);
        }

        #[test]
        $(#[$attr])*
        fn gat_forced_options_on_every_schedule() {
            $crate::suite::forced_options_on_every_schedule(&$backend, $crate::suite::Model::Gat);
        }

        #[test]
        $(#[$attr])*
        fn gat_corner_cases() {
            $crate::suite::corner_cases(&$backend, $budget, $crate::suite::Model::Gat);
        }

        #[test]
        $(#[$attr])*
        fn gat_duplicate_hub() {
            $crate::suite::gat_duplicate_hub(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn gat_results_are_bit_identical_run_after_run() {
            $crate::suite::gat_results_are_bit_identical_run_after_run(&$backend, $budget);
        }

        #[test]
        $(#[$attr])*
        fn gatv2_random_power_law_graphs() {
            $crate::suite::gatv2_random_power_law_graphs(&$backend, $budget, file!());
        }

        #[test]
        $(#[$attr])*
        fn gatv2_random_bipartite_graphs() {
            $crate::suite::gatv2_random_bipartite_graphs(&$backend, $budget, file!());
        }

        #[test]
        $(#[$attr])*
        fn gatv2_every_schedule_and_shape() {
            $crate::suite::every_schedule_and_shape(&$backend, $crate::suite::Model::GatV2);
        }

        #[test]
        $(#[$attr])*
        fn gatv2_forced_options_on_every_schedule() {
            $crate::suite::forced_options_on_every_schedule(&$backend, $crate::suite::Model::GatV2);
        }

        #[test]
        $(#[$attr])*
        fn gatv2_corner_cases() {
            $crate::suite::corner_cases(&$backend, $budget, $crate::suite::Model::GatV2);
        }

        #[test]
        $(#[$attr])*
        fn gt_tiles() {
            $crate::suite::tiles(&$backend, $crate::suite::Model::Gt);
        }

        #[test]
        $(#[$attr])*
        fn gt_blocks() {
            $crate::suite::closed_blocks(&$backend, $crate::suite::Model::Gt);
        }

        #[test]
        $(#[$attr])*
        fn agnn_blocks() {
            $crate::suite::closed_blocks(&$backend, $crate::suite::Model::Agnn);
        }

        #[test]
        $(#[$attr])*
        fn agnn_tiles() {
            $crate::suite::tiles(&$backend, $crate::suite::Model::Agnn);
        }

        #[test]
        $(#[$attr])*
        fn gat_tiles() {
            $crate::suite::tiles(&$backend, $crate::suite::Model::Gat);
        }

        #[test]
        $(#[$attr])*
        fn gatv2_tiles() {
            $crate::suite::tiles(&$backend, $crate::suite::Model::GatV2);
        }

        #[test]
        $(#[$attr])*
        fn long_rows_of_repeated_edges() {
            $crate::suite::long_rows_of_repeated_edges(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn gatv2_results_are_bit_identical_run_after_run() {
            $crate::suite::gatv2_results_are_bit_identical_run_after_run(&$backend, $budget);
        }

        #[test]
        $(#[$attr])*
        fn gt_random_bipartite_graphs() {
            $crate::suite::gt_random_bipartite_graphs(&$backend, $budget, file!());
        }

        #[test]
        $(#[$attr])*
        fn gt_every_schedule_and_shape() {
            $crate::suite::every_schedule_and_shape(&$backend, $crate::suite::Model::Gt);
        }

        #[test]
        $(#[$attr])*
        fn agnn_every_schedule_and_shape() {
            $crate::suite::every_schedule_and_shape(&$backend, $crate::suite::Model::Agnn);
        }

        #[test]
        $(#[$attr])*
        fn gt_forced_options_on_every_schedule() {
            $crate::suite::forced_options_on_every_schedule(&$backend, $crate::suite::Model::Gt);
        }

        #[test]
        $(#[$attr])*
        fn agnn_forced_options_on_every_schedule() {
            $crate::suite::forced_options_on_every_schedule(&$backend, $crate::suite::Model::Agnn);
        }

        #[test]
        $(#[$attr])*
        fn gt_corner_cases() {
            $crate::suite::corner_cases(&$backend, $budget, $crate::suite::Model::Gt);
        }

        #[test]
        $(#[$attr])*
        fn agnn_corner_cases() {
            $crate::suite::corner_cases(&$backend, $budget, $crate::suite::Model::Agnn);
        }

        #[test]
        $(#[$attr])*
        fn agnn_zero_vectors_in_rows_of_one_source() {
            $crate::suite::agnn_zero_vectors_in_rows_of_one_source(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn agnn_refuses_bipartite_graphs() {
            $crate::suite::agnn_refuses_bipartite_graphs(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn results_are_bit_identical_run_after_run() {
            $crate::suite::results_are_bit_identical_run_after_run(&$backend, $budget);
        }

        #[test]
        $(#[$attr])*
        fn wide_features_fall_back_or_error() {
            $crate::suite::wide_features_fall_back_or_error(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn bad_inputs_give_clear_errors() {
            $crate::errors::bad_inputs_give_clear_errors(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn zero_heads_or_features_are_errors() {
            $crate::errors::zero_heads_or_features_are_errors(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn wide_heads_run_on_every_schedule() {
            $crate::errors::wide_heads_run_on_every_schedule(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn auto_runs_any_valid_shape() {
            $crate::suite::auto_runs_any_valid_shape(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn fused_backward_keeps_naive_accuracy_at_large_scores() {
            $crate::suite::fused_backward_keeps_naive_accuracy_at_large_scores(&$backend);
        }

        #[test]
        $(#[$attr])*
        fn max_slots_outside_the_kernel_table_run_or_are_refused() {
            $crate::errors::max_slots_outside_the_kernel_table_run_or_are_refused(&$backend);
        }
    };
}
