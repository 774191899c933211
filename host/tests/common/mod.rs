//! Pieces the models' host tests share (`mod common;` in each): the test graph, the failure
//! report of a set of checks, and the plan options and seeds attention dropout is checked under.

#![allow(dead_code, reason = "each test file uses its own subset")]

use dfgnn::{Error, Plan, PlanOptions, Schedule};
use dfgnn_graphs::Csr;
use dfgnn_reference::Check;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A graph of `n_dst` rows over `n_src` sources with empty rows, a super row, a duplicated self
/// loop and varied degrees.
pub fn graph(rng: &mut ChaCha8Rng, n_dst: usize, n_src: usize) -> Csr {
    let mut edges = Vec::new();
    for i in 0..n_dst {
        let d = match i % 5 {
            0 => 0,
            1 => 1,
            2 => rng.random_range(2..9),
            3 => rng.random_range(9..40),
            _ => 3,
        };
        for _ in 0..d {
            edges.push((i as u32, rng.random_range(0..n_src as u32)));
        }
    }
    for _ in 0..150 {
        edges.push((7, rng.random_range(0..n_src as u32)));
    }
    edges.push((3, 3));
    edges.push((3, 3));
    Csr::from_edges(n_dst, n_src, &edges).unwrap()
}

/// Panics with every check when one failed.
pub fn assert_passed(checks: &[Check], context: &str) {
    if !checks.iter().all(Check::passed) {
        let lines: Vec<String> = checks.iter().map(Check::to_string).collect();
        panic!("{context}\n{}", lines.join("\n"));
    }
}

/// Split rows: chunks of 10 edges past 16.
pub fn split_options() -> PlanOptions {
    PlanOptions { schedule: Schedule::RowSplit, split_threshold: Some(16), chunk_edges: Some(10), ..Default::default() }
}

/// `row_group` with groups of 3 rows and the long rows split.
pub fn group_options() -> PlanOptions {
    PlanOptions { schedule: Schedule::RowGroup, group_rows: Some(3), split_threshold: Some(20), ..Default::default() }
}

/// The cases attention dropout is checked on, each `(options, p, seed)`: every fused schedule
/// (auto, split rows, row groups, short rows packed at the planner's step bound and every whole
/// row packed where the variant can: the test graph is far smaller than the wave of warps past
/// which the plan packs by itself), then the baselines, which must refuse dropout.
pub fn dropout_cases(heads: u32) -> Vec<(PlanOptions, f32, u64)> {
    let seed = 17 + u64::from(heads);
    let packed = PlanOptions { team_rows_below: Some(17), ..Default::default() };
    let all_packed = PlanOptions { team_rows_below: Some(u64::MAX), ..Default::default() };
    // A forced unfused backward keeps the fused passes under dropout.
    let unfused_backward = PlanOptions { unfused_backward: Some(true), ..Default::default() };
    let mut cases: Vec<_> =
        [PlanOptions::default(), split_options(), group_options(), packed, all_packed, unfused_backward]
            .into_iter()
            .map(|o| (o, 0.3, seed))
            .collect();
    for schedule in [Schedule::RowGroup, Schedule::EdgeParallel, Schedule::Unfused] {
        cases.push((PlanOptions { schedule, ..Default::default() }, 0.5, 3));
    }
    cases
}

/// The shapes dropout is checked at (odd H and F, one and several teams per warp: at 1 × 7 the
/// plans that force packing pack short rows, which [`assert_packs`] checks).
pub const DROPOUT_SHAPES: [(u32, u32); 3] = [(1, 7), (3, 33), (4, 64)];

/// Asserts that at 1 × 7 on the test graph a fused plan that forces packing, without split rows
/// or groups, packs rows in its forward and its backward row pass (so the dropout cases run the
/// packed kernels).
pub fn assert_packs(heads: u32, feat: u32, options: &PlanOptions, plan: &Plan, context: &str) {
    let forced = options.team_rows_below.is_some_and(|n| n > 0);
    if (heads, feat) != (1, 7) || !forced || options.schedule != Schedule::Auto || options.split_threshold.is_some() {
        return;
    }
    for (pass, rows) in [("forward", &plan.forward), ("backward rows", &plan.backward_rows)] {
        let packed = rows.as_ref().map_or(0, |p| p.rows.packed);
        assert!(packed > 0, "{context}: the {pass} pass packs no row");
    }
}

/// Probabilities outside `[0, 1)`, which `set_dropout` must refuse.
pub const BAD_DROPOUT: [f32; 3] = [-0.1, 1.0, f32::NAN];

/// Asserts that a baseline schedule's forward refused dropout with an error naming it.
pub fn assert_dropout_refused<T>(result: dfgnn::Result<T>, context: &str) {
    match result {
        Err(Error::Unsupported { what }) if what.contains("dropout") => {}
        Err(e) => panic!("{context}: expected Unsupported naming dropout, got {e}"),
        Ok(_) => panic!("{context}: dropout on a baseline schedule should be an error"),
    }
}
