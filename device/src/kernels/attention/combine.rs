//! Combine steps of split rows: merge the partial online-softmax states of a row's chunks
//! (forward), or sum a row's partial gradients (backward). In chunk order: deterministic.
//!
//! # Grid mapping
//! One warp per (split row, slice of 32 features): warp `w` takes row `w / S`, features
//! `(w mod S)·32 + lane` with `S = ⌈H·F / 32⌉` slices per row (a sum of two arrays: `S` is both
//! arrays' slices, the first's then the second's). Each lane loops over the row's partials, four
//! at a time (independent loads in flight; four running sums added in a fixed order at the end).
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

/// The merged maximum of a row's chunks `first..last` for one head (`ml(u, 0)` the chunk's max).
#[inline(always)]
fn merged_max(first: usize, last: usize, ml: impl Fn(usize, usize) -> f32) -> f32 {
    let mut m = f32::NEG_INFINITY;
    for u in first..last {
        m = m.max(ml(u, 0));
    }
    m
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

/// One feature of a split row merged from its chunks `first..last`: `(M, l, acc, 1/l)` (0 for
/// `l = 0`) with `M` the chunks' largest max, `l = Σ_u l_u·2^(m_u − M)` and `acc = Σ_u acc(u)·2^(m_u
/// − M)`, from `ml(u, 0)` and `ml(u, 1)` the chunk's (max, sum); and the factor `2^(m_u − M)` for
/// the caller's further sums.
#[inline(always)]
fn merge_chunks(
    first: usize,
    last: usize,
    ml: impl Fn(usize, usize) -> f32 + Copy,
    acc: impl Fn(usize) -> f32,
) -> (f32, f32, f32, f32, impl Fn(usize) -> f32) {
    let m = merged_max(first, last, ml);
    let rescaled = move |u: usize| rescale_factor(ml(u, 0), m);
    let l = sum4(first, last, |u| ml(u, 1) * rescaled(u));
    let acc = sum4(first, last, |u| acc(u) * rescaled(u));
    let inv = if l > 0.0 { math::rcp(l) } else { 0.0 };
    (m, l, acc, inv, rescaled)
}

kernel! {
    /// Merges the forward partials of each split row into `out`, `lse` and `stats`, and its part's
    /// (when the forward kept one) into the part's `out` and `weight`, under the same maxima and
    /// normalised by the whole row's sum.
    pub kernel ATTENTION_FWD_COMBINE = fn attention_fwd_combine(p: &CombineParams) {
        let Some((row, x, first, last)) = combine_feature(p) else { return };
        let (heads, feat) = (p.heads as usize, p.feat as usize);
        let head = x / feat;
        let ml = |u: usize, i: usize| p.partial_ml.load(2 * (u * heads + head) + i);
        let (m, l, acc, inv, rescaled) =
            merge_chunks(first, last, ml, |u| p.partial_acc.load(u * heads * feat + x));
        p.out.store(row * heads * feat + x, acc * inv);
        if x.is_multiple_of(feat) {
            p.lse.store(row * heads + head, log_sum_exp(m, l));
            p.stats.store(2 * (row * heads + head), m);
            p.stats.store(2 * (row * heads + head) + 1, inv);
        }
        let part = &p.part;
        if !part.out.is_empty() {
            let acc = sum4(first, last, |u| part.partial_acc.load(u * heads * feat + x) * rescaled(u));
            part.out.store(row * heads * feat + x, acc * inv);
            if x.is_multiple_of(feat) {
                let weight = sum4(first, last, |u| part.partial_weight.load(u * heads + head) * rescaled(u));
                part.weight.store(row * heads + head, weight * inv);
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
        let sum = sum4(first, last, |u| partial.load(u * width + x));
        out.store(row * width + x, sum * factor);
    }
}
