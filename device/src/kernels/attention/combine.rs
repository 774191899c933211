//! Combine steps of split rows: merge the partial online-softmax states of a row's chunks
//! (forward), or sum a row's partial gradients (backward). In chunk order: deterministic.
//!
//! # Grid mapping
//! One warp per (split row, slice of 32 features): warp `w` takes row `w / S`, features
//! `(w mod S)·32 + lane` with `S = ⌈H·F / 32⌉` slices per row (a sum of two arrays: `S` is both
//! arrays' slices, the first's then the second's). Each lane loops over the row's partials, four
//! at a time (independent loads in flight; four running sums added in a fixed order at the end):
//! the forward twice (the maximum, then every sum in one loop), the backward once.
//!
//! # Numerics
//! Forward: `out = Σ_u acc_u·2^(m_u − M) / Σ_u l_u·2^(m_u − M)` with `M = max_u m_u`, and
//! `lse = (M + log2 Σ …)·ln 2`; a forward's part ([`crate::abi::PartOut`]) the same with its own
//! sums over the same denominator. Backward: `out = factor·Σ_u partial_u`, for one or two arrays
//! of a pass in one launch (their warps one after the other in each row's range).

use crate::abi::{CombineParams, SumCombineParams};
use crate::kernel;
use crate::kernels::common::reduce::global_warp;
use crate::kernels::common::softmax::{log_sum_exp, rescale_factor};
use crate::kernels::common::unroll::unroll;
use crate::simt::{self, GSlice, WARP_SIZE, math};

/// This lane's row, feature and range of partials, or `None` past the last row (or feature), for
/// `num_rows` split rows of `heads × feat` (`rows`, `first_unit` as in [`CombineParams`]).
#[inline(always)]
fn this_feature(
    rows: &GSlice<u32>,
    first_unit: &GSlice<u32>,
    num_rows: u32,
    heads: u32,
    feat: u32,
) -> Option<(usize, usize, usize, usize)> {
    let width = heads as usize * feat as usize;
    let slices = width.div_ceil(WARP_SIZE as usize);
    let w = global_warp() as usize;
    let (r, slice) = (w / slices, w % slices);
    let x = slice * WARP_SIZE as usize + simt::lane_id() as usize;
    if r >= num_rows as usize || x >= width {
        return None;
    }
    let row = rows.load(r) as usize;
    Some((row, x, first_unit.load(r) as usize, first_unit.load(r + 1) as usize))
}

/// [`this_feature`] of a [`CombineParams`].
#[inline(always)]
fn combine_feature(p: &CombineParams) -> Option<(usize, usize, usize, usize)> {
    this_feature(&p.rows, &p.first_unit, p.num_rows, p.heads, p.feat)
}

/// Partials each lane loads at once in the sums ([`sums`]), a power of two.
const IN_FLIGHT: usize = 4;

/// The merged maximum of a row's chunks `first..last` for one head (`ml(u, 0)` the chunk's max):
/// four running maxima, so that four loads are in flight (a maximum is exact in any order).
#[inline(always)]
fn merged_max(first: usize, last: usize, ml: impl Fn(usize, usize) -> f32) -> f32 {
    let mut m = [f32::NEG_INFINITY; 4];
    let mut u = first;
    while u + 4 <= last {
        m[0] = m[0].max(ml(u, 0));
        m[1] = m[1].max(ml(u + 1, 0));
        m[2] = m[2].max(ml(u + 2, 0));
        m[3] = m[3].max(ml(u + 3, 0));
        u += 4;
    }
    while u < last {
        m[0] = m[0].max(ml(u, 0));
        u += 1;
    }
    m[0].max(m[1]).max(m[2].max(m[3]))
}

/// `Σ_u f(u)` over `first..last` for each of the `N` terms `f` gives, [`IN_FLIGHT`] independent
/// sums of each (added in adjacent pairs, then pairs of those: `(s0 + s1) + (s2 + s3)` for 4) so that the loads of that many `u` are in
/// flight; the sums of several terms share one loop over the partials.
#[inline(always)]
fn sums<const N: usize>(first: usize, last: usize, f: impl Fn(usize) -> [f32; N]) -> [f32; N] {
    const { assert!(N <= 4 && IN_FLIGHT <= 8 && IN_FLIGHT.is_power_of_two()) };
    let mut acc = [[0.0f32; N]; IN_FLIGHT];
    let mut add = |k: usize, terms: [f32; N]| {
        unroll!(4, |n| {
            if n < N {
                acc[k][n] += terms[n];
            }
        });
    };
    let mut u = first;
    while u + IN_FLIGHT <= last {
        unroll!(IN_FLIGHT, |k| {
            add(k, f(u + k));
        });
        u += IN_FLIGHT;
    }
    while u < last {
        add(0, f(u));
        u += 1;
    }
    // Straight-line code with constant indices (a loop here kept `acc` on the stack).
    unroll!(3, |level| {
        let width = IN_FLIGHT >> (level + 1);
        unroll!(4, |k| {
            if k < width {
                unroll!(4, |n| {
                    if n < N {
                        acc[k][n] = acc[2 * k][n] + acc[2 * k + 1][n];
                    }
                });
            }
        });
    });
    acc[0]
}

/// `Σ_u f(u)` over `first..last` ([`sums`] of one term).
#[inline(always)]
fn sum(first: usize, last: usize, f: impl Fn(usize) -> f32) -> f32 {
    let [sum] = sums(first, last, |u| [f(u)]);
    sum
}

kernel! {
    /// Merges the forward partials of each split row into `out`, `lse` and `stats`, and its part's
    /// (when the forward kept one) into the part's `out` and `weight`, under the same maxima and
    /// normalised by the whole row's sum: `M = max_u m_u` in one loop over the row's chunks, then
    /// `l = Σ_u l_u·2^(m_u − M)`, `acc = Σ_u acc_u·2^(m_u − M)` (and the part's two sums) in one
    /// more.
    pub kernel ATTENTION_FWD_COMBINE = fn attention_fwd_combine(p: &CombineParams) {
        let Some((row, x, first, last)) = combine_feature(p) else { return };
        let (heads, feat) = (p.heads as usize, p.feat as usize);
        let head = x / feat;
        let ml = |u: usize, i: usize| p.partial_ml.load(2 * (u * heads + head) + i);
        let m = merged_max(first, last, ml);
        // Chunk u's (l, acc) rescaled to M.
        let rescaled = |u: usize| {
            let r = rescale_factor(ml(u, 0), m);
            [ml(u, 1) * r, p.partial_acc.load(u * heads * feat + x) * r]
        };
        let part = &p.part;
        let (l, acc, part_sums) = if part.out.is_empty() {
            let [l, acc] = sums(first, last, rescaled);
            (l, acc, None)
        } else {
            let [l, acc, part_acc, part_weight] = sums(first, last, |u| {
                let [l, acc] = rescaled(u);
                let r = rescale_factor(ml(u, 0), m);
                [l, acc, part.partial_acc.load(u * heads * feat + x) * r, part.partial_weight.load(u * heads + head) * r]
            });
            (l, acc, Some((part_acc, part_weight)))
        };
        let inv = if l > 0.0 { math::rcp(l) } else { 0.0 };
        p.out.store(row * heads * feat + x, acc * inv);
        if x.is_multiple_of(feat) {
            p.lse.store(row * heads + head, log_sum_exp(m, l));
            p.stats.store(2 * (row * heads + head), m);
            p.stats.store(2 * (row * heads + head) + 1, inv);
        }
        if let Some((part_acc, part_weight)) = part_sums {
            part.out.store(row * heads * feat + x, part_acc * inv);
            if x.is_multiple_of(feat) {
                part.weight.store(row * heads + head, part_weight * inv);
            }
        }
    }
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
        let sum = sum(first, last, |u| partial.load(u * width + x));
        out.store(row * width + x, sum * factor);
    }
}
