//! Precision helpers for the tolerance rule of the property tests: a fused kernel's error must be
//! at most twice the error of the naive implementation at the same precision (this crate run in
//! `f32`), both measured against this crate run in `f64`, plus a small absolute floor.

use num_traits::Float;

/// The factor of the tolerance rule: fused error ≤ `NAIVE_ERROR_FACTOR` × naive error + floor.
pub const NAIVE_ERROR_FACTOR: f64 = 2.0;

/// Widens an `f32` slice to `f64` (exact).
///
/// - `a`: any `f32` array.
pub fn upcast(a: &[f32]) -> Vec<f64> {
    a.iter().map(|&x| f64::from(x)).collect()
}

/// Narrows an `f64` slice to `f32`, rounding to nearest.
///
/// - `a`: any `f64` array.
pub fn downcast(a: &[f64]) -> Vec<f32> {
    // Rounding to the nearest f32 is the point of this function.
    a.iter().map(|&x| x as f32).collect()
}

/// The largest elementwise `|a − b|`, measured in `f64`.
///
/// - `a`: the array under test (`f32` from a kernel or the naive run, or `f64`).
/// - `b`: the `f64` ground truth, same length as `a`.
///
/// Equal values count as 0, including equal infinities and NaN against NaN. Any other
/// disagreement that has no finite difference (NaN against a number, `+∞` against a number or
/// `−∞`), and a length mismatch, give `+∞`, so a tolerance check against the result fails.
/// Empty arrays give 0.
pub fn max_abs_diff<T: Float>(a: &[T], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.iter().zip(b).fold(0.0, |worst: f64, (&x, &y)| {
        let x = x.to_f64().unwrap_or(f64::NAN);
        let d = if x == y || (x.is_nan() && y.is_nan()) { 0.0 } else { (x - y).abs() };
        worst.max(if d.is_nan() { f64::INFINITY } else { d })
    })
}

/// The bound the tolerance rule puts on a fused kernel's error.
///
/// - `naive_error`: `max_abs_diff(naive_f32, reference_f64)` for the same inputs.
/// - `abs_floor`: an absolute allowance for outputs the naive run happens to get (nearly) exact.
///
/// Returns `NAIVE_ERROR_FACTOR * naive_error + abs_floor`.
pub fn naive_error_bound(naive_error: f64, abs_floor: f64) -> f64 {
    NAIVE_ERROR_FACTOR * naive_error + abs_floor
}
