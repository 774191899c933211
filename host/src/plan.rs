//! The dynamic scheduler: a pure function from the graph's degrees, the feature shape and the
//! device's limits to a plan (docs/design.md §4).
//!
//! Level 1 decides which warp takes which edges: whole rows (`row_tiled`: one warp per row,
//! online softmax over edge chunks in registers), or, for rows past a degree threshold, chunks
//! of rows whose partial softmax states a combine step merges (`row_split`: super nodes cost the
//! same per edge as any other row). Level 2 decides how a warp's lanes cover all heads of an edge
//! ([`LaneLayout`]): the load width (16-byte `F4` when `F % 4 == 0`), lanes per head, register
//! slots per lane, edge groups per warp, and passes over the heads.
//!
//! The same rules plan the forward, the backward's row pass (over the CSR) and its column pass
//! (over the CSC, whose "rows" are source nodes). Every choice can be forced ([`PlanOptions`]).

use std::fmt;

use dfgnn_device::abi::LaneMap;
use dfgnn_device::kernels::attention::variants::Variant;
use dfgnn_device::kernels::tiles::{blocks, columns};
use dfgnn_device::simt::WARP_SIZE;

use crate::backend::DeviceLimits;
use crate::error::{Error, Result};

/// A thread schedule of the attention kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// Let the planner choose from the graph and the feature shape.
    #[default]
    Auto,
    /// DF-GNN's "hyper": a block owns a group of consecutive rows, scores their edges
    /// edge-balanced into shared memory, then a warp per row does the softmax and aggregation.
    /// When a group's neighbours lie in a narrow range (batches of small graphs), their keys and
    /// values are staged in shared memory first. Rows past the split threshold are split as in
    /// `RowSplit`. Backward: the `RowSplit` passes.
    RowGroup,
    /// One warp per row, online softmax over edge chunks, no shared memory (DF-GNN's "tiling",
    /// at warp level, all heads of an edge together).
    RowTiled,
    /// As `RowTiled`, with rows past a degree threshold split into chunks over many warps and
    /// merged by a combine step (flash-decoding style; super nodes).
    RowSplit,
    /// DF-GNN's two-kernel "softmax" schedule: an edge-parallel score kernel writes `[E, H]`
    /// scores, one row kernel does softmax and aggregation. Unfused backward. Any F.
    EdgeParallel,
    /// SDDMM, edge softmax and SpMM as three kernels with `[E, H]` intermediates (the DGL-sparse
    /// baseline), forward and backward. Any F.
    Unfused,
}

impl Schedule {
    /// Every schedule a user can force, `Auto` first.
    pub const ALL: [Schedule; 6] = [
        Schedule::Auto,
        Schedule::RowGroup,
        Schedule::RowTiled,
        Schedule::RowSplit,
        Schedule::EdgeParallel,
        Schedule::Unfused,
    ];

    /// The name used by the CLI and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::RowTiled => "row_tiled",
            Self::RowSplit => "row_split",
            Self::RowGroup => "row_group",
            Self::EdgeParallel => "edge_parallel",
            Self::Unfused => "unfused",
        }
    }
}

impl Schedule {
    /// Whether the schedule runs the fused kernels (no `[E, H]` intermediates).
    pub fn is_fused(self) -> bool {
        matches!(self, Self::RowGroup | Self::RowTiled | Self::RowSplit)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Schedule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|x| x.name() == s).ok_or_else(|| Error::Unsupported {
            what: format!("schedule `{s}` (known: {})", Self::ALL.map(Schedule::name).join(", ")),
        })
    }
}

/// Overrides of the planner's choices, for experiments (all `None`/default: the planner decides).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// The schedule.
    pub schedule: Schedule,
    /// Rows with more edges than this are split (`row_split`).
    pub split_threshold: Option<u64>,
    /// Edges per chunk of a split row.
    pub chunk_edges: Option<u32>,
    /// Largest register slots per lane the planner may use (1, 2, 4 or 8).
    pub max_slots: Option<u32>,
    /// Forbid 16-byte vector loads (use `f32` loads even when `F % 4 == 0`).
    pub scalar_loads: bool,
    /// Threads per block of the row kernels (a multiple of 32, at most 1024).
    pub block_threads: Option<u32>,
    /// Take whole rows in row order. By default rows go longest first when their degrees vary
    /// widely (coefficient of variation above [`SORT_CV`]): warps that start together finish
    /// together (H200, pl-1M-d16 4×64 forward 8.1 against 11.5 ms, forward+backward 29.7 against
    /// 42.5 ms), while near-regular graphs keep row order (batch-1024x120-d50 1×128: 1.02 in
    /// row order against 1.25 ms sorted).
    pub natural_row_order: bool,
    /// Rows (units) per block of the row kernels, taken by its warps in turn (default:
    /// [`tasks_per_warp`] per warp: one, unless rows are so short that a warp's row is mostly
    /// its fixed costs).
    pub units_per_block: Option<u32>,
    /// Shared memory a `row_group` block may use, in bytes.
    pub group_shared_bytes: Option<u32>,
    /// Largest rows per `row_group` group.
    pub group_rows: Option<u32>,
    /// Stage sources in shared memory for `row_group`: `Some(true)` forces it (an error when a
    /// group's sources do not fit), `Some(false)` forbids it, `None` lets the planner decide.
    pub group_staging: Option<bool>,
    /// Whole rows with fewer edges than this are **packed**: a warp takes as many of them as its
    /// lane map has teams, one row per team, instead of spreading one row's edges over its teams
    /// (`Some(0)`: none; at most 2^32, the planner's cap). By default: the rows of at most one
    /// warp step (`step · teams` edges) when the lane map has several teams, none otherwise.
    /// Only variants with packed kernels (one slot) pack; packed rows take a launch of their own.
    pub team_rows_below: Option<u64>,
    /// The forward over tiles ([`plan_tiles`]): `Some(TileChoice::Dense)` or
    /// `Some(TileChoice::Edges)` forces that kernel (an error when the graph does not tile for
    /// it), `Some(TileChoice::Off)` forbids tiles, `None` lets the planner decide (`auto` only).
    pub tiles: Option<TileChoice>,
    /// GAT: whether a forward for training also sums each row's positive part, so that the
    /// backward's row pass gathers nothing ([`plan_positive_part`]): `Some(true)` forces it (on
    /// the schedules that have it), `Some(false)` forbids it (the row pass gathers the features
    /// again), `None` lets the planner decide.
    pub positive_part: Option<bool>,
    /// Whether a fused schedule's backward runs the unfused kernels instead of its fused passes
    /// (after the fused forward; [`Plan::unfused_backward`]): `Some(true)` forces it,
    /// `Some(false)` forbids it, `None` lets the planner decide (GAT: [`plan_gat_backward`]; the
    /// other models keep the fused passes). A backward with attention dropout always runs the
    /// fused passes (the unfused kernels have none).
    pub unfused_backward: Option<bool>,
    /// GT and AGNN: whether the backward runs over closed blocks after the forward over dense tiles
    /// ([`plan_blocks`]): `Some(true)` forces it (an error when the graph does not cut into
    /// closed blocks or the forward takes no dense tiles), `Some(false)` forbids it, `None` lets
    /// the planner decide (`auto` only).
    pub block_backward: Option<bool>,
}

/// What [`PlanOptions::tiles`] forces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileChoice {
    /// No tiles: the fused forward pass.
    Off,
    /// The dense tiles ([`TileKernel::Dense`]).
    Dense,
    /// The per-edge tiles ([`TileKernel::Edges`]).
    Edges,
}

impl std::str::FromStr for TileChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "off" => Ok(Self::Off),
            "dense" => Ok(Self::Dense),
            "edges" => Ok(Self::Edges),
            _ => Err(Error::Unsupported { what: format!("tiles `{s}` (known: off, dense, edges)") }),
        }
    }
}

/// What the planner reads of a model's compiled variant (a row of its `VARIANTS` table, see
/// `dfgnn_device::kernels::attention::variants`): the planner takes the model's table and picks
/// rows of it, so each model plans against the kernels it has.
pub trait CompiledVariant: 'static {
    /// Features per load: 1 or 4.
    fn width(&self) -> u32;
    /// Register slots (vectors) per lane.
    fn slots(&self) -> u32;
    /// Whether the backward passes were compiled for it.
    fn has_backward(&self) -> bool;
    /// Edges per step and team of `passes` (0 when they were not compiled).
    fn step(&self, passes: Passes) -> u32;
    /// Whether packed entries (a row per team) were compiled for it.
    fn has_packed(&self) -> bool;
}

impl<F, G, R, C> CompiledVariant for Variant<F, G, R, C> {
    fn width(&self) -> u32 {
        self.width
    }
    fn slots(&self) -> u32 {
        self.slots
    }
    fn has_backward(&self) -> bool {
        self.backward.is_some()
    }
    fn step(&self, passes: Passes) -> u32 {
        match passes {
            Passes::Forward => self.forward_step,
            Passes::Backward => self.backward.map_or(0, |b| b.step),
        }
    }
    fn has_packed(&self) -> bool {
        self.packed.is_some()
    }
}

/// GAT's forwards with the positive part mirror its table row for row (forward only).
impl CompiledVariant for dfgnn_device::kernels::gat::part::PartForward {
    fn width(&self) -> u32 {
        self.width
    }
    fn slots(&self) -> u32 {
        self.slots
    }
    fn has_backward(&self) -> bool {
        false
    }
    fn step(&self, passes: Passes) -> u32 {
        match passes {
            Passes::Forward => self.step,
            Passes::Backward => 0,
        }
    }
    fn has_packed(&self) -> bool {
        self.packed.is_some()
    }
}

/// Level 2: how one warp's lanes cover the heads and features of an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneLayout {
    /// The chosen row of the variant table the plan was made from ([`LaneLayout::variant_in`]).
    pub variant: usize,
    /// Its load width.
    pub width: u32,
    /// Its slots per lane.
    pub slots: u32,
    /// The lane mapping the kernels read.
    pub map: LaneMap,
    /// Passes over a row to cover all heads.
    pub passes: u32,
}

/// Which passes a layout must have kernels for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passes {
    /// The forward only.
    Forward,
    /// The backward's row and column passes.
    Backward,
}

impl LaneLayout {
    /// The variant this layout chose from `table`, which must be the table the plan was made
    /// from (an error when its row does not have the planned width and slots).
    pub fn variant_in<V: CompiledVariant>(&self, table: &'static [V]) -> Result<&'static V> {
        table.get(self.variant).filter(|v| (v.width(), v.slots()) == (self.width, self.slots)).ok_or_else(|| {
            Error::Unsupported {
                what: format!(
                    "variant {} of {}-float loads and {} slots is not in this model's table (planned for another model)",
                    self.variant, self.width, self.slots
                ),
            }
        })
    }
}

/// The slot counts `table` compiles for loads of `width` floats and `passes`, in increasing order.
pub fn compiled_slots<V: CompiledVariant>(table: &[V], width: u32, passes: Passes) -> Vec<u32> {
    let mut slots: Vec<u32> = table
        .iter()
        .filter(|v| v.width() == width && (passes == Passes::Forward || v.has_backward()))
        .map(|v| v.slots())
        .collect();
    slots.sort_unstable();
    slots
}

/// Slots needed for the widest heads: a head of more than 32 vectors spans several slots.
fn slots_per_head(vectors_per_head: u32) -> u32 {
    (vectors_per_head.next_power_of_two() / WARP_SIZE).max(1)
}

/// Plans level 2 for `heads` × `feat` with at most `max_slots` slots per lane, loads of `width`
/// floats, and kernels for `passes` in the model's variant `table`, or explains why it cannot. The
/// slot counts come from the table: a cap between two of them means the one below.
pub fn lane_layout<V: CompiledVariant>(
    table: &[V],
    heads: u32,
    feat: u32,
    width: u32,
    max_slots: u32,
    passes: Passes,
) -> Result<LaneLayout> {
    if heads == 0 || feat == 0 {
        return Err(Error::Unsupported { what: format!("{heads} heads of {feat} features (both must be at least 1)") });
    }
    if !feat.is_multiple_of(width) {
        return Err(Error::Unsupported { what: format!("loads of {width} features with F = {feat}") });
    }
    let compiled = compiled_slots(table, width, passes);
    let vectors = feat / width;
    let head_lanes = vectors.next_power_of_two().min(WARP_SIZE);
    let sph = slots_per_head(vectors);
    let cap = compiled.iter().copied().filter(|&s| s <= max_slots).max();
    let Some(cap) = cap.filter(|&c| c >= sph) else {
        return Err(Error::Unsupported {
            what: format!(
                "F = {feat} needs {sph} register slots of {width}-float loads per lane; the {passes:?} kernels have at most {} within the cap of {max_slots}",
                compiled.iter().copied().filter(|&s| s <= max_slots).max().unwrap_or(0)
            ),
        });
    };
    let heads_per_slot = WARP_SIZE / head_lanes;
    let (wanted, edge_lanes) = if sph == 1 && heads * head_lanes <= WARP_SIZE {
        // All heads of an edge fit in part of a warp: several edges per step.
        (1, (heads * head_lanes).next_power_of_two())
    } else {
        let needed = if sph > 1 { sph * heads } else { heads.div_ceil(heads_per_slot) };
        (needed.min(cap), WARP_SIZE)
    };
    // The compiled variant with the fewest slots that hold what is wanted (at most the cap).
    let (index, slots) = table
        .iter()
        .enumerate()
        .map(|(i, v)| (i, v.slots()))
        .filter(|&(i, s)| table[i].width() == width && compiled.contains(&s) && s >= wanted.min(cap) && s <= cap)
        .min_by_key(|&(_, s)| s)
        .ok_or_else(|| Error::Unsupported {
            what: format!("no kernel variant of {width}-float loads and {wanted} slots"),
        })?;
    let heads_per_pass = (slots / sph) * (edge_lanes / head_lanes);
    let map = LaneMap::new(head_lanes, sph, edge_lanes, heads_per_pass).ok_or_else(|| Error::Unsupported {
        what: format!("lane map of {head_lanes} head lanes, {sph} slots per head, {edge_lanes} edge lanes"),
    })?;
    Ok(LaneLayout { variant: index, width, slots, map, passes: heads.div_ceil(heads_per_pass) })
}

/// Which rows (or columns) a pass covers whole, and which it splits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowPlan {
    /// Rows taken whole, one warp each: `None` for all rows `0..n`, else the list.
    pub whole: Option<Vec<u32>>,
    /// Number of rows taken whole.
    pub whole_count: usize,
    /// Rows split into chunks.
    pub split: Option<SplitPlan>,
    /// How many of the whole rows (from the start of `whole`) the launch takes before the
    /// chunks: those longer than a chunk, when rows go longest first. A launch then starts its
    /// longest units first.
    pub lead: usize,
    /// How many of the whole rows (from the end of the list: `whole`, or all rows `0..n`) are
    /// packed, one per team ([`PlanOptions::team_rows_below`]); never any of the `lead`.
    pub packed: usize,
}

/// Rows split into chunks of `chunk_edges` edges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    /// The split rows, in increasing order.
    pub rows: Vec<u32>,
    /// `[rows + 1]`: row `r`'s chunks are units `first_unit[r] .. first_unit[r + 1]`.
    pub first_unit: Vec<u32>,
    /// For each unit, its row.
    pub unit_rows: Vec<u32>,
    /// For each unit, its chunk index within the row.
    pub unit_chunks: Vec<u32>,
    /// Edges per chunk.
    pub chunk_edges: u32,
}

impl SplitPlan {
    /// Number of chunks (units) in all.
    pub fn units(&self) -> usize {
        self.unit_rows.len()
    }
}

/// The plan of one pass (forward, backward rows or backward columns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassPlan {
    /// How lanes cover an edge's features.
    pub layout: LaneLayout,
    /// Which warp takes which edges.
    pub rows: RowPlan,
    /// Threads per block.
    pub block_threads: u32,
    /// Units per block (at least the warps per block).
    pub units_per_block: u32,
}

/// Everything the attention kernels need to know to run on one graph and feature shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The schedule chosen (never `Auto`).
    pub schedule: Schedule,
    /// Heads.
    pub heads: u32,
    /// Features per head.
    pub feat: u32,
    /// The fused forward pass (for the fused schedules), or why there is none.
    pub forward: std::result::Result<PassPlan, String>,
    /// The row groups of the `row_group` forward (rows not split).
    pub groups: Option<GroupPlan>,
    /// The backward's row pass (dq), or why there is none.
    pub backward_rows: std::result::Result<PassPlan, String>,
    /// The backward's column pass (dk, dv), or why there is none.
    pub backward_cols: std::result::Result<PassPlan, String>,
    /// The tiles of the forward (every model's, without dropout), when it runs over them
    /// instead of its fused pass ([`plan_tiles`]).
    pub tiles: Option<TilePlan>,
    /// The tiles of the CSC for the backward's column pass (GAT's, without dropout), when it
    /// runs over them instead of its fused pass ([`plan_column_tiles`]).
    pub column_tiles: Option<TilePlan>,
    /// GT and AGNN: the closed blocks the backward runs over instead of the row and column passes,
    /// after the forward over dense tiles ([`plan_blocks`]; without dropout).
    pub blocks: Option<BlockPlan>,
    /// GAT: whether a forward for training also sums each row's positive part, so that the
    /// backward's row pass gathers nothing ([`plan_positive_part`]; `false` for the other models).
    pub positive_part: bool,
    /// Whether the backward after this fused schedule's forward runs the unfused kernels (per-edge
    /// scores and weights in memory, then SpMMs) instead of its fused passes, which it keeps for a
    /// backward with dropout ([`PlanOptions::unfused_backward`], [`plan_gat_backward`]).
    pub unfused_backward: bool,
    /// Why the planner chose what it chose, one line per decision.
    pub reasons: Vec<String>,
}

/// CUDA's limit on threads per block.
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// The most a row may have before it is split, whatever the graph: on a million-node graph a
/// warp takes about 2048 edges in the time the whole grid needs for a wave of ordinary rows.
pub const MAX_SPLIT_THRESHOLD: u64 = 2048;
/// The least split threshold: a row of 16 edges is eight steps of one warp. On graphs of a few
/// ten thousand edges the launch is as long as its longest unit's chain of dependent gathers, so
/// a lower threshold shortens it. (H200, GT 4×32 on gt-hep-th, 31.5 k edges, rows of up to 65:
/// forward / forward+backward 0.028–0.032 / 0.073 ms at 32, 0.024 / 0.066 at 16; docs/results.md,
/// eighth session.)
pub const MIN_SPLIT_THRESHOLD: u64 = 16;
/// Warps one multiprocessor keeps resident for the fused passes (forward at ~90 registers per
/// thread: 65536 / (96·32) = 21; backward at 60–90 in 2-warp blocks: about the same): the "wave"
/// a split threshold is a fair share of. (It was 16 until the twenty-third session: then
/// pgp-strong-2009 and gt-cond-mat-2005, whose threshold 21 halves from 128 to 64, ran faster at
/// 64 on an H100, forward −2 to −8 % for every model, forward+backward −1 to −5 %; every other
/// graph measured there keeps its threshold; docs/results.md.)
pub const RESIDENT_WARPS_PER_SM: u64 = 21;
/// A split row's chunks hold a quarter of the threshold: a split row then takes at least four
/// warps, each no longer than a whole row at the threshold.
pub const CHUNKS_PER_THRESHOLD: u64 = 4;
/// The least edges per chunk, where the threshold is at least that: each chunk costs a partial
/// state and a share of the combine step, and below 32 edges that outweighs the shorter chain.
/// (H200, GT 4×64: as-22july06 forward 0.226 ms with chunks of 8 edges, 0.149 with 16. H100,
/// as-22july06 at its threshold of 32, chunks of 32 against 16, forward / forward+backward: GT
/// 4×64 0.089 / 0.262 against 0.098 / 0.282 ms, AGNN 0.099 / 0.284 against 0.113 / 0.316, GAT
/// 0.077 / 0.223 against 0.094 / 0.248, and as much at 1×128; docs/results.md, twenty-third
/// session.) Never more than the threshold: Cora (threshold 16) lost with chunks of 32.
pub const MIN_CHUNK_EDGES: u64 = 32;

/// Edges per chunk of a split row under split threshold `threshold`: a quarter of the threshold
/// ([`CHUNKS_PER_THRESHOLD`]), but at least the threshold itself kept within
/// [[`MIN_SPLIT_THRESHOLD`], [`MIN_CHUNK_EDGES`]]: so never more than the threshold below 128, and
/// chunks of 16 under a forced threshold below 16. Thresholds 16, 32, 64, 128 and 2048 take
/// chunks of 16, 32, 32, 32 and 512.
pub fn chunk_edges(threshold: u64) -> u64 {
    (threshold / CHUNKS_PER_THRESHOLD).max(threshold.clamp(MIN_SPLIT_THRESHOLD, MIN_CHUNK_EDGES))
}

/// The split threshold for a graph of `edges` edges on `multiprocessors` SMs: each resident warp's
/// fair share of one wave, `E / (SMs · RESIDENT_WARPS_PER_SM)`, rounded down to a power of two and
/// kept within [`MIN_SPLIT_THRESHOLD`, `MAX_SPLIT_THRESHOLD`]. A row longer than that would be
/// the critical path of its launch. (H200, GT 4×64, forced sweeps: email-Enron 36.7 k nodes /
/// 368 k edges is fastest at 64–128 with chunks of 32, 4.5× faster than at 2048; the 1M-node
/// graphs at 2048 with chunks of 512.)
pub fn split_threshold(edges: u64, multiprocessors: u32) -> u64 {
    let share = edges / (multiprocessors.max(1) as u64 * RESIDENT_WARPS_PER_SM);
    let pow2 = if share == 0 { 0 } else { 1u64 << share.ilog2() };
    pow2.clamp(MIN_SPLIT_THRESHOLD, MAX_SPLIT_THRESHOLD)
}

/// Whether `auto` splits rows: when the longest row or column (`longest` edges) passes the
/// `threshold` by more than a chunk of `chunk_edges`. Splitting costs a combine launch and the
/// chunks' partials, and pays only when it shortens the longest unit by more than a chunk. (H200,
/// GT 4×32 on gt-power, 13.2 k edges, rows of at most 19: forward / forward+backward 0.018 / 0.044
/// ms whole, 0.022 / 0.052 with the rows past 16 split into chunks of 16; docs/results.md, eighth
/// session.)
pub fn splitting_pays(longest: u64, threshold: u64, chunk_edges: u64) -> bool {
    longest > threshold.saturating_add(chunk_edges)
}

/// The least edges a warp's tasks should hold between them by default: below it, a task is
/// mostly fixed costs (finding the row, the query, the epilogue) and the block's own launch.
pub const MIN_WARP_EDGES: u64 = 32;
/// The most tasks a warp takes by default.
pub const MAX_TASKS_PER_WARP: u64 = 16;

/// Tasks (rows) each warp of a row kernel takes in turn by default, for a pass over `rows` rows
/// of `edges` edges in all on `multiprocessors` SMs: the whole rows of the mean degree that make
/// [`MIN_WARP_EDGES`] edges, down to a power of two and at most [`MAX_TASKS_PER_WARP`], but never
/// so many that fewer warps than the device holds at once (`SMs · MAX_WARPS_PER_SM`) have work
/// (the power grid, 4.9 k rows of at most 19 edges, was 15 % slower with 2 rows per warp); one when
/// rows are long enough, and one when any row (of `max_degree` edges) is longer than
/// `MIN_WARP_EDGES`: then a warp's run of rows would hold several long ones. (H200, GT 1×128
/// forward on mol-16384, 360 k rows of mean degree 2.0, at most 4: 4, 8, 16 and 64 rows per
/// 4-warp block 0.75, 0.60, 0.65 and 0.58 ms. On graphs with long rows the same rule was 1.4–2.5×
/// slower: email-Enron GT 4×64 forward 0.234 → 0.513 ms, as-22july06 0.147 → 0.371, hep-th
/// 0.048 → 0.069; and batch-1024x120-d50, mean degree 51, is slower with runs of rows per block:
/// 1.66 against 1.02 ms.)
pub fn tasks_per_warp(edges: u64, rows: u64, max_degree: u64, multiprocessors: u32) -> u32 {
    if edges == 0 || rows == 0 || max_degree > MIN_WARP_EDGES {
        return 1;
    }
    let want = (MIN_WARP_EDGES * rows).div_ceil(edges);
    let room = rows / (multiprocessors.max(1) as u64 * MAX_WARPS_PER_SM);
    let n = want.min(room).clamp(1, MAX_TASKS_PER_WARP);
    1 << n.ilog2()
}

/// Threads per block of the forward row kernel by default: 4 warps (H200: 9.8 ms against 10.1
/// with 8 warps on er-1M-d16, 4×64).
pub const DEFAULT_BLOCK_THREADS: u32 = 128;
/// Threads per block of the backward passes by default: 2 warps, for the finest spread of their
/// register-heavy warps over the multiprocessors.
pub const DEFAULT_BACKWARD_BLOCK_THREADS: u32 = 64;
/// Most slots per lane by default: one, so that more heads take more passes over a row rather
/// than more registers (H200, er-1M-d16, 4×64: forward 9.6 against 10.0 ms, forward+backward
/// 36 against 41 ms); wide heads still take the slots they need.
pub const DEFAULT_MAX_SLOTS: u32 = 1;

/// Warps one multiprocessor holds at most (2,048 threads on sm_80 and sm_90).
pub const MAX_WARPS_PER_SM: u64 = 64;

/// By default short rows are packed only when there are more of them than one full wave of
/// warps (`SMs · MAX_WARPS_PER_SM`): with fewer, each row already has a warp of its own in the
/// first wave, and packing only adds a launch. (H200, GT 2×8 auto forward, packed / not: Cora
/// 2.6 k short rows 0.026 / 0.018 ms, the power grid 4.9 k 0.016 / 0.013; as-22july06 22.4 k
/// 0.056 / 0.061, email-Enron 34.6 k 0.044 / 0.057.)
pub fn packing_pays(short_rows: u64, multiprocessors: u32) -> bool {
    short_rows > multiprocessors as u64 * MAX_WARPS_PER_SM
}

/// The most edges a packed row may have: a warp's loop over packed rows covers the longest one's
/// edges, counted in 32 bits.
pub const MAX_PACKED_ROW_EDGES: u64 = u32::MAX as u64;

/// Degrees with a coefficient of variation above this are taken longest first.
pub const SORT_CV: f64 = 1.0;

/// The coefficient of variation of the degrees given by `offsets`.
fn degree_cv(offsets: &[u64]) -> f64 {
    let n = offsets.len().saturating_sub(1);
    if n == 0 {
        return 0.0;
    }
    let mean = offsets[n] as f64 / n as f64;
    let var = offsets.windows(2).map(|w| (w[1] - w[0]) as f64 - mean).map(|d| d * d).sum::<f64>() / n as f64;
    if mean > 0.0 { var.sqrt() / mean } else { 0.0 }
}

/// Plans level 1 over rows with the given CSR (or CSC) offsets; whole rows of fewer than
/// `pack_below` edges are packed, one per team, at the end of the list.
fn plan_rows(
    offsets: &[u64],
    split_threshold: Option<u64>,
    chunk_edges: u32,
    by_degree: bool,
    pack_below: u64,
) -> Result<RowPlan> {
    let n = offsets.len().saturating_sub(1);
    if n > u32::MAX as usize {
        return Err(Error::Unsupported { what: format!("{n} rows (at most 2^32 - 1)") });
    }
    let degree = |r: usize| offsets[r + 1] - offsets[r];
    // Longest rows first only where degrees vary widely (power laws): there warps that start
    // together then finish together; on near-regular graphs row order keeps neighbouring rows
    // (and their shared sources) together.
    let by_degree = by_degree && degree_cv(offsets) > SORT_CV;
    let threshold = split_threshold.unwrap_or(u64::MAX);
    let heavy: Vec<u32> = (0..n).filter(|&r| degree(r) > threshold).map(|r| r as u32).collect();
    let mut whole: Vec<u32> = (0..n).filter(|&r| degree(r) <= threshold).map(|r| r as u32).collect();
    if by_degree {
        // Longest rows first: warps that start together finish together.
        whole.sort_by_key(|&r| std::cmp::Reverse(degree(r as usize)));
    }
    // Packed rows go last, in the list's order (longest first already puts them there).
    let packable = |r: &u32| degree(*r as usize) < pack_below;
    let mut packed = whole.iter().filter(|r| packable(r)).count();
    // Rows in row order stay an implicit list unless a longer row follows a packed one.
    let moved = whole[..whole.len() - packed].iter().any(packable);
    if moved {
        let (short, long): (Vec<u32>, Vec<u32>) = whole.iter().partition(|r| packable(r));
        whole = long.into_iter().chain(short).collect();
    }
    let reordered = by_degree || moved;
    if heavy.is_empty() {
        return Ok(RowPlan { whole: reordered.then_some(whole), whole_count: n, split: None, lead: 0, packed });
    }
    let mut first_unit = vec![0u32];
    let (mut unit_rows, mut unit_chunks) = (Vec::new(), Vec::new());
    for &r in &heavy {
        let chunks = degree(r as usize).div_ceil(chunk_edges as u64);
        if unit_rows.len() as u64 + chunks > u32::MAX as u64 {
            return Err(Error::Unsupported { what: "more than 2^32 chunks of split rows".to_string() });
        }
        for c in 0..chunks {
            unit_rows.push(r);
            unit_chunks.push(c as u32);
        }
        first_unit.push(unit_rows.len() as u32);
    }
    let lead =
        if by_degree { whole.iter().take_while(|&&r| degree(r as usize) > chunk_edges as u64).count() } else { 0 };
    packed = packed.min(whole.len() - lead);
    Ok(RowPlan {
        whole_count: whole.len(),
        whole: Some(whole),
        split: Some(SplitPlan { rows: heavy, first_unit, unit_rows, unit_chunks, chunk_edges }),
        lead,
        packed,
    })
}

/// The `row_group` forward's groups: one block each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupPlan {
    /// First row of each group.
    pub first: Vec<u32>,
    /// One past the last row of each group.
    pub end: Vec<u32>,
    /// First staged source node of each group (empty when nothing is staged).
    pub stage_first: Vec<u32>,
    /// Staged source nodes of each group.
    pub stage_count: Vec<u32>,
    /// Edges the score region holds (the largest group's).
    pub score_capacity: u32,
    /// Source nodes the staging regions hold (0 when nothing is staged).
    pub stage_capacity: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// Threads per block.
    pub block_threads: u32,
}

/// The most edges a row may have for its scores (`4·H` bytes per edge) to fit a `row_group`
/// block's `budget` bytes: the score region is rounded up to 16 bytes, so 4 floats are kept as
/// slack. Longer rows are split instead.
fn max_group_row_edges(budget: u32, heads: u32) -> u64 {
    (budget as u64 / (heads as u64 * 4)).saturating_sub(4)
}

/// Shared memory a `row_group` block uses by default: two blocks fit on an H200 multiprocessor.
pub const DEFAULT_GROUP_SHARED_BYTES: u32 = 96 * 1024;
/// Largest rows per group by default.
pub const DEFAULT_GROUP_ROWS: u32 = 256;
/// Threads per `row_group` block: 8 warps share the score phase, then take rows in turn.
pub const GROUP_BLOCK_THREADS: u32 = 256;
/// Staging pays when each staged source row is read at least this many times.
pub const MIN_STAGING_REUSE: f64 = 4.0;

/// What the planner needs to know of a graph: CSR and CSC offsets, and each row's smallest and
/// largest column (for `row_group` staging).
#[derive(Clone, Copy, Debug)]
pub struct GraphShape<'a> {
    /// `[N_dst + 1]` CSR offsets.
    pub row_offsets: &'a [u64],
    /// `[N_src + 1]` CSC offsets.
    pub col_offsets: &'a [u64],
    /// `[N_dst]` each row's smallest column (`u32::MAX` for an empty row).
    pub row_min_col: &'a [u32],
    /// `[N_dst]` each row's largest column (0 for an empty row).
    pub row_max_col: &'a [u32],
}

/// Forms `row_group` groups greedily in row order, skipping `heavy` rows (split elsewhere), so
/// that each group's scores (and, when `staging`, its sources' keys and values) fit in `budget`
/// bytes of shared memory. `None` when a single row cannot fit.
fn form_groups(
    graph: &GraphShape<'_>,
    heavy: &[u32],
    heads: u32,
    feat: u32,
    budget: u32,
    max_rows: u32,
    staging: bool,
) -> Option<GroupPlan> {
    let score_bytes = |edges: u64| (edges * heads as u64 * 4).div_ceil(16) * 16;
    let stage_bytes = |nodes: u64| if staging { nodes * 2 * heads as u64 * feat as u64 * 4 } else { 0 };
    let n = graph.row_offsets.len().saturating_sub(1);
    let degree = |r: usize| graph.row_offsets[r + 1] - graph.row_offsets[r];
    let mut plan = GroupPlan {
        first: Vec::new(),
        end: Vec::new(),
        stage_first: Vec::new(),
        stage_count: Vec::new(),
        score_capacity: 0,
        stage_capacity: 0,
        shared_bytes: 0,
        block_threads: GROUP_BLOCK_THREADS,
    };
    let mut heavy = heavy.iter().peekable();
    let mut r = 0usize;
    let mut shared = 0u64;
    while r < n {
        if heavy.peek().is_some_and(|&&h| h as usize == r) {
            heavy.next();
            r += 1;
            continue;
        }
        let start = r;
        let (mut edges, mut lo, mut hi) = (0u64, u32::MAX, 0u32);
        while r < n && (r - start) < max_rows as usize && heavy.peek().is_none_or(|&&h| h as usize != r) {
            let d = degree(r);
            let (lo2, hi2) =
                if d > 0 { (lo.min(graph.row_min_col[r]), hi.max(graph.row_max_col[r])) } else { (lo, hi) };
            let span = if lo2 <= hi2 { (hi2 - lo2) as u64 + 1 } else { 0 };
            if score_bytes(edges + d) + stage_bytes(span) > budget as u64 {
                break;
            }
            edges += d;
            (lo, hi) = (lo2, hi2);
            r += 1;
        }
        if r == start {
            return None;
        }
        let span = if lo <= hi { hi - lo + 1 } else { 0 };
        plan.first.push(start as u32);
        plan.end.push(r as u32);
        if staging {
            plan.stage_first.push(if span > 0 { lo } else { 0 });
            plan.stage_count.push(span);
            plan.stage_capacity = plan.stage_capacity.max(span);
        }
        plan.score_capacity = plan.score_capacity.max(edges as u32);
        shared = shared.max(score_bytes(edges) + stage_bytes(span as u64));
    }
    plan.shared_bytes = shared as u32;
    Some(plan)
}

/// Plans the attention kernels of a model with the variant table `variants` (its `VARIANTS`) for
/// `graph` and `heads` × `feat` features under `options`, for a device with `device`'s
/// multiprocessors and shared memory.
pub fn plan<V: CompiledVariant>(
    variants: &[V],
    graph: &GraphShape<'_>,
    heads: u32,
    feat: u32,
    device: &DeviceLimits,
    options: &PlanOptions,
) -> Result<Plan> {
    let max_shared_bytes = device.max_shared_per_block;
    let (row_offsets, col_offsets) = (graph.row_offsets, graph.col_offsets);
    if heads == 0 || feat == 0 {
        return Err(Error::Unsupported { what: format!("{heads} heads of {feat} features (both must be at least 1)") });
    }
    if options.max_slots == Some(0) {
        return Err(Error::Unsupported { what: "at most 0 register slots per lane".to_string() });
    }
    let mut reasons = Vec::new();
    let max_degree = |offsets: &[u64]| offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    let edges = row_offsets.last().copied().unwrap_or(0);
    let threshold = match options.split_threshold {
        Some(t) => t,
        None => {
            let t = split_threshold(edges, device.multiprocessors);
            reasons.push(format!(
                "split threshold {t} edges: a fair share of one wave, {edges} edges / ({} SMs x {RESIDENT_WARPS_PER_SM} warps), as a power of two within [{MIN_SPLIT_THRESHOLD}, {MAX_SPLIT_THRESHOLD}]",
                device.multiprocessors
            ));
            t
        }
    };
    let chunk_edges = options.chunk_edges.unwrap_or(chunk_edges(threshold).min(u32::MAX as u64) as u32);
    if chunk_edges == 0 {
        return Err(Error::Unsupported { what: "chunks of 0 edges".to_string() });
    }
    let block_threads = options.block_threads.unwrap_or(DEFAULT_BLOCK_THREADS);
    let backward_threads = options.block_threads.unwrap_or(DEFAULT_BACKWARD_BLOCK_THREADS);
    if block_threads == 0 || !block_threads.is_multiple_of(WARP_SIZE) || block_threads > MAX_BLOCK_THREADS {
        return Err(Error::Unsupported {
            what: format!("{block_threads} threads per block (a multiple of 32, at most {MAX_BLOCK_THREADS})"),
        });
    }
    let units_for = |reasons: &mut Vec<String>, name: &str, threads: u32, offsets: &[u64]| -> Result<u32> {
        let warps = threads / WARP_SIZE;
        match options.units_per_block {
            Some(u) if u < warps => {
                Err(Error::Unsupported { what: format!("{u} units per block with {warps} warps per block") })
            }
            Some(u) => Ok(u),
            None => {
                let rows = offsets.len().saturating_sub(1) as u64;
                let edges = offsets.last().copied().unwrap_or(0);
                let longest = max_degree(offsets);
                let per_warp = tasks_per_warp(edges, rows, longest, device.multiprocessors);
                if per_warp > 1 {
                    reasons.push(format!(
                        "{name}: {per_warp} rows per warp ({edges} edges over {rows} rows, none longer than {longest}: fewer than {MIN_WARP_EDGES} edges per warp with one row each)"
                    ));
                }
                Ok(warps * per_warp)
            }
        }
    };
    let (row_max, col_max) = (max_degree(row_offsets), max_degree(col_offsets));
    let width = if feat.is_multiple_of(4) && !options.scalar_loads { 4 } else { 1 };
    let layout_for = |passes: Passes| -> Result<LaneLayout> {
        // Wide heads need their slots whatever the default cap (lane_layout refuses what no
        // compiled variant of the pass holds).
        let cap = options.max_slots.unwrap_or(DEFAULT_MAX_SLOTS);
        lane_layout(variants, heads, feat, width, cap.max(slots_per_head(feat / width)), passes)
    };
    let forward_layout = layout_for(Passes::Forward);

    // Row groups, with sources staged when that pays (batches of small graphs).
    let budget = options.group_shared_bytes.unwrap_or(DEFAULT_GROUP_SHARED_BYTES).min(max_shared_bytes);
    let max_rows = options.group_rows.unwrap_or(DEFAULT_GROUP_ROWS).max(1);
    let group_heavy: Vec<u32> = {
        let cut = threshold.min(max_group_row_edges(budget, heads));
        (0..row_offsets.len().saturating_sub(1))
            .filter(|&r| row_offsets[r + 1] - row_offsets[r] > cut)
            .map(|r| r as u32)
            .collect()
    };
    // Staged groups may take all the shared memory a block can have (one block per SM then: its
    // data is on chip); unstaged ones keep to `budget` so that two blocks share an SM.
    let stage_budget = options.group_shared_bytes.unwrap_or(max_shared_bytes).min(max_shared_bytes);
    let groups_for = |staging: bool| {
        form_groups(graph, &group_heavy, heads, feat, if staging { stage_budget } else { budget }, max_rows, staging)
    };
    let staged_groups = match options.group_staging {
        Some(false) => None,
        _ => groups_for(true).filter(|g| {
            let staged: u64 = g.stage_count.iter().map(|&c| c as u64).sum();
            let edges = row_offsets.last().copied().unwrap_or(0);
            options.group_staging == Some(true) || (staged > 0 && edges as f64 / staged as f64 >= MIN_STAGING_REUSE)
        }),
    };

    let schedule = match (options.schedule, &forward_layout) {
        (Schedule::Auto, Err(e)) => {
            reasons.push(format!("edge_parallel: the fused kernels cannot hold this shape ({e})"));
            Schedule::EdgeParallel
        }
        (Schedule::Auto, Ok(_)) if splitting_pays(row_max.max(col_max), threshold, chunk_edges as u64) => {
            reasons.push(format!(
                "row_split: the largest in-degree {row_max} or out-degree {col_max} exceeds {threshold} edges by more than a chunk; rows past {threshold} are split into chunks of {chunk_edges}"
            ));
            Schedule::RowSplit
        }
        (Schedule::Auto, Ok(_)) => {
            reasons.push(format!(
                "row_tiled: no row or column has more than {threshold} + {chunk_edges} edges (the threshold and a chunk)"
            ));
            Schedule::RowTiled
        }
        (forced, Err(e)) if forced.is_fused() => {
            return Err(Error::Unsupported { what: format!("schedule {forced}: {e}") });
        }
        (forced, _) => {
            reasons.push(format!("{forced}: forced"));
            forced
        }
    };
    let groups = if schedule == Schedule::RowGroup {
        let g = match (staged_groups, options.group_staging) {
            (Some(g), _) => g,
            (None, Some(true)) => {
                return Err(Error::Unsupported {
                    what: format!("row_group staging: a group's sources do not fit in {budget} bytes of shared memory"),
                });
            }
            (None, _) => groups_for(false).ok_or_else(|| Error::Unsupported {
                what: format!(
                    "row_group: the scores of one row of {heads} heads do not fit in {budget} bytes of shared memory"
                ),
            })?,
        };
        reasons.push(format!(
            "row_group: {} groups of up to {} edges, {} staged source nodes per group at most, {} bytes of shared memory per block",
            g.first.len(),
            g.score_capacity,
            g.stage_capacity,
            g.shared_bytes
        ));
        Some(g)
    } else {
        None
    };
    // Rows the fused passes split: past the threshold (row_split), or left out of the groups.
    let split = match schedule {
        Schedule::RowSplit => Some(threshold),
        Schedule::RowGroup => Some(threshold.min(max_group_row_edges(budget, heads))),
        _ => None,
    };
    // Level 1 of one pass over `offsets`, with its short whole rows packed one per team.
    let pass_rows = |reasons: &mut Vec<String>,
                     name: &str,
                     offsets: &[u64],
                     layout: &LaneLayout,
                     split: Option<u64>,
                     passes: Passes| {
        let teams = layout.map.teams();
        let variant = variants.get(layout.variant);
        let step = variant.map_or(0, |v| v.step(passes)) as u64;
        let packable = variant.is_some_and(|v| v.has_packed());
        let short = |below: u64| offsets.windows(2).filter(|w| w[1] - w[0] < below).count() as u64;
        let pack_below = match options.team_rows_below {
            _ if !packable => 0,
            Some(n) => n.min(MAX_PACKED_ROW_EDGES + 1),
            None if teams > 1 => {
                let below = step * teams as u64 + 1;
                if packing_pays(short(below), device.multiprocessors) { below } else { 0 }
            }
            None => 0,
        };
        let rows = plan_rows(offsets, split, chunk_edges, !options.natural_row_order, pack_below)?;
        if rows.packed > 0 || options.team_rows_below.is_some() {
            let why = match options.team_rows_below {
                _ if !packable => format!("none: no packed kernels of {} slots", layout.slots),
                Some(_) => "forced".to_string(),
                None => format!(
                    "at most one warp step, {step} edges x {teams} teams, more than one wave of {} warps",
                    device.multiprocessors as u64 * MAX_WARPS_PER_SM
                ),
            };
            reasons.push(format!(
                "{name}: {} of {} whole rows have fewer than {pack_below} edges ({why}): packed {teams} per warp, one per team",
                rows.packed, rows.whole_count
            ));
        }
        Ok::<_, Error>(rows)
    };
    let forward = match forward_layout {
        Ok(layout) => {
            reasons.push(format!(
                "level 2: {}-float loads, {} lanes per head, {} slots per lane, {} edge groups per warp, {} pass(es) over the heads",
                width,
                layout.map.head_lanes(),
                layout.slots,
                layout.map.teams(),
                layout.passes
            ));
            let rows = pass_rows(&mut reasons, "forward", row_offsets, &layout, split, Passes::Forward)?;
            let units_per_block = units_for(&mut reasons, "forward", block_threads, row_offsets)?;
            Ok(PassPlan { layout, rows, block_threads, units_per_block })
        }
        Err(e) => Err(e.to_string()),
    };
    // The backward passes hold twice the vectors: fewer slot counts are compiled for them.
    let backward_layout = layout_for(Passes::Backward).map_err(|e| e.to_string());
    let backward_split = if schedule == Schedule::RowGroup { Some(threshold) } else { split };
    let backward_rows = match &backward_layout {
        Ok(layout) => {
            let rows = pass_rows(&mut reasons, "backward rows", row_offsets, layout, backward_split, Passes::Backward)?;
            let units_per_block = units_for(&mut reasons, "backward rows", backward_threads, row_offsets)?;
            Ok(PassPlan { layout: *layout, rows, block_threads: backward_threads, units_per_block })
        }
        Err(e) => Err(e.clone()),
    };
    let backward_cols = match &backward_layout {
        Ok(layout) => {
            let rows =
                pass_rows(&mut reasons, "backward columns", col_offsets, layout, backward_split, Passes::Backward)?;
            let units_per_block = units_for(&mut reasons, "backward columns", backward_threads, col_offsets)?;
            Ok(PassPlan { layout: *layout, rows, block_threads: backward_threads, units_per_block })
        }
        Err(e) => Err(e.clone()),
    };
    if schedule.is_fused() && backward_layout.is_err() {
        reasons.push("backward: unfused (the fused backward cannot hold this shape)".to_string());
    }
    let unfused_backward = schedule.is_fused() && backward_layout.is_ok() && options.unfused_backward == Some(true);
    if unfused_backward {
        reasons.push("backward: unfused, forced (the fused passes only with dropout)".to_string());
    }
    Ok(Plan {
        schedule,
        heads,
        feat,
        forward,
        groups,
        backward_rows,
        backward_cols,
        tiles: None,
        column_tiles: None,
        blocks: None,
        positive_part: false,
        unfused_backward,
        reasons,
    })
}

/// Rows of a tile at most (`dfgnn_device::kernels::tiles`).
pub const TILE_ROWS: u32 = dfgnn_device::kernels::tiles::TILE_ROWS as u32;
/// Source nodes of a tile at most.
pub const TILE_SOURCES: u32 = dfgnn_device::kernels::tiles::TILE_SOURCES as u32;
/// Edges of a tile at most for the per-edge kernel.
pub const TILE_EDGES: u32 = dfgnn_device::kernels::tiles::edges::MAX_EDGES as u32;
/// The sources of a tile the dense kernel computes scores for: its own, rounded up to a
/// thread's group.
const TILE_SOURCE_GROUP: u32 = dfgnn_device::kernels::tiles::dense::SIDE as u32;
/// The least share of the pairs a tile computes (`TILE_ROWS` × its sources rounded up to 16)
/// that must be edges for `auto` to take the dense tiles. A dense tile's cost hardly depends on
/// its edges, the row passes' and the per-edge tiles' are about proportional to them; the dense
/// kernel beat both from a quarter on (H200, GT forward, docs/results.md, eleventh session,
/// ms dense / per-edge / row passes: batch-1024x120-d50 1×128 at 31 % filled 0.553 / 0.611 /
/// 0.748, 4×64 1.169 / 1.189 / 1.468; batch-512x200-d60 4×64 at 25 % 1.205 / 1.317 / 1.461;
/// batch-1024x120-d20 1×128 at 12.5 % 0.538 / 0.322 / 0.356).
pub const MIN_TILE_FILL: f64 = 0.25;
/// The least edges per staged source row (`E / Σ sources` over the tiles) for `auto` to take the
/// per-edge tiles: a block's fixed costs (staging, six barriers a chunk, a warp per row for the
/// softmax) are paid per tile, and only enough edges per staged row repay them (H200, forward,
/// docs/results.md, eleventh session, ms per-edge / row passes: GT batch-1024x120-d20 1×128, 8.5
/// edges per staged row, 0.322 / 0.356; batch-4096x30-d10 4×64, 10, 0.442 / 0.449;
/// batch-1024x120-d10 1×128, 4.3, 0.224 / 0.224; mol-16384 1×128, about 3, 0.366 / 0.315, 4×64
/// 0.863 / 0.565; GAT batch-1024x120-d50 1×128, 21, 0.325 / 0.524).
pub const MIN_EDGES_PER_STAGED: f64 = 8.0;
/// [`MIN_EDGES_PER_STAGED`] for the models whose tiles restate each row's maximum in the
/// backward's arithmetic (`dfgnn_device::kernels::tiles`: GT, AGNN, GATv2): a read of the row's
/// operand and one source's per row and head more, which the tiles repay only with more edges
/// per staged row (H200, forward, docs/results.md, twelfth session, ms per-edge tiles / row
/// passes: GT batch-1024x120-d20 1×128, 8.5 edges per staged row, 0.358 / 0.361;
/// batch-4096x30-d10 4×64, 10, 0.540 / 0.462; GATv2 batch-1024x120-d50 1×128, 21, 0.698 / 0.795).
pub const MIN_EDGES_PER_STAGED_RESTATED: f64 = 16.0;

/// Which kernel runs a forward over tiles (`dfgnn_device::kernels::tiles`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileKernel {
    /// Every (row, source) pair of a tile as dense products (`tiles::dense`).
    Dense,
    /// The tile's edges one by one from shared memory (`tiles::edges`).
    Edges,
}

impl TileKernel {
    /// Its name in plans: `dense` or `per-edge`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dense => "dense",
            Self::Edges => "per-edge",
        }
    }
}

/// What a model's forward over tiles has, for [`plan_tiles`].
#[derive(Clone, Copy, Debug)]
pub struct TileModel {
    /// The tile kernels the model has.
    pub kernels: &'static [TileKernel],
    /// Whether its tiles restate their maxima (then the per-edge kernel needs
    /// [`MIN_EDGES_PER_STAGED_RESTATED`]).
    pub restated: bool,
    /// Whether its per-edge kernel stages the rows' features ([`TilePlan::stages_rows`]).
    pub stages_rows: bool,
}

impl TileModel {
    /// GT's (and AGNN's): both kernels, the maxima restated, the queries staged.
    pub const GT: Self = Self { kernels: &[TileKernel::Dense, TileKernel::Edges], restated: true, stages_rows: true };
    /// GAT's: the per-edge kernel over node scores, whose maxima need no restating.
    pub const GAT: Self = Self { kernels: &[TileKernel::Edges], restated: false, stages_rows: false };
    /// GATv2's: the per-edge kernel, the maxima restated, the rows' features staged.
    pub const GATV2: Self = Self { kernels: &[TileKernel::Edges], restated: true, stages_rows: true };
}

/// The tiles of a forward: ranges of at most [`TILE_ROWS`] consecutive rows whose columns lie in
/// a range of at most [`TILE_SOURCES`] source nodes, covering every row once, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilePlan {
    /// The kernel that runs them.
    pub kernel: TileKernel,
    /// Each tile's first row.
    pub first: Vec<u32>,
    /// One past each tile's last row.
    pub end: Vec<u32>,
    /// Each tile's first source node.
    pub src: Vec<u32>,
    /// Each tile's source nodes.
    pub src_count: Vec<u32>,
    /// The most edges of any tile.
    pub max_edges: u64,
    /// The graph's edges.
    pub edges: u64,
    /// Whether the per-edge kernel stages the rows' features (a query chunk: GT's, AGNN's and
    /// GATv2's do), or only node scores (GAT's), which takes less shared memory.
    pub stages_rows: bool,
}

impl TilePlan {
    /// The graph's edges over the pairs the dense kernel computes ([`TILE_ROWS`] × each tile's
    /// sources rounded up to 16).
    pub fn fill(&self) -> f64 {
        let pairs: u64 = self
            .src_count
            .iter()
            .map(|&c| u64::from(TILE_ROWS) * u64::from(c.div_ceil(TILE_SOURCE_GROUP) * TILE_SOURCE_GROUP))
            .sum();
        if pairs == 0 { 0.0 } else { self.edges as f64 / pairs as f64 }
    }

    /// The graph's edges per source row the tiles stage.
    pub fn edges_per_staged(&self) -> f64 {
        let staged: u64 = self.src_count.iter().map(|&c| u64::from(c)).sum();
        if staged == 0 { 0.0 } else { self.edges as f64 / staged as f64 }
    }

    /// The per-edge kernel's edge capacity: the most edges of any tile, rounded up to 4.
    pub fn edge_cap(&self) -> u64 {
        self.max_edges.div_ceil(4) * 4
    }

    /// The most sources of any tile.
    pub fn source_cap(&self) -> u32 {
        self.src_count.iter().copied().max().unwrap_or(0)
    }

    /// Dynamic shared memory of a block of the plan's kernel.
    pub fn shared_bytes(&self) -> u64 {
        match self.kernel {
            TileKernel::Dense => u64::from(dfgnn_device::kernels::tiles::dense::Layout::new(self.source_cap()).bytes()),
            TileKernel::Edges => per_edge_shared_bytes(self.edge_cap(), self.source_cap(), self.stages_rows),
        }
    }

    /// Dynamic shared memory of a block of GAT's backward column pass over these tiles of the
    /// CSC (`dfgnn_device::kernels::tiles::columns`) at `feat` features per head, without
    /// overflow for any capacity.
    pub fn column_shared_bytes(&self, feat: u32) -> u64 {
        let capped = self.edge_cap().min(u64::from(TILE_EDGES)) as usize;
        let bytes = columns::shared_bytes(capped, self.source_cap() as usize, feat as usize);
        bytes + 8 * (self.edge_cap() - capped as u64)
    }
}

/// The per-edge kernel's shared memory for tiles of at most `edge_cap` edges (a multiple of 4)
/// and `source_cap` sources, staging the rows' features or not ([`TilePlan::stages_rows`]),
/// without overflow for any `edge_cap`.
fn per_edge_shared_bytes(edge_cap: u64, source_cap: u32, stages_rows: bool) -> u64 {
    use dfgnn_device::kernels::tiles::edges;
    let capped = edge_cap.min(u64::from(TILE_EDGES)) as usize;
    let bytes = if stages_rows {
        edges::shared_bytes(capped, source_cap as usize)
    } else {
        edges::gat_shared_bytes(capped, source_cap as usize)
    };
    u64::from(bytes) + 8 * (edge_cap - capped as u64)
}

/// Cuts the rows into tiles of at most `edge_limit` edges each. First into **segments**, where no
/// row before a cut reaches a column at or past any column of the rows after it (the graphs of a
/// batch, in order); then each tile takes whole segments while they fit ([`TILE_ROWS`] rows,
/// [`TILE_SOURCES`] sources, `edge_limit` edges), and a segment that does not fit alone is cut
/// into tiles of consecutive rows on its own, each as long as it fits. `None` when a tile's
/// sources would span more than [`TILE_SOURCES`] or a row has more than `edge_limit` edges.
fn form_tiles(graph: &GraphShape<'_>, kernel: TileKernel, stages_rows: bool, edge_limit: u64) -> Option<TilePlan> {
    let n = graph.row_offsets.len().saturating_sub(1);
    let edges = graph.row_offsets.last().copied().unwrap_or(0);
    let nonempty = |r: usize| graph.row_offsets[r + 1] > graph.row_offsets[r];
    let edges_of = |first: usize, end: usize| graph.row_offsets[end] - graph.row_offsets[first];
    // suffix_min[r]: the least column of rows r.. (u32::MAX when they are empty).
    let mut suffix_min = vec![u32::MAX; n + 1];
    for r in (0..n).rev() {
        suffix_min[r] = if nonempty(r) { suffix_min[r + 1].min(graph.row_min_col[r]) } else { suffix_min[r + 1] };
    }
    let mut segments = Vec::new();
    let (mut start, mut reach) = (0usize, None::<u32>);
    for r in 0..n {
        if nonempty(r) {
            reach = Some(reach.map_or(graph.row_max_col[r], |m| m.max(graph.row_max_col[r])));
        }
        if reach.is_none_or(|m| m < suffix_min[r + 1]) {
            segments.push((start, r + 1));
            (start, reach) = (r + 1, None);
        }
    }
    if start < n {
        segments.push((start, n));
    }
    let span = |rows: std::ops::Range<usize>| -> (u32, u32) {
        rows.filter(|&r| nonempty(r))
            .fold((u32::MAX, 0), |(lo, hi), r| (lo.min(graph.row_min_col[r]), hi.max(graph.row_max_col[r])))
    };
    let mut plan = TilePlan {
        kernel,
        first: Vec::new(),
        end: Vec::new(),
        src: Vec::new(),
        src_count: Vec::new(),
        max_edges: 0,
        edges,
        stages_rows,
    };
    let mut push = |first: usize, end: usize| -> Option<()> {
        let (lo, hi) = span(first..end);
        let count = if lo <= hi { hi - lo + 1 } else { 0 };
        if count > TILE_SOURCES || edges_of(first, end) > edge_limit {
            return None;
        }
        plan.first.push(first as u32);
        plan.end.push(end as u32);
        plan.src.push(if lo <= hi { lo } else { 0 });
        plan.src_count.push(count);
        plan.max_edges = plan.max_edges.max(edges_of(first, end));
        Some(())
    };
    let rows_max = TILE_ROWS as usize;
    let fits = |first: usize, end: usize| end - first <= rows_max && edges_of(first, end) <= edge_limit;
    let (mut open, mut open_end) = (None::<usize>, 0usize);
    for &(first, end) in &segments {
        if let Some(o) = open {
            let (lo, hi) = span(o..end);
            if fits(o, end) && (lo > hi || hi - lo < TILE_SOURCES) {
                open_end = end;
                continue;
            }
            push(o, open_end)?;
            open = None;
        }
        if fits(first, end) {
            (open, open_end) = (Some(first), end);
        } else {
            let mut r = first;
            while r < end {
                let mut stop = r + 1;
                while stop < end && fits(r, stop + 1) {
                    stop += 1;
                }
                push(r, stop)?;
                r = stop;
            }
        }
    }
    if let Some(o) = open {
        push(o, open_end)?;
    }
    Some(plan)
}

/// Whether a model's forward runs over tiles (`dfgnn_device::kernels::tiles`) instead of its
/// fused pass, and over which kernel. The graph must cut into tiles (at the graphs of a batch, then
/// every [`TILE_ROWS`] rows; see [`TilePlan`]) and the device give a block the kernel's shared
/// memory. Under `auto` (batches of small graphs): the dense kernel when at least
/// [`MIN_TILE_FILL`] of its computed pairs are edges; else the per-edge kernel when its tiles
/// (of at most [`TILE_EDGES`] edges) have at least [`MIN_EDGES_PER_STAGED`] edges per staged
/// source row; else none. `options.tiles` forces a
/// kernel (an error when the graph does not tile for it or the device cannot) or forbids tiles;
/// a forced schedule takes none unless forced. `plan` is the model's plan (its schedule must be
/// fused), `model` what its forward over tiles has ([`TileModel`]); the decision goes to its
/// `tiles` and `reasons`. Dropout's forward runs the fused pass, and so does the backward unless
/// [`plan_column_tiles`] gives its column pass tiles.
pub fn plan_tiles(
    plan: &mut Plan,
    graph: &GraphShape<'_>,
    device: &DeviceLimits,
    options: &PlanOptions,
    model: &TileModel,
) -> Result<()> {
    let min_per_staged = if model.restated { MIN_EDGES_PER_STAGED_RESTATED } else { MIN_EDGES_PER_STAGED };
    let forced = match options.tiles {
        Some(TileChoice::Off) => return Ok(()),
        Some(TileChoice::Dense) => Some(TileKernel::Dense),
        Some(TileChoice::Edges) => Some(TileKernel::Edges),
        None if options.schedule != Schedule::Auto => return Ok(()),
        None => None,
    };
    let refuse = |why: String| -> Result<()> {
        if forced.is_some() { Err(Error::Unsupported { what: format!("tiles: {why}") }) } else { Ok(()) }
    };
    if !plan.schedule.is_fused() || plan.forward.is_err() {
        return refuse(format!("the {} schedule has no fused forward to stand in for", plan.schedule));
    }
    let form = |kernel: TileKernel| -> std::result::Result<TilePlan, String> {
        if !model.kernels.contains(&kernel) {
            return Err(format!("the model has no {} tile kernel", kernel.name()));
        }
        checked_tiles(graph, (kernel, model.stages_rows), plan.heads, device)
    };
    let chosen = match forced {
        Some(kernel) => match form(kernel) {
            Ok(t) => t,
            Err(why) => return refuse(why),
        },
        None => {
            let dense = form(TileKernel::Dense);
            let edges = form(TileKernel::Edges);
            match (dense, edges) {
                (Ok(dense), _) if dense.fill() >= MIN_TILE_FILL => dense,
                (_, Ok(edges)) if edges.edges_per_staged() >= min_per_staged => edges,
                (dense, edges) => {
                    let why = |t: std::result::Result<TilePlan, String>| t.map_or_else(|e| e, |t| describe_tiles(&t));
                    plan.reasons.push(format!(
                        "forward: not over tiles (dense: {}, under {:.0} % filled; per edge: {}, under {min_per_staged} edges per staged source)",
                        why(dense),
                        100.0 * MIN_TILE_FILL,
                        why(edges)
                    ));
                    return Ok(());
                }
            }
        }
    };
    plan.reasons.push(format!(
        "forward: over {} ({}){}",
        describe_tiles(&chosen),
        chosen.kernel.name(),
        if forced.is_some() { " (forced)" } else { "" }
    ));
    plan.tiles = Some(chosen);
    Ok(())
}

/// `graph`'s tiles for `kernel`, staging the rows' features or not (see [`form_tiles`]), when the
/// device can run them over `heads` heads (a block's shared memory, one launch's grid), else why
/// not.
fn checked_tiles(
    graph: &GraphShape<'_>,
    (kernel, stages_rows): (TileKernel, bool),
    heads: u32,
    device: &DeviceLimits,
) -> std::result::Result<TilePlan, String> {
    let limit = match kernel {
        TileKernel::Dense => u64::MAX,
        TileKernel::Edges => u64::from(TILE_EDGES),
    };
    let tiles = form_tiles(graph, kernel, stages_rows, limit).ok_or_else(|| match kernel {
        TileKernel::Dense => format!("a tile's columns span more than {TILE_SOURCES} source nodes"),
        TileKernel::Edges => format!(
            "a tile's columns span more than {TILE_SOURCES} source nodes, or a row has more than {TILE_EDGES} edges"
        ),
    })?;
    if tiles.shared_bytes() > u64::from(device.max_shared_per_block) {
        return Err(format!(
            "a tile needs {} bytes of shared memory per block; the device allows {}",
            tiles.shared_bytes(),
            device.max_shared_per_block
        ));
    }
    if tiles.first.len() as u64 * u64::from(heads) > i32::MAX as u64 {
        return Err(format!("{} tiles x {heads} heads blocks are more than one launch takes", tiles.first.len()));
    }
    Ok(tiles)
}

/// How a plan's reasons describe tiles.
fn describe_tiles(t: &TilePlan) -> String {
    format!(
        "{} tiles of at most {TILE_ROWS} rows x {TILE_SOURCES} sources, {:.1} % filled, {:.1} edges per staged source",
        t.first.len(),
        100.0 * t.fill(),
        t.edges_per_staged()
    )
}

/// Whether the backward's column pass runs over per-edge tiles of the CSC
/// (`dfgnn_device::kernels::tiles::columns`) instead of its fused pass, for a model that has
/// that kernel. `csc` is the graph's transpose ([`crate::DeviceGraph::csc_shape`]: its rows are
/// the source nodes), cut as [`plan_tiles`] cuts the CSR, so that every in-edge of a tile's
/// source node lies in the tile. Under `auto`: when the CSC cuts into per-edge tiles with at
/// least [`MIN_EDGES_PER_STAGED`] edges per staged row (the forward's rule: a tile's fixed costs
/// are the same). `options.tiles` forcing either kernel takes them whenever the CSC cuts into
/// tiles; `Off`, or a forced schedule with tiles not forced, takes none. Never an error: the
/// fused column pass stands in, and the reasons say why.
pub fn plan_column_tiles(plan: &mut Plan, csc: &GraphShape<'_>, device: &DeviceLimits, options: &PlanOptions) {
    let forced = match options.tiles {
        Some(TileChoice::Off) => return,
        Some(TileChoice::Dense | TileChoice::Edges) => true,
        None if options.schedule != Schedule::Auto => return,
        None => false,
    };
    if !plan.schedule.is_fused() || plan.backward_rows.is_err() || plan.backward_cols.is_err() {
        return;
    }
    let fits = |t: &TilePlan| -> std::result::Result<(), String> {
        if plan.feat as usize > columns::MAX_FEAT {
            return Err(format!("{} features per head, more than its {} lanes hold", plan.feat, columns::MAX_FEAT));
        }
        let bytes = t.column_shared_bytes(plan.feat);
        if bytes > u64::from(device.max_shared_per_block) {
            return Err(format!(
                "a tile of the CSC needs {bytes} bytes of shared memory per block; the device allows {}",
                device.max_shared_per_block
            ));
        }
        Ok(())
    };
    let why_not =
        match checked_tiles(csc, (TileKernel::Edges, true), plan.heads, device).and_then(|t| fits(&t).map(|()| t)) {
            Ok(t) if forced || t.edges_per_staged() >= MIN_EDGES_PER_STAGED => {
                plan.reasons.push(format!(
                    "backward columns: over {} of the CSC (per-edge){}",
                    describe_tiles(&t),
                    if forced { " (forced)" } else { "" }
                ));
                plan.column_tiles = Some(t);
                return;
            }
            Ok(t) => format!("{}, under {MIN_EDGES_PER_STAGED} edges per staged source", describe_tiles(&t)),
            Err(why) => why,
        };
    plan.reasons.push(format!("backward columns: not over tiles of the CSC ({why_not})"));
}

/// Nodes of a closed block at most (`dfgnn_device::kernels::tiles::blocks`).
pub const BLOCK_NODES: u32 = blocks::BLOCK_NODES as u32;

/// The least share of the closed blocks' pairs that must be edges for `auto` to run the backward
/// over them ([`plan_blocks`]): their cost is every pair's, the row and column passes' every
/// edge's. (H100, GT forward+backward ms, the row and column passes → the blocks:
/// batch-1024x120-d50, about 42 % of the pairs edges, 1×128 2.62 → 1.77, 4×64 5.20 → 3.64, 8×32
/// 5.45 → 4.24, 2×50 6.77 → 2.19, AGNN 1×128 2.83 → 1.96; batch-1024x120-d20, about 17 %, 1×128
/// 1.54 → 1.74; batch-4096x30-d10 4×64 2.07 → 3.09; mol-16384 1×128 2.01 → 4.20; docs/results.md,
/// twenty-fifth session.)
pub const MIN_BLOCK_FILL: f64 = 0.25;

/// Closed blocks: ranges of at most [`BLOCK_NODES`] consecutive nodes of a square graph whose
/// rows' edges all come from nodes of the range, covering every node once, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockPlan {
    /// Each block's first node, then the graph's nodes (`B + 1` entries).
    pub first: Vec<u32>,
    /// The graph's edges.
    pub edges: u64,
}

impl BlockPlan {
    /// The blocks.
    pub fn count(&self) -> usize {
        self.first.len().saturating_sub(1)
    }

    /// The graph's edges over the (row, source) pairs of the blocks (each block's nodes, squared).
    pub fn fill(&self) -> f64 {
        let pairs: u64 = self.first.windows(2).map(|w| u64::from(w[1] - w[0]).pow(2)).sum();
        if pairs == 0 { 0.0 } else { self.edges as f64 / pairs as f64 }
    }
}

/// `graph`'s closed blocks (see [`BlockPlan`]): the node ranges no edge crosses, packed greedily
/// in order into blocks of at most [`BLOCK_NODES`] nodes; `None` for a graph that is not square
/// or has a range of more than [`BLOCK_NODES`] nodes that no cut divides.
pub fn form_blocks(graph: &GraphShape<'_>) -> Option<BlockPlan> {
    let n = graph.row_offsets.len().saturating_sub(1);
    if graph.col_offsets.len() != graph.row_offsets.len() {
        return None;
    }
    let nonempty = |r: usize| graph.row_offsets[r + 1] > graph.row_offsets[r];
    // suffix_min[r]: the least column of rows r.. (u32::MAX when they are empty).
    let mut suffix_min = vec![u32::MAX; n + 1];
    for r in (0..n).rev() {
        suffix_min[r] = if nonempty(r) { suffix_min[r + 1].min(graph.row_min_col[r]) } else { suffix_min[r + 1] };
    }
    // A cut after node r leaves every edge on one side: rows ..=r reach no column past r, rows
    // r + 1.. none before r + 1.
    let mut first = vec![0u32];
    let (mut start, mut open, mut reach) = (0usize, 0usize, 0u64);
    for r in 0..n {
        if nonempty(r) {
            reach = reach.max(u64::from(graph.row_max_col[r]));
        }
        if reach <= r as u64 && u64::from(suffix_min[r + 1]) > r as u64 {
            // Nodes open..=r form a range no cut divides; close the block before it when it
            // does not fit with it.
            let end = r + 1;
            if end - open > BLOCK_NODES as usize {
                return None;
            }
            if end - start > BLOCK_NODES as usize {
                first.push(open as u32);
                start = open;
            }
            open = end;
        }
    }
    // The last node always closes a range (no column reaches past it), so `open == n` here.
    if n > start {
        first.push(n as u32);
    }
    Some(BlockPlan { first, edges: graph.row_offsets.last().copied().unwrap_or(0) })
}

/// Whether GT's (and so AGNN's) backward runs over closed blocks
/// (`dfgnn_device::kernels::tiles::blocks`) instead of the row and column passes (AGNN's
/// normalisation's backward then runs after it, as after the baselines): only after the forward over dense tiles, whose scores it repeats
/// bit for bit (so the forward must not restate its maxima), on a graph that cuts into closed
/// blocks ([`form_blocks`]) whose shared memory the device holds. Under `auto` (or tiles forced
/// dense) when at least [`MIN_BLOCK_FILL`] of the blocks' pairs are edges;
/// [`PlanOptions::block_backward`] forces (an error when it cannot) or forbids it. The reasons
/// say why. (A backward with dropout, after a forward with dropout over the row passes, runs the
/// fused passes whatever the plan says.)
pub fn plan_blocks(
    plan: &mut Plan,
    graph: &GraphShape<'_>,
    device: &DeviceLimits,
    options: &PlanOptions,
) -> Result<()> {
    let forced = match options.block_backward {
        Some(false) => return Ok(()),
        Some(true) => true,
        None if options.schedule != Schedule::Auto && options.tiles.is_none() => return Ok(()),
        None => false,
    };
    let fill = |b: &BlockPlan| {
        format!("{} closed blocks of at most {BLOCK_NODES} nodes, {:.1} % filled", b.count(), 100.0 * b.fill())
    };
    let why_not = if plan.tiles.as_ref().is_none_or(|t| t.kernel != TileKernel::Dense) {
        "the forward takes no dense tiles".to_string()
    } else {
        match form_blocks(graph) {
            None => format!("the graph does not cut into closed blocks of at most {BLOCK_NODES} nodes"),
            Some(_) if u64::from(blocks::SHARED_BYTES) > u64::from(device.max_shared_per_block) => format!(
                "a block needs {} bytes of shared memory; the device allows {}",
                blocks::SHARED_BYTES,
                device.max_shared_per_block
            ),
            Some(b) if b.count() as u64 * u64::from(plan.heads) > i32::MAX as u64 => {
                format!("{} blocks x {} heads are more than one launch takes", b.count(), plan.heads)
            }
            Some(b) if forced || b.fill() >= MIN_BLOCK_FILL => {
                plan.reasons.push(format!("backward: over {}{}", fill(&b), if forced { " (forced)" } else { "" }));
                plan.blocks = Some(b);
                return Ok(());
            }
            Some(b) => format!("{}: under {:.0} %", fill(&b), 100.0 * MIN_BLOCK_FILL),
        }
    };
    if forced {
        return Err(Error::Unsupported { what: format!("the backward over closed blocks: {why_not}") });
    }
    plan.reasons.push(format!("backward: not over closed blocks ({why_not})"));
    Ok(())
}

/// The least mean in-degree (`E / N_dst`) at which GAT's forward for training sums the positive
/// part: one more `[N_dst, H, F]` written by the forward and read by the row pass, against the
/// row pass's gather of `E` feature rows, which on graphs of a few edges per row mostly hits the
/// L2 cache. (H100, GAT forward+backward ms with / without the part: mol-16384, 2.0 edges per
/// row, 1×128 1.249 / 1.153; gt-as-22july06, 4.2, 4×64 0.321 / 0.275; gt-pgp-strong-2009, 7.6,
/// 4×64 0.442 / 0.458; gt-cond-mat-2005, 8.7, 4×64 0.437 / 0.475, 1×128 0.243 / 0.260;
/// gt-email-Enron, 10.0, 4×64 0.455 / 0.486; er-1M-d16, 16, 4×64 21.4 / 26.6; docs/results.md,
/// seventeenth and eighteenth sessions: between 4.2 and 7.6, so 6.)
pub const MIN_PART_DEGREE: u64 = 6;

/// Whether GAT's forward for training sums the positive part ([`Plan::positive_part`]): on the
/// fused schedules but `row_group` (whose forward has none), when the mean in-degree is at least
/// [`MIN_PART_DEGREE`], or always when `options.positive_part` is `Some(true)`; never when it is
/// `Some(false)`. A pure function of the graph's size and the options; the reasons say why.
pub fn plan_positive_part(plan: &mut Plan, graph: &GraphShape<'_>, options: &PlanOptions) {
    if !plan.schedule.is_fused() || plan.forward.is_err() || plan.groups.is_some() {
        return;
    }
    let rows = graph.row_offsets.len().saturating_sub(1) as u64;
    let edges = graph.row_offsets.last().copied().unwrap_or(0);
    let dense_enough = edges >= MIN_PART_DEGREE.saturating_mul(rows);
    plan.positive_part = options.positive_part.unwrap_or(dense_enough);
    let why = match options.positive_part {
        Some(_) => "forced".to_string(),
        None if dense_enough => format!("{edges} edges over {rows} rows: at least {MIN_PART_DEGREE} per row"),
        None => format!("{edges} edges over {rows} rows: under {MIN_PART_DEGREE} per row, the row pass gathers"),
    };
    let what = if plan.positive_part { "sums" } else { "does not sum" };
    plan.reasons.push(format!("training forward: {what} the positive part ({why})"));
}

/// The most edges per row (mean in-degree) at which `auto` runs GAT's backward unfused
/// ([`plan_gat_backward`]). On rows of a few edges the fused passes spend most of their time on
/// each row's fixed work (about 430 warp instructions and a chain of dependent loads per row on
/// mol-16384 1×128, at 40–45 % occupancy: docs/results.md, twenty-first session), which the
/// unfused kernels, an SDDMM (at 89 % occupancy there) and SpMMs over the edges, do not have.
/// (H100, GAT ms forward+backward `auto` with the fused backward / with the unfused one after the
/// same fused forward: mol-16384, 2.0 edges per row, 1×128 1.052 / 0.973, 4×64 2.007 / 1.946;
/// mol-64K 1×128 3.963 / 3.710; er-1M-d2 1×128 3.233 / 3.045, 4×64 6.215 / 6.097; er-256K-d2
/// 0.837 / 0.782; er-1M-d4, 4.0 edges per row, 1×128 4.430 / 4.366; docs/results.md,
/// twenty-second session.)
pub const MAX_UNFUSED_BACKWARD_DEGREE: u64 = 4;
/// The least edges for `auto` to run GAT's backward unfused: it launches eight kernels more than
/// the fused passes and makes four `[E, H]` arrays, fixed costs that small graphs do not repay.
/// (H100: er-64K-d2, 131,072 edges, 1×128 0.230 / 0.226 ms; mol-4K, 184,612 edges, 0.297 /
/// 0.288. H200, from the suite's `auto` and `unfused` runs at `e828bab`: on gt-power, 13 k edges,
/// citeseer, 9 k, and gt-hep-th, 31 k, the unfused backward took 1.5–2.2 times the fused one at 1×128.)
pub const MIN_UNFUSED_BACKWARD_EDGES: u64 = 1 << 17;
/// The most heads for `auto` to run GAT's backward unfused: its per-edge arrays grow with the
/// heads at the same `H·F` (H100, mol-16384 8×32: 2.065 ms fused, 2.153 unfused).
pub const MAX_UNFUSED_BACKWARD_HEADS: u32 = 4;

/// Whether GAT's backward runs unfused after the fused forward ([`Plan::unfused_backward`]),
/// under `auto` only and unless [`PlanOptions::unfused_backward`] says: where `auto` split no
/// row (`row_tiled`: the unfused kernels take each row and column whole, and a hub row of
/// thousands of edges made them 9 times slower on pl-1M-d3), the backward passes are fused and
/// the forward saves no positive part, with neither tiles nor more than
/// [`MAX_UNFUSED_BACKWARD_HEADS`] heads, at least [`MIN_UNFUSED_BACKWARD_EDGES`] edges and at
/// most [`MAX_UNFUSED_BACKWARD_DEGREE`] per row. A pure function of the graph's size, the plan
/// and the options; the reasons say why. (A backward with dropout runs the fused passes
/// whatever the plan says.)
pub fn plan_gat_backward(plan: &mut Plan, graph: &GraphShape<'_>, options: &PlanOptions) {
    let auto_tiled = options.schedule == Schedule::Auto && plan.schedule == Schedule::RowTiled;
    if options.unfused_backward.is_some() || !auto_tiled || plan.backward_rows.is_err() {
        return;
    }
    let rows = graph.row_offsets.len().saturating_sub(1) as u64;
    let edges = graph.row_offsets.last().copied().unwrap_or(0);
    let why_fused = if plan.positive_part {
        Some("the forward saves the positive part".to_string())
    } else if plan.tiles.is_some() || plan.column_tiles.is_some() {
        Some("it runs over tiles".to_string())
    } else if plan.heads > MAX_UNFUSED_BACKWARD_HEADS {
        Some(format!("{} heads: more than {MAX_UNFUSED_BACKWARD_HEADS}", plan.heads))
    } else if edges < MIN_UNFUSED_BACKWARD_EDGES {
        Some(format!("{edges} edges: fewer than {MIN_UNFUSED_BACKWARD_EDGES}"))
    } else if edges > MAX_UNFUSED_BACKWARD_DEGREE.saturating_mul(rows) {
        Some(format!("{edges} edges over {rows} rows: more than {MAX_UNFUSED_BACKWARD_DEGREE} per row"))
    } else {
        None
    };
    plan.unfused_backward = why_fused.is_none();
    plan.reasons.push(match why_fused {
        Some(why) => format!("backward: fused ({why})"),
        None => format!(
            "backward: unfused after the fused forward ({edges} edges over {rows} rows: at most {MAX_UNFUSED_BACKWARD_DEGREE} per row, none split; at most {MAX_UNFUSED_BACKWARD_HEADS} heads), the fused passes with dropout"
        ),
    });
}

impl Plan {
    /// One line: the schedule and, for the fused ones, the load width, slots and split rows.
    pub fn summary(&self) -> String {
        match &self.forward {
            Ok(p) if self.schedule.is_fused() => {
                let mut parts = vec![format!("w{} s{}", p.layout.width, p.layout.slots)];
                if let Some(t) = &self.tiles {
                    parts.insert(0, format!("forward over {} {} tiles", t.first.len(), t.kernel.name()));
                }
                if let Some(t) = &self.column_tiles {
                    parts.insert(
                        usize::from(self.tiles.is_some()),
                        format!("backward columns over {} tiles", t.first.len()),
                    );
                }
                if let Some(g) = &self.groups {
                    parts.push(format!(
                        "{} groups{}",
                        g.first.len(),
                        if g.stage_capacity > 0 { ", staged" } else { "" }
                    ));
                }
                if let Some(s) = &p.rows.split {
                    parts.push(format!("{} split rows in {} chunks", s.rows.len(), s.units()));
                }
                if p.rows.packed > 0 {
                    parts.push(format!("{} rows packed {} per warp", p.rows.packed, p.layout.map.teams()));
                }
                if self.unfused_backward {
                    parts.push("unfused backward".to_string());
                }
                if let Some(b) = &self.blocks {
                    parts.push(format!("backward over {} closed blocks", b.count()));
                }
                format!("{} ({})", self.schedule, parts.join(", "))
            }
            _ => self.schedule.to_string(),
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "schedule {} for {} heads x {} features", self.schedule, self.heads, self.feat)?;
        for r in &self.reasons {
            writeln!(f, "  {r}")?;
        }
        let pass = |f: &mut fmt::Formatter<'_>, name: &str, p: &PassPlan| {
            let split = p.rows.split.as_ref().map_or("none".to_string(), |s| {
                format!("{} rows in {} chunks of {} edges", s.rows.len(), s.units(), s.chunk_edges)
            });
            writeln!(
                f,
                "  {name}: {} whole rows ({} packed), split: {split}; w{} s{}, {} threads per block",
                p.rows.whole_count, p.rows.packed, p.layout.width, p.layout.slots, p.block_threads
            )
        };
        if let Some(t) = &self.tiles {
            writeln!(
                f,
                "  forward: {} {} tiles, {:.0} % filled, {:.1} edges per staged source",
                t.first.len(),
                t.kernel.name(),
                100.0 * t.fill(),
                t.edges_per_staged()
            )?;
        }
        match &self.forward {
            Ok(p) => pass(f, "forward", p)?,
            Err(e) => writeln!(f, "  forward: not fused ({e})")?,
        }
        match &self.backward_rows {
            Ok(p) => pass(f, "backward rows", p)?,
            Err(e) => writeln!(f, "  backward rows: none ({e})")?,
        }
        if let Some(t) = &self.column_tiles {
            writeln!(
                f,
                "  backward columns: {} per-edge tiles of the CSC, {:.1} edges per staged source",
                t.first.len(),
                t.edges_per_staged()
            )?;
        }
        match &self.backward_cols {
            Ok(p) => pass(f, "backward columns", p),
            Err(e) => writeln!(f, "  backward columns: none ({e})"),
        }
    }
}
