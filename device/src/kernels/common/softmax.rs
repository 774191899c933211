//! Online softmax in the base-2 domain: a running maximum `m`, a running sum `l` of `2^(s − m)`,
//! and an accumulator rescaled whenever `m` grows.
//!
//! Scores arrive pre-multiplied by `log2(e)` (folded into the query scale), so every exponential
//! is one `ex2.approx`. An empty state has `m = −∞`, `l = 0`.

use crate::simt::math;

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
