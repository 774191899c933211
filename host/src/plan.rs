//! The dynamic scheduler: a pure function from the graph's degrees, the feature shape and the
//! device's limits to a plan (design.md §4).
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

use dfgnn_device::kernels::common::lanes::LaneMap;
use dfgnn_device::simt::WARP_SIZE;

use crate::error::{Error, Result};

/// A thread schedule of the attention kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// Let the planner choose from the graph and the feature shape.
    #[default]
    Auto,
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
    pub const ALL: [Schedule; 5] = [
        Schedule::Auto,
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
            Self::EdgeParallel => "edge_parallel",
            Self::Unfused => "unfused",
        }
    }
}

impl Schedule {
    /// Whether the schedule runs the fused kernels (no `[E, H]` intermediates).
    pub fn is_fused(self) -> bool {
        matches!(self, Self::RowTiled | Self::RowSplit)
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
        Self::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| Error::Unsupported {
                what: format!(
                    "schedule `{s}` (known: {})",
                    Self::ALL.map(Schedule::name).join(", ")
                ),
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
}

/// Level 2: how one warp's lanes cover the heads and features of an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneLayout {
    /// Features per load: 1 or 4.
    pub width: u32,
    /// Register slots (vectors) per lane: 1, 2, 4 or 8.
    pub slots: u32,
    /// The lane mapping the kernels read.
    pub map: LaneMap,
    /// Passes over a row to cover all heads.
    pub passes: u32,
}

/// Slots needed for the widest heads: a head of more than 32 vectors spans several slots.
fn slots_per_head(vectors_per_head: u32) -> u32 {
    (vectors_per_head.next_power_of_two() / WARP_SIZE).max(1)
}

/// Plans level 2 for `heads` × `feat` with at most `max_slots` slots per lane and the given load
/// width, or explains why it cannot.
pub fn lane_layout(heads: u32, feat: u32, width: u32, max_slots: u32) -> Result<LaneLayout> {
    if heads == 0 || feat == 0 {
        return Err(Error::Unsupported {
            what: format!("{heads} heads of {feat} features (both must be at least 1)"),
        });
    }
    if feat % width != 0 {
        return Err(Error::Unsupported {
            what: format!("loads of {width} features with F = {feat}"),
        });
    }
    let vectors = feat / width;
    let padded = vectors.next_power_of_two();
    let group = padded.min(WARP_SIZE);
    let sph = slots_per_head(vectors);
    if sph > max_slots {
        return Err(Error::Unsupported {
            what: format!(
                "F = {feat} needs {sph} register slots of {width}-float loads per lane, at most {max_slots} available here"
            ),
        });
    }
    let heads_per_slot = WARP_SIZE / group;
    let (slots, edge_width) = if sph == 1 && heads * group <= WARP_SIZE {
        // All heads of an edge fit in part of a warp: several edges per step.
        (1, (heads * group).next_power_of_two())
    } else {
        let slots_needed = if sph > 1 {
            sph * heads
        } else {
            heads.div_ceil(heads_per_slot)
        };
        (slots_needed.next_power_of_two().min(max_slots), WARP_SIZE)
    };
    let heads_per_pass = (slots / sph) * (edge_width / group);
    let map = LaneMap {
        group,
        slots_per_head: sph,
        edge_width,
        heads_per_pass,
    };
    Ok(LaneLayout {
        width,
        slots,
        map,
        passes: heads.div_ceil(heads_per_pass),
    })
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
    /// The backward's row pass (dq), or why there is none.
    pub backward_rows: std::result::Result<PassPlan, String>,
    /// The backward's column pass (dk, dv), or why there is none.
    pub backward_cols: std::result::Result<PassPlan, String>,
    /// Why the planner chose what it chose, one line per decision.
    pub reasons: Vec<String>,
}

/// Rows with more edges than this are split by default: a warp takes about 2048 edges in the time
/// the whole grid needs for a wave of ordinary rows on a million-node graph.
pub const DEFAULT_SPLIT_THRESHOLD: u64 = 2048;
/// Edges per chunk of a split row by default.
pub const DEFAULT_CHUNK_EDGES: u32 = 512;
/// Threads per block of the row kernels by default: 4 warps.
pub const DEFAULT_BLOCK_THREADS: u32 = 128;
/// Most slots the forward uses by default; more heads take more passes (8 only for wide heads).
pub const DEFAULT_MAX_SLOTS: u32 = 4;

/// Plans level 1 over rows with the given CSR (or CSC) offsets.
fn plan_rows(offsets: &[u64], split_threshold: Option<u64>, chunk_edges: u32) -> Result<RowPlan> {
    let n = offsets.len().saturating_sub(1);
    if n > u32::MAX as usize {
        return Err(Error::Unsupported {
            what: format!("{n} rows (at most 2^32 - 1)"),
        });
    }
    let Some(threshold) = split_threshold else {
        return Ok(RowPlan {
            whole: None,
            whole_count: n,
            split: None,
        });
    };
    let degree = |r: usize| offsets[r + 1] - offsets[r];
    let heavy: Vec<u32> = (0..n)
        .filter(|&r| degree(r) > threshold)
        .map(|r| r as u32)
        .collect();
    if heavy.is_empty() {
        return Ok(RowPlan {
            whole: None,
            whole_count: n,
            split: None,
        });
    }
    let whole: Vec<u32> = (0..n)
        .filter(|&r| degree(r) <= threshold)
        .map(|r| r as u32)
        .collect();
    let mut first_unit = vec![0u32];
    let (mut unit_rows, mut unit_chunks) = (Vec::new(), Vec::new());
    for &r in &heavy {
        let chunks = degree(r as usize).div_ceil(chunk_edges as u64);
        if unit_rows.len() as u64 + chunks > u32::MAX as u64 {
            return Err(Error::Unsupported {
                what: "more than 2^32 chunks of split rows".to_string(),
            });
        }
        for c in 0..chunks {
            unit_rows.push(r);
            unit_chunks.push(c as u32);
        }
        first_unit.push(unit_rows.len() as u32);
    }
    Ok(RowPlan {
        whole_count: whole.len(),
        whole: Some(whole),
        split: Some(SplitPlan {
            rows: heavy,
            first_unit,
            unit_rows,
            unit_chunks,
            chunk_edges,
        }),
    })
}

/// Plans the attention kernels for a graph with CSR `row_offsets` and CSC `col_offsets`, and
/// `heads` × `feat` features, under `options`.
pub fn plan(
    row_offsets: &[u64],
    col_offsets: &[u64],
    heads: u32,
    feat: u32,
    options: &PlanOptions,
) -> Result<Plan> {
    let mut reasons = Vec::new();
    let max_degree = |offsets: &[u64]| offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    let threshold = options.split_threshold.unwrap_or(DEFAULT_SPLIT_THRESHOLD);
    let chunk_edges = options.chunk_edges.unwrap_or(DEFAULT_CHUNK_EDGES);
    if chunk_edges == 0 {
        return Err(Error::Unsupported {
            what: "chunks of 0 edges".to_string(),
        });
    }
    let block_threads = options.block_threads.unwrap_or(DEFAULT_BLOCK_THREADS);
    if block_threads == 0 || block_threads % WARP_SIZE != 0 || block_threads > 1024 {
        return Err(Error::Unsupported {
            what: format!("{block_threads} threads per block (a multiple of 32, at most 1024)"),
        });
    }
    let (row_max, col_max) = (max_degree(row_offsets), max_degree(col_offsets));
    let width = if feat % 4 == 0 && !options.scalar_loads {
        4
    } else {
        1
    };
    let layout_for = |max_slots: u32| -> Result<LaneLayout> {
        let cap = options.max_slots.unwrap_or(max_slots).min(max_slots);
        // Wide heads need their slots whatever the default cap.
        let needed = slots_per_head(feat / width);
        lane_layout(heads, feat, width, cap.max(needed.min(8)))
    };
    let forward_layout = layout_for(DEFAULT_MAX_SLOTS);
    let schedule = match (options.schedule, &forward_layout) {
        (Schedule::Auto, Err(e)) => {
            reasons.push(format!(
                "edge_parallel: the fused kernels cannot hold this shape ({e})"
            ));
            Schedule::EdgeParallel
        }
        (Schedule::Auto, Ok(_)) if row_max > threshold || col_max > threshold => {
            reasons.push(format!(
                "row_split: the largest in-degree {row_max} or out-degree {col_max} exceeds {threshold} edges; those rows are split into chunks of {chunk_edges}"
            ));
            Schedule::RowSplit
        }
        (Schedule::Auto, Ok(_)) => {
            reasons.push(format!(
                "row_tiled: no row or column has more than {threshold} edges"
            ));
            Schedule::RowTiled
        }
        (forced, Err(e)) if forced.is_fused() => {
            return Err(Error::Unsupported {
                what: format!("schedule {forced}: {e}"),
            });
        }
        (forced, _) => {
            reasons.push(format!("{forced}: forced"));
            forced
        }
    };
    let split = (schedule == Schedule::RowSplit).then_some(threshold);
    let forward = match forward_layout {
        Ok(layout) => {
            reasons.push(format!(
                "level 2: {}-float loads, {} lanes per head, {} slots per lane, {} edge groups per warp, {} pass(es) over the heads",
                width,
                layout.map.group,
                layout.slots,
                WARP_SIZE / layout.map.edge_width,
                layout.passes
            ));
            Ok(PassPlan {
                layout,
                rows: plan_rows(row_offsets, split, chunk_edges)?,
                block_threads,
            })
        }
        Err(e) => Err(e.to_string()),
    };
    // The backward passes hold twice the vectors; with F4 loads they stop at 4 slots.
    let backward_cap = if width == 4 { 4 } else { 8 };
    let backward_layout = layout_for(backward_cap).map_err(|e| e.to_string());
    let backward_rows = match &backward_layout {
        Ok(layout) => Ok(PassPlan {
            layout: *layout,
            rows: plan_rows(row_offsets, split, chunk_edges)?,
            block_threads,
        }),
        Err(e) => Err(e.clone()),
    };
    let backward_cols = match &backward_layout {
        Ok(layout) => Ok(PassPlan {
            layout: *layout,
            rows: plan_rows(col_offsets, split, chunk_edges)?,
            block_threads,
        }),
        Err(e) => Err(e.clone()),
    };
    if schedule.is_fused() && backward_layout.is_err() {
        reasons.push("backward: unfused (the fused backward cannot hold this shape)".to_string());
    }
    Ok(Plan {
        schedule,
        heads,
        feat,
        forward,
        backward_rows,
        backward_cols,
        reasons,
    })
}

impl Plan {
    /// One line: the schedule and, for the fused ones, the load width, slots and split rows.
    pub fn summary(&self) -> String {
        match &self.forward {
            Ok(p) if self.schedule.is_fused() => format!(
                "{} (w{} s{}{})",
                self.schedule,
                p.layout.width,
                p.layout.slots,
                p.rows.split.as_ref().map_or(String::new(), |s| format!(
                    ", {} split rows in {} chunks",
                    s.rows.len(),
                    s.units()
                ))
            ),
            _ => self.schedule.to_string(),
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "schedule {} for {} heads x {} features",
            self.schedule, self.heads, self.feat
        )?;
        for r in &self.reasons {
            writeln!(f, "  {r}")?;
        }
        let pass = |f: &mut fmt::Formatter<'_>, name: &str, p: &PassPlan| {
            let split = p.rows.split.as_ref().map_or("none".to_string(), |s| {
                format!(
                    "{} rows in {} chunks of {} edges",
                    s.rows.len(),
                    s.units(),
                    s.chunk_edges
                )
            });
            writeln!(
                f,
                "  {name}: {} whole rows, split: {split}; w{} s{}, {} threads per block",
                p.rows.whole_count, p.layout.width, p.layout.slots, p.block_threads
            )
        };
        match &self.forward {
            Ok(p) => pass(f, "forward", p)?,
            Err(e) => writeln!(f, "  forward: not fused ({e})")?,
        }
        match &self.backward_rows {
            Ok(p) => pass(f, "backward rows", p)?,
            Err(e) => writeln!(f, "  backward rows: none ({e})")?,
        }
        match &self.backward_cols {
            Ok(p) => pass(f, "backward columns", p),
            Err(e) => writeln!(f, "  backward columns: none ({e})"),
        }
    }
}
