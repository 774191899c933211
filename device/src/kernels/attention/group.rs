//! The forward of the `row_group` schedule (DF-GNN's "hyper"): a block owns a group of
//! consecutive rows.
//!
//! # Grid mapping
//! Block `b` owns rows `group_first[b] .. group_end[b]` and their edges `[e0, e1)`.
//! 0. (Optional) the block copies the `k` and `v` rows of the source nodes
//!    `stage_first[b] .. + stage_count[b]` into shared memory; every neighbour of the group lies
//!    there (the host checked), so phases 1 and 3 read them on chip.
//! 1. Scores, edge-balanced: warp `w` takes a contiguous `1/warps` share of the group's edges
//!    whatever rows they belong to; its lanes cover all heads of an edge as in [`super::forward`].
//! 2. Softmax, warp per row: lanes stride over the row's scores (max, sum per head) and turn
//!    them into probabilities in place; the row's log-sum-exp goes out.
//! 3. Aggregation, same warp and row: lanes over features, `STEP` edges' values in flight per team.
//!
//! # Shared memory
//! The group's `[E_group, H]` f32 scores (rounded up to 16 bytes), then, when staging, its
//! `[stage_count, H, F]` keys (when the model's key operand is vectors: [`SlotValue::STAGED`]; the
//! region is left unused otherwise) and the same of values; the host sizes it for the largest
//! group.
//!
//! # Numerics
//! f32, base-2 scores, max-subtracted softmax with the exact row maximum (no rescaling); the
//! aggregation multiplies each weight by its edge's dropout factor (1 without dropout) and sums in
//! blocks ([`Blocked`]).

use crate::abi::{GroupParams, Slot};
use crate::kernels::attention::{Score, SlotValue};
use crate::kernels::common::dropout;
use crate::kernels::common::lanes::team_sum;
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::reduce::{warp_max, warp_sum};
use crate::kernels::common::softmax::{Blocked, FoldClock, log_sum_exp};
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{self, FULL_MASK, GSlice, SharedSlice, WARP_SIZE, math};

/// Where a block reads source rows from: shared memory (staged) or global memory.
#[derive(Clone, Copy)]
struct Sources<V: Vector, A> {
    k: A,
    v: simt::GSlice<V>,
    staged_k: SharedSlice<V>,
    staged_v: SharedSlice<V>,
    first: u32,
    staged: bool,
}

impl<V: Vector, A: Copy> Sources<V, A> {
    #[inline(always)]
    fn key<K: SlotValue<V, Array = A>>(&self, lanes: &Lanes<V>, node: u32, slot: Slot, offset: usize, row: usize) -> K {
        if self.staged
            && let Some(key) = K::load_staged(&self.staged_k, (node - self.first) as usize * row + offset)
        {
            return key;
        }
        K::load(&self.k, node as usize * row + offset, lanes.scalar(node, slot))
    }

    #[inline(always)]
    fn value(&self, node: u32, offset: usize, row: usize) -> V {
        if self.staged {
            self.staged_v.load((node - self.first) as usize * row + offset)
        } else {
            self.v.load(node as usize * row + offset)
        }
    }
}

/// The `row_group` forward of the model `score` with row operands `q`, key operands `k` and
/// values `v`.
#[inline(always)]
pub fn forward_group<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, M: Score<V, SLOTS>>(
    p: &GroupParams,
    score: &M,
    q: GSlice<f32>,
    k: GSlice<f32>,
    v: GSlice<f32>,
) {
    let b = simt::block_idx().x;
    if b >= p.num_groups {
        return;
    }
    let lanes = Lanes::<V>::new(&p.shape);
    let lane = lanes.lane;
    let warp = simt::warp_id();
    let warps = simt::block_dim().x / WARP_SIZE;
    let map = lanes.map;
    let heads = lanes.heads;
    let fv = lanes.vectors;
    let row_len = (heads * fv) as usize;
    let (r0, r1) = (p.group_first.load(b as usize), p.group_end.load(b as usize));
    let (e0, e1) = (p.offsets.load(r0 as usize), p.offsets.load(r1 as usize));
    let q = M::Row::array(q);

    // Shared memory: scores, then the staged keys and values.
    let smem = simt::dynamic_shared();
    // This group's scores, then (16-byte aligned) its staged rows: the host sized the shared
    // memory for the largest such pair over all groups.
    let score_words = (e1 - e0) as usize * heads as usize;
    let scores = smem.slice::<f32>(0, score_words);
    let stage_bytes = (score_words * 4).div_ceil(16) * 16;
    let staged = !p.stage_first.is_empty();
    let stage_len = if staged { p.stage_count.load(b as usize) as usize * row_len } else { 0 };
    let size = core::mem::size_of::<V>();
    let src = Sources {
        k: M::Key::array(k),
        v: v.cast::<V>(),
        staged_k: smem.slice::<V>(stage_bytes, stage_len),
        staged_v: smem.slice::<V>(stage_bytes + stage_len * size, stage_len),
        first: if staged { p.stage_first.load(b as usize) } else { 0 },
        staged,
    };

    // Phase 0: stage the group's source rows.
    if staged {
        let base = src.first as usize * row_len;
        let mut i = simt::thread_idx().x as usize;
        while i < stage_len {
            if M::Key::STAGED {
                src.staged_k.store(i, k.cast::<V>().load(base + i));
            }
            src.staged_v.store(i, src.v.load(base + i));
            i += simt::block_dim().x as usize;
        }
        simt::sync_threads();
    }

    // Phase 1: scores, each warp a contiguous share of the group's edges.
    let per_warp = (e1 - e0).div_ceil(warps as u64);
    let (w0, w1) = (e0 + warp as u64 * per_warp, (e0 + (warp as u64 + 1) * per_warp).min(e1));
    lanes.each_head_pass(|head0| {
        let slots = lanes.slots::<SLOTS>(head0);
        let score = score.bind(&lanes, &slots);
        let offset = |s: usize| (slots[s].head * fv + slots[s].vector) as usize;
        let mut base = w0;
        while base < w1 {
            let e = base + lanes.team as u64;
            let valid = e < w1;
            let mut query = [M::Row::zero(); SLOTS];
            let mut key = [M::Key::zero(); SLOTS];
            // (Loaded for the models whose score reads the value; the others' compiler drops it.)
            let mut value = [V::zero(); SLOTS];
            if valid {
                let (row, col) = (p.coo_rows.load(e as usize), p.columns.load(e as usize));
                unroll!(SLOTS, |s| {
                    if slots[s].active {
                        query[s] = M::Row::load(&q, row as usize * row_len + offset(s), lanes.scalar(row, slots[s]));
                        key[s] = src.key(&lanes, col, slots[s], offset(s), row_len);
                        value[s] = src.value(col, offset(s), row_len);
                    }
                });
            }
            // The other kernels' score arithmetic, so the backward recomputes these bit for bit.
            let partial = score.score(&map, &score.query(&query), &key, &value);
            if valid {
                unroll!(SLOTS, |s| {
                    if slots[s].active && slots[s].vector == 0 {
                        scores.store((e - e0) as usize * heads as usize + slots[s].head as usize, partial[s]);
                    }
                });
            }
            base += lanes.teams as u64;
        }
    });
    simt::sync_threads();

    // Phases 2 and 3: warp per row.
    let mut row = r0 + warp;
    while row < r1 {
        let (s0, s1) = (p.offsets.load(row as usize) - e0, p.offsets.load(row as usize + 1) - e0);
        let at = |e: u64, h: u32| e as usize * heads as usize + h as usize;
        // Softmax per head, in place.
        for h in 0..heads {
            let mut m = f32::NEG_INFINITY;
            let mut e = s0 + lane as u64;
            while e < s1 {
                m = m.max(scores.load(at(e, h)));
                e += WARP_SIZE as u64;
            }
            let m = warp_max(m);
            let mut l = 0.0f32;
            let mut e = s0 + lane as u64;
            while e < s1 {
                l += math::exp2(scores.load(at(e, h)) - m);
                e += WARP_SIZE as u64;
            }
            let l = warp_sum(l);
            let inv = if l > 0.0 { math::rcp(l) } else { 0.0 };
            let mut e = s0 + lane as u64;
            while e < s1 {
                let s = scores.load(at(e, h));
                scores.store(at(e, h), math::exp2(s - m) * inv);
                e += WARP_SIZE as u64;
            }
            if lane == 0 {
                let rh = row as usize * heads as usize + h as usize;
                p.lse.store(rh, log_sum_exp(m, l));
                p.stats.store(2 * rh, m);
                p.stats.store(2 * rh + 1, inv);
            }
        }
        simt::sync_warp(FULL_MASK);

        // Aggregation: lanes over features, all heads.
        lanes.each_head_pass(|head0| {
            let slots = lanes.slots::<SLOTS>(head0);
            let offset = |s: usize| (slots[s].head * fv + slots[s].vector) as usize;
            let mut sums = [Blocked::<V>::zero(); SLOTS];
            let mut clock = FoldClock::new(STEP);
            let mut base = s0;
            while base < s1 {
                let mut values = [[V::zero(); SLOTS]; STEP];
                let mut weights = [[0.0f32; SLOTS]; STEP];
                unroll!(STEP, |c| {
                    let e = lanes.edge(base, c);
                    if e < s1 {
                        let col = p.columns.load((e0 + e) as usize);
                        unroll!(SLOTS, |s| {
                            if slots[s].active {
                                values[c][s] = src.value(col, offset(s), row_len);
                                let factor = dropout::factor::<DROPOUT>(&p.dropout, e0 + e, slots[s].head);
                                weights[c][s] = scores.load(at(e, slots[s].head)) * factor;
                            }
                        });
                    }
                });
                unroll!(STEP, |c| {
                    unroll!(SLOTS, |s| {
                        sums[s].add_scaled(values[c][s], weights[c][s]);
                    });
                });
                if clock.tick() {
                    unroll!(SLOTS, |s| {
                        sums[s].fold();
                    });
                }
                base += lanes.step_edges(STEP);
            }
            let mut acc: [V; SLOTS] = core::array::from_fn(|s| sums[s].value());
            team_sum(&map, &mut acc);
            if lanes.team == 0 {
                unroll!(SLOTS, |s| {
                    if slots[s].active {
                        p.out.cast::<V>().store(row as usize * row_len + offset(s), acc[s]);
                    }
                });
            }
        });
        // The next row's softmax rewrites other scores only; no barrier needed.
        row += warps;
    }
}
