//! The tolerance rule of the project (FlashAttention's): a fused result's error is at most twice
//! the error of the naive implementation at the same precision, both measured against the `f64`
//! reference, plus a small floor for results the naive run happens to get (nearly) exact.
//!
//! ```text
//! max|fused − ref_f64| ≤ 2 · max|naive_f32 − ref_f64| + FLOOR · max(1, max|ref_f64|)
//! ```
//! The floor scales with the result's magnitude (inputs are O(1), so results are O(1) or larger).
//! It is what lets a row of one edge pass: there `D_i = dO_i·o_i` and `dα_ij = dO_i·v_j` are the
//! same number summed in two orders, and their f32 difference is the whole `dq`, which is 0 in
//! f64 and may happen to be 0 in the naive run too.

use std::fmt;

use dfgnn_reference::{max_abs_diff, naive_error_bound};

/// The relative floor of the rule.
pub const FLOOR: f64 = 1e-5;

/// One result compared with the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The result's name (`out`, `lse`, `dq`, ...).
    pub name: &'static str,
    /// `max|fused − ref_f64|`.
    pub error: f64,
    /// `max|naive_f32 − ref_f64|`.
    pub naive: f64,
    /// The bound the rule allows.
    pub bound: f64,
    /// `max|ref_f64|`.
    pub magnitude: f64,
}

impl Check {
    /// Whether the error is within the bound.
    pub fn passed(&self) -> bool {
        self.error <= self.bound
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>5}: error {:.3e}, naive {:.3e}, bound {:.3e}, |ref| ≤ {:.3e}{}",
            self.name,
            self.error,
            self.naive,
            self.bound,
            self.magnitude,
            if self.passed() { "" } else { "  <-- FAILED" }
        )
    }
}

/// The largest `|x|` of the finite elements of `a` (0 for none).
pub fn magnitude(a: &[f64]) -> f64 {
    a.iter().filter(|x| x.is_finite()).fold(0.0, |m: f64, x| m.max(x.abs()))
}

/// The bound of the rule for a naive error and a reference magnitude.
pub fn bound(naive: f64, magnitude: f64) -> f64 {
    naive_error_bound(naive, FLOOR * magnitude.max(1.0))
}

/// Compares `fused` and `naive` (both `f32`) with `reference` (`f64`) under the rule.
pub fn compare(name: &'static str, fused: &[f32], naive: &[f32], reference: &[f64]) -> Check {
    let error = max_abs_diff(fused, reference);
    let naive = max_abs_diff(naive, reference);
    let magnitude = magnitude(reference);
    Check { name, error, naive, bound: bound(naive, magnitude), magnitude }
}

/// Compares one scalar (AGNN's dβ) under the rule, with the floor scaled by `magnitude` (the
/// sum of the absolute terms, so cancellation in the sum does not shrink the floor).
pub fn compare_scalar(name: &'static str, fused: f32, naive: f32, reference: f64, magnitude: f64) -> Check {
    let error = max_abs_diff(&[fused], &[reference]);
    let naive = max_abs_diff(&[naive], &[reference]);
    let magnitude = magnitude.max(reference.abs());
    Check { name, error, naive, bound: bound(naive, magnitude), magnitude }
}

/// `Err` naming the first NaN of `a`, if any: every output element must be written (the emulator
/// fills unwritten device memory with NaN).
pub fn no_nan(name: &str, a: &[f32]) -> Result<(), String> {
    match a.iter().position(|x| x.is_nan()) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{name}[{i}] is NaN ({} NaN of {} elements): an element left unwritten or a NaN computed",
            a.iter().filter(|x| x.is_nan()).count(),
            a.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_allows_twice_the_naive_error_plus_the_floor() {
        let c = compare("x", &[1.0 + 2e-6], &[1.0 + 1e-6], &[1.0]);
        assert!(c.passed(), "{c}");
        let c = compare("x", &[1.0 + 5e-5], &[1.0 + 1e-6], &[1.0]);
        assert!(!c.passed(), "{c}");
        // The floor scales with the magnitude.
        let c = compare("x", &[1000.0 + 0.005], &[1000.0], &[1000.0]);
        assert!(c.passed(), "{c}");
        let c = compare("x", &[1000.0 + 0.02], &[1000.0], &[1000.0]);
        assert!(!c.passed(), "{c}");
    }

    #[test]
    fn nan_and_infinities_fail() {
        assert!(!compare("x", &[f32::NAN], &[0.0], &[0.0]).passed());
        assert!(!compare("x", &[f32::NEG_INFINITY], &[0.0], &[0.0]).passed());
        assert!(compare("x", &[f32::NEG_INFINITY], &[f32::NEG_INFINITY], &[f64::NEG_INFINITY]).passed());
        assert!(no_nan("x", &[0.0, f32::NAN]).is_err());
        assert!(no_nan("x", &[0.0, f32::INFINITY]).is_ok());
    }
}
