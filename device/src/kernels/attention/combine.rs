//! Combine steps of split rows: merge the partial online-softmax states of a row's chunks
//! (forward), or sum a row's partial gradients (backward). In chunk order: deterministic.
//!
//! # The forward: the last chunk merges
//! Each chunk of a split row writes its partial state `(m, l, acc)` (and its part's), then counts
//! itself finished at the row's first chunk unit ([`crate::abi::ForwardOut::arrivals`]: a fence,
//! then one integer `atomicAdd` per warp). The warp that counts the row's last chunk merges all
//! of the row's partials, read back in chunk order, and writes the row's results as a whole row
//! does ([`merge_partials`]): no launch of its own, and the merge of the rows whose chunks finish
//! early overlaps the rest of the pass. A row of more than [`MERGE_GROUP`] chunks merges in two
//! levels ([`merge_levels`]): the last chunk of each group of [`MERGE_GROUP`] merges the group
//! into its first chunk's partial, and the last group to finish merges the groups, so that the
//! merge after a hub's last chunk is a few loads long, not one per chunk. Which warp merges
//! depends on timing; what it computes does not (every partial is read back from memory, in chunk
//! order): the same inputs give the same bits.
//!
//! # The backward: a launch
//! One warp per (split row, slice of 32 features): warp `w` takes row `w / S`, features
//! `(w mod S)·32 + lane` with `S = ⌈H·F / 32⌉` slices per row (a sum of two arrays: `S` is both
//! arrays' slices, the first's then the second's). Each lane loops over the row's partials, four
//! at a time (independent loads in flight; four running sums added in a fixed order at the end).
//!
//! # Numerics
//! Forward: `out = Σ_u acc_u·2^(m_u − M) / Σ_u l_u·2^(m_u − M)` with `M = max_u m_u`, and
//! `lse = (M + log2 Σ …)·ln 2`; a forward's part ([`crate::abi::PartOut`]) the same with its own
//! sums over the same denominator; each sum in chunk order, rescaled as the running maximum grows
//! (as the forward folds its steps). Backward: `out = factor·Σ_u partial_u`, for one or two arrays
//! of a pass in one launch (their warps one after the other in each row's range).

use crate::abi::{ForwardOut, PartOut, Slot, SumCombineParams};
use crate::kernel;
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::reduce::global_warp;
use crate::kernels::common::segment::Work;
use crate::kernels::common::softmax::rescale_factor;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{self, FULL_MASK, GSlice, GSliceMut, WARP_SIZE, warp};

/// Chunks one first-level merge takes: a split row of more chunks is merged in two levels, each
/// group of this many consecutive chunks by the last of them to finish, then the groups by the
/// last group to finish, so that no warp merges more than this many chunks or groups in a row of
/// fewer than `MERGE_GROUP²` chunks.
pub const MERGE_GROUP: u32 = 8;

/// Partials (chunks, or groups of them) to merge: `count` of them, `stride` units apart from unit
/// `first`, whose finishing is counted at unit `counter`.
#[derive(Clone, Copy)]
pub struct Partials {
    /// The first's unit.
    pub first: u32,
    /// Units between consecutive ones.
    pub stride: u32,
    /// How many.
    pub count: u32,
    /// The unit whose [`crate::abi::ForwardOut::arrivals`] count counts them.
    pub counter: u32,
}

/// The partials of merge level `level` (1 or 2) of the split row that the chunk `work` is part
/// of, and whether the row merges in two levels. Level 1: all of the row's chunks, or, for a row of
/// more than [`MERGE_GROUP`] chunks, the chunk's group of [`MERGE_GROUP`] (counted at its first
/// unit). Level 2: the groups, each group's merged state written over its first chunk's partial
/// (counted at the row's second unit, which no group counts at). The planner gives a row's chunks
/// consecutive units in chunk order, `chunk_edges` edges each but the last.
#[inline(always)]
pub fn merge_levels(work: &Work, offsets: &GSlice<u64>, chunk_edges: u32, level: u32) -> (Partials, bool) {
    let (start, end) = (offsets.load(work.node as usize), offsets.load(work.node as usize + 1));
    let count = (end - start).div_ceil(chunk_edges.max(1) as u64) as u32;
    let first = work.partial - work.chunk;
    if count <= MERGE_GROUP {
        return (Partials { first, stride: 1, count, counter: first }, false);
    }
    if level == 2 {
        return (Partials { first, stride: MERGE_GROUP, count: count.div_ceil(MERGE_GROUP), counter: first + 1 }, true);
    }
    let group = work.chunk / MERGE_GROUP * MERGE_GROUP;
    let in_group = (count - group).min(MERGE_GROUP);
    (Partials { first: first + group, stride: 1, count: in_group, counter: first + group }, true)
}

/// Counts one of `partials` finished, after its stores (every lane's are fenced first); whether
/// it was the last, in which case the warp's later reads see every one's stores (fenced again).
/// Every lane of the warp calls it (warp-uniform result).
#[inline(always)]
pub fn last_to_finish(arrivals: &GSliceMut<u32>, partials: Partials) -> bool {
    simt::fence_device();
    simt::sync_warp(FULL_MASK);
    let before = if simt::lane_id() == 0 { arrivals.atomic_add(partials.counter as usize, 1) } else { 0 };
    let last = warp::shfl_idx(FULL_MASK, before, 0) + 1 == partials.count;
    if last {
        simt::fence_device();
    }
    last
}

/// Partials a merging lane loads at a time per slot: `MERGE_IN_FLIGHT / SLOTS` of them (at
/// least one), the same with a part as without (a forward gives the same bits either way). Two,
/// not more: the merge is inlined after the forward's loop, and at four the capped forwards
/// spilled more in all (GT's `w4_s1` 20 → 44 bytes stored; at two, none), which cost more on
/// large graphs than the merge's fewer steps saved (H100, docs/results.md, twenty-fourth session,
/// call 5: GT pl-1M-d16 4×64 forward 7.15 ms at four, 7.02 at two).
const MERGE_IN_FLIGHT: usize = 2;

/// A merged state for a lane's slots: `(m, l, acc)` and the part's `(l⁺, acc⁺)`.
pub type Merged<V, const SLOTS: usize> = ([f32; SLOTS], [f32; SLOTS], [V; SLOTS], [f32; SLOTS], [V; SLOTS]);

/// One head pass's merge of `partials`: `(M, l, acc)` and, with `PART`, the part's `(l⁺, acc⁺)`
/// under the same maxima, for this lane's `slots` (zero where inactive). One sweep in order, a
/// few partials loaded at a time ([`MERGE_IN_FLIGHT`]), as the forward folds its steps: a larger
/// maximum rescales the sums so far, then each partial adds its sums times `2^(m_u − M)`.
#[inline(always)]
pub fn merge_partials<V: Vector, const SLOTS: usize, const PART: bool>(
    lanes: &Lanes<V>,
    slots: &[Slot; SLOTS],
    partials: Partials,
    dst: &ForwardOut,
    part: &PartOut,
) -> Merged<V, SLOTS> {
    const U: usize = MERGE_IN_FLIGHT;
    // A constant after monomorphisation: the unrolled steps past it compile to nothing.
    let in_flight = (U / SLOTS).max(1);
    let (acc_in, part_in) = (dst.partial_acc.cast::<V>(), part.partial_acc.cast::<V>());
    let mut m = [f32::NEG_INFINITY; SLOTS];
    let mut l = [0.0f32; SLOTS];
    let mut acc = [V::zero(); SLOTS];
    let mut part_l = [0.0f32; SLOTS];
    let mut part_acc = [V::zero(); SLOTS];
    let mut i0 = 0;
    while i0 < partials.count {
        let mut chunk_m = [[f32::NEG_INFINITY; SLOTS]; U];
        let mut chunk_l = [[0.0f32; SLOTS]; U];
        let mut chunk_acc = [[V::zero(); SLOTS]; U];
        let mut chunk_part_l = [[0.0f32; SLOTS]; U];
        let mut chunk_part_acc = [[V::zero(); SLOTS]; U];
        let valid = |k: usize| k < in_flight && i0 + (k as u32) < partials.count;
        unroll!(U, |k| {
            let u = partials.first + (i0 + k as u32) * partials.stride;
            unroll!(SLOTS, |s| {
                if valid(k) && slots[s].active {
                    let at = lanes.scalar(u, slots[s]);
                    chunk_m[k][s] = dst.partial_ml.load(2 * at);
                    chunk_l[k][s] = dst.partial_ml.load(2 * at + 1);
                    chunk_acc[k][s] = acc_in.load(lanes.at(u, slots[s]));
                    if PART {
                        chunk_part_l[k][s] = part.partial_weight.load(at);
                        chunk_part_acc[k][s] = part_in.load(lanes.at(u, slots[s]));
                    }
                }
            });
        });
        unroll!(SLOTS, |s| {
            let mut step_max = m[s];
            unroll!(U, |k| {
                if k < in_flight {
                    step_max = step_max.max(chunk_m[k][s]);
                }
            });
            if step_max > m[s] {
                let r = rescale_factor(m[s], step_max);
                l[s] *= r;
                acc[s] = acc[s].scale(r);
                if PART {
                    part_l[s] *= r;
                    part_acc[s] = part_acc[s].scale(r);
                }
                m[s] = step_max;
            }
            unroll!(U, |k| {
                if valid(k) {
                    let r = rescale_factor(chunk_m[k][s], m[s]);
                    l[s] += chunk_l[k][s] * r;
                    acc[s] = acc[s].add(chunk_acc[k][s].scale(r));
                    if PART {
                        part_l[s] += chunk_part_l[k][s] * r;
                        part_acc[s] = part_acc[s].add(chunk_part_acc[k][s].scale(r));
                    }
                }
            });
        });
        i0 += in_flight as u32;
    }
    (m, l, acc, part_l, part_acc)
}

/// `Σ_u f(u)` over `first..last`, four independent sums (added in a fixed order) so that four
/// loads are in flight.
#[inline(always)]
fn sum4(first: usize, last: usize, f: impl Fn(usize) -> f32) -> f32 {
    let mut acc = [0.0f32; 4];
    let mut u = first;
    while u + 4 <= last {
        acc[0] += f(u);
        acc[1] += f(u + 1);
        acc[2] += f(u + 2);
        acc[3] += f(u + 3);
        u += 4;
    }
    while u < last {
        acc[0] += f(u);
        u += 1;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// `b` when `second`, else `a`.
#[inline(always)]
fn pick<T>(second: bool, a: T, b: T) -> T {
    if second { b } else { a }
}

kernel! {
    /// Sums the backward partials of each split row (or column) into one or two arrays, each
    /// times its factor: a row's warps take the first array's slices of 32 features, then the
    /// second's.
    pub kernel ATTENTION_SUM_COMBINE = fn attention_sum_combine(p: &SumCombineParams) {
        let heads = p.heads as usize;
        let slices = |feat: u32| (heads * feat as usize).div_ceil(WARP_SIZE as usize);
        let (first_slices, per_row) = (slices(p.targets[0].feat), slices(p.targets[0].feat) + slices(p.targets[1].feat));
        if per_row == 0 {
            return;
        }
        let w = global_warp() as usize;
        let (r, k) = (w / per_row, w % per_row);
        // Field by field: values, not a reference chosen at run time (which would copy the
        // parameters to local memory).
        let second = k >= first_slices;
        let [a, b] = &p.targets;
        let (partial, out) = (pick(second, a.partial, b.partial), pick(second, a.out, b.out));
        let (feat, factor) = (pick(second, a.feat, b.feat), pick(second, a.factor, b.factor));
        let width = heads * feat as usize;
        let x = (if second { k - first_slices } else { k }) * WARP_SIZE as usize + simt::lane_id() as usize;
        if r >= p.num_rows as usize || x >= width {
            return;
        }
        let (row, first, last) = (p.rows.load(r) as usize, p.first_unit.load(r) as usize, p.first_unit.load(r + 1) as usize);
        let sum = sum4(first, last, |u| partial.load(u * width + x));
        out.store(row * width + x, sum * factor);
    }
}
