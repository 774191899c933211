//! The unit of a feature load: one `f32`, or four (`F4`, one 16-byte instruction).

use crate::simt::{F4, FULL_MASK, Word, math, warp};

/// A short vector of features one lane loads, multiplies and accumulates at once.
pub trait Vector: Word {
    /// Features per vector.
    const WIDTH: usize;
    /// All zeros.
    fn zero() -> Self;
    /// `Σ self·other`.
    fn dot(self, other: Self) -> f32;
    /// `acc + s·self`, element-wise, each a fused multiply-add (one rounding).
    fn mul_add(self, s: f32, acc: Self) -> Self;
    /// `s·self`, element-wise.
    fn scale(self, s: f32) -> Self;
    /// `self + other`, element-wise.
    fn add(self, other: Self) -> Self;
    /// `self / d`, element-wise (correctly rounded).
    fn div(self, d: f32) -> Self;
    /// `self·other`, element-wise.
    fn mul(self, other: Self) -> Self;
    /// `f` of each element.
    fn map(self, f: impl Fn(f32) -> f32) -> Self;
    /// The value of lane `lane_id ^ lane_mask` (every lane of the warp takes part).
    fn shfl_xor(self, lane_mask: u32) -> Self;
}

impl Vector for f32 {
    const WIDTH: usize = 1;
    #[inline(always)]
    fn zero() -> Self {
        0.0
    }
    #[inline(always)]
    fn dot(self, other: Self) -> f32 {
        self * other
    }
    #[inline(always)]
    fn mul_add(self, s: f32, acc: Self) -> Self {
        math::fma(s, self, acc)
    }
    #[inline(always)]
    fn scale(self, s: f32) -> Self {
        s * self
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
    #[inline(always)]
    fn div(self, d: f32) -> Self {
        self / d
    }
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        self * other
    }
    #[inline(always)]
    fn map(self, f: impl Fn(f32) -> f32) -> Self {
        f(self)
    }
    #[inline(always)]
    fn shfl_xor(self, lane_mask: u32) -> Self {
        warp::shfl_xor(FULL_MASK, self, lane_mask)
    }
}

impl Vector for F4 {
    const WIDTH: usize = 4;
    #[inline(always)]
    fn zero() -> Self {
        F4([0.0; 4])
    }
    #[inline(always)]
    fn dot(self, other: Self) -> f32 {
        let (a, b) = (self.0, other.0);
        (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3])
    }
    #[inline(always)]
    fn mul_add(self, s: f32, acc: Self) -> Self {
        let (a, c) = (self.0, acc.0);
        F4([math::fma(s, a[0], c[0]), math::fma(s, a[1], c[1]), math::fma(s, a[2], c[2]), math::fma(s, a[3], c[3])])
    }
    #[inline(always)]
    fn scale(self, s: f32) -> Self {
        let a = self.0;
        F4([s * a[0], s * a[1], s * a[2], s * a[3]])
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        let (a, b) = (self.0, other.0);
        F4([a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]])
    }
    #[inline(always)]
    fn div(self, d: f32) -> Self {
        let a = self.0;
        F4([a[0] / d, a[1] / d, a[2] / d, a[3] / d])
    }
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        let (a, b) = (self.0, other.0);
        F4([a[0] * b[0], a[1] * b[1], a[2] * b[2], a[3] * b[3]])
    }
    #[inline(always)]
    fn map(self, f: impl Fn(f32) -> f32) -> Self {
        let a = self.0;
        F4([f(a[0]), f(a[1]), f(a[2]), f(a[3])])
    }
    #[inline(always)]
    fn shfl_xor(self, lane_mask: u32) -> Self {
        let a = self.0;
        F4([
            warp::shfl_xor(FULL_MASK, a[0], lane_mask),
            warp::shfl_xor(FULL_MASK, a[1], lane_mask),
            warp::shfl_xor(FULL_MASK, a[2], lane_mask),
            warp::shfl_xor(FULL_MASK, a[3], lane_mask),
        ])
    }
}
