//! GT backward, column pass over the CSC: `dk_j = c·Σ_i ds_ij·q_i`, `dv_j = Σ_i α_ij·dO_i`, with
//! α recomputed from the saved log-sum-exp and `D` from the row pass. A gather per column, in CSC
//! order: no atomics, bit-reproducible.
//!
//! # Grid mapping
//! One warp per unit of columns (a whole column, or a chunk of a split one); the lanes cover all
//! heads of a source node as in the forward; per step each edge group gathers `CHUNK` in-edges'
//! queries and output gradients.
//!
//! # Shared memory
//! None.
//!
//! # Numerics
//! f32, as the row pass. Whole columns write `dk` (scaled by `c`) and `dv`; chunks of split columns
//! write unscaled partial sums for [`super::combine`].

use crate::abi::GtBwdColsParams;
use crate::kernels::common::lanes::Slot;
use crate::kernels::common::segment;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{self, F2, WARP_SIZE, math};

/// The column-pass body for one vector type, `SLOTS` vectors per lane and `CHUNK` edges per step.
#[inline(always)]
pub fn backward_cols<V: Vector, const SLOTS: usize, const CHUNK: usize>(p: &GtBwdColsParams) {
    let mut units = segment::warp_units(&p.units);
    while let Some(work) = units.next(&p.csc_offsets, &p.units) {
        let lane = simt::lane_id();
        let map = p.shape.lanes;
        let heads = p.shape.heads;
        let fv = p.shape.feat / V::WIDTH as u32;
        let (q, k, v, d_out) = (p.q.cast::<V>(), p.k.cast::<V>(), p.v.cast::<V>(), p.d_out.cast::<V>());
        let group = map.edge_group(lane);
        let groups = map.edge_groups();
        let scale_log2 = p.scale * math::LOG2_E;
        let stats = p.stats.cast::<F2>();
        let at = |node: u32, slot: Slot| {
            ((node as usize * heads as usize + slot.head as usize) * fv as usize) + slot.vector as usize
        };
        let scalar = |node: u32, slot: Slot| node as usize * heads as usize + slot.head as usize;

        let mut head0 = 0;
        while head0 < heads {
            let slots: [Slot; SLOTS] = core::array::from_fn(|s| map.slot(s as u32, lane, head0, heads, fv));
            // Prologue: this source node's key and value.
            let kj: [V; SLOTS] =
                core::array::from_fn(|s| if slots[s].active { k.load(at(work.row, slots[s])) } else { V::zero() });
            let vj: [V; SLOTS] =
                core::array::from_fn(|s| if slots[s].active { v.load(at(work.row, slots[s])) } else { V::zero() });
            let mut dk = [V::zero(); SLOTS];
            let mut dv = [V::zero(); SLOTS];

            // Main loop over chunks of CHUNK in-edges per edge group.
            let mut base = work.start;
            while base < work.end {
                let mut rows = [0u32; CHUNK];
                let mut valid = [false; CHUNK];
                let mut queries = [[V::zero(); SLOTS]; CHUNK];
                let mut grads = [[V::zero(); SLOTS]; CHUNK];
                let mut ml = [[F2([0.0; 2]); SLOTS]; CHUNK];
                let mut deltas = [[0.0f32; SLOTS]; CHUNK];
                unroll!(CHUNK, |c| {
                    let e = base + (c as u32 * groups + group) as u64;
                    valid[c] = e < work.end;
                    if valid[c] {
                        rows[c] = p.csc_rows.load(e as usize);
                        unroll!(SLOTS, |s| {
                            if slots[s].active {
                                queries[c][s] = q.load(at(rows[c], slots[s]));
                                grads[c][s] = d_out.load(at(rows[c], slots[s]));
                                // The row's scalars, loaded with its vectors so their latency overlaps.
                                ml[c][s] = stats.load(scalar(rows[c], slots[s]));
                                deltas[c][s] = p.delta.load(scalar(rows[c], slots[s]));
                            }
                        });
                    }
                });
                unroll!(CHUNK, |c| {
                    // Scores with the forward's arithmetic: q pre-scaled by c·log2 e.
                    let mut qk: [f32; SLOTS] = core::array::from_fn(|s| queries[c][s].scale(scale_log2).dot(kj[s]));
                    let mut dov: [f32; SLOTS] = core::array::from_fn(|s| grads[c][s].dot(vj[s]));
                    map.head_sum(&mut qk);
                    map.head_sum(&mut dov);
                    if valid[c] {
                        unroll!(SLOTS, |s| {
                            if slots[s].active {
                                let alpha = math::exp2(qk[s] - ml[c][s].0[0]) * ml[c][s].0[1];
                                let ds = alpha * (dov[s] - deltas[c][s]);
                                dk[s] = queries[c][s].mul_add(ds, dk[s]);
                                dv[s] = grads[c][s].mul_add(alpha, dv[s]);
                            }
                        });
                    }
                });
                base += (CHUNK as u32 * groups) as u64;
            }

            // Sum the edge groups (butterfly).
            let mut offset = map.edge_width;
            while offset < WARP_SIZE {
                unroll!(SLOTS, |s| {
                    dk[s] = dk[s].add(dk[s].shfl_xor(offset));
                    dv[s] = dv[s].add(dv[s].shfl_xor(offset));
                });
                offset *= 2;
            }

            // Epilogue.
            if group == 0 {
                unroll!(SLOTS, |s| {
                    let slot = slots[s];
                    if slot.active {
                        if work.split {
                            p.partial_dk.cast::<V>().store(at(work.unit, slot), dk[s]);
                            p.partial_dv.cast::<V>().store(at(work.unit, slot), dv[s]);
                        } else {
                            p.dk.cast::<V>().store(at(work.row, slot), dk[s].scale(p.scale));
                            p.dv.cast::<V>().store(at(work.row, slot), dv[s]);
                        }
                    }
                });
            }
            head0 += map.heads_per_pass;
        }
    }
}
