//! Which edges a warp owns: the units of work of the row and column kernels (the analogue of
//! FlashAttention's `BlockInfo`: offsets only).
//!
//! Block `b` owns tasks `[b·U, (b+1)·U)` with `U = units.units_per_block`; its warps take them in
//! turn (warp `w` takes `b·U + w`, `b·U + w + warps`, …). With `U` equal to the warps per block
//! each warp takes one task; a larger `U` keeps a run of neighbouring rows on one multiprocessor,
//! so rows that share neighbours (batches of small graphs) find them in its L1 cache. A task is
//! one unit, whose edges the warp's teams share, or, in a packed entry, one unit per team from
//! `units.packed_first` on ([`Units::tasks`]).

use crate::abi::{LaneMap, Units};
use crate::simt::{self, FULL_MASK, GSlice, WARP_SIZE, warp};

/// One warp's work: a node (row or column) and a range of its edges.
#[derive(Clone, Copy)]
pub struct Work {
    /// For a chunk of a split row, its partial result's index (0 for a whole row).
    pub partial: u32,
    /// The node whose edges these are: a destination row (CSR) or a source column (CSC).
    pub node: u32,
    /// First edge (a CSR or CSC slot).
    pub start: u64,
    /// One past the last edge.
    pub end: u64,
    /// Whether this is a chunk of a split row (results go to partials).
    pub split: bool,
    /// The chunk index within a split row (0 for a whole row).
    pub chunk: u32,
    /// Whether the warp's teams took different rows (warp-uniform): each team's `node`,
    /// `start` and `end` are its own, and the teams' states are never merged.
    pub packed: bool,
    /// In a packed task, whether this lane's team took a row (the last task may have fewer rows
    /// than teams) and writes its results; in a shared one, `true` (team 0 writes).
    pub writes: bool,
    /// Where the warp's loop stops: `end`, or, when packed, `start` plus the longest of the
    /// teams' rows (each team's edges past its `end` are not real), so that every lane makes
    /// the same number of steps.
    pub stop: u64,
}

/// The tasks of this warp, in order (`PACKED`: of a packed entry). Uniform across the warp.
pub struct WarpUnits<const PACKED: bool> {
    next: u32,
    end: u32,
    step: u32,
    teams: u32,
    team: u32,
}

/// The tasks this warp takes, with the teams of `map`.
#[inline(always)]
pub fn warp_units<const PACKED: bool>(units: &Units, map: &LaneMap) -> WarpUnits<PACKED> {
    let per_block = units.units_per_block;
    let first = simt::block_idx().x as u64 * per_block as u64;
    let end = (first + per_block as u64).min(units.tasks(PACKED, map.teams()) as u64) as u32;
    let next = (first + simt::warp_id() as u64).min(end as u64) as u32;
    WarpUnits { next, end, step: simt::block_dim().x / WARP_SIZE, teams: map.teams(), team: map.team(simt::lane_id()) }
}

impl<const PACKED: bool> WarpUnits<PACKED> {
    /// This lane's share of the next task, or `None` when this warp is done.
    #[inline(always)]
    pub fn next(&mut self, offsets: &GSlice<u64>, units: &Units) -> Option<Work> {
        if self.next >= self.end {
            return None;
        }
        let task = self.next;
        self.next = self.next.saturating_add(self.step);
        let row_of = |unit: u32| if units.unit_rows.is_empty() { unit } else { units.unit_rows.load(unit as usize) };
        if PACKED {
            // One unit per team; teams past the last unit take the last row and write nothing.
            let unit = units.packed_first as u64 + task as u64 * self.teams as u64;
            let mine = unit + self.team as u64;
            let writes = mine < units.num_units as u64;
            let row = row_of(if writes { mine } else { units.num_units as u64 - 1 } as u32);
            let first = offsets.load(row as usize);
            let last = if writes { offsets.load(row as usize + 1) } else { first };
            // The planner packs only rows of fewer than 2^32 edges.
            let span = warp::reduce_max_u32(FULL_MASK, (last - first).min(u32::MAX as u64) as u32) as u64;
            let stop = first + span;
            return Some(Work {
                partial: 0,
                node: row,
                start: first,
                end: last,
                split: false,
                chunk: 0,
                packed: true,
                writes,
                stop,
            });
        }
        let row = row_of(task);
        let (first, last) = (offsets.load(row as usize), offsets.load(row as usize + 1));
        let writes = true;
        let partial = task.wrapping_sub(units.split_first);
        if partial >= units.split_count {
            let (packed, split, chunk) = (false, false, 0);
            return Some(Work {
                partial: 0,
                node: row,
                start: first,
                end: last,
                split,
                chunk,
                packed,
                writes,
                stop: last,
            });
        }
        let chunk = units.unit_chunks.load(partial as usize);
        let start = first + chunk as u64 * units.chunk_edges as u64;
        let end = (start + units.chunk_edges as u64).min(last);
        Some(Work { partial, node: row, start, end, split: true, chunk, packed: false, writes, stop: end })
    }
}
