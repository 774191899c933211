//! The baseline GT schedules (docs/design.md §4), f32, forward and backward.
//!
//! - `unfused`, the DGL-sparse-style pipeline whose per-edge intermediates live in global memory:
//!   [`unfused_sddmm`] (scores), [`unfused_edge_softmax`] (alpha and lse), [`unfused_spmm`] (output).
//! - `edge_parallel`, DF-GNN's two-kernel "softmax" schedule: [`unfused_sddmm`] (scores), then one row
//!   kernel [`edge_parallel_softmax_aggregate`] that computes the softmax and the output without writing alpha.
//!
//! Both schedules share one backward, made of the same kernels (alpha is recomputed from the
//! scores, since the forward saves only lse):
//!
//! | step | kernel | computes |
//! |---|---|---|
//! | 1 | [`unfused_sddmm`] (a = q, b = k, c = scale) | `s` `[E, H]` |
//! | 2 | [`unfused_edge_softmax`] (lse slice empty) | `α` `[E, H]` |
//! | 3 | [`unfused_sddmm`] (a = dO, b = v, c = 1) | `dα` `[E, H]` |
//! | 4 | [`unfused_edge_softmax_backward`] | `ds = α (dα − Σ_row α dα)` `[E, H]` |
//! | 5 | [`unfused_spmm`] (w = ds, x = k, c = scale) | `dq` (row pass) |
//! | 6 | [`unfused_spmm_transposed`] (w = ds, x = q, c = scale) | `dk` (column pass) |
//! | 7 | [`unfused_spmm_transposed`] (w = α, x = dO, c = 1) | `dv` (column pass) |
//!
//! The unfused forward's alpha may be kept instead of steps 1–2; recomputing it gives the same
//! bits (every kernel here is deterministic).
//!
//! # Shared conventions
//! Every kernel works on *items* (an (edge, head) or a (node, head) pair) with a *group* of
//! `group` lanes per item: `group` is a power of two from 1 to [`WARP_SIZE`], a warp holds
//! `WARP_SIZE / group` groups, and groups sweep the items grid-stride (so any grid size is
//! correct; one that covers every item once is the fastest). Blocks and grids are 1-D, `block.x`
//! a multiple of [`WARP_SIZE`]. No shared memory, no atomics: every output element is written by
//! exactly one lane, from sums in a fixed order, so results are bit-identical run after run.
//! Node features use 16-byte [`F4`] accesses when `F % 4 == 0`, scalar ones otherwise.

mod edge_softmax;
mod sddmm;
mod softmax_aggregate;
mod spmm;

pub use edge_softmax::*;
pub use sddmm::*;
pub use softmax_aggregate::*;
pub use spmm::*;

use crate::simt::{self, F4, FULL_MASK, GSlice, WARP_SIZE, Word, math, warp};

/// Where this thread's group sits among the launch's items (1-D grid and block).
#[derive(Clone, Copy)]
pub(crate) struct Groups {
    /// This lane's index within its group, `0..width`.
    pub lane: u32,
    /// Lanes per group (a power of two, 1 to [`WARP_SIZE`]).
    pub width: u32,
    /// This group's index within its warp.
    pub sub: u64,
    /// The first item of this warp's first group in the first sweep (warp-uniform).
    pub first: u64,
    /// Items per sweep: the number of groups in the grid.
    pub stride: u64,
}

impl Groups {
    /// The layout for groups of `width` lanes.
    #[inline(always)]
    pub fn new(width: u32) -> Self {
        let shift = width.trailing_zeros();
        let per_warp = (WARP_SIZE >> shift) as u64;
        let warps_per_block = (simt::block_dim().x / WARP_SIZE) as u64;
        let warp = simt::block_idx().x as u64 * warps_per_block + simt::warp_id() as u64;
        let lane = simt::lane_id();
        Self {
            lane: lane & (width - 1),
            width,
            sub: (lane >> shift) as u64,
            first: warp * per_warp,
            stride: simt::grid_dim().x as u64 * warps_per_block * per_warp,
        }
    }
}

/// The sum of `value` over each group of `width` lanes, in every lane of the group (butterfly
/// `shfl.xor` over [`FULL_MASK`]; every lane of the warp must call it with the same `width`).
/// Both partners of each step add the same two values, so all lanes of a group hold equal bits.
#[inline(always)]
pub(crate) fn group_sum(value: f32, width: u32) -> f32 {
    let mut v = value;
    let mut offset = width / 2;
    while offset > 0 {
        v += warp::shfl_xor(FULL_MASK, v, offset);
        offset /= 2;
    }
    v
}

/// The maximum of `value` over each group of `width` lanes, in every lane of the group (as
/// [`group_sum`]).
#[inline(always)]
pub(crate) fn group_max(value: f32, width: u32) -> f32 {
    let mut v = value;
    let mut offset = width / 2;
    while offset > 0 {
        v = v.max(warp::shfl_xor(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// The CSR edge range and head of `item` (items run over (row, head), row-major), or an empty
/// range for a lane without an item, so that it still reaches the group reductions.
#[inline(always)]
pub(crate) fn item_row(offsets: GSlice<u64>, item: u64, heads: u64, valid: bool) -> (u64, u64, u64) {
    if !valid {
        return (0, 0, 0);
    }
    let i = (item / heads) as usize;
    (offsets.load(i), offsets.load(i + 1), item % heads)
}

/// The natural log-sum-exp of a row whose scores have maximum `m` and `l = Σ exp(s − m)`; −∞ for
/// an empty row.
#[inline(always)]
pub(crate) fn natural_lse(m: f32, l: f32) -> f32 {
    if l > 0.0 { m + math::log2(l) * math::LN_2 } else { f32::NEG_INFINITY }
}

/// The softmax statistics of one row and head: the max `m` of the scores `s[e·heads + h]` for
/// `e` in `start..end`, and `l = Σ 2^((s − m)·log2 e)`. The group's lanes stride over the edges;
/// both results are in every lane of the group. Every lane of the warp must call it (a lane with
/// no item passes an empty range). `l == 0` exactly when the row is empty or all its scores are
/// `−∞`; otherwise `l ≥ 1`.
#[inline(always)]
pub(crate) fn row_stats(scores: GSlice<f32>, start: u64, end: u64, h: u64, heads: u64, g: &Groups) -> (f32, f32) {
    // The row maximum.
    let mut m = f32::NEG_INFINITY;
    let mut e = start + g.lane as u64;
    while e < end {
        m = m.max(scores.load((e * heads + h) as usize));
        e += g.width as u64;
    }
    let m = group_max(m, g.width);
    // The sum of exponentials; a shift of 0 for an all-(−∞) row makes every term 0, not NaN.
    let shift = finite_or_zero(m);
    let mut l = 0.0f32;
    let mut e = start + g.lane as u64;
    while e < end {
        l += exp_shifted(scores.load((e * heads + h) as usize), shift);
        e += g.width as u64;
    }
    (m, group_sum(l, g.width))
}

/// `m`, or 0 when `m` is `−∞` (the subtrahend of an all-(−∞) row).
#[inline(always)]
pub(crate) fn finite_or_zero(m: f32) -> f32 {
    if m == f32::NEG_INFINITY { 0.0 } else { m }
}

/// `exp(s − m)` as `2^((s − m)·log2 e)` (`ex2.approx` on the GPU).
#[inline(always)]
pub(crate) fn exp_shifted(s: f32, m: f32) -> f32 {
    math::exp2((s - m) * math::LOG2_E)
}

/// A unit of node features one lane moves per access: `f32`, or [`F4`] when `F % 4 == 0`.
pub(crate) trait Feat: Word {
    /// `f32`s per unit.
    const WIDTH: u32;
    /// All zeros.
    fn zero() -> Self;
    /// `acc + w·x` per component (one `fma` each).
    fn axpy(acc: Self, w: f32, x: Self) -> Self;
    /// `acc + Σ_k a_k·b_k`, component by component in order (one `fma` each).
    fn dot_acc(acc: f32, a: Self, b: Self) -> f32;
    /// Each component times `c`.
    fn scale(self, c: f32) -> Self;
    /// Each component divided by `d` (correctly rounded).
    fn div(self, d: f32) -> Self;
}

impl Feat for f32 {
    const WIDTH: u32 = 1;
    #[inline(always)]
    fn zero() -> Self {
        0.0
    }
    #[inline(always)]
    fn axpy(acc: Self, w: f32, x: Self) -> Self {
        math::fma(w, x, acc)
    }
    #[inline(always)]
    fn dot_acc(acc: f32, a: Self, b: Self) -> f32 {
        math::fma(a, b, acc)
    }
    #[inline(always)]
    fn scale(self, c: f32) -> Self {
        self * c
    }
    #[inline(always)]
    fn div(self, d: f32) -> Self {
        self / d
    }
}

impl Feat for F4 {
    const WIDTH: u32 = 4;
    #[inline(always)]
    fn zero() -> Self {
        F4([0.0; 4])
    }
    #[inline(always)]
    fn axpy(acc: Self, w: f32, x: Self) -> Self {
        let (a, x) = (acc.0, x.0);
        F4([math::fma(w, x[0], a[0]), math::fma(w, x[1], a[1]), math::fma(w, x[2], a[2]), math::fma(w, x[3], a[3])])
    }
    #[inline(always)]
    fn dot_acc(acc: f32, a: Self, b: Self) -> f32 {
        let (a, b) = (a.0, b.0);
        let acc = math::fma(a[0], b[0], acc);
        let acc = math::fma(a[1], b[1], acc);
        let acc = math::fma(a[2], b[2], acc);
        math::fma(a[3], b[3], acc)
    }
    #[inline(always)]
    fn scale(self, c: f32) -> Self {
        let a = self.0;
        F4([a[0] * c, a[1] * c, a[2] * c, a[3] * c])
    }
    #[inline(always)]
    fn div(self, d: f32) -> Self {
        let a = self.0;
        F4([a[0] / d, a[1] / d, a[2] / d, a[3] / d])
    }
}
