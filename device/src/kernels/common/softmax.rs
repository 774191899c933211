//! Online softmax in the base-2 domain: a running maximum `m`, a running sum `l` of `2^(s − m)`,
//! and an accumulator rescaled whenever `m` grows.
//!
//! Scores arrive pre-multiplied by `log2(e)` (folded into the query scale), so every exponential
//! is one `ex2.approx`. An empty state has `m = −∞`, `l = 0`.

use crate::kernels::common::vector::Vector;
use crate::simt::math;

/// A running sum kept in blocks (the online softmax's `l` and its accumulator): terms go into
/// `block` (one add or fma each, as a plain sum), and every [`BLOCK_EDGES`] edges the block is
/// folded into `total`. The error grows with the block's length plus the number of blocks instead
/// of with the row's length.
///
/// A plain running sum of `n` terms errs by up to `n` ulps, and on a row of repeated edges
/// (equal terms round alike) it gets there. Both sums reach the backward at first order: the
/// output's error through `D = dO·o`, and `l`'s through `Σ_j α_ij ≠ 1`, which leaves
/// `(1 − Σ_j α_ij)·D` uncancelled in `Σ_j ds_ij`; every gradient of the row inherits them.
/// Blocks cost one register per summed value and one add per block; Kahan's compensation, as
/// accurate, cost three dependent adds per term and 6–12 % of the forward on the H200.
#[derive(Clone, Copy)]
pub struct Blocked<V> {
    total: V,
    block: V,
}

/// Edges per block of a [`Blocked`] sum (per team: its steps of `STEP` edges).
pub const BLOCK_EDGES: usize = 32;

/// When a loop's [`Blocked`] sums fold: after every block of [`BLOCK_EDGES`] edges, counted in
/// the loop's steps of `STEP` edges per team.
pub struct FoldClock {
    steps: usize,
    per_block: usize,
}

impl FoldClock {
    /// The clock of a loop that takes `step` edges per team and step.
    #[inline(always)]
    pub fn new(step: usize) -> Self {
        Self { steps: 0, per_block: (BLOCK_EDGES / step).max(1) }
    }

    /// Counts one step; true when the sums should fold now.
    #[inline(always)]
    pub fn tick(&mut self) -> bool {
        self.steps += 1;
        let fold = self.steps == self.per_block;
        if fold {
            self.steps = 0;
        }
        fold
    }
}

impl<V: Vector> Blocked<V> {
    /// The empty sum.
    #[inline(always)]
    pub fn zero() -> Self {
        Self { total: V::zero(), block: V::zero() }
    }

    /// Adds `term`.
    #[inline(always)]
    pub fn add(&mut self, term: V) {
        self.block = self.block.add(term);
    }

    /// Adds `w·v`.
    #[inline(always)]
    pub fn add_scaled(&mut self, v: V, w: f32) {
        self.block = v.mul_add(w, self.block);
    }

    /// Folds the block into the total.
    #[inline(always)]
    pub fn fold(&mut self) {
        self.total = self.total.add(self.block);
        self.block = V::zero();
    }

    /// Multiplies the sum by `r` (a rescale of the online softmax).
    #[inline(always)]
    pub fn scale(&mut self, r: f32) {
        self.total = self.total.scale(r);
        self.block = self.block.scale(r);
    }

    /// The sum.
    #[inline(always)]
    pub fn value(self) -> V {
        self.total.add(self.block)
    }
}

/// `2^(old − new)`, the factor that rescales a state from maximum `old` to `new ≥ old`; 1 when
/// both are −∞ (nothing seen yet), which `2^(−∞ − −∞)` would make NaN.
#[inline(always)]
pub fn rescale_factor(old: f32, new: f32) -> f32 {
    if new == f32::NEG_INFINITY { 1.0 } else { math::exp2(old - new) }
}

/// `2^(s − m)` for a score `s` of a state with maximum `m`; 0 for a masked score (−∞).
#[inline(always)]
pub fn weight(s: f32, m: f32) -> f32 {
    if s == f32::NEG_INFINITY { 0.0 } else { math::exp2(s - m) }
}

/// Merges state `(m_b, l_b)` into `(m_a, l_a)`; returns the merged `(m, l)` and the factors that
/// rescale `a`'s and `b`'s accumulators.
#[inline(always)]
pub fn merge(m_a: f32, l_a: f32, m_b: f32, l_b: f32) -> (f32, f32, f32, f32) {
    let m = m_a.max(m_b);
    let (ra, rb) = (rescale_factor(m_a, m), rescale_factor(m_b, m));
    (m, l_a * ra + l_b * rb, ra, rb)
}

/// The natural log-sum-exp of a finished state: `(m + log2 l)·ln 2`, or −∞ for an empty one.
#[inline(always)]
pub fn log_sum_exp(m: f32, l: f32) -> f32 {
    if l > 0.0 { (m + math::log2(l)) * math::LN_2 } else { f32::NEG_INFINITY }
}

/// The natural log-sum-exp of a row whose scores (in natural units) have maximum `m` and
/// `l = Σ exp(s − m)`: `m + log2(l)·ln 2`, or −∞ for an empty row. (The unfused kernels keep
/// natural scores; [`log_sum_exp`] is its base-2 counterpart.)
#[inline(always)]
pub fn natural_log_sum_exp(m: f32, l: f32) -> f32 {
    if l > 0.0 { m + math::log2(l) * math::LN_2 } else { f32::NEG_INFINITY }
}
