//! GT forward, fused: per destination row, SDDMM → online softmax → SpMM in registers, all heads
//! of an edge together, no per-edge intermediate in memory.
//!
//! # Grid mapping
//! One warp per unit (`block.x` a multiple of 32): a whole row, or a chunk of a split row (see
//! [`crate::abi::Units`]). The warp's lanes cover all heads' features of an edge as the
//! [`LaneMap`](crate::kernels::common::lanes::LaneMap) says, `SLOTS` vectors per lane; when an
//! edge needs fewer than 32 lanes, edge groups take different edges. Per step each edge group
//! loads `CHUNK` edges' keys and values (all in flight together), reduces the scores per head
//! with shuffles, updates the online softmax once per chunk, and accumulates.
//!
//! # Shared memory
//! None.
//!
//! # Numerics
//! f32. Scores in base-2 units (`scale·log2 e` folded into q), one `ex2.approx` per score and
//! per rescale. Whole rows write `out = acc / l` (0 for an empty row) and `lse = (m + log2 l)·ln 2`
//! (−∞ for an empty row), and for the backward `(m, 1/l)` (the backward recomputes the scores
//! with the same arithmetic, so the largest weight comes back as exactly `1/l`); chunks of split
//! rows write the unnormalised `(m, l, acc)` for [`super::combine`].

use crate::abi::GtFwdParams;
use crate::kernels::common::gather::{Chunk, gather};
use crate::kernels::common::lanes::Slot;
use crate::kernels::common::segment;
use crate::kernels::common::softmax::{log_sum_exp, merge, rescale_factor, weight};
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{self, FULL_MASK, WARP_SIZE, math, warp};

/// The forward body for one vector type, `SLOTS` vectors per lane and `CHUNK` edges per step.
#[inline(always)]
pub fn forward<V: Vector, const SLOTS: usize, const CHUNK: usize>(p: &GtFwdParams) {
    let mut units = segment::warp_units(&p.units);
    while let Some(work) = units.next(&p.offsets, &p.units) {
        let lane = simt::lane_id();
        let map = p.shape.lanes;
        let heads = p.shape.heads;
        let fv = p.shape.feat / V::WIDTH as u32;
        let (q, k, v) = (p.q.cast::<V>(), p.k.cast::<V>(), p.v.cast::<V>());
        let group = map.edge_group(lane);
        let groups = map.edge_groups();
        let at = |node: u32, slot: Slot| {
            ((node as usize * heads as usize + slot.head as usize) * fv as usize) + slot.vector as usize
        };

        let mut head0 = 0;
        while head0 < heads {
            let slots: [Slot; SLOTS] = core::array::from_fn(|s| map.slot(s as u32, lane, head0, heads, fv));
            // Prologue: this row's queries, pre-scaled into base-2 score units.
            let qs: [V; SLOTS] = core::array::from_fn(|s| {
                if slots[s].active { q.load(at(work.row, slots[s])).scale(p.scale_log2) } else { V::zero() }
            });
            let mut m = [f32::NEG_INFINITY; SLOTS];
            let mut l = [0.0f32; SLOTS];
            let mut acc = [V::zero(); SLOTS];

            // Main loop over chunks of CHUNK edges per edge group (uniform trip count across the warp).
            let mut base = work.start;
            while base < work.end {
                let Chunk { valid, keys, values } =
                    gather::<V, SLOTS, CHUNK>(&p.columns, &k, &v, &slots, &at, base, work.end, group, groups);
                let mut scores = [[f32::NEG_INFINITY; SLOTS]; CHUNK];
                unroll!(CHUNK, |c| {
                    let mut partial: [f32; SLOTS] = core::array::from_fn(|s| qs[s].dot(keys[c][s]));
                    map.head_sum(&mut partial);
                    if valid[c] {
                        scores[c] = partial;
                    }
                });
                unroll!(SLOTS, |s| {
                    let mut chunk_max = m[s];
                    for score in &scores {
                        chunk_max = chunk_max.max(score[s]);
                    }
                    let r = rescale_factor(m[s], chunk_max);
                    l[s] *= r;
                    acc[s] = acc[s].scale(r);
                    m[s] = chunk_max;
                });
                unroll!(CHUNK, |c| {
                    unroll!(SLOTS, |s| {
                        let w = weight(scores[c][s], m[s]);
                        l[s] += w;
                        acc[s] = values[c][s].mul_add(w, acc[s]);
                    });
                });
                base += (CHUNK as u32 * groups) as u64;
            }

            // Merge the edge groups' states (a butterfly: every group ends with the total).
            let mut offset = map.edge_width;
            while offset < WARP_SIZE {
                unroll!(SLOTS, |s| {
                    let m_o = warp::shfl_xor(FULL_MASK, m[s], offset);
                    let l_o = warp::shfl_xor(FULL_MASK, l[s], offset);
                    let acc_o = acc[s].shfl_xor(offset);
                    let (m_new, l_new, r_self, r_other) = merge(m[s], l[s], m_o, l_o);
                    acc[s] = acc_o.scale(r_other).add(acc[s].scale(r_self));
                    m[s] = m_new;
                    l[s] = l_new;
                });
                offset *= 2;
            }

            // Epilogue: normalised output and lse, or the partial state of a chunk.
            if group == 0 {
                unroll!(SLOTS, |s| {
                    let slot = slots[s];
                    if slot.active {
                        let scalar = |node: u32| node as usize * heads as usize + slot.head as usize;
                        if work.split {
                            p.partial_acc.cast::<V>().store(at(work.unit, slot), acc[s]);
                            if slot.vector == 0 {
                                p.partial_ml.store(2 * scalar(work.unit), m[s]);
                                p.partial_ml.store(2 * scalar(work.unit) + 1, l[s]);
                            }
                        } else {
                            let inv = if l[s] > 0.0 { math::rcp(l[s]) } else { 0.0 };
                            p.out.cast::<V>().store(at(work.row, slot), acc[s].scale(inv));
                            if slot.vector == 0 {
                                p.lse.store(scalar(work.row), log_sum_exp(m[s], l[s]));
                                p.stats.store(2 * scalar(work.row), m[s]);
                                p.stats.store(2 * scalar(work.row) + 1, inv);
                            }
                        }
                    }
                });
            }
            head0 += map.heads_per_pass;
        }
    }
}
