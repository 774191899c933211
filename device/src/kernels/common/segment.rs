//! Which edges a warp owns: the units of work of the row and column kernels (the analogue of
//! FlashAttention's `BlockInfo`: offsets only).
//!
//! Block `b` owns units `[b·U, (b+1)·U)` with `U = units.units_per_block`; its warps take them in
//! turn (warp `w` takes `b·U + w`, `b·U + w + warps`, …). With `U` equal to the warps per block
//! each warp takes one unit; a larger `U` keeps a run of neighbouring rows on one multiprocessor,
//! so rows that share neighbours (batches of small graphs) find them in its L1 cache.

use crate::abi::Units;
use crate::simt::{self, GSlice, WARP_SIZE};

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
}

/// The units of this warp, in order. Uniform across the warp.
pub struct WarpUnits {
    next: u32,
    end: u32,
    step: u32,
}

/// The units this warp takes.
#[inline(always)]
pub fn warp_units(units: &Units) -> WarpUnits {
    let per_block = units.units_per_block;
    let first = simt::block_idx().x as u64 * per_block as u64;
    let end = (first + per_block as u64).min(units.num_units as u64) as u32;
    let next = (first + simt::warp_id() as u64).min(end as u64) as u32;
    WarpUnits { next, end, step: simt::block_dim().x / WARP_SIZE }
}

impl WarpUnits {
    /// The next unit, or `None` when this warp is done.
    #[inline(always)]
    pub fn next(&mut self, offsets: &GSlice<u64>, units: &Units) -> Option<Work> {
        if self.next >= self.end {
            return None;
        }
        let unit = self.next;
        self.next = self.next.saturating_add(self.step);
        let row = if units.unit_rows.is_empty() { unit } else { units.unit_rows.load(unit as usize) };
        let (first, last) = (offsets.load(row as usize), offsets.load(row as usize + 1));
        let partial = unit.wrapping_sub(units.split_first);
        if partial >= units.split_count {
            return Some(Work { partial: 0, node: row, start: first, end: last, split: false, chunk: 0 });
        }
        let chunk = units.unit_chunks.load(partial as usize);
        let start = first + chunk as u64 * units.chunk_edges as u64;
        let end = (start + units.chunk_edges as u64).min(last);
        Some(Work { partial, node: row, start, end, split: true, chunk })
    }
}
