//! Warp-level reductions of `f32` over all lanes of a warp.

use crate::simt::{FULL_MASK, WARP_SIZE, warp};

/// The maximum of `value` over the warp, in every lane (butterfly: 5 `shfl.xor`).
#[inline(always)]
pub fn warp_max(value: f32) -> f32 {
    let mut v = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        v = v.max(warp::shfl_xor(FULL_MASK, v, offset));
        offset /= 2;
    }
    v
}

/// The sum of `value` over the warp, in every lane (butterfly: 5 `shfl.xor`). Every lane adds in
/// the same tree order, so all lanes hold the same bits.
#[inline(always)]
pub fn warp_sum(value: f32) -> f32 {
    let mut v = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        v += warp::shfl_xor(FULL_MASK, v, offset);
        offset /= 2;
    }
    v
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
