//! Lane-level reductions of `f32`: over each aligned set of `lanes` lanes of a warp (a team, or a
//! head's lanes), and over the whole warp.

use crate::kernels::common::unroll::unroll;
use crate::simt::{self, FULL_MASK, ShuffleValue, WARP_SIZE, warp};

/// The sum of `value` over each aligned set of `lanes` lanes (a power of two, 1 to 32), in every
/// lane of the set (butterfly `shfl.xor` over the full mask; every lane of the warp must call it
/// with the same `lanes`). Both partners of each step add the same two values, so all lanes of a
/// set hold equal bits.
#[inline(always)]
pub fn sum_over(value: f32, lanes: u32) -> f32 {
    butterfly(value, lanes, |v, other| v + other)
}

/// The maximum of `value` over each aligned set of `lanes` lanes, in every lane of the set (as
/// [`sum_over`]).
#[inline(always)]
pub fn max_over(value: f32, lanes: u32) -> f32 {
    butterfly(value, lanes, f32::max)
}

/// `value` combined by `op` over each aligned set of `lanes` lanes: `shfl.xor` steps at offsets
/// `lanes/2, …, 2, 1`, in that order. Written as the five steps of a whole warp (offsets 16 to 1),
/// each kept only when its offset is inside the set: straight-line code whatever `lanes` is (a
/// loop over a run-time `lanes` stays a loop, with a divergence check around every shuffle, and
/// took most of a dot product score's instructions), and the same additions in the same order
/// as the loop, so the same bits.
#[inline(always)]
fn butterfly<T: ShuffleValue>(value: T, lanes: u32, op: impl Fn(T, T) -> T) -> T {
    let mut v = value;
    unroll!(5, |i| {
        let offset = (WARP_SIZE / 2) >> i;
        let other = warp::shfl_xor(FULL_MASK, v, offset);
        v = if offset < lanes { op(v, other) } else { v };
    });
    v
}

/// The least of `value` over each aligned set of `lanes` lanes, in every lane of the set (as
/// [`sum_over`]).
#[inline(always)]
pub fn min_over(value: u32, lanes: u32) -> u32 {
    butterfly(value, lanes, u32::min)
}

/// The maximum of `value` over the warp, in every lane (5 `shfl.xor`).
#[inline(always)]
pub fn warp_max(value: f32) -> f32 {
    max_over(value, WARP_SIZE)
}

/// The sum of `value` over the warp, in every lane (5 `shfl.xor`, the same bits in every lane).
#[inline(always)]
pub fn warp_sum(value: f32) -> f32 {
    sum_over(value, WARP_SIZE)
}

/// The sum of `value` over the warp in lane 0 only (5 `shfl.down`); other lanes hold partial sums.
#[inline(always)]
pub fn warp_sum_to_lane0(value: f32) -> f32 {
    let mut v = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        v += warp::shfl_down(FULL_MASK, v, offset);
        offset /= 2;
    }
    v
}

/// This warp's index in a 1-D grid: `block.x · warps per block + warp`.
#[inline(always)]
pub fn global_warp() -> u64 {
    simt::block_idx().x as u64 * (simt::block_dim().x / WARP_SIZE) as u64 + simt::warp_id() as u64
}
