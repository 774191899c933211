//! How a warp's lanes cover the features of all heads of one edge ("level 2" of the schedule).
//!
//! A node's features are `H` heads of `F` floats, loaded as `Fv = F / WIDTH` vectors per head.
//! Each head gets a group of `G` lanes (`G = pow2ceil(Fv)` up to 32); when a head needs more than
//! 32 vectors it spans `SPH = pow2ceil(Fv) / 32` register slots of all 32 lanes. A lane holds
//! `SLOTS` vectors; in slot `s` it covers
//!
//! ```text
//! head   = head0 + (s / SPH) · (EW / G) + (lane mod EW) / G
//! vector = (s mod SPH) · G + lane mod G          (inactive when head ≥ H or vector ≥ Fv)
//! ```
//!
//! where `EW` (edge width) is 32, or less when all heads of an edge need fewer lanes than a warp:
//! then the warp splits into `32 / EW` edge groups that take different edges of the row, and
//! their partial results are merged at the end. One pass covers `(SLOTS / SPH) · (EW / G)` heads;
//! more heads take more passes over the row.
//!
//! A dot product over one head's features is a sum over its lanes and slots: in-lane over the
//! `SPH` slots, then `log2(G)` butterfly shuffles. Every lane of a warp runs every shuffle, so the
//! control flow around them is uniform.

use crate::kernels::common::unroll::unroll;
use crate::simt::{FULL_MASK, WARP_SIZE, warp};

/// The lane mapping of one launch (computed and checked by the host planner).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneMap {
    /// Lanes per head group (`G`): a power of two, 1..=32.
    pub group: u32,
    /// Slots per head (`SPH`): a power of two; 1 unless `G` = 32.
    pub slots_per_head: u32,
    /// Lanes per edge group (`EW`): a power of two, a multiple of `G`, at most 32.
    pub edge_width: u32,
    /// Heads one pass covers.
    pub heads_per_pass: u32,
}

/// Where one lane's slot points: a head and a vector index within it.
#[derive(Clone, Copy)]
pub struct Slot {
    /// Head, counted from head 0 of the node.
    pub head: u32,
    /// Vector index within the head's `Fv` vectors.
    pub vector: u32,
    /// Whether the slot covers a real feature (head < H and vector < Fv).
    pub active: bool,
}

impl LaneMap {
    /// The slot `s` of `lane` in the pass starting at `head0`.
    #[inline(always)]
    pub fn slot(&self, s: u32, lane: u32, head0: u32, heads: u32, vectors_per_head: u32) -> Slot {
        let lane_in_edge = lane % self.edge_width;
        let head = head0 + (s / self.slots_per_head) * (self.edge_width / self.group) + lane_in_edge / self.group;
        let vector = (s % self.slots_per_head) * self.group + lane_in_edge % self.group;
        Slot { head, vector, active: head < heads && vector < vectors_per_head && head < head0 + self.heads_per_pass }
    }

    /// This lane's edge group.
    #[inline(always)]
    pub fn edge_group(&self, lane: u32) -> u32 {
        lane / self.edge_width
    }

    /// Edge groups per warp.
    #[inline(always)]
    pub fn edge_groups(&self) -> u32 {
        WARP_SIZE / self.edge_width
    }

    /// Per-head sums of per-slot partial sums: afterwards `partial[s]` holds, in every lane, the
    /// total over the head of slot `s`.
    #[inline(always)]
    pub fn head_sum<const SLOTS: usize>(&self, partial: &mut [f32; SLOTS]) {
        let sph = self.slots_per_head as usize;
        let mut total = [0.0f32; SLOTS];
        unroll!(SLOTS, |s| {
            // Uniform across the warp: `s` and `sph` are the same in every lane.
            if s.is_multiple_of(sph) {
                let mut v = 0.0;
                unroll!(SLOTS, |t| {
                    if t >= s && t < s + sph {
                        v += partial[t];
                    }
                });
                let mut offset = self.group / 2;
                while offset > 0 {
                    v += warp::shfl_xor(FULL_MASK, v, offset);
                    offset /= 2;
                }
                total[s] = v;
            }
        });
        unroll!(SLOTS, |s| {
            let first = s - s % sph;
            unroll!(SLOTS, |t| {
                if t == first {
                    partial[s] = total[t];
                }
            });
        });
    }
}
