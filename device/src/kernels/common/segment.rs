//! Which edges a warp owns: the unit of work of the row and column kernels (the analogue of
//! FlashAttention's `BlockInfo`: offsets only).

use crate::abi::Units;
use crate::simt::{self, GSlice, WARP_SIZE};

/// One warp's work: a row (or column) and a range of its edges.
#[derive(Clone, Copy)]
pub struct Work {
    /// The unit's index in its launch.
    pub unit: u32,
    /// The row (CSR) or column (CSC) the edges belong to.
    pub row: u32,
    /// First edge (a CSR or CSC slot).
    pub start: u64,
    /// One past the last edge.
    pub end: u64,
    /// Whether this is a chunk of a split row (results go to partials).
    pub split: bool,
    /// The chunk index within a split row (0 for a whole row).
    pub chunk: u32,
}

/// The unit of this warp (`block.x / WARP_SIZE` warps per block, one unit each), or `None` past
/// the last unit. Uniform across the warp.
#[inline(always)]
pub fn this_warp(offsets: &GSlice<u64>, units: &Units) -> Option<Work> {
    let warps = simt::block_dim().x / WARP_SIZE;
    let unit = simt::block_idx().x * warps + simt::warp_id();
    if unit >= units.num_units {
        return None;
    }
    let row = if units.unit_rows.is_empty() { unit } else { units.unit_rows.load(unit as usize) };
    let (first, last) = (offsets.load(row as usize), offsets.load(row as usize + 1));
    if units.chunk_edges == 0 {
        return Some(Work { unit, row, start: first, end: last, split: false, chunk: 0 });
    }
    let chunk = units.unit_chunks.load(unit as usize);
    let start = first + chunk as u64 * units.chunk_edges as u64;
    let end = (start + units.chunk_edges as u64).min(last);
    Some(Work { unit, row, start, end, split: true, chunk })
}
