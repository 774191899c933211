//! What the suites run: feature shapes, forced plan options, graphs, size budgets, and the
//! proptest strategies over all of them.

use dfgnn::{PlanOptions, Schedule, TileChoice};
use dfgnn_graphs::generate::molecule_batch;
use dfgnn_graphs::strategy::{PowerLawCase, power_law_case};
use dfgnn_graphs::{Csr, corner};
use proptest::prelude::*;
use proptest::sample::select;

/// Every head count the suites must cover.
pub const HEADS: [u32; 4] = [1, 2, 3, 8];
/// Every feature count the suites must cover (odd, one past a power of two, vector and scalar
/// loads, one and several register slots per head).
pub const FEATS: [u32; 8] = [1, 7, 32, 33, 64, 100, 128, 256];

/// `H × F` shapes that take every value of [`HEADS`] and [`FEATS`] at least once, without the
/// whole cross product (a unit test checks the coverage).
pub const SHAPES: [(u32, u32); 11] =
    [(1, 1), (1, 7), (2, 7), (3, 32), (8, 33), (1, 64), (8, 64), (2, 100), (3, 128), (1, 256), (8, 256)];

/// A few shapes for the sweeps of forced options: scalar and vector loads, one and several
/// slots, several edge groups per warp and several passes.
pub const FORCED_SHAPES: [(u32, u32); 4] = [(1, 7), (3, 33), (8, 64), (2, 256)];

/// Size limits of one backend's suites.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Cases per proptest.
    pub cases: u32,
    /// Largest nodes of a random graph.
    pub max_nodes: usize,
    /// Largest [`cost`] of a random case (about 2 ns each on the emulator, reference included).
    pub work: usize,
    /// Largest [`cost`] of a corner case with a given shape (larger shapes are left out).
    pub corner_work: usize,
    /// Leaves of the star corner case (its hub has this in- and out-degree).
    pub star_leaves: usize,
    /// Whether the large corner cases (`random_1025`, `hubs`) run.
    pub large_corners: bool,
    /// Runs compared bit for bit by the determinism suite.
    pub repeats: usize,
}

impl Budget {
    /// The emulator: small graphs (≤ 150 nodes, a few thousand edges), 32 cases per proptest,
    /// about 1 s at most per random check. The hub of the star still exceeds the default split
    /// threshold (2048 edges).
    pub const EMULATOR: Budget = Budget {
        cases: 32,
        max_nodes: 150,
        work: 600_000,
        corner_work: 500_000,
        star_leaves: 2100,
        large_corners: true,
        repeats: 2,
    };

    /// A GPU: larger graphs and more cases; the `f64` reference on the CPU is then the cost (up
    /// to about 4 s for the largest random case, 15,000 edges of 8 × 256 features).
    pub const GPU: Budget = Budget {
        cases: 64,
        max_nodes: 1500,
        work: 8_000_000,
        corner_work: usize::MAX,
        star_leaves: corner::STAR_HUB_DEGREE,
        large_corners: true,
        repeats: 5,
    };

    /// The largest power-law graph (in nodes) for `heads` × `feat` within [`Budget::work`]: such
    /// a graph has up to about 20 edges per node (mean degree < 8 plus three hubs of 4 n).
    pub fn nodes_for(&self, heads: u32, feat: u32) -> usize {
        (self.work / (20 * cost(1, heads, feat))).clamp(4, self.max_nodes)
    }
}

/// The emulator's cost of a check, in lane slots × edges: each edge costs a warp step over the
/// lanes that cover all its heads (`H` × `F` rounded up to a power of two of loads, 16-byte loads
/// when `F % 4 == 0`), at least a warp's worth.
pub fn cost(edges: usize, heads: u32, feat: u32) -> usize {
    let loads = if feat.is_multiple_of(4) { feat / 4 } else { feat };
    edges * (heads as usize * loads.next_power_of_two() as usize).max(32)
}

/// Forced plan options for a schedule, by name: the schedule alone, then with its knobs at the
/// edges of their ranges (tiny split thresholds and chunks so that chunks and the combine step
/// run, scalar loads, 2/4/8 slots, 32/64/256/1024 threads per block, 16 rows per block, rows in
/// natural order, tiny row groups, and on the fused schedules the unfused backward forced).
pub fn forced_options(schedule: Schedule) -> Vec<(&'static str, PlanOptions)> {
    let base = PlanOptions { schedule, ..PlanOptions::default() };
    let with = |f: fn(&mut PlanOptions)| {
        let mut o = base.clone();
        f(&mut o);
        o
    };
    let mut cases = vec![
        ("default", base.clone()),
        ("split>3 chunks of 2", with(|o| (o.split_threshold, o.chunk_edges) = (Some(3), Some(2)))),
        ("split>0 chunks of 1", with(|o| (o.split_threshold, o.chunk_edges) = (Some(0), Some(1)))),
        (
            "split>8 chunks of 5, 64 threads, natural row order",
            with(|o| {
                (o.split_threshold, o.chunk_edges, o.block_threads) = (Some(8), Some(5), Some(64));
                o.natural_row_order = true;
            }),
        ),
        ("scalar loads, 32 threads", with(|o| (o.scalar_loads, o.block_threads) = (true, Some(32)))),
        ("4 slots, 256 threads", with(|o| (o.max_slots, o.block_threads) = (Some(4), Some(256)))),
        ("8 slots, 1024 threads", with(|o| (o.max_slots, o.block_threads) = (Some(8), Some(1024)))),
        ("2 slots, 16 rows per block", with(|o| (o.max_slots, o.units_per_block) = (Some(2), Some(16)))),
        (
            "groups of 3 rows in 512 bytes, unstaged",
            with(|o| (o.group_rows, o.group_shared_bytes, o.group_staging) = (Some(3), Some(512), Some(false))),
        ),
        ("groups in 0 bytes", with(|o| o.group_shared_bytes = Some(0))),
        (
            "every whole row packed, split>8 chunks of 5",
            with(|o| (o.team_rows_below, o.split_threshold, o.chunk_edges) = (Some(u64::MAX), Some(8), Some(5))),
        ),
        ("no row packed", with(|o| o.team_rows_below = Some(0))),
    ];
    if schedule.is_fused() {
        cases.push(("unfused backward forced", with(|o| o.unfused_backward = Some(true))));
    }
    cases
}

/// GAT's own forced options for a schedule: its forward's positive part forced (with split rows,
/// so that the part's partials merge) and forbidden.
pub fn gat_forced_options(schedule: Schedule) -> Vec<(&'static str, PlanOptions)> {
    let base = PlanOptions { schedule, ..PlanOptions::default() };
    vec![
        (
            "positive part forced, split>3 chunks of 2",
            PlanOptions { positive_part: Some(true), split_threshold: Some(3), chunk_edges: Some(2), ..base.clone() },
        ),
        ("positive part forbidden", PlanOptions { positive_part: Some(false), ..base }),
    ]
}

/// The graph of the shape sweeps: 80 nodes of a power law with a hub of in-degree 150, every 7th
/// row empty, extra self loops and duplicate edges (about 550 edges).
pub fn sweep_graph() -> Csr {
    PowerLawCase {
        n: 80,
        mean_degree: 5.0,
        seed: 80,
        hubs: (1, 150),
        empty_every: 7,
        self_loops: vec![3, 17, 40, 41],
        duplicate_rows: vec![5, 6, 60],
    }
    .build()
}

/// An undirected star: hub 0 with `leaves` leaves (in- and out-degree `leaves`), each leaf's
/// row holding the hub.
pub fn star(leaves: usize) -> Csr {
    let n = leaves + 1;
    let mut rows: Vec<Vec<u32>> = vec![vec![0]; n];
    rows[0] = (1..n as u32).collect();
    Csr::from_rows(n, &rows).unwrap_or_else(|e| unreachable!("a star is a valid graph: {e}"))
}

/// A batch of 12 molecule-like graphs (block diagonal): what `row_group` stages sources for.
pub fn molecules() -> Csr {
    molecule_batch(12, 22, 12).map(|b| b.graph).unwrap_or_else(|e| unreachable!("valid parameters: {e}"))
}

/// The named corner cases for `budget`, square ones first; `bipartite` is last (GT only).
pub fn corner_graphs(budget: &Budget) -> Vec<(&'static str, Csr)> {
    let mut graphs = vec![
        ("empty", corner::empty()),
        ("single_node", corner::single_node()),
        ("single_self_loop", corner::single_self_loop()),
        ("isolated_nodes", corner::isolated_nodes()),
        ("only_self_loops", corner::only_self_loops()),
        ("star", star(budget.star_leaves)),
        ("random_97", corner::random_97()),
        ("duplicates", corner::duplicates()),
        ("molecules", molecules()),
    ];
    if budget.large_corners {
        graphs.push(("random_1025", corner::random_1025()));
        graphs.push(("hubs", corner::hubs()));
    }
    graphs.push(("bipartite", corner::bipartite()));
    graphs
}

/// One of [`HEADS`] × one of [`FEATS`].
pub fn shape() -> impl Strategy<Value = (u32, u32)> {
    (select(HEADS.to_vec()), select(FEATS.to_vec()))
}

/// Any plan options that must run on any graph: every schedule of [`Schedule::ALL`], split
/// thresholds and chunks from tiny up, slots, load width, block sizes, rows per block, row
/// order, row-group budgets (never a forced staging, which may legitimately not fit), packed
/// short rows (none, some, all). Shrinks
/// toward the defaults.
#[allow(clippy::needless_update, reason = "options added to PlanOptions later take their defaults")]
pub fn plan_options() -> impl Strategy<Value = PlanOptions> {
    let threads = proptest::option::of(select(vec![32u32, 64, 96, 128, 256, 1024]));
    // Units per block: a multiple of the warps per block (fewer is an error); the backward's
    // default block has fewer warps than the forward's.
    let units = proptest::option::of(select(vec![1u32, 2, 8]));
    (
        (select(Schedule::ALL.to_vec()), proptest::option::of(0..48u64), proptest::option::of(1..40u32)),
        (proptest::option::of(select(vec![1u32, 2, 4, 8])), proptest::bool::weighted(0.25), threads, units),
        proptest::bool::weighted(0.3),
        (proptest::option::of(0..4096u32), proptest::option::of(1..8u32), proptest::option::of(Just(false))),
        proptest::option::of(select(vec![0u64, 1, 3, 9, u64::MAX])),
    )
        .prop_map(
            |(
                (schedule, split_threshold, chunk_edges),
                (max_slots, scalar_loads, block_threads, units),
                natural_row_order,
                (group_shared_bytes, group_rows, group_staging),
                team_rows_below,
            )| {
                let warps = block_threads.unwrap_or(dfgnn::plan::DEFAULT_BLOCK_THREADS) / 32;
                PlanOptions {
                    schedule,
                    split_threshold,
                    chunk_edges,
                    max_slots,
                    scalar_loads,
                    block_threads,
                    natural_row_order,
                    units_per_block: units.map(|u| u * warps),
                    group_shared_bytes,
                    group_rows,
                    group_staging,
                    team_rows_below,
                    ..PlanOptions::default()
                }
            },
        )
}

/// `(magnitude, scale, seed)`: see [`input_knobs`].
pub type InputKnobs = (f32, Option<f32>, u64);

/// A random case: `(H, F)`, the graph's parameters, the plan options and the inputs' knobs.
pub type RandomCase = ((u32, u32), PowerLawCase, PlanOptions, InputKnobs);

/// The inputs' knobs of a random case: the magnitude of GT's `q` and `k` and GT's score scale
/// (`None` for `1/√F`), in pairs that keep the scores below about 30 in magnitude (larger ones are
/// the subject of `fused_backward_keeps_naive_accuracy_at_large_scores`), peaky softmaxes
/// included; and the seed.
pub fn input_knobs() -> impl Strategy<Value = InputKnobs> {
    let pairs = vec![(1.0f32, None), (4.0, None), (1.0, Some(0.05f32)), (1.0, Some(1.0)), (2.0, Some(0.25))];
    (select(pairs), any::<u64>()).prop_map(|((magnitude, scale), seed)| (magnitude, scale, seed))
}

/// A random GT or AGNN case: shape, power-law graph sized for the shape within `budget`, plan
/// options and [`input_knobs`].
pub fn power_law_cases(budget: Budget) -> impl Strategy<Value = RandomCase> {
    shape().prop_flat_map(move |(h, f)| {
        (Just((h, f)), power_law_case(budget.nodes_for(h, f)), plan_options(), input_knobs())
    })
}

/// A random bipartite block (or square, as it falls) with up to two hubs, sized for the shape.
pub fn bipartite_cases(budget: Budget) -> impl Strategy<Value = ((u32, u32), Csr, PlanOptions, u64)> {
    shape().prop_flat_map(move |(h, f)| {
        let n = budget.nodes_for(h, f);
        (
            Just((h, f)),
            (dfgnn_graphs::strategy::csr(n, 2 * n, 6 * n), 0..=2usize, 0..=4 * n, any::<u64>()).prop_map(
                |(g, hubs, degree, seed)| {
                    if g.num_src() == 0 {
                        g
                    } else {
                        dfgnn_graphs::generate::inject_hubs(&g, hubs.min(g.num_dst()), degree, seed)
                            .unwrap_or_else(|e| unreachable!("hubs fit the graph: {e}"))
                    }
                },
            ),
            plan_options(),
            any::<u64>(),
        )
    })
}

/// A batch of small dense graphs (block diagonal), the graphs `auto` runs GT's forward over in
/// dense tiles: components of 1, 5, 37, 128, 60, 200 and 3 nodes (the small ones packed into one
/// tile, the larger ones cut into tiles of 64 rows, the 200-node one's over more than 128
/// sources), each pair an edge with probability 1/2, every node's self loop, a duplicate edge in
/// every 9th row, every 11th row empty.
pub fn dense_batch() -> Csr {
    batch_of(&[1, 5, 37, 128, 60, 200, 3])
}

/// [`dense_batch`] without its 200-node graph: a batch that cuts into closed blocks of at most
/// 160 nodes (the 1-, 5- and 37-node graphs in one, the 128-node one alone, the 60- and 3-node
/// ones in one), the graphs `auto` runs GT's backward over (`dfgnn::plan::plan_blocks`).
pub fn closed_batch() -> Csr {
    batch_of(&[1, 5, 37, 128, 60, 3])
}

/// A batch that cuts into closed blocks of every count of groups of 16 nodes (1 to 10) and of
/// pairs of 32 (1 to 5), one copy of the blocks' loops each: blocks of 12, 150, 20, 40, 60, 70,
/// 90, 100, 120 and 144 nodes (each graph after a 150-node one alone in its block, the last two
/// graphs in one).
pub fn closed_batch_of_every_size() -> Csr {
    batch_of(&[12, 150, 20, 150, 40, 150, 60, 150, 70, 150, 90, 150, 100, 150, 120, 150, 135, 9])
}

/// A block-diagonal batch of graphs of `sizes` nodes as [`dense_batch`] makes them.
fn batch_of(sizes: &[usize]) -> Csr {
    let n: usize = sizes.iter().sum();
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut coin = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) & 1 == 1
    };
    let mut first = 0;
    for &size in sizes {
        for (r, row) in rows.iter_mut().enumerate().skip(first).take(size) {
            if r % 11 == 10 {
                continue;
            }
            row.push(r as u32);
            row.extend((first..first + size).filter(|&c| c != r && coin()).map(|c| c as u32));
            if r % 9 == 0 {
                let again = row[row.len() / 2];
                row.push(again);
            }
        }
        first += size;
    }
    Csr::from_rows(n, &rows).unwrap_or_else(|e| unreachable!("a dense batch is a valid graph: {e}"))
}

/// A batch of small sparse graphs (block diagonal), the graphs `auto` runs GT's forward over in
/// per-edge tiles (under a quarter of the dense kernel's pairs edges, at least 8 edges per staged
/// source row): components of 3, 17, 40, 50, 7, 60 and 1 nodes, each node with its self loop and
/// about 10 random neighbours in its graph (duplicates possible), every 13th row empty, and the
/// first row of the 50-node graph 300 copies of one edge (a row longer than a warp's steps and a
/// sum's blocks).
pub fn sparse_batch() -> Csr {
    let sizes = [3usize, 17, 40, 50, 7, 60, 1];
    let n: usize = sizes.iter().sum();
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |below: usize| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % below as u64) as usize
    };
    let mut first = 0;
    for size in sizes {
        for (r, row) in rows.iter_mut().enumerate().skip(first).take(size) {
            if r % 13 == 12 {
                continue;
            }
            row.push(r as u32);
            let extra = next(21);
            row.extend((0..extra).map(|_| (first + next(size)) as u32));
        }
        if size == 50 {
            rows[first] = vec![(first + 7) as u32; 300];
        }
        first += size;
    }
    Csr::from_rows(n, &rows).unwrap_or_else(|e| unreachable!("a sparse batch is a valid graph: {e}"))
}

/// A batch of stars (block diagonal): components of 100, 40, 7 and 64 nodes, each with a hub
/// whose row takes every other node of its star and leaves whose rows take the hub alone. A
/// leaf's one edge has α = 1, so its score gradient `α·(dO·h − D)` is zero up to rounding, while
/// its terms `dO·h` and `D` are not: a column pass that sums those terms apart from each other
/// (as GAT's over tiles does) must keep them exact enough to cancel over the hub's column.
pub fn star_batch() -> Csr {
    let sizes = [100usize, 40, 7, 64];
    let n: usize = sizes.iter().sum();
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut first = 0;
    for size in sizes {
        rows[first] = (first + 1..first + size).map(|c| c as u32).collect();
        for row in rows.iter_mut().skip(first + 1).take(size - 1) {
            row.push(first as u32);
        }
        first += size;
    }
    Csr::from_rows(n, &rows).unwrap_or_else(|e| unreachable!("a star batch is a valid graph: {e}"))
}

/// The shape of a GPU property-test failure (`gat_random_bipartite_graphs`, `docs/results.md`,
/// nineteenth session): a bipartite block of 41 rows over 20 sources whose row 0 holds
/// [`DUPLICATE_HUB_DEGREE`] edges drawn from the 20 sources (about 300 copies of each, the order
/// a fixed pseudo-random one), and rows 1..=40 two edges each. A row's sums run over thousands
/// of equal terms, which round alike: summed in edge order they drift by up to an ulp per term,
/// and GAT's `d el` from such sums (its row pass factored as `dO·Σ α·w·h − D·Σ α·w`, or from the
/// positive part) carries that drift where the per-edge form's terms cancel.
pub fn duplicate_hub() -> Csr {
    const SOURCES: usize = 20;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % SOURCES as u64) as u32
    };
    let mut rows: Vec<Vec<u32>> = vec![(0..DUPLICATE_HUB_DEGREE).map(|_| next()).collect()];
    rows.extend((0..40).map(|r| vec![(r % SOURCES) as u32, ((r * 7 + 1) % SOURCES) as u32]));
    Csr::from_rows(SOURCES, &rows).unwrap_or_else(|e| unreachable!("a duplicate hub is a valid graph: {e}"))
}

/// The in-degree of [`duplicate_hub`]'s row 0: the GPU failure's longest row.
pub const DUPLICATE_HUB_DEGREE: usize = 5940;

/// The checks of GAT on [`duplicate_hub`] (`suite::gat_duplicate_hub`), each `(name, options,
/// magnitude of the attention vectors, seed)`, the positive part forced in all:
///
/// - `gpu layout`: the lane layout of the GPU failure (`row_tiled`, 1-float loads, 4 slots:
///   `w1 s4`, no tiles). The failure (`d_el` error 4.1e-5, bound 3.0e-5, on an H100) came from
///   the gathering row pass summed in a factored form, `dO·Σ α·w·h − D·Σ α·w`, in edge order
///   (reverted in `9d40990`); on this graph that form misses the bound at magnitude 4, seed 101.
/// - `tiles`: the forward over per-edge tiles, whose `α⁺` was a plain sum over the row's edges
///   (its `part d_el` error 1.8e-5 at magnitude 4, seed 101, against the row passes' 1.1e-6;
///   within the bound, 2.2e-5, on the emulator) until it was summed in blocks as `o⁺` is.
/// - `split rows`: the defaults without tiles (`row_split`), the part's partials merged over
///   hundreds of chunks (372 of 16 edges at 132 SMs).
pub fn duplicate_hub_cases() -> Vec<(&'static str, PlanOptions, f32, u64)> {
    let part = PlanOptions { positive_part: Some(true), ..PlanOptions::default() };
    let gpu_layout =
        PlanOptions { schedule: Schedule::RowTiled, scalar_loads: true, max_slots: Some(4), ..part.clone() };
    let tiles = PlanOptions { tiles: Some(TileChoice::Edges), ..part.clone() };
    let split = PlanOptions { tiles: Some(TileChoice::Off), ..part };
    vec![
        ("gpu layout", gpu_layout.clone(), 1.0, 100),
        ("gpu layout", gpu_layout.clone(), 4.0, 101),
        ("gpu layout", gpu_layout, 16.0, 100),
        ("tiles", tiles.clone(), 4.0, 101),
        ("tiles", tiles, 1.0, 104),
        ("split rows", split, 4.0, 101),
    ]
}

/// A bipartite graph in two dense tiles whose source ranges overlap: 200 rows over 150 sources,
/// rows 0..100 on sources 0..100 and rows 100..200 on sources 50..150 (every second pair).
pub fn dense_bipartite() -> Csr {
    let edges: Vec<(u32, u32)> = (0..200u32)
        .flat_map(|r| {
            let base = if r < 100 { 0 } else { 50 };
            (0..100u32).filter(move |c| (r + c) % 2 == 0).map(move |c| (r, base + c))
        })
        .collect();
    Csr::from_edges(200, 150, &edges).unwrap_or_else(|e| unreachable!("a valid bipartite graph: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_cover_every_head_and_feature_count() {
        for h in HEADS {
            assert!(SHAPES.iter().any(|s| s.0 == h), "H = {h} missing");
        }
        for f in FEATS {
            assert!(SHAPES.iter().any(|s| s.1 == f), "F = {f} missing");
        }
    }

    #[test]
    fn the_sweep_graph_has_a_hub_empty_rows_self_loops_and_duplicates() {
        let s = dfgnn_graphs::GraphStats::of(&sweep_graph());
        assert!(s.in_degree.max >= 150 && s.empty_rows() > 0 && s.self_loops > 0 && s.duplicate_edges > 0, "{s}");
        assert!(s.nnz < 1000, "{s}");
    }

    #[test]
    fn the_duplicate_hub_repeats_each_source_hundreds_of_times() {
        let g = duplicate_hub();
        let s = dfgnn_graphs::GraphStats::of(&g);
        assert_eq!((g.num_dst(), g.num_src(), g.degree(0)), (41, 20, DUPLICATE_HUB_DEGREE));
        assert!(s.duplicate_edges >= (DUPLICATE_HUB_DEGREE - 20) as u64, "{s}");
    }

    #[test]
    fn the_emulator_star_exceeds_the_default_split_threshold() {
        assert!(Budget::EMULATOR.star_leaves as u64 > dfgnn::plan::MAX_SPLIT_THRESHOLD);
        let g = star(5);
        assert_eq!((g.num_dst(), g.nnz(), g.degree(0)), (6, 10, 5));
    }
}
