//! The fused forward: per destination row, SDDMM → online softmax → SpMM in registers, all heads
//! of an edge together, no per-edge intermediate in memory.
//!
//! # Grid mapping
//! One warp per unit (`block.x` a multiple of 32): a whole row, or a chunk of a split row (see
//! [`crate::abi::Units`]). The warp's lanes cover all heads' features of an edge as the
//! [`LaneMap`](crate::abi::LaneMap) says, `SLOTS` vectors per lane; when an edge needs fewer than
//! 32 lanes, the warp's teams take different edges (merged at the end), or, for the short whole
//! rows of a packed task, a row each (never merged). Per step each team gathers `STEP` edges'
//! keys and values (all in flight together), scores them, updates the online softmax once per
//! step, and accumulates.
//!
//! # Shared memory
//! None. Global: a split row's chunks count their arrivals ([`ForwardOut::arrivals`]).
//!
//! # Numerics
//! f32, scores in base-2 units, one `ex2.approx` per score and per rescale; `l` and the
//! accumulator are sums in blocks of 32 edges ([`Blocked`]), so a long row of
//! repeated edges does not drift (the backward's cancellation in `Σ_j ds_ij` needs both accurate). Attention dropout
//! (when on) scales each edge's weight in the aggregation by its mask factor, not in the sum
//! `l` the output is normalised by: `out = Σ α_ij·factor_ij·v_j`. Whole rows write
//! `out = acc / l` (0 for an empty row) and `lse = (m + log2 l)·ln 2` (−∞ for an empty row), and
//! for the backward `(m, 1/l)` (the backward recomputes the scores with the same arithmetic, so
//! the largest weight comes back as exactly `1/l`); chunks of split rows write the unnormalised
//! `(m, l, acc)`, and the last of a row's chunks to finish merges them into the row's results
//! ([`super::combine`]).
//!
//! # The part
//! [`forward_with_part`] also keeps the same sums over the edges in the score's part
//! ([`Score::in_part`]), under the same running maxima: whole rows write `o⁺ = acc⁺ / l` and
//! `α⁺ = l⁺ / l`, chunks `(acc⁺, l⁺)` ([`crate::abi::PartOut`]). GAT's backward derives its row
//! pass from them with no gather (`kernels::gat::node`).

use crate::abi::{ForwardOut, PartOut, PassEdges, Slot};
use crate::kernels::attention::combine::{Merged, last_to_finish, merge_levels, merge_partials};
use crate::kernels::attention::{Score, SlotValue, load_slots};
use crate::kernels::common::dropout;
use crate::kernels::common::gather::{Step, gather};
use crate::kernels::common::lanes::team_merge_with;
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::{self, Work};
use crate::kernels::common::softmax::{Blocked, FoldClock, log_sum_exp, rescale_factor, weight};
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{self, FULL_MASK, GSlice, math, warp};

/// The forward over `edges` (a CSR pass) of the model `score` with row operands `q`, key
/// operands `k` and values `v`, results to `dst`.
#[inline(always)]
pub fn forward<
    V: Vector,
    const SLOTS: usize,
    const STEP: usize,
    const DROPOUT: bool,
    const PACKED: bool,
    M: Score<V, SLOTS>,
>(
    edges: &PassEdges,
    score: &M,
    q: GSlice<f32>,
    k: GSlice<f32>,
    v: GSlice<f32>,
    dst: &ForwardOut,
) {
    forward_with_part::<V, SLOTS, STEP, DROPOUT, PACKED, false, M>(edges, score, q, k, v, dst, &PartOut::NONE)
}

/// [`forward`], and with `PART` the sums over the score's part ([`Score::in_part`]) to `part`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn forward_with_part<
    V: Vector,
    const SLOTS: usize,
    const STEP: usize,
    const DROPOUT: bool,
    const PACKED: bool,
    const PART: bool,
    M: Score<V, SLOTS>,
>(
    edges: &PassEdges,
    score: &M,
    q: GSlice<f32>,
    k: GSlice<f32>,
    v: GSlice<f32>,
    dst: &ForwardOut,
    part: &PartOut,
) {
    let mut units = segment::warp_units::<PACKED>(&edges.units, &edges.shape.lanes);
    while let Some(work) = units.next(&edges.offsets, &edges.units) {
        forward_unit::<V, SLOTS, STEP, DROPOUT, PACKED, PART, M>(edges, score, q, k, v, dst, part, &work);
    }
}

/// One task of [`forward`]: `PACKED` when each team took a row of its own.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn forward_unit<
    V: Vector,
    const SLOTS: usize,
    const STEP: usize,
    const DROPOUT: bool,
    const PACKED: bool,
    const PART: bool,
    M: Score<V, SLOTS>,
>(
    edges: &PassEdges,
    score: &M,
    q: GSlice<f32>,
    k: GSlice<f32>,
    v: GSlice<f32>,
    dst: &ForwardOut,
    part: &PartOut,
    work: &Work,
) {
    let lanes = Lanes::<V>::for_work::<PACKED>(&edges.shape, work);
    let (q, k, v) = (M::Row::array(q), M::Key::array(k), v.cast::<V>());
    lanes.each_head_pass(|head0| {
        let slots = lanes.slots::<SLOTS>(head0);
        let score = score.bind(&lanes, &slots);
        // Prologue: this row's query operand.
        let query = score.query(&load_slots(&lanes, &q, work.node, &slots));
        let mut m = [f32::NEG_INFINITY; SLOTS];
        let mut weights = [Blocked::<f32>::zero(); SLOTS];
        let mut sums = [Blocked::<V>::zero(); SLOTS];
        // The part's sums (PART only), rescaled with the row's.
        let mut part_weights = [Blocked::<f32>::zero(); SLOTS];
        let mut part_sums = [Blocked::<V>::zero(); SLOTS];
        let mut clock = FoldClock::new(STEP);

        // Main loop over steps of STEP edges per team (uniform trip count across the warp).
        let mut base = work.start;
        while base < if PACKED { work.stop } else { work.end } {
            let Step { valid, first: keys, second: values, .. } = gather::<V, M::Key, SLOTS, STEP>(
                &lanes,
                &edges.neighbours,
                &k,
                &v,
                &slots,
                base,
                work.end,
                |_, _, _| {},
            );
            let mut scores = [[f32::NEG_INFINITY; SLOTS]; STEP];
            let mut in_part = [[false; SLOTS]; STEP];
            unroll!(STEP, |c| {
                let s = score.score(&lanes.map, &query, &keys[c], &values[c]);
                if valid[c] {
                    scores[c] = s;
                    if PART {
                        in_part[c] = score.in_part(&query, &keys[c]);
                    }
                }
            });
            unroll!(SLOTS, |s| {
                let mut step_max = m[s];
                for row in &scores {
                    step_max = step_max.max(row[s]);
                }
                // Only a larger maximum rescales: once a row's maximum has settled, most steps
                // skip the exponential and the multiplies (a factor of 1 would change no bit).
                if step_max > m[s] {
                    let r = rescale_factor(m[s], step_max);
                    weights[s].scale(r);
                    sums[s].scale(r);
                    if PART {
                        part_weights[s].scale(r);
                        part_sums[s].scale(r);
                    }
                    m[s] = step_max;
                }
            });
            unroll!(STEP, |c| {
                let edge = lanes.edge(base, c);
                unroll!(SLOTS, |s| {
                    let w = weight(scores[c][s], m[s]);
                    weights[s].add(w);
                    let kept = w * dropout::factor::<DROPOUT>(&edges.dropout, edge, slots[s].head);
                    sums[s].add_scaled(values[c][s], kept);
                    if PART {
                        let in_part = in_part[c][s];
                        part_weights[s].add(if in_part { w } else { 0.0 });
                        part_sums[s].add_scaled(values[c][s], if in_part { kept } else { 0.0 });
                    }
                });
            });
            if clock.tick() {
                unroll!(SLOTS, |s| {
                    weights[s].fold();
                    sums[s].fold();
                    if PART {
                        part_weights[s].fold();
                        part_sums[s].fold();
                    }
                });
            }
            base += lanes.step_edges(STEP);
        }
        let mut l: [f32; SLOTS] = core::array::from_fn(|s| weights[s].value());
        let mut acc: [V; SLOTS] = core::array::from_fn(|s| sums[s].value());
        let mut part_l: [f32; SLOTS] = core::array::from_fn(|s| part_weights[s].value());
        let mut part_acc: [V; SLOTS] = core::array::from_fn(|s| part_sums[s].value());
        if !work.packed {
            team_merge_with(&lanes.map, &mut m, &mut l, &mut acc, |s, offset, r_self, r_other| {
                if PART {
                    let l_o = warp::shfl_xor(FULL_MASK, part_l[s], offset);
                    let acc_o = part_acc[s].shfl_xor(offset);
                    part_l[s] = part_l[s] * r_self + l_o * r_other;
                    part_acc[s] = acc_o.scale(r_other).add(part_acc[s].scale(r_self));
                }
            });
        }

        // Epilogue: normalised output and lse, or the partial state of a chunk.
        if work.split {
            store_partial::<V, SLOTS, PART>(&lanes, &slots, work.partial, (m, l, acc, part_l, part_acc), dst, part);
        } else {
            store_row::<V, SLOTS, PART>(&lanes, &slots, work.node, (m, l, acc, part_l, part_acc), dst, part);
        }
    });
    // The last chunk of a split row to finish merges the row's partials: all of them, or, for a
    // row of many chunks, its group's into the group's first partial, and then, if its group is
    // the last to finish, the groups' ([`merge_levels`]). The second level is written out, not a
    // loop over levels, and its partials are computed after the first: the capped forwards
    // spilled more with a loop carrying both levels (GT's `w4_s1` 44 bytes stored against 20).
    if work.split {
        let (chunks, two_levels) = merge_levels(work, &edges.offsets, edges.units.chunk_edges, 1);
        if last_to_finish(&dst.arrivals, chunks) {
            lanes.each_head_pass(|head0| {
                let slots = lanes.slots::<SLOTS>(head0);
                let merged = merge_partials::<V, SLOTS, PART>(&lanes, &slots, chunks, dst, part);
                if two_levels {
                    // Every lane has read the group's first partial before any overwrites it.
                    simt::sync_warp(FULL_MASK);
                    store_partial::<V, SLOTS, PART>(&lanes, &slots, chunks.first, merged, dst, part);
                } else {
                    store_row::<V, SLOTS, PART>(&lanes, &slots, work.node, merged, dst, part);
                }
            });
            if two_levels {
                let (groups, _) = merge_levels(work, &edges.offsets, edges.units.chunk_edges, 2);
                if last_to_finish(&dst.arrivals, groups) {
                    lanes.each_head_pass(|head0| {
                        let slots = lanes.slots::<SLOTS>(head0);
                        let merged = merge_partials::<V, SLOTS, PART>(&lanes, &slots, groups, dst, part);
                        store_row::<V, SLOTS, PART>(&lanes, &slots, work.node, merged, dst, part);
                    });
                }
            }
        }
    }
}

/// A chunk's (or a group's) unnormalised state `(m, l, acc)` (and its part's `(l⁺, acc⁺)`) into
/// the partials of unit `unit`.
#[inline(always)]
fn store_partial<V: Vector, const SLOTS: usize, const PART: bool>(
    lanes: &Lanes<V>,
    slots: &[Slot; SLOTS],
    unit: u32,
    (m, l, acc, part_l, part_acc): Merged<V, SLOTS>,
    dst: &ForwardOut,
    part: &PartOut,
) {
    lanes.store(&dst.partial_acc, unit, slots, &acc, 1.0);
    lanes.each_head_leader(slots, |s, slot| {
        let at = lanes.scalar(unit, slot);
        dst.partial_ml.store(2 * at, m[s]);
        dst.partial_ml.store(2 * at + 1, l[s]);
    });
    if PART {
        lanes.store(&part.partial_acc, unit, slots, &part_acc, 1.0);
        lanes.each_head_leader(slots, |s, slot| {
            part.partial_weight.store(lanes.scalar(unit, slot), part_l[s]);
        });
    }
}

/// A whole row's results from its merged state `(m, l, acc)` (and its part's `(l⁺, acc⁺)`):
/// `out = acc / l` (0 for an empty row), `lse = (m + log2 l)·ln 2` (−∞ for an empty row) and the
/// backward's `(m, 1/l)`; the part's `o⁺ = acc⁺ / l` and `α⁺ = l⁺ / l`.
#[inline(always)]
fn store_row<V: Vector, const SLOTS: usize, const PART: bool>(
    lanes: &Lanes<V>,
    slots: &[Slot; SLOTS],
    node: u32,
    (m, l, acc, part_l, part_acc): Merged<V, SLOTS>,
    dst: &ForwardOut,
    part: &PartOut,
) {
    let inv: [f32; SLOTS] = core::array::from_fn(|s| if l[s] > 0.0 { math::rcp(l[s]) } else { 0.0 });
    let out: [V; SLOTS] = core::array::from_fn(|s| acc[s].scale(inv[s]));
    lanes.store(&dst.out, node, slots, &out, 1.0);
    lanes.each_head_leader(slots, |s, slot| {
        let at = lanes.scalar(node, slot);
        dst.lse.store(at, log_sum_exp(m[s], l[s]));
        dst.stats.store(2 * at, m[s]);
        dst.stats.store(2 * at + 1, inv[s]);
    });
    if PART {
        let part_out: [V; SLOTS] = core::array::from_fn(|s| part_acc[s].scale(inv[s]));
        lanes.store(&part.out, node, slots, &part_out, 1.0);
        lanes.each_head_leader(slots, |s, slot| {
            part.weight.store(lanes.scalar(node, slot), part_l[s] * inv[s]);
        });
    }
}
