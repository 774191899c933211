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
//! Every kernel works on *items* (an (edge, head) or a (node, head) pair) with a *team* of
//! `team_lanes` lanes per item: a power of two from 1 to [`WARP_SIZE`], a warp holds
//! `WARP_SIZE / team_lanes` teams, and teams sweep the items grid-stride (so any grid size is
//! correct; one that covers every item once is the fastest). Blocks and grids are 1-D, `block.x`
//! a multiple of [`WARP_SIZE`]. No shared memory, no atomics: every output element is written by
//! exactly one lane, from sums in a fixed order, so results are bit-identical run after run.
//! Node features use 16-byte [`F4`](crate::simt::F4) accesses when `F % 4 == 0`, scalar ones
//! otherwise.

mod edge_softmax;
mod sddmm;
mod softmax_aggregate;
mod spmm;

pub use edge_softmax::*;
pub use sddmm::*;
pub use softmax_aggregate::*;
pub use spmm::*;

use crate::kernels::common::reduce::{global_warp, max_over, sum_over};
use crate::simt::{self, GSlice, WARP_SIZE, math};

/// Where this thread's team (the `lanes` lanes that take one item) sits among the launch's
/// items (1-D grid and block).
#[derive(Clone, Copy)]
pub(crate) struct Teams {
    /// This lane's index within its team, `0..lanes`.
    pub lane: u32,
    /// Lanes per team (a power of two, 1 to [`WARP_SIZE`]).
    pub lanes: u32,
    /// This team's index within its warp.
    pub sub: u64,
    /// The first item of this warp's first team in the first sweep (warp-uniform).
    pub first: u64,
    /// Items per sweep: the number of teams in the grid.
    pub stride: u64,
}

impl Teams {
    /// The layout for teams of `lanes` lanes.
    #[inline(always)]
    pub fn new(lanes: u32) -> Self {
        let shift = lanes.trailing_zeros();
        let per_warp = (WARP_SIZE >> shift) as u64;
        let warps_per_block = (simt::block_dim().x / WARP_SIZE) as u64;
        let lane = simt::lane_id();
        Self {
            lane: lane & (lanes - 1),
            lanes,
            sub: (lane >> shift) as u64,
            first: global_warp() * per_warp,
            stride: simt::grid_dim().x as u64 * warps_per_block * per_warp,
        }
    }
}

/// The CSR edge range and head of `item` (items run over (row, head), row-major), or an empty
/// range for a lane without an item, so that it still reaches the team reductions.
#[inline(always)]
pub(crate) fn item_row(offsets: GSlice<u64>, item: u64, heads: u64, valid: bool) -> (u64, u64, u64) {
    if !valid {
        return (0, 0, 0);
    }
    let i = (item / heads) as usize;
    (offsets.load(i), offsets.load(i + 1), item % heads)
}

/// The softmax statistics of one row and head: the max `m` of the scores `s[e·heads + h]` for
/// `e` in `start..end`, and `l = Σ 2^((s − m)·log2 e)`. The team's lanes stride over the edges;
/// both results are in every lane of the team. Every lane of the warp must call it (a lane with
/// no item passes an empty range). `l == 0` exactly when the row is empty or all its scores are
/// `−∞`; otherwise `l ≥ 1`.
#[inline(always)]
pub(crate) fn row_stats(scores: GSlice<f32>, start: u64, end: u64, h: u64, heads: u64, g: &Teams) -> (f32, f32) {
    // The row maximum.
    let mut m = f32::NEG_INFINITY;
    let mut e = start + g.lane as u64;
    while e < end {
        m = m.max(scores.load((e * heads + h) as usize));
        e += g.lanes as u64;
    }
    let m = max_over(m, g.lanes);
    // The sum of exponentials; a shift of 0 for an all-(−∞) row makes every term 0, not NaN.
    let shift = finite_or_zero(m);
    let mut l = 0.0f32;
    let mut e = start + g.lane as u64;
    while e < end {
        l += exp_shifted(scores.load((e * heads + h) as usize), shift);
        e += g.lanes as u64;
    }
    (m, sum_over(l, g.lanes))
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
