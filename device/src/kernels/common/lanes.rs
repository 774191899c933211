//! Warp-level sums over the [`LaneMap`]: per head ([`head_sum`], a dot product's reduction over
//! a head's lanes and slots) and across the teams that took different edges ([`team_sum`],
//! [`team_merge`]). Every lane of a warp runs every shuffle, so the control flow around them is
//! uniform.

use crate::abi::LaneMap;
use crate::kernels::common::reduce::sum_over;
use crate::kernels::common::softmax::merge;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{FULL_MASK, WARP_SIZE, warp};

/// Per-head sums of per-slot partial sums: afterwards `partial[s]` holds, in every lane, the
/// total over the head of slot `s` (in-lane over the head's slots, then a butterfly over its
/// lanes).
#[inline(always)]
pub fn head_sum<const SLOTS: usize>(map: &LaneMap, partial: &mut [f32; SLOTS]) {
    let sph = map.slots_per_head() as usize;
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
            total[s] = sum_over(v, map.head_lanes());
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

/// Sums `x` over the warp's teams (a butterfly over the lanes `edge_lanes` apart): afterwards
/// every team holds the total, added in the same tree order in every lane.
#[inline(always)]
pub fn team_sum<V: Vector, const SLOTS: usize>(map: &LaneMap, x: &mut [V; SLOTS]) {
    let mut offset = map.edge_lanes();
    while offset < WARP_SIZE {
        unroll!(SLOTS, |s| {
            x[s] = x[s].add(x[s].shfl_xor(offset));
        });
        offset *= 2;
    }
}

/// Merges the teams' online-softmax states `(m, l, acc)` (a butterfly: every team ends with the
/// state of all the warp's edges).
#[inline(always)]
pub fn team_merge<V: Vector, const SLOTS: usize>(
    map: &LaneMap,
    m: &mut [f32; SLOTS],
    l: &mut [f32; SLOTS],
    acc: &mut [V; SLOTS],
) {
    team_merge_with(map, m, l, acc, |_, _, _, _| {});
}

/// [`team_merge`], and `more(slot, offset, r_self, r_other)` at each of its steps, to merge
/// further sums under the same maxima (the other team's `x` is `shfl_xor(x, offset)`; the merged
/// one `x·r_self + x_other·r_other`). `more` is called by every lane alike.
#[inline(always)]
pub fn team_merge_with<V: Vector, const SLOTS: usize>(
    map: &LaneMap,
    m: &mut [f32; SLOTS],
    l: &mut [f32; SLOTS],
    acc: &mut [V; SLOTS],
    mut more: impl FnMut(usize, u32, f32, f32),
) {
    let mut offset = map.edge_lanes();
    while offset < WARP_SIZE {
        unroll!(SLOTS, |s| {
            let m_o = warp::shfl_xor(FULL_MASK, m[s], offset);
            let l_o = warp::shfl_xor(FULL_MASK, l[s], offset);
            let acc_o = acc[s].shfl_xor(offset);
            let (m_new, l_new, r_self, r_other) = merge(m[s], l[s], m_o, l_o);
            acc[s] = acc_o.scale(r_other).add(acc[s].scale(r_self));
            more(s, offset, r_self, r_other);
            m[s] = m_new;
            l[s] = l_new;
        });
        offset *= 2;
    }
}
