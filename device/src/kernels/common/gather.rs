//! The gather both row kernels (forward and the backward's row pass) start each step with: one
//! chunk of a row's edges, per edge group, with its neighbours' keys and values — every load of
//! the chunk issued before any is used, so they are in flight together.

use crate::kernels::common::lanes::Slot;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::GSlice;

/// A chunk of `CHUNK` edges of one edge group: whether each is real, and its keys and values.
pub struct Chunk<V, const SLOTS: usize, const CHUNK: usize> {
    /// Whether edge `c` of the chunk exists (the row may end inside the chunk).
    pub valid: [bool; CHUNK],
    /// `keys[c][s]`: slot `s` of the key of edge `c`'s source (zero where inactive).
    pub keys: [[V; SLOTS]; CHUNK],
    /// `values[c][s]`: slot `s` of the value of edge `c`'s source.
    pub values: [[V; SLOTS]; CHUNK],
}

/// Gathers the chunk starting at edge `base` for edge group `group` of `groups`: edge `c` of the
/// chunk is `base + c·groups + group`, real when below `end`; `at(node, slot)` is where a node's
/// features start for a slot, `(node·H + head)·Fv + vector`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn gather<V: Vector, const SLOTS: usize, const CHUNK: usize>(
    columns: &GSlice<u32>,
    k: &GSlice<V>,
    v: &GSlice<V>,
    slots: &[Slot; SLOTS],
    at: &impl Fn(u32, Slot) -> usize,
    base: u64,
    end: u64,
    group: u32,
    groups: u32,
) -> Chunk<V, SLOTS, CHUNK> {
    let mut chunk =
        Chunk { valid: [false; CHUNK], keys: [[V::zero(); SLOTS]; CHUNK], values: [[V::zero(); SLOTS]; CHUNK] };
    unroll!(CHUNK, |c| {
        let e = base + (c as u32 * groups + group) as u64;
        chunk.valid[c] = e < end;
        if chunk.valid[c] {
            let col = columns.load(e as usize);
            unroll!(SLOTS, |s| {
                if slots[s].active {
                    chunk.keys[c][s] = k.load(at(col, slots[s]));
                    chunk.values[c][s] = v.load(at(col, slots[s]));
                }
            });
        }
    });
    chunk
}
