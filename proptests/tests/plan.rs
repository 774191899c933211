//! Table tests of the planner (`dfgnn::plan`), no kernels run. The expected values are derived
//! by hand from the rules plan.rs documents, worked out in the comments, not copied from its
//! output:
//!
//! - load width 4 when `F % 4 == 0` (and scalar loads are not forced), else 1; `Fv = F / width`;
//! - lanes per head `G = min(next_pow2(Fv), 32)`; slots per head `SPH = max(next_pow2(Fv) / 32, 1)`;
//! - when `SPH = 1` and `H·G ≤ 32`, one slot and `EW = next_pow2(H·G)` lanes per edge, so
//!   `32 / EW` edge groups per warp; else `EW = 32` and
//!   `slots = min(next_pow2(SPH > 1 ? SPH·H : ceil(H / (32 / G))), cap)`;
//! - heads per pass `(slots / SPH)·(EW / G)`, passes `ceil(H / heads per pass)`;
//! - `cap = min(max_slots, hard cap)` with `max_slots` 1 by default, raised to `SPH` for wide
//!   heads but never past the hard cap: 8 for the forward; for the backward 8 with scalar loads
//!   and 4 with `F4` ("with F4 loads they stop at 4 slots"), past which it has no fused backward;
//! - level 1: the split threshold is `E / (SMs · 21)` rounded down to a power of two, within
//!   [16, 2048] (the H200 has 132 SMs); rows of more edges split into `ceil(deg / chunk)` chunks
//!   of `chunk_edges = max(threshold / 4, clamp(threshold, 16, 32))` edges; `Auto` picks
//!   `row_split` when a row or column exceeds the threshold plus one chunk, `row_tiled` otherwise
//!   (`row_group` only when forced),
//!   `edge_parallel` when no fused forward holds the shape;
//! - whole rows go longest first (ties in row order) when the degrees' coefficient of variation
//!   exceeds 1, unless `natural_row_order`;
//! - rows per block: the warps per block by default (4 for the forward's 128 threads, 2 for the
//!   backward's 64); forced values below the warps per block are refused.

use dfgnn::DeviceLimits;
use dfgnn::plan::{
    BLOCK_NODES, CompiledVariant, GraphShape, LaneLayout, MAX_UNFUSED_BACKWARD_DEGREE, MAX_UNFUSED_BACKWARD_HEADS,
    MIN_PART_DEGREE, MIN_UNFUSED_BACKWARD_EDGES, Passes, Plan, PlanOptions, Schedule, TileChoice, TileKernel,
    TileModel, chunk_edges, form_blocks, lane_layout, plan, plan_blocks, plan_column_tiles, plan_gat_backward,
    plan_positive_part, plan_tiles, split_threshold, tasks_per_warp,
};
use dfgnn_device::kernels::{gat, gt};
use dfgnn_graphs::Csr;

/// The planner's view of a graph.
struct Shape {
    rows: Vec<u64>,
    cols: Vec<u64>,
    min_col: Vec<u32>,
    max_col: Vec<u32>,
}

impl Shape {
    fn of(g: &Csr) -> Self {
        let rows = g.offsets().to_vec();
        let cols = g.transpose().offsets().to_vec();
        let min_col = (0..g.num_dst()).map(|r| g.row(r).iter().copied().min().unwrap_or(u32::MAX)).collect();
        let max_col = (0..g.num_dst()).map(|r| g.row(r).iter().copied().max().unwrap_or(0)).collect();
        Self { rows, cols, min_col, max_col }
    }

    fn plan(&self, heads: u32, feat: u32, options: &PlanOptions) -> Plan {
        let shape = GraphShape {
            row_offsets: &self.rows,
            col_offsets: &self.cols,
            row_min_col: &self.min_col,
            row_max_col: &self.max_col,
        };
        plan(gt::VARIANTS, &shape, heads, feat, &DeviceLimits::h200(), options)
            .unwrap_or_else(|e| panic!("H={heads} F={feat} {options:?}: {e}"))
    }
}

/// (width, slots, lanes per head, edge groups per warp, passes) of a layout.
type Summary = (u32, u32, u32, u32, u32);

fn summary(l: &LaneLayout) -> Summary {
    (l.width, l.slots, l.map.head_lanes(), l.map.teams(), l.passes)
}

/// A small ring: every row has 2 edges (the layout does not depend on the graph).
fn ring() -> Csr {
    let rows: Vec<Vec<u32>> = (0..16u32).map(|i| vec![(i + 1) % 16, (i + 5) % 16]).collect();
    Csr::from_rows(16, &rows).unwrap()
}

#[test]
fn lane_layouts_follow_the_documented_rules() {
    let default = PlanOptions::default();
    let scalar = PlanOptions { scalar_loads: true, ..PlanOptions::default() };
    let two = PlanOptions { max_slots: Some(2), ..PlanOptions::default() };
    let four = PlanOptions { max_slots: Some(4), ..PlanOptions::default() };
    let eight = PlanOptions { max_slots: Some(8), ..PlanOptions::default() };
    #[rustfmt::skip]
    let table: [(u32, u32, &PlanOptions, Summary); 16] = [
        // Fv = 1, G = 1, H·G = 1 ≤ 32: 1 slot, EW = 1, 32 edges per warp step.
        (1, 1, &default, (1, 1, 1, 32, 1)),
        // F = 7 is not a multiple of 4: Fv = 7, G = 8, EW = 8, 4 edge groups.
        (1, 7, &default, (1, 1, 8, 4, 1)),
        // H·G = 16: EW = 16, 2 edge groups.
        (2, 7, &default, (1, 1, 8, 2, 1)),
        // Fv = 16, G = 16, H·G = 64 > 32: EW = 32, 1 slot (the default cap), heads per pass
        // 1·(32/16) = 2, 2 passes.
        (4, 64, &default, (4, 1, 16, 1, 2)),
        // ... 8 heads: 4 passes; with 2 slots (ceil(8/2) = 4 wanted): 4 heads per pass; with
        // 4 slots: all 8 in one pass; with 8 slots still 4 (no more are wanted).
        (8, 64, &default, (4, 1, 16, 1, 4)),
        (8, 64, &two, (4, 2, 16, 1, 2)),
        (8, 64, &four, (4, 4, 16, 1, 1)),
        (8, 64, &eight, (4, 4, 16, 1, 1)),
        // Fv = 8, G = 8, H·G = 64: 1 slot, heads per pass 32/8 = 4, 2 passes.
        (8, 32, &default, (4, 1, 8, 1, 2)),
        // Fv = 32, G = 32, H·G = 32 ≤ 32: one slot, one edge per warp.
        (1, 128, &default, (4, 1, 32, 1, 1)),
        // Scalar: Fv = 128, SPH = 4 raises the cap to 4: slots = 4·1 = 4.
        (1, 128, &scalar, (1, 4, 32, 1, 1)),
        // Fv = 64, SPH = 2 raises the cap to 2: one head per pass, 2 passes.
        (2, 256, &default, (4, 2, 32, 1, 2)),
        // ... 8 heads: 8 passes; with 8 slots: min(next_pow2(2·8), 8) = 8, 4 heads per pass.
        (8, 256, &default, (4, 2, 32, 1, 8)),
        (8, 256, &eight, (4, 8, 32, 1, 2)),
        // Fv = 33 (F odd): G = 32, SPH = next_pow2(33) / 32 = 2: 2 slots, one head per pass.
        (3, 33, &default, (1, 2, 32, 1, 3)),
        // Fv = 256, SPH = 8: the cap rises to 8.
        (1, 1024, &default, (4, 8, 32, 1, 1)),
    ];
    let g = Shape::of(&ring());
    for (h, f, options, want) in table {
        let p = g.plan(h, f, options);
        let fwd = p.forward.as_ref().unwrap_or_else(|e| panic!("H={h} F={f}: no fused forward: {e}"));
        assert_eq!(summary(&fwd.layout), want, "forward layout of H={h} F={f} {options:?}\n{p}");
    }
}

#[test]
fn backward_layouts_follow_the_documented_caps() {
    let g = Shape::of(&ring());
    let default = PlanOptions::default();
    let eight = PlanOptions { max_slots: Some(8), ..PlanOptions::default() };
    #[rustfmt::skip]
    let table = [
        // With the default cap of 1 slot the backward is planned as the forward.
        (3, 33, &default, (1, 2, 32, 1, 3)),
        (8, 64, &default, (4, 1, 16, 1, 4)),
        // Fv = 128, SPH = 4 = the F4 hard cap: 4 slots, one head per pass, 2 passes.
        (2, 512, &default, (4, 4, 32, 1, 2)),
        // 8 slots asked for: the backward stops at 4 whatever the load width (2 heads per pass
        // of SPH = 2 for F = 33: 2 passes; F4 at F = 256: 2 heads per pass, 4 passes), where the
        // forward takes 8.
        (3, 33, &eight, (1, 4, 32, 1, 2)),
        (8, 256, &eight, (4, 4, 32, 1, 4)),
    ];
    for (h, f, options, want) in table {
        let p = g.plan(h, f, options);
        for pass in [&p.backward_rows, &p.backward_cols] {
            let pass = pass.as_ref().unwrap_or_else(|e| panic!("H={h} F={f}: no fused backward: {e}"));
            assert_eq!(summary(&pass.layout), want, "backward layout of H={h} F={f} {options:?}\n{p}");
        }
    }
    // Fv = 256 (F = 1024, and 516 rounded up) needs SPH = 8 > 4: no fused backward.
    for f in [516, 1024] {
        let p = g.plan(1, f, &default);
        assert!(p.backward_rows.is_err() && p.backward_cols.is_err(), "F = {f}\n{p}");
        assert!(p.forward.is_ok(), "F = {f}\n{p}");
    }
}

/// 300 nodes: row 0 holds 5000 edges (sources `7k mod 300`, each source 16 or 17 times), every
/// other row i holds i+1, i+2 and 0 (mod 300). Column 0 then has out-degree 318: 299 explicit 0s,
/// 2 from rows 298 and 299 wrapping around, 17 from the hub (k = 0, 300, ..., 4800); every other
/// column at most 2 + 17 = 19.
fn super_node(hub: bool) -> Csr {
    let n = 300u32;
    let mut rows: Vec<Vec<u32>> = (0..n).map(|i| vec![(i + 1) % n, (i + 2) % n, 0]).collect();
    if hub {
        rows[0] = (0..5000u32).map(|k| (7 * k) % n).collect();
    }
    Csr::from_rows(n as usize, &rows).unwrap()
}

#[test]
fn super_node_rows_split_into_chunks() {
    let g = super_node(true);
    assert_eq!((g.degree(0), g.transpose().offsets()[1]), (5000, 318));
    let s = Shape::of(&g);
    let defaults = PlanOptions::default();

    // Auto: 5000 + 299·3 = 5897 edges, 5897 / (132·21) = 2, so the threshold is the least, 16,
    // and chunks hold max(16 / 4, 16) = 16 edges. Row 0 exceeds 16 + 16: row_split,
    // ceil(5000 / 16) = 313 chunks.
    let p = s.plan(2, 32, &defaults);
    assert_eq!(p.schedule, Schedule::RowSplit, "{p}");
    let fwd = p.forward.as_ref().unwrap();
    let split = fwd.rows.split.as_ref().expect("row 0 is split");
    assert_eq!(split.rows, vec![0]);
    assert_eq!(split.chunk_edges, 16);
    assert_eq!(split.first_unit, vec![0, 313]);
    assert_eq!(split.unit_rows, vec![0; 313]);
    assert_eq!(split.unit_chunks, (0..313).collect::<Vec<u32>>());
    assert_eq!(fwd.rows.whole_count, 299);
    assert_eq!(fwd.rows.whole.as_deref(), Some(&(1..300).collect::<Vec<u32>>()[..]));
    // Column 0 (318 > 16) splits into ceil(318 / 16) = 20 chunks. Every other column has 16 or
    // 17 of the hub's edges (7k mod 300 over k < 5000 = 16·300 + 200) and one or two of the ring's,
    // 17 to 19 in all: past 16, so each splits too, into 2 chunks.
    let cols = p.backward_cols.as_ref().unwrap();
    let col_split = cols.rows.split.as_ref().expect("column 0 is split");
    assert_eq!(col_split.rows, (0..300).collect::<Vec<u32>>(), "{p}");
    let expected_first: Vec<u32> = std::iter::once(0).chain((0..300).map(|c| 20 + 2 * c)).collect();
    assert_eq!(col_split.first_unit, expected_first, "{p}");
    assert_eq!(cols.rows.whole_count, 0);
    // The row pass splits as the forward.
    assert_eq!(p.backward_rows.as_ref().unwrap().rows, fwd.rows);

    // Threshold 300, chunks of 100: row 0 in 50 chunks; column 0 (318 > 300) in ceil(318/100) = 4.
    let forced = PlanOptions { split_threshold: Some(300), chunk_edges: Some(100), ..defaults.clone() };
    let p = s.plan(1, 7, &forced);
    assert_eq!(p.schedule, Schedule::RowSplit, "{p}");
    let split = p.forward.as_ref().unwrap().rows.split.clone().unwrap();
    assert_eq!((split.units(), split.rows, split.first_unit), (50, vec![0], vec![0, 50]));
    let cols = p.backward_cols.as_ref().unwrap().rows.split.clone().expect("column 0 is split");
    assert_eq!((cols.rows, cols.first_unit, cols.unit_chunks), (vec![0], vec![0, 4], vec![0, 1, 2, 3]));

    // A threshold at the largest degree splits nothing (rows *above* the threshold split).
    let p = s.plan(1, 7, &PlanOptions { schedule: Schedule::RowSplit, split_threshold: Some(5000), ..defaults });
    assert!(p.forward.as_ref().unwrap().rows.split.is_none(), "{p}");
}

#[test]
fn chunks_hold_a_quarter_of_the_threshold_at_least_32_edges_but_never_more_than_the_threshold() {
    let table = [(0, 16), (8, 16), (16, 16), (32, 32), (64, 32), (128, 32), (256, 64), (2048, 512)];
    for (threshold, chunk) in table {
        assert_eq!(chunk_edges(threshold), chunk, "threshold {threshold}");
    }
    // A graph of as-22july06's size and hub: 4,000 rows of 23 edges and one of 2,390, 94,367
    // edges over 132 SMs: threshold 32, so chunks of 32, and the hub in ceil(2390 / 32) = 75.
    let mut rows: Vec<Vec<u32>> = (0..4000u32).map(|i| (1..=23).map(|k| (i + k) % 4000).collect()).collect();
    rows[7] = (0..2390u32).map(|k| k % 4000).collect();
    let g = Csr::from_rows(4000, &rows).unwrap();
    let s = Shape::of(&g);
    let p = s.plan(4, 64, &PlanOptions::default());
    let split = p.forward.as_ref().unwrap().rows.split.clone().expect("the hub is split");
    assert_eq!((split.chunk_edges, split.rows, split.first_unit), (32, vec![7], vec![0, 75]), "{p}");
}

#[test]
fn auto_picks_row_tiled_when_no_row_or_column_passes_the_threshold() {
    // The ring: every row and column has 2 edges, far below the least threshold (32).
    let s = Shape::of(&ring());
    let p = s.plan(2, 32, &PlanOptions::default());
    assert_eq!(p.schedule, Schedule::RowTiled, "{p}");
    assert!(p.forward.as_ref().unwrap().rows.split.is_none());
    // Forced row_split with the default threshold: nothing to split.
    let p = s.plan(2, 32, &PlanOptions { schedule: Schedule::RowSplit, ..PlanOptions::default() });
    assert_eq!(p.schedule, Schedule::RowSplit);
    assert!(p.forward.as_ref().unwrap().rows.split.is_none(), "{p}");
    // Without the hub, super_node's column 0 still has 302 in-edges (> 32): row_split, with the
    // rows (3 edges each) whole.
    let p = Shape::of(&super_node(false)).plan(2, 32, &PlanOptions::default());
    assert_eq!(p.schedule, Schedule::RowSplit, "{p}");
    assert!(p.forward.as_ref().unwrap().rows.split.is_none(), "{p}");
    assert!(p.backward_cols.as_ref().unwrap().rows.split.is_some(), "{p}");
}

#[test]
fn auto_splits_only_rows_past_the_threshold_by_more_than_a_chunk() {
    // 100 rows of 2 edges, and row 0 of `long` edges to distinct columns (each column keeps at
    // most 3). Threshold 16 (the least), chunks of 16: row_split only when long > 16 + 16.
    let graph = |long: u32| {
        let mut rows: Vec<Vec<u32>> = (0..100u32).map(|i| vec![(i + 1) % 100, (i + 7) % 100]).collect();
        rows[0] = (0..long).collect();
        Csr::from_rows(100, &rows).unwrap()
    };
    let p = Shape::of(&graph(32)).plan(2, 32, &PlanOptions::default());
    assert_eq!(p.schedule, Schedule::RowTiled, "{p}");
    assert!(p.forward.as_ref().unwrap().rows.split.is_none(), "{p}");
    let p = Shape::of(&graph(33)).plan(2, 32, &PlanOptions::default());
    assert_eq!(p.schedule, Schedule::RowSplit, "{p}");
    let split = p.forward.as_ref().unwrap().rows.split.clone().expect("row 0 is split");
    // ceil(33 / 16) = 3 chunks of row 0; the short rows stay whole.
    assert_eq!((split.rows, split.first_unit), (vec![0], vec![0, 3]), "{p}");
}

#[test]
fn the_split_threshold_is_a_fair_share_of_one_wave() {
    // E / (132 · 21 = 2772), rounded down to a power of two, within [16, 2048].
    assert_eq!(split_threshold(367_662, 132), 128); // email-Enron: 132
    assert_eq!(split_threshold(351_386, 132), 64); // gt-cond-mat-2005: 126
    assert_eq!(split_threshold(301_498, 132), 64); // pgp-strong-2009: 108
    assert_eq!(split_threshold(242_502, 132), 64); // gt-astro-ph: 87
    assert_eq!(split_threshold(96_872, 132), 32); // as-22july06: 34
    assert_eq!(split_threshold(31_502, 132), 16); // gt-hep-th: 11, raised to the least
    assert_eq!(split_threshold(10_556, 132), 16); // Cora: 3, raised to the least
    assert_eq!(split_threshold(0, 132), 16);
    assert_eq!(split_threshold(13_961_842, 132), 2048); // pl-1M-d16: 5036, capped
    assert_eq!(split_threshold(1_000_000, 1), 2048);
    assert_eq!(split_threshold(841_468, 132), 256); // pl-64K-d16: 303
    assert_eq!(split_threshold(600_000, 132), 128); // 216
}

#[test]
fn row_groups_partition_the_light_rows() {
    // 1024 bytes of shared memory for 1 head: 1024 / 4 - 4 = 252 scores per group at most, so
    // row 0 (5000 edges) is split; rows 1..300 (3 edges each) form groups of at most 3 rows:
    // [1, 4), [4, 7), ..., [298, 300), 100 groups of at most 9 edges.
    let s = Shape::of(&super_node(true));
    let options = PlanOptions {
        schedule: Schedule::RowGroup,
        group_shared_bytes: Some(1024),
        group_rows: Some(3),
        group_staging: Some(false),
        ..PlanOptions::default()
    };
    let p = s.plan(1, 7, &options);
    let groups = p.groups.as_ref().expect("row_group plans groups");
    let first: Vec<u32> = (0..100).map(|k| 1 + 3 * k).collect();
    let end: Vec<u32> = (0..100).map(|k| (4 + 3 * k).min(300)).collect();
    assert_eq!((groups.first.clone(), groups.end.clone()), (first, end), "{p}");
    assert_eq!(groups.score_capacity, 9);
    assert!(groups.stage_first.is_empty() && groups.stage_capacity == 0);
    assert_eq!(p.forward.as_ref().unwrap().rows.split.as_ref().map(|s| s.rows.clone()), Some(vec![0]), "{p}");
}

#[test]
fn invalid_options_are_refused() {
    let s = Shape::of(&ring());
    let shape =
        GraphShape { row_offsets: &s.rows, col_offsets: &s.cols, row_min_col: &s.min_col, row_max_col: &s.max_col };
    for options in [
        PlanOptions { chunk_edges: Some(0), ..PlanOptions::default() },
        PlanOptions { block_threads: Some(0), ..PlanOptions::default() },
        PlanOptions { block_threads: Some(100), ..PlanOptions::default() },
        PlanOptions { block_threads: Some(1056), ..PlanOptions::default() },
        // Too wide for any fused kernel (Fv = 2000 scalar loads), and a fused schedule forced.
        PlanOptions { schedule: Schedule::RowTiled, scalar_loads: true, ..PlanOptions::default() },
    ] {
        let feat = if options.scalar_loads { 2000 } else { 8 };
        assert!(
            plan(gt::VARIANTS, &shape, 2, feat, &DeviceLimits::h200(), &options).is_err(),
            "{options:?} should be refused"
        );
    }
    // Auto falls back to edge_parallel for the same shape.
    let p = plan(
        gt::VARIANTS,
        &shape,
        2,
        2000,
        &DeviceLimits::h200(),
        &PlanOptions { scalar_loads: true, ..PlanOptions::default() },
    )
    .unwrap();
    assert_eq!(p.schedule, Schedule::EdgeParallel, "{p}");
}

#[test]
fn rows_per_block_default_to_the_warps_per_block() {
    let units =
        |p: &Plan| (p.forward.as_ref().unwrap().units_per_block, p.backward_rows.as_ref().unwrap().units_per_block);
    let ring = Shape::of(&ring());
    // 128 forward threads are 4 warps, 64 backward threads 2.
    assert_eq!(units(&ring.plan(1, 7, &PlanOptions::default())), (4, 2));
    // Forced threads apply to both passes: 256 threads are 8 warps.
    assert_eq!(units(&ring.plan(1, 7, &PlanOptions { block_threads: Some(256), ..PlanOptions::default() })), (8, 8));
    // Forced rows per block, at least the forward's 4 warps, apply to both passes; fewer are
    // refused.
    assert_eq!(units(&ring.plan(1, 7, &PlanOptions { units_per_block: Some(16), ..PlanOptions::default() })), (16, 16));
    let shape = GraphShape {
        row_offsets: &ring.rows,
        col_offsets: &ring.cols,
        row_min_col: &ring.min_col,
        row_max_col: &ring.max_col,
    };
    let options = PlanOptions { units_per_block: Some(2), ..PlanOptions::default() };
    assert!(plan(gt::VARIANTS, &shape, 1, 7, &DeviceLimits::h200(), &options).is_err());
}

#[test]
fn warps_take_several_rows_only_when_rows_are_short_and_many() {
    // Mean degree 2 over 360 k rows of at most 4 edges (mol-16384): 16 rows make 32 edges.
    assert_eq!(tasks_per_warp(735_744, 360_486, 4, 132), 16);
    // Mean degree 51 (batch-1024x120-d50): one row already holds a warp's share.
    assert_eq!(tasks_per_warp(6_279_834, 122_884, 86, 132), 1);
    // Mean degree 10 but rows of up to 1,383 edges (email-Enron): one row per warp, else a
    // warp's run would hold several long rows.
    assert_eq!(tasks_per_warp(367_662, 36_692, 1_383, 132), 1);
    // The same mean with every row short: 32 edges take 3.2 rows, rounded up to 4.
    assert_eq!(tasks_per_warp(367_662, 36_692, 32, 132), 4);
    assert_eq!(tasks_per_warp(367_662, 36_692, 33, 132), 1);
    // Few rows: the warps the device holds at once (132 SMs x 64) keep a row each (Cora, 2,708
    // rows; the power grid, 4,941).
    assert_eq!(tasks_per_warp(10_556, 2_708, 20, 132), 1);
    assert_eq!(tasks_per_warp(13_188, 4_941, 19, 132), 1);
    // 20 k rows of mean 2.7: room for 2 rows per warp only.
    assert_eq!(tasks_per_warp(54_000, 20_000, 19, 132), 2);
    // Capped, and nothing to divide.
    assert_eq!(tasks_per_warp(1_000_000, 1_000_000, 1, 132), 16);
    assert_eq!(tasks_per_warp(0, 100, 0, 132), 1);
    assert_eq!(tasks_per_warp(100, 0, 0, 132), 1);
    assert_eq!(tasks_per_warp(10, 1_000_000, 1, 0), 16);

    // In a plan: a long ring of degree 2 gives each warp 16 rows, in every pass, with a reason.
    let n = 132 * 64 * 16;
    let rows: Vec<Vec<u32>> = (0..n as u32).map(|i| vec![(i + 1) % n as u32, (i + 7) % n as u32]).collect();
    let long_ring = Shape::of(&Csr::from_rows(n, &rows).unwrap());
    let p = long_ring.plan(1, 128, &PlanOptions::default());
    let units = |pass: &Result<dfgnn::plan::PassPlan, String>| pass.as_ref().unwrap().units_per_block;
    assert_eq!((units(&p.forward), units(&p.backward_rows), units(&p.backward_cols)), (64, 32, 32), "{p}");
    assert!(p.reasons.iter().any(|r| r.starts_with("forward: 16 rows per warp")), "{:?}", p.reasons);
    // Forced rows per block still win.
    let forced = long_ring.plan(1, 128, &PlanOptions { units_per_block: Some(4), ..PlanOptions::default() });
    assert_eq!(units(&forced.forward), 4);
}

#[test]
fn whole_rows_go_longest_first_when_degrees_vary_widely() {
    let whole = |g: &Csr, options: &PlanOptions| {
        let p = Shape::of(g).plan(1, 7, options);
        let rows = p.forward.as_ref().unwrap().rows.clone();
        (rows.whole, rows.whole_count, rows.split)
    };
    // Degrees 1, 9, 0, 0, 2, 0: mean 2, standard deviation √(62/6) ≈ 3.2, CV 1.6 > 1: longest
    // first, ties in row order: 1, 4, 0, 2, 3, 5.
    let varied =
        Csr::from_rows(6, &[vec![0], vec![0, 1, 2, 3, 4, 5, 0, 1, 2], vec![], vec![], vec![1, 2], vec![]]).unwrap();
    assert_eq!(whole(&varied, &PlanOptions::default()), (Some(vec![1, 4, 0, 2, 3, 5]), 6, None));
    // ... unless the natural order is asked for.
    let natural = PlanOptions { natural_row_order: true, ..PlanOptions::default() };
    assert_eq!(whole(&varied, &natural), (None, 6, None));
    // Split rows leave the list, the rest keep their order: threshold 2 splits row 1 into
    // ceil(9 / 2) = 5 chunks.
    let split = PlanOptions {
        schedule: Schedule::RowSplit,
        split_threshold: Some(2),
        chunk_edges: Some(2),
        ..PlanOptions::default()
    };
    let (list, count, chunks) = whole(&varied, &split);
    assert_eq!((list, count), (Some(vec![4, 0, 2, 3, 5]), 5));
    let chunks = chunks.expect("row 1 is split");
    assert_eq!((chunks.rows, chunks.first_unit, chunks.unit_chunks), (vec![1], vec![0, 5], vec![0, 1, 2, 3, 4]));
    // Degrees 1, 3, 0, 3, 2: CV ≈ 0.65 ≤ 1, row order.
    let regular = Csr::from_rows(5, &[vec![0], vec![0, 1, 2], vec![], vec![4, 4, 0], vec![1, 2]]).unwrap();
    assert_eq!(whole(&regular, &PlanOptions::default()), (None, 5, None));
}

/// A variant table of the test's own: only the shapes it lists.
struct TestVariant {
    width: u32,
    slots: u32,
    backward: bool,
}

impl CompiledVariant for TestVariant {
    fn width(&self) -> u32 {
        self.width
    }
    fn slots(&self) -> u32 {
        self.slots
    }
    fn has_backward(&self) -> bool {
        self.backward
    }
    fn step(&self, passes: Passes) -> u32 {
        if passes == Passes::Backward && !self.backward { 0 } else { 2 }
    }
    fn has_packed(&self) -> bool {
        false
    }
}

#[test]
fn the_planner_picks_from_the_models_table() {
    // A table of F4 loads with 1 and 4 slots (forward), and 1 slot only for the backward.
    static TABLE: [TestVariant; 3] = [
        TestVariant { width: 4, slots: 4, backward: false },
        TestVariant { width: 1, slots: 1, backward: true },
        TestVariant { width: 4, slots: 1, backward: true },
    ];
    // H = 8, F = 64: Fv = 16, G = 16, ceil(8 / 2) = 4 slots wanted. A cap of 2 slots means 1
    // (no 2 in this table): row 2, 4 passes; a cap of 4 gives row 0, one pass.
    let at = |cap, passes| lane_layout(&TABLE, 8, 64, 4, cap, passes).map(|l| (l.variant, l.slots, l.passes));
    assert_eq!(at(2, Passes::Forward).unwrap(), (2, 1, 4));
    assert_eq!(at(4, Passes::Forward).unwrap(), (0, 4, 1));
    // The backward has only 1 slot of F4 loads.
    assert_eq!(at(4, Passes::Backward).unwrap(), (2, 1, 4));
    // F = 256 (Fv = 64, 2 slots per head) needs 2 slots: the forward takes 4, the backward has none.
    assert_eq!(lane_layout(&TABLE, 1, 256, 4, 4, Passes::Forward).map(|l| l.variant).unwrap(), 0);
    assert!(lane_layout(&TABLE, 1, 256, 4, 4, Passes::Backward).is_err());
    // A layout resolves in the table it was planned from, and is refused by one without its row.
    let layout = lane_layout(&TABLE, 8, 64, 4, 4, Passes::Forward).unwrap();
    assert_eq!(layout.variant_in(&TABLE).unwrap().slots, 4);
    static SHORT: [TestVariant; 1] = [TestVariant { width: 1, slots: 1, backward: true }];
    assert!(layout.variant_in(&SHORT).is_err());
}

#[test]
fn gat_plans_on_its_own_table() {
    // GAT's table has GT's shapes today, so its plans equal GT's row for row.
    let g = Shape::of(&ring());
    let shape =
        GraphShape { row_offsets: &g.rows, col_offsets: &g.cols, row_min_col: &g.min_col, row_max_col: &g.max_col };
    for (h, f) in [(1, 1), (3, 33), (4, 64), (8, 256), (1, 1024)] {
        let options = PlanOptions::default();
        let gt_plan = plan(gt::VARIANTS, &shape, h, f, &DeviceLimits::h200(), &options).unwrap();
        let gat_plan = plan(gat::VARIANTS, &shape, h, f, &DeviceLimits::h200(), &options).unwrap();
        assert_eq!(gt_plan, gat_plan, "H={h} F={f}");
        let layout = gat_plan.forward.as_ref().unwrap().layout;
        let v = layout.variant_in(gat::VARIANTS).unwrap();
        assert_eq!((v.width, v.slots), (layout.width, layout.slots));
    }
}

#[test]
fn short_rows_are_packed_one_per_team() {
    let rows = |g: &Csr, heads, feat, options: &PlanOptions| {
        let p = Shape::of(g).plan(heads, feat, options);
        let (f, b) = (p.forward.as_ref().unwrap(), p.backward_rows.as_ref().unwrap());
        ((f.rows.whole.clone(), f.rows.packed), (b.rows.whole.clone(), b.rows.packed))
    };
    // Degrees 1, 9, 0, 0, 2, 0 (CV 1.6: longest first, 1, 4, 0, 2, 3, 5). H = 1, F = 7: 4 teams
    // of 8 lanes; the forward's step is 4 edges per team, so rows of at most 4·4 = 16 edges are
    // packed (all 6); the backward's step is 2, so rows of at most 8 (all but row 1: the last 5).
    let varied =
        Csr::from_rows(6, &[vec![0], vec![0, 1, 2, 3, 4, 5, 0, 1, 2], vec![], vec![], vec![1, 2], vec![]]).unwrap();
    let sorted = Some(vec![1, 4, 0, 2, 3, 5]);
    let default = PlanOptions::default();
    // Six short rows are far fewer than one wave of warps (132 SMs x 64): packing would only add
    // a launch, so by default nothing is packed.
    use dfgnn::plan::packing_pays;
    assert!(!packing_pays(6, 132) && !packing_pays(132 * 64, 132) && packing_pays(132 * 64 + 1, 132));
    assert_eq!(rows(&varied, 1, 7, &default), ((sorted.clone(), 0), (sorted.clone(), 0)));
    // The same rows 2,000 times over (12,000 rows, more than a wave): by default the forward packs
    // every row (all have at most 16 edges), the backward the 10,000 of at most 8.
    let many = Csr::from_rows(
        12000,
        &(0..12000)
            .map(|r| [vec![0], vec![0, 1, 2, 3, 4, 5, 0, 1, 2], vec![], vec![], vec![1, 2], vec![]][r % 6].clone())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let ((_, f), (_, b)) = rows(&many, 1, 7, &default);
    assert_eq!((f, b), (12000, 10000));
    // Forced, the six rows are packed by the same step bound.
    let below17 = PlanOptions { team_rows_below: Some(17), ..PlanOptions::default() };
    assert_eq!(rows(&varied, 1, 7, &below17).0, (sorted.clone(), 6));
    // Forced: fewer than 3 edges (5 rows), or none.
    let below3 = PlanOptions { team_rows_below: Some(3), ..PlanOptions::default() };
    assert_eq!(rows(&varied, 1, 7, &below3), ((sorted.clone(), 5), (sorted.clone(), 5)));
    let off = PlanOptions { team_rows_below: Some(0), ..PlanOptions::default() };
    assert_eq!(rows(&varied, 1, 7, &off), ((sorted.clone(), 0), (sorted.clone(), 0)));
    // In row order the packed rows move to the end, the others keep their order: fewer than 2
    // edges are rows 0, 2, 3, 5, after rows 1 and 4.
    let natural2 = PlanOptions { team_rows_below: Some(2), natural_row_order: true, ..PlanOptions::default() };
    let moved = Some(vec![1, 4, 0, 2, 3, 5]);
    assert_eq!(rows(&varied, 1, 7, &natural2), ((moved.clone(), 4), (moved, 4)));
    // ... and when they already end the list, it stays implicit: degrees 3, 1, 0 (CV ≈ 0.94,
    // row order), fewer than 2 edges: rows 1 and 2.
    let tail = Csr::from_rows(3, &[vec![0, 1, 2], vec![0], vec![]]).unwrap();
    assert_eq!(rows(&tail, 1, 7, &natural2), ((None, 2), (None, 2)));
    // H = 4, F = 64: one team (32 lanes per edge), so nothing is packed by default.
    assert_eq!(rows(&varied, 4, 64, &default), ((sorted.clone(), 0), (sorted.clone(), 0)));
    // H = 3, F = 33: 2 slots per lane, a variant without packed kernels: nothing is packed, even
    // when forced.
    let all = PlanOptions { team_rows_below: Some(u64::MAX), ..PlanOptions::default() };
    assert_eq!(rows(&varied, 3, 33, &all), ((sorted.clone(), 0), (sorted, 0)));
    // Split rows are never packed, nor the long rows taken before the chunks: threshold 2 splits
    // row 1; chunks of 1 edge put row 4 (2 edges) in the lead; the other 4 are packed.
    let split = PlanOptions {
        schedule: Schedule::RowSplit,
        split_threshold: Some(2),
        chunk_edges: Some(1),
        team_rows_below: Some(u64::MAX),
        ..PlanOptions::default()
    };
    let p = Shape::of(&varied).plan(1, 7, &split);
    let f = &p.forward.as_ref().unwrap().rows;
    assert_eq!((f.whole.clone(), f.lead, f.packed), (Some(vec![4, 0, 2, 3, 5]), 1, 4));
}

impl Shape {
    /// The tiles of a model whose tiles do not restate their maxima (GAT's rule, with both kernels).
    fn tiles(&self, options: &PlanOptions, device: &DeviceLimits) -> dfgnn::Result<Plan> {
        self.tiles_restated(options, device, false)
    }

    fn tiles_restated(&self, options: &PlanOptions, device: &DeviceLimits, restated: bool) -> dfgnn::Result<Plan> {
        self.tiles_of(&TileModel { restated, ..TileModel::GT }, options, device)
    }

    /// The tiles `model`'s forward plans on this graph (GT's variants and shape: 2 heads x 32).
    fn tiles_of(&self, model: &TileModel, options: &PlanOptions, device: &DeviceLimits) -> dfgnn::Result<Plan> {
        let shape = GraphShape {
            row_offsets: &self.rows,
            col_offsets: &self.cols,
            row_min_col: &self.min_col,
            row_max_col: &self.max_col,
        };
        let mut p = plan(gt::VARIANTS, &shape, 2, 32, device, options)?;
        plan_tiles(&mut p, &shape, device, options, model)?;
        Ok(p)
    }
}

impl Shape {
    /// [`Shape::tiles`] (restated, as GT plans them), then GT's closed blocks.
    fn blocks(&self, options: &PlanOptions, device: &DeviceLimits) -> dfgnn::Result<Plan> {
        let mut p = self.tiles_restated(options, device, true)?;
        let shape = GraphShape {
            row_offsets: &self.rows,
            col_offsets: &self.cols,
            row_min_col: &self.min_col,
            row_max_col: &self.max_col,
        };
        plan_blocks(&mut p, &shape, device, options)?;
        Ok(p)
    }

    /// [`form_blocks`]' block starts (then `N`), or `None`.
    fn block_starts(&self) -> Option<Vec<u32>> {
        let shape = GraphShape {
            row_offsets: &self.rows,
            col_offsets: &self.cols,
            row_min_col: &self.min_col,
            row_max_col: &self.max_col,
        };
        form_blocks(&shape).map(|b| b.first)
    }
}

#[test]
fn closed_blocks_pack_the_graphs_that_no_edge_crosses() {
    assert_eq!(BLOCK_NODES, 160);
    // 10 complete graphs of 30 nodes: each closed, packed 5 to a block (150 nodes; a sixth would
    // make 180, past 160): blocks at 0 and 150, then the end (300).
    let s = Shape::of(&complete_batch(10, 30));
    assert_eq!(s.block_starts(), Some(vec![0, 150, 300]));
    // Graphs of exactly 160 nodes take a block each; of 161, none cuts them.
    assert_eq!(Shape::of(&complete_batch(3, 160)).block_starts(), Some(vec![0, 160, 320, 480]));
    assert_eq!(Shape::of(&complete_batch(2, 161)).block_starts(), None);
    // 7 graphs of 40 nodes pack 4 to a block; an edge from row 170 (the fifth graph) to node 125
    // (the fourth) joins those two into one closed range of 80 nodes, which does not fit beside
    // the first three (200 nodes) and starts the second block.
    let rows = |join: bool| {
        let mut rows: Vec<Vec<u32>> = (0..280).map(|r| ((r / 40 * 40)..(r / 40 * 40 + 40)).collect()).collect();
        if join {
            rows[170].push(125);
        }
        Csr::from_rows(280, &rows).unwrap()
    };
    assert_eq!(Shape::of(&rows(false)).block_starts(), Some(vec![0, 160, 280]));
    assert_eq!(Shape::of(&rows(true)).block_starts(), Some(vec![0, 120, 280]));
    // Empty rows and isolated nodes are closed ranges of their own; a graph with no edges cuts
    // into blocks of 160 nodes.
    let empty = Csr::from_rows(300, &vec![Vec::new(); 300]).unwrap();
    assert_eq!(Shape::of(&empty).block_starts(), Some(vec![0, 160, 300]));
    // A bipartite graph (not square) does not cut into closed blocks.
    let bipartite = Csr::from_rows(3, &vec![vec![0u32, 1, 2]; 10]).unwrap();
    assert_eq!(Shape::of(&bipartite).block_starts(), None);
}

#[test]
fn gt_backward_takes_closed_blocks_after_dense_tiles() {
    let device = DeviceLimits::h200();
    let auto = PlanOptions::default();
    let forced = PlanOptions { block_backward: Some(true), ..PlanOptions::default() };
    // 5 complete graphs of 100 nodes: dense tiles (69.8 %, as above), and closed blocks of one
    // graph each (two would make 200 nodes), every pair an edge: 100 % filled, so auto takes them.
    let s = Shape::of(&complete_batch(5, 100));
    let p = s.blocks(&auto, &device).unwrap();
    assert_eq!(p.tiles.as_ref().map(|t| t.kernel), Some(TileKernel::Dense));
    let b = p.blocks.as_ref().expect("auto takes closed blocks on a dense batch");
    assert_eq!((b.first.clone(), b.fill()), (vec![0, 100, 200, 300, 400, 500], 1.0));
    assert!(
        p.reasons.iter().any(|r| r.contains("backward: over 5 closed blocks of at most 160 nodes")),
        "{:?}",
        p.reasons
    );
    assert!(p.summary().contains("backward over 5 closed blocks"), "{}", p.summary());
    // Forbidden: none; tiles off: none under auto, an error when forced.
    let off = PlanOptions { block_backward: Some(false), ..PlanOptions::default() };
    assert_eq!(s.blocks(&off, &device).unwrap().blocks, None);
    let untiled = PlanOptions { tiles: Some(TileChoice::Off), ..PlanOptions::default() };
    let p = s.blocks(&untiled, &device).unwrap();
    assert_eq!(p.blocks, None);
    assert!(p.reasons.iter().any(|r| r.contains("no dense tiles")), "{:?}", p.reasons);
    let no_tiles = PlanOptions { tiles: Some(TileChoice::Off), ..forced.clone() };
    let e = s.blocks(&no_tiles, &device).unwrap_err().to_string();
    assert!(e.contains("closed blocks") && e.contains("no dense tiles"), "{e}");
    // A forced schedule takes none unless tiles or blocks are forced.
    let tiled = PlanOptions { schedule: Schedule::RowTiled, ..PlanOptions::default() };
    assert_eq!(s.blocks(&tiled, &device).unwrap().blocks, None);
    let tiled = PlanOptions { schedule: Schedule::RowTiled, tiles: Some(TileChoice::Dense), ..forced.clone() };
    assert!(s.blocks(&tiled, &device).unwrap().blocks.is_some());
    // 8 graphs of 40 nodes, each row 12 edges (its own node and the next 11 of its graph), dense
    // tiles forced: blocks of 4 graphs (160 nodes), 3,840 edges over 2 x 160² pairs = 7.5 %:
    // under 25 %, none under auto, and forced they run.
    let rows: Vec<Vec<u32>> = (0..320u32).map(|r| (0..12).map(|d| r / 40 * 40 + (r % 40 + d) % 40).collect()).collect();
    let s = Shape::of(&Csr::from_rows(320, &rows).unwrap());
    let dense = PlanOptions { tiles: Some(TileChoice::Dense), ..PlanOptions::default() };
    let p = s.blocks(&dense, &device).unwrap();
    assert_eq!(p.blocks, None);
    let why = "2 closed blocks of at most 160 nodes, 7.5 % filled: under 25 %";
    assert!(p.reasons.iter().any(|r| r.contains(why)), "{:?}", p.reasons);
    let both = PlanOptions { block_backward: Some(true), ..dense };
    assert_eq!(s.blocks(&both, &device).unwrap().blocks.map(|b| b.first), Some(vec![0, 160, 320]));
    // Graphs of 161 nodes: dense tiles, no closed blocks (forced: an error).
    let wide = Shape::of(&complete_batch(2, 161));
    let p = wide.blocks(&auto, &device).unwrap();
    assert!(p.tiles.is_some() && p.blocks.is_none());
    assert!(p.reasons.iter().any(|r| r.contains("does not cut into closed blocks of at most 160")), "{:?}", p.reasons);
    assert!(wide.blocks(&forced, &device).is_err());
    // Too little shared memory for a block (it takes 151,040 bytes): none, and forced an error.
    let small = DeviceLimits { max_shared_per_block: 128 * 1024, ..DeviceLimits::h200() };
    let s = Shape::of(&complete_batch(5, 100));
    assert_eq!(s.blocks(&auto, &small).unwrap().blocks, None);
    assert!(s.blocks(&forced, &small).unwrap_err().to_string().contains("bytes of shared memory"));
}

/// A block-diagonal batch: `graphs` complete graphs (self loops included) of `nodes` nodes each.
fn complete_batch(graphs: usize, nodes: usize) -> Csr {
    let rows: Vec<Vec<u32>> = (0..graphs * nodes)
        .map(|r| {
            let first = (r / nodes * nodes) as u32;
            (first..first + nodes as u32).collect()
        })
        .collect();
    Csr::from_rows(graphs * nodes, &rows).unwrap()
}

#[test]
fn tiles_cut_rows_at_the_graphs_and_the_tile_size() {
    // 5 complete graphs of 100 nodes: each a segment of its own (no row reaches the next graph),
    // of more than 64 rows, so cut into tiles of 64 and 36 rows over its 100 sources: 10 tiles,
    // 50,000 edges over 10 x 64 x 112 = 71,680 computed pairs (sources rounded up to 16): 69.8 %
    // (over 25 %: auto takes the dense kernel).
    let s = Shape::of(&complete_batch(5, 100));
    let p = s.tiles(&PlanOptions::default(), &DeviceLimits::h200()).unwrap();
    let t = p.tiles.as_ref().expect("auto takes dense tiles on a dense batch");
    assert_eq!(t.kernel, TileKernel::Dense);
    assert_eq!(t.first, vec![0, 64, 100, 164, 200, 264, 300, 364, 400, 464]);
    assert_eq!(t.end, vec![64, 100, 164, 200, 264, 300, 364, 400, 464, 500]);
    assert_eq!(t.src, vec![0, 0, 100, 100, 200, 200, 300, 300, 400, 400]);
    assert_eq!(t.src_count, vec![100; 10]);
    assert_eq!(t.max_edges, 6_400);
    assert!((t.fill() - 50_000.0 / 71_680.0).abs() < 1e-12);
    assert!(p.summary().contains("forward over 10 dense tiles"), "{}", p.summary());
    // 40 graphs of 10 nodes: whole graphs packed 6 to a tile (60 rows; a 7th makes 70 > 64), so
    // 7 tiles (6 x 6 graphs + 4), over 6 x 64 + 48 rounded sources: 4,000 edges over
    // 64 x 432 = 27,648 pairs, 14.5 %, under 25 %; 10 edges per staged source row (at least 8),
    // so auto takes the per-edge kernel.
    let s = Shape::of(&complete_batch(40, 10));
    let p = s.tiles(&PlanOptions::default(), &DeviceLimits::h200()).unwrap();
    let t = p.tiles.as_ref().expect("auto takes per-edge tiles on a sparser batch");
    assert_eq!((t.kernel, t.end.clone()), (TileKernel::Edges, vec![60, 120, 180, 240, 300, 360, 400]));
    assert_eq!((t.max_edges, t.edge_cap(), t.source_cap()), (600, 600, 60));
    // Its shared memory: 5,328 bytes of edges, scores and rows (8 x 600 + 4 x 68 + 4 x 64), then
    // GT's query chunk (9,216), key or value chunk (4 x 36 x 60 = 8,640) and GATv2's attention
    // chunk (128); GAT's kernel stages neither query nor attention chunk.
    assert_eq!(t.shared_bytes(), 5_328 + 9_216 + 8_640 + 128);
    let gat = s.tiles_of(&TileModel::GAT, &PlanOptions::default(), &DeviceLimits::h200()).unwrap();
    let g = gat.tiles.as_ref().expect("GAT takes the same per-edge tiles");
    assert_eq!((g.end.clone(), g.shared_bytes()), (t.end.clone(), 5_328 + 8_640));
    assert!(
        p.reasons.iter().any(|r| r.contains("over 7 tiles") && r.contains("14.5 % filled") && r.contains("(per-edge)")),
        "{:?}",
        p.reasons
    );
    assert!(p.summary().contains("forward over 7 per-edge tiles"), "{}", p.summary());
    // A model whose tiles restate their maxima (GT's) needs 16 edges per staged row: none here.
    let p = s.tiles_restated(&PlanOptions::default(), &DeviceLimits::h200(), true).unwrap();
    assert_eq!(p.tiles, None);
    assert!(p.reasons.iter().any(|r| r.contains("under 16 edges per staged source")), "{:?}", p.reasons);
    // 40 graphs of 6 nodes (6 edges per staged row, under 8) take no tiles, and say why.
    let s6 = Shape::of(&complete_batch(40, 6));
    let p6 = s6.tiles(&PlanOptions::default(), &DeviceLimits::h200()).unwrap();
    assert_eq!(p6.tiles, None);
    assert!(
        p6.reasons.iter().any(|r| r.contains("not over tiles") && r.contains("6.0 edges per staged source")),
        "{:?}",
        p6.reasons
    );
    // Forced, the dense kernel runs over the same tiles.
    let forced = PlanOptions { tiles: Some(TileChoice::Dense), ..PlanOptions::default() };
    let p = s.tiles(&forced, &DeviceLimits::h200()).unwrap();
    assert_eq!(
        p.tiles.as_ref().map(|t| (t.kernel, t.end.clone())),
        Some((TileKernel::Dense, vec![60, 120, 180, 240, 300, 360, 400]))
    );
    // A complete graph of 200 nodes: the dense kernel's tiles are 64 rows; the per-edge kernel's
    // at most 8,192 edges, so 40 rows (8,000 edges).
    let s = Shape::of(&complete_batch(1, 200));
    let p = s.tiles(&PlanOptions::default(), &DeviceLimits::h200()).unwrap();
    assert_eq!(p.tiles.as_ref().map(|t| (t.kernel, t.end.clone())), Some((TileKernel::Dense, vec![64, 128, 192, 200])));
    let forced = PlanOptions { tiles: Some(TileChoice::Edges), ..PlanOptions::default() };
    let p = s.tiles(&forced, &DeviceLimits::h200()).unwrap();
    let t = p.tiles.as_ref().unwrap();
    assert_eq!((t.kernel, t.end.clone(), t.max_edges), (TileKernel::Edges, vec![40, 80, 120, 160, 200], 8_000));
    // A row of more edges than a per-edge tile holds (repeated edges): no per-edge tiles.
    let long = Csr::from_rows(2, &[vec![0; 8_193], vec![1]]).unwrap();
    let e = Shape::of(&long).tiles(&forced, &DeviceLimits::h200()).unwrap_err().to_string();
    assert!(e.contains("more than 8192 edges"), "{e}");
}

#[test]
fn tiles_only_under_auto_or_when_forced() {
    let s = Shape::of(&complete_batch(3, 64));
    let device = DeviceLimits::h200();
    for schedule in [Schedule::RowTiled, Schedule::RowSplit, Schedule::RowGroup] {
        let p = s.tiles(&PlanOptions { schedule, ..PlanOptions::default() }, &device).unwrap();
        assert_eq!(p.tiles, None, "{schedule} is forced");
        let forced = PlanOptions { schedule, tiles: Some(TileChoice::Dense), ..PlanOptions::default() };
        assert!(s.tiles(&forced, &device).unwrap().tiles.is_some(), "{schedule} with tiles forced");
    }
    let off = PlanOptions { tiles: Some(TileChoice::Off), ..PlanOptions::default() };
    assert_eq!(s.tiles(&off, &device).unwrap().tiles, None);
    // The unfused schedules have no fused forward to stand in for: forcing tiles there is an
    // error, and so is a graph whose row spans more than a tile, or a device without the
    // shared memory.
    for schedule in [Schedule::EdgeParallel, Schedule::Unfused] {
        let forced = PlanOptions { schedule, tiles: Some(TileChoice::Dense), ..PlanOptions::default() };
        let e = s.tiles(&forced, &device).unwrap_err().to_string();
        assert!(e.contains("no fused forward"), "{e}");
    }
    let forced = PlanOptions { tiles: Some(TileChoice::Dense), ..PlanOptions::default() };
    let wide = Shape::of(&complete_batch(1, 257));
    let e = wide.tiles(&forced, &device).unwrap_err().to_string();
    assert!(e.contains("span more than 256"), "{e}");
    assert_eq!(wide.tiles(&PlanOptions::default(), &device).unwrap().tiles, None);
    let small = DeviceLimits { max_shared_per_block: 48 * 1024, ..DeviceLimits::h200() };
    let e = s.tiles(&forced, &small).unwrap_err().to_string();
    assert!(e.contains("bytes of shared memory"), "{e}");
    assert_eq!(s.tiles(&PlanOptions::default(), &small).unwrap().tiles, None);
}

impl Shape {
    /// [`Shape::tiles`], then the backward column pass's tiles of `csc` (the transpose's shape).
    fn column_tiles(&self, csc: &Shape, options: &PlanOptions, device: &DeviceLimits) -> Plan {
        self.column_tiles_with(self.tiles(options, device).unwrap(), csc, options, device)
    }

    /// [`Self::column_tiles`] of GAT (whose kernel it is) at one head of `feat` features.
    fn column_tiles_at(&self, csc: &Shape, feat: u32, device: &DeviceLimits) -> Plan {
        let shape = GraphShape {
            row_offsets: &self.rows,
            col_offsets: &self.cols,
            row_min_col: &self.min_col,
            row_max_col: &self.max_col,
        };
        let auto = PlanOptions::default();
        let mut p = plan(gat::VARIANTS, &shape, 1, feat, device, &auto).unwrap();
        plan_tiles(&mut p, &shape, device, &auto, &TileModel::GAT).unwrap();
        self.column_tiles_with(p, csc, &auto, device)
    }

    fn column_tiles_with(&self, mut p: Plan, csc: &Shape, options: &PlanOptions, device: &DeviceLimits) -> Plan {
        let shape = GraphShape {
            row_offsets: &csc.rows,
            col_offsets: &csc.cols,
            row_min_col: &csc.min_col,
            row_max_col: &csc.max_col,
        };
        plan_column_tiles(&mut p, &shape, device, options);
        p
    }
}

/// The transpose of `g` as a CSR (its rows the source nodes).
fn transposed(g: &Csr) -> Csr {
    let edges: Vec<(u32, u32)> = g.coo_rows().iter().zip(g.columns()).map(|(&r, &c)| (c, r)).collect();
    Csr::from_edges(g.num_src(), g.num_dst(), &edges).unwrap()
}

#[test]
fn column_tiles_cut_the_csc_under_auto_or_when_forced() {
    let device = DeviceLimits::h200();
    let auto = PlanOptions::default();
    // 40 complete graphs of 10 nodes are symmetric: the CSC cuts into the CSR's 7 tiles, at 10
    // edges per staged row (at least 8), so auto takes them.
    let g = complete_batch(40, 10);
    let (s, t) = (Shape::of(&g), Shape::of(&transposed(&g)));
    let p = s.column_tiles(&t, &auto, &device);
    let c = p.column_tiles.as_ref().expect("auto takes column tiles on a sparser batch");
    assert_eq!((c.kernel, c.end.clone()), (TileKernel::Edges, vec![60, 120, 180, 240, 300, 360, 400]));
    assert_eq!(Some(c), p.tiles.as_ref(), "a symmetric graph's CSC cuts as its CSR");
    assert!(p.reasons.iter().any(|r| r.contains("backward columns: over 7 tiles")), "{:?}", p.reasons);
    assert!(p.summary().contains("backward columns over 7 tiles"), "{}", p.summary());
    // Off, or a forced schedule, takes none; forcing tiles takes them on any schedule with a
    // fused backward.
    let off = PlanOptions { tiles: Some(TileChoice::Off), ..PlanOptions::default() };
    assert_eq!(s.column_tiles(&t, &off, &device).column_tiles, None);
    let tiled = PlanOptions { schedule: Schedule::RowTiled, ..PlanOptions::default() };
    assert_eq!(s.column_tiles(&t, &tiled, &device).column_tiles, None);
    let forced = PlanOptions { schedule: Schedule::RowTiled, tiles: Some(TileChoice::Edges), ..PlanOptions::default() };
    assert!(s.column_tiles(&t, &forced, &device).column_tiles.is_some());
    // 40 graphs of 6 nodes: 6 edges per staged row, under 8: none under auto, and the reasons
    // say why; forced, they run.
    let g6 = complete_batch(40, 6);
    let (s6, t6) = (Shape::of(&g6), Shape::of(&transposed(&g6)));
    let p6 = s6.column_tiles(&t6, &auto, &device);
    assert_eq!(p6.column_tiles, None);
    assert!(
        p6.reasons.iter().any(|r| r.contains("backward columns: not over tiles of the CSC") && r.contains("6.0 edges")),
        "{:?}",
        p6.reasons
    );
    let edges = PlanOptions { tiles: Some(TileChoice::Edges), ..PlanOptions::default() };
    assert!(s6.column_tiles(&t6, &edges, &device).column_tiles.is_some());
    // 600 rows over the same 3 sources: the CSR cuts into tiles, the CSC does not (each source
    // reaches 600 rows): the forward takes tiles, the column pass none, even when forced.
    let star = Csr::from_rows(3, &vec![vec![0u32, 1, 2]; 600]).unwrap();
    let (s, t) = (Shape::of(&star), Shape::of(&transposed(&star)));
    let p = s.column_tiles(&t, &edges, &device);
    assert!(p.tiles.is_some());
    assert_eq!(p.column_tiles, None);
    assert!(p.reasons.iter().any(|r| r.contains("span more than 256")), "{:?}", p.reasons);
    // Too little shared memory for the tiles: none, and no error (the fused pass stands in).
    let small = DeviceLimits { max_shared_per_block: 48 * 1024, ..DeviceLimits::h200() };
    let g = complete_batch(3, 64);
    let p = Shape::of(&g).column_tiles(&Shape::of(&transposed(&g)), &auto, &small);
    assert_eq!(p.column_tiles, None);
    assert!(p.reasons.iter().any(|r| r.contains("bytes of shared memory")), "{:?}", p.reasons);
    // GAT's column kernel stages dO of all the head's features: at 128 features the batch of 40
    // graphs of 10 nodes takes it (its 10 sources' rows fit); past 512 features none (the fused
    // backward, whose column pass it replaces, holds no more, nor do the kernel's lanes); and at
    // 512 features a tile of 200 sources' dO (400 KB) does not fit.
    let g = complete_batch(40, 10);
    let (s, t) = (Shape::of(&g), Shape::of(&transposed(&g)));
    assert!(s.column_tiles_at(&t, 128, &device).column_tiles.is_some());
    assert_eq!(s.column_tiles_at(&t, 576, &device).column_tiles, None);
    let g = complete_batch(1, 200);
    let (s, t) = (Shape::of(&g), Shape::of(&transposed(&g)));
    assert!(s.column_tiles_at(&t, 32, &device).column_tiles.is_some());
    let p = s.column_tiles_at(&t, 512, &device);
    assert_eq!(p.column_tiles, None);
    assert!(p.reasons.iter().any(|r| r.contains("a tile of the CSC needs")), "{:?}", p.reasons);
}

impl Shape {
    /// GAT's plan at 4×64 with [`plan_positive_part`] applied.
    fn positive_part(&self, options: &PlanOptions) -> Plan {
        let shape = GraphShape {
            row_offsets: &self.rows,
            col_offsets: &self.cols,
            row_min_col: &self.min_col,
            row_max_col: &self.max_col,
        };
        let mut p = plan(gat::VARIANTS, &shape, 4, 64, &DeviceLimits::h200(), options).unwrap();
        plan_positive_part(&mut p, &shape, options);
        p
    }
}

/// A graph of `rows` rows of `degree` edges each over as many sources.
fn regular(rows: u32, degree: u32) -> Csr {
    let adjacency: Vec<Vec<u32>> = (0..rows).map(|i| (0..degree).map(|d| (i + d * 7) % rows).collect()).collect();
    Csr::from_rows(rows as usize, &adjacency).unwrap()
}

#[test]
fn the_positive_part_is_summed_from_a_mean_degree_on_unless_forced() {
    let auto = PlanOptions::default();
    let (below, at) =
        (Shape::of(&regular(1000, MIN_PART_DEGREE as u32 - 1)), Shape::of(&regular(1000, MIN_PART_DEGREE as u32)));
    let p = below.positive_part(&auto);
    assert!(!p.positive_part);
    assert!(
        p.reasons.iter().any(|r| r.contains("does not sum the positive part")
            && r.contains(&format!("{} edges over 1000 rows", 1000 * (MIN_PART_DEGREE - 1)))),
        "{:?}",
        p.reasons
    );
    let p = at.positive_part(&auto);
    assert!(p.positive_part);
    assert!(p.reasons.iter().any(|r| r.contains("training forward: sums the positive part")), "{:?}", p.reasons);
    // Forced either way, whatever the degree.
    let on = PlanOptions { positive_part: Some(true), ..PlanOptions::default() };
    let off = PlanOptions { positive_part: Some(false), ..PlanOptions::default() };
    assert!(below.positive_part(&on).positive_part);
    assert!(!at.positive_part(&off).positive_part);
    // The schedules whose forward has none: the baselines and row_group.
    for schedule in [Schedule::Unfused, Schedule::EdgeParallel, Schedule::RowGroup] {
        let forced = PlanOptions { schedule, positive_part: Some(true), ..PlanOptions::default() };
        assert!(!at.positive_part(&forced).positive_part, "{schedule:?}");
    }
    // The other models' plans never sum it.
    assert!(!at.plan(4, 64, &auto).positive_part);
}

impl Shape {
    /// GAT's plan as `Gat::new` makes it (tiles, column tiles, the positive part), then
    /// [`plan_gat_backward`].
    fn gat_backward(&self, csc: &Shape, heads: u32, feat: u32, options: &PlanOptions) -> Plan {
        let device = DeviceLimits::h200();
        let shape = GraphShape {
            row_offsets: &self.rows,
            col_offsets: &self.cols,
            row_min_col: &self.min_col,
            row_max_col: &self.max_col,
        };
        let mut p = plan(gat::VARIANTS, &shape, heads, feat, &device, options).unwrap();
        plan_tiles(&mut p, &shape, &device, options, &TileModel::GAT).unwrap();
        let mut p = self.column_tiles_with(p, csc, options, &device);
        plan_positive_part(&mut p, &shape, options);
        plan_gat_backward(&mut p, &shape, options);
        p
    }
}

#[test]
fn gat_backward_runs_unfused_under_auto_on_large_graphs_of_short_rows_and_few_heads() {
    let auto = PlanOptions::default();
    let rows = (MIN_UNFUSED_BACKWARD_EDGES / 2) as u32;
    let case = |g: &Csr, heads: u32, feat: u32, options: &PlanOptions| {
        Shape::of(g).gat_backward(&Shape::of(&transposed(g)), heads, feat, options)
    };
    let reason = |p: &Plan, what: &str| {
        assert!(p.reasons.iter().any(|r| r.starts_with("backward: ") && r.contains(what)), "{what}: {:?}", p.reasons);
    };
    // Rows of 2 edges, 2^17 edges in all, at 1x128 and 4x64: unfused.
    let short = regular(rows, 2);
    for (heads, feat) in [(1, 128), (MAX_UNFUSED_BACKWARD_HEADS, 64)] {
        let p = case(&short, heads, feat, &auto);
        assert!(p.unfused_backward, "H={heads}: {:?}", p.reasons);
        reason(&p, "unfused after the fused forward");
        assert!(p.summary().ends_with("unfused backward)"), "{}", p.summary());
    }
    // More heads, fewer edges, longer rows: fused, each for its reason.
    let p = case(&short, MAX_UNFUSED_BACKWARD_HEADS * 2, 32, &auto);
    assert!(!p.unfused_backward);
    reason(&p, "heads: more than");
    let p = case(&regular(rows - 1, 2), 1, 128, &auto);
    assert!(!p.unfused_backward);
    reason(&p, "edges: fewer than");
    let p = case(&regular(rows, MAX_UNFUSED_BACKWARD_DEGREE as u32 + 1), 1, 128, &auto);
    assert!(!p.unfused_backward);
    reason(&p, "per row");
    // At the degree bound itself: unfused.
    assert!(case(&regular(rows, MAX_UNFUSED_BACKWARD_DEGREE as u32), 1, 128, &auto).unfused_backward);
    // A hub row makes auto split rows: the unfused kernels would take it whole, so no decision.
    let mut adjacency: Vec<Vec<u32>> = (0..rows).map(|i| vec![i, (i + 7) % rows]).collect();
    adjacency[0] = (0..5000).collect();
    let hub = Csr::from_rows(rows as usize, &adjacency).unwrap();
    let p = case(&hub, 1, 128, &auto);
    assert_eq!(p.schedule, Schedule::RowSplit);
    assert!(!p.unfused_backward && !p.reasons.iter().any(|r| r.starts_with("backward: ")), "{:?}", p.reasons);
    // Forced either way, and forced schedules decide nothing by themselves.
    let on = PlanOptions { unfused_backward: Some(true), ..PlanOptions::default() };
    let off = PlanOptions { unfused_backward: Some(false), ..PlanOptions::default() };
    assert!(!case(&short, 1, 128, &off).unfused_backward);
    let p = case(&regular(rows, 8), 8, 32, &on);
    assert!(p.unfused_backward);
    reason(&p, "forced");
    for schedule in [Schedule::RowTiled, Schedule::RowSplit, Schedule::RowGroup] {
        let forced = PlanOptions { schedule, ..PlanOptions::default() };
        assert!(!case(&short, 1, 128, &forced).unfused_backward, "{schedule:?}");
        let both = PlanOptions { schedule, unfused_backward: Some(true), ..PlanOptions::default() };
        assert!(case(&short, 1, 128, &both).unfused_backward, "{schedule:?}");
    }
    for schedule in [Schedule::Unfused, Schedule::EdgeParallel] {
        let both = PlanOptions { schedule, unfused_backward: Some(true), ..PlanOptions::default() };
        assert!(!case(&short, 1, 128, &both).unfused_backward, "{schedule:?}: no fused forward");
    }
    // The other models' planner never decides it.
    assert!(!Shape::of(&short).plan(1, 128, &auto).unfused_backward);
}
