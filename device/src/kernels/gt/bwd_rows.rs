//! GT backward, row pass: `dq_i = c·Σ_j ds_ij·k_j` and `D_i = dO_i·o_i`, with α recomputed from
//! the saved log-sum-exp. No float atomics: each row's sum is one warp's, in edge order.
//!
//! # Grid mapping
//! As the forward ([`super::fwd`]): one warp per unit (a row or a chunk of a split row), all heads
//! of an edge together, `CHUNK` edges' keys and values in flight per step.
//!
//! # Shared memory
//! None.
//!
//! # Numerics
//! f32. `α = 2^(s − m)·(1/l)` with the forward's `(m, 1/l)` and its score arithmetic (q
//! pre-scaled by `c·log2 e`), so α matches the forward's weights to the last bit of the
//! exponent; `ds = α·(dO·v − D)`. Whole rows write `dq` (scaled
//! by `c`) and `D`; chunks of split rows write unscaled partial sums (summed by
//! [`super::combine`]); chunk 0 writes `D`. Optionally each row's (or chunk's) `Σ ds·q·k` per
//! head, from which AGNN's dβ is summed.

use crate::abi::GtBwdRowsParams;
use crate::kernels::common::gather::{Chunk, gather};
use crate::kernels::common::lanes::Slot;
use crate::kernels::common::segment;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{self, F2, FULL_MASK, WARP_SIZE, math, warp};

/// The row-pass body for one vector type, `SLOTS` vectors per lane and `CHUNK` edges per step.
#[inline(always)]
pub fn backward_rows<V: Vector, const SLOTS: usize, const CHUNK: usize>(p: &GtBwdRowsParams) {
    let mut units = segment::warp_units(&p.units);
    while let Some(work) = units.next(&p.offsets, &p.units) {
        let lane = simt::lane_id();
        let map = p.shape.lanes;
        let heads = p.shape.heads;
        let fv = p.shape.feat / V::WIDTH as u32;
        let (q, k, v) = (p.q.cast::<V>(), p.k.cast::<V>(), p.v.cast::<V>());
        let (out, d_out) = (p.out.cast::<V>(), p.d_out.cast::<V>());
        let group = map.edge_group(lane);
        let groups = map.edge_groups();
        let scale_log2 = p.scale * math::LOG2_E;
        let at = |node: u32, slot: Slot| {
            ((node as usize * heads as usize + slot.head as usize) * fv as usize) + slot.vector as usize
        };
        let scalar = |node: u32, slot: Slot| node as usize * heads as usize + slot.head as usize;

        let mut head0 = 0;
        while head0 < heads {
            let slots: [Slot; SLOTS] = core::array::from_fn(|s| map.slot(s as u32, lane, head0, heads, fv));
            let load = |x: &simt::GSlice<V>, s: usize| {
                if slots[s].active { x.load(at(work.row, slots[s])) } else { V::zero() }
            };
            // Prologue: q, dO and D = dO·o of this row; lse in base-2 units.
            let qi: [V; SLOTS] = core::array::from_fn(|s| load(&q, s));
            let doi: [V; SLOTS] = core::array::from_fn(|s| load(&d_out, s));
            let mut delta: [f32; SLOTS] = core::array::from_fn(|s| doi[s].dot(load(&out, s)));
            map.head_sum(&mut delta);
            // The forward's (max, 1/sum) in base-2 units, and q scaled as the forward scaled it.
            let stats = p.stats.cast::<F2>();
            let ml: [F2; SLOTS] = core::array::from_fn(|s| {
                if slots[s].active { stats.load(scalar(work.row, slots[s])) } else { F2([0.0; 2]) }
            });
            let qs: [V; SLOTS] = core::array::from_fn(|s| qi[s].scale(scale_log2));
            let want_ds_dot = !p.ds_dot.is_empty();
            if group == 0 && work.chunk == 0 {
                unroll!(SLOTS, |s| {
                    if slots[s].active && slots[s].vector == 0 {
                        p.delta.store(scalar(work.row, slots[s]), delta[s]);
                    }
                });
            }
            let mut dq = [V::zero(); SLOTS];
            let mut ds_dot = [0.0f32; SLOTS];

            // Main loop over chunks of CHUNK edges per edge group.
            let mut base = work.start;
            while base < work.end {
                let Chunk { valid, keys, values } =
                    gather::<V, SLOTS, CHUNK>(&p.columns, &k, &v, &slots, &at, base, work.end, group, groups);
                unroll!(CHUNK, |c| {
                    let mut score: [f32; SLOTS] = core::array::from_fn(|s| qs[s].dot(keys[c][s]));
                    let mut dov: [f32; SLOTS] = core::array::from_fn(|s| doi[s].dot(values[c][s]));
                    map.head_sum(&mut score);
                    map.head_sum(&mut dov);
                    // AGNN's dβ needs the unscaled q·k (β may be 0): only when asked (uniform).
                    let mut qk = [0.0f32; SLOTS];
                    if want_ds_dot {
                        qk = core::array::from_fn(|s| qi[s].dot(keys[c][s]));
                        map.head_sum(&mut qk);
                    }
                    if valid[c] {
                        unroll!(SLOTS, |s| {
                            let alpha = math::exp2(score[s] - ml[s].0[0]) * ml[s].0[1];
                            let ds = alpha * (dov[s] - delta[s]);
                            dq[s] = keys[c][s].mul_add(ds, dq[s]);
                            ds_dot[s] += ds * qk[s];
                        });
                    }
                });
                base += (CHUNK as u32 * groups) as u64;
            }

            // Sum the edge groups (butterfly).
            let mut offset = map.edge_width;
            while offset < WARP_SIZE {
                unroll!(SLOTS, |s| {
                    dq[s] = dq[s].add(dq[s].shfl_xor(offset));
                    ds_dot[s] += warp::shfl_xor(FULL_MASK, ds_dot[s], offset);
                });
                offset *= 2;
            }

            // Epilogue.
            if group == 0 {
                unroll!(SLOTS, |s| {
                    let slot = slots[s];
                    if slot.active {
                        let node = if work.split { work.unit } else { work.row };
                        if work.split {
                            p.partial.cast::<V>().store(at(work.unit, slot), dq[s]);
                        } else {
                            p.dq.cast::<V>().store(at(work.row, slot), dq[s].scale(p.scale));
                        }
                        if slot.vector == 0 && !p.ds_dot.is_empty() {
                            p.ds_dot.store(scalar(node, slot), ds_dot[s]);
                        }
                    }
                });
            }
            head0 += map.heads_per_pass;
        }
    }
}
