//! The tolerance rule of the project, in one place: every test, and the main job, checks a fused
//! kernel's results with [`compare`] (arrays), [`compare_at_scale`] (AGNN's dh) or
//! [`compare_scalar`] (AGNN's dβ).
//!
//! ```text
//! max|fused − ref_f64|  ≤  2 · max|naive_f32 − ref_f64|  +  RELATIVE_FLOOR · max(1, max|ref_f64|)
//! ```
//!
//! `ref_f64` is this crate run in `f64` (the oracle) and `naive_f32` the same code run in `f32`
//! (the naive implementation at the kernels' precision), on the same `f32` inputs. The factor 2 is
//! FlashAttention's rule: a fused kernel may reorder sums and keep running maxima, but it may not be
//! less accurate than twice what the straightforward algorithm loses in the same precision.
//!
//! # The floor
//!
//! The naive error alone is no bound where the naive run happens to be (nearly) exact while the
//! fused one, which computes differently, is not. One floor, relative to the result's magnitude
//! (inputs are O(1), so results are O(1) or larger; `max(1, ·)` keeps it from vanishing with the
//! result), covers both such places the kernels have. With `u = 2⁻²⁴` the unit round-off of `f32`:
//!
//! - **The GPU's approximate instructions.** `ex2.approx.ftz.f32` has a relative error of at most
//!   `2⁻²² = 4u`, `rcp.approx.ftz.f32` and `rsqrt.approx.ftz.f32` about 1 ulp (`2u`), and
//!   `lg2.approx.ftz.f32` about `2⁻²²` absolute. An output `Σ α_j v_j` with `α_j = ex2(·)·rcp(l)`
//!   carries at most about `6u ≈ 4e-7` of its magnitude from them (AGNN's normalised features one
//!   `rsqrt` more); a naive run with correctly rounded `exp`, `sqrt` and division has none of it.
//!   (The emulator computes these exactly, so only a GPU run exercises this part.)
//! - **Sums the naive order gets exactly.** The fused kernels sum a head's `F` products across
//!   lanes, the naive run in index order. Two orders of one sum differ by up to `(F − 1)·u` of the
//!   sum of its absolute terms, typically `√F·u`, and the naive run may hit the exact value: in a
//!   row of one edge, `D_i = dO_i·o_i` and `dα_ij = dO_i·v_j` are one number summed in two orders,
//!   their `f32` difference is the whole `dq`, which is 0 in `f64` and may be exactly 0 in the
//!   naive run too. For the tested `F ≤ 256` with O(1) inputs this is about `16u ≈ 1e-6` of the
//!   result's magnitude typically and `255u ≈ 1.5e-5` at worst.
//!
//! `RELATIVE_FLOOR = 1e-5 ≈ 168u` covers the first with room and the second well past its typical
//! size; it is the floor the emulator suites and the GPU suites of `docs/results.md` pass with. It
//! still catches real defects: a wrong or unwritten element, a dropped edge or a missed rescale is
//! off by a fraction of the result itself, orders of magnitude above it.
//!
//! # Gradients through a clamped normalisation
//!
//! AGNN's `dh` is `(I − ĥĥᵀ)(dq + dk) / max(‖h‖, eps)` per (node, head), with `eps = 1e-12`, so at
//! an all-zero vector it is `(dq + dk)·10¹²`. There, the rounding residue every `f32` order of the
//! sums leaves in `dq + dk` (one ulp of its terms) is multiplied by 10¹² too, while the naive run
//! may hit the exact value: in a row whose edges all come from one source, the true `dq` is 0 and
//! `Σ α_j (x − D)` with `Σ α_j = 5 · (1/5) ≠ 1` in `f32` is not. Measured against the result's
//! largest slot, which is such an amplified one, the residue can pass the floor by several times
//! while every slot is as accurate as `f32` allows at its own scale. So [`compare_at_scale`]
//! compares such a gradient slot by slot at the scale of its input, `max(‖h‖, eps) · dh` (the
//! gradient with respect to the normalised features, projected), under the same rule. It hides no
//! defect: a missed `1/eps`, a wrong projection or a dropped term still changes a slot by a
//! fraction of itself.

use std::fmt;

use num_traits::Float;

/// The factor of the rule: fused error ≤ `NAIVE_ERROR_FACTOR` × naive error + floor.
pub const NAIVE_ERROR_FACTOR: f64 = 2.0;

/// The floor of the rule, relative to `max(1, magnitude)` (see the module documentation for its
/// derivation).
pub const RELATIVE_FLOOR: f64 = 1e-5;

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

/// The largest `|x|` of the finite elements of `a` (0 for none): the magnitude the floor scales
/// with (a log-sum-exp of `−∞` on an empty row does not count).
pub fn magnitude(a: &[f64]) -> f64 {
    a.iter().filter(|x| x.is_finite()).fold(0.0, |m: f64, x| m.max(x.abs()))
}

/// The error the rule allows.
///
/// - `naive_error`: `max|naive_f32 − ref_f64|` for the same inputs.
/// - `magnitude`: the size of the result the floor scales with (for arrays, [`magnitude`] of the
///   reference).
///
/// Returns `NAIVE_ERROR_FACTOR · naive_error + RELATIVE_FLOOR · max(1, magnitude)`.
pub fn allowed_error(naive_error: f64, magnitude: f64) -> f64 {
    NAIVE_ERROR_FACTOR * naive_error + RELATIVE_FLOOR * magnitude.max(1.0)
}

/// One result compared with the reference under the rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The result's name (`out`, `lse`, `dq`, ...).
    pub name: String,
    /// `max|fused − ref_f64|`.
    pub error: f64,
    /// `max|naive_f32 − ref_f64|`.
    pub naive: f64,
    /// The magnitude the floor scales with.
    pub magnitude: f64,
    /// The error the rule allows: [`allowed_error`]`(naive, magnitude)`.
    pub bound: f64,
}

impl Check {
    /// Whether the error is within the bound. A NaN error is not, and nothing is within an
    /// infinite bound: a naive run without a finite error (a length mismatch, a NaN or an
    /// overflow where the reference is finite) cannot judge the fused one.
    pub fn passed(&self) -> bool {
        self.error <= self.bound && self.bound.is_finite()
    }

    /// The error over the bound: at most 1 passes (NaN when the error is NaN).
    pub fn ratio(&self) -> f64 {
        self.error / self.bound
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

/// Compares a fused result and the naive one (both `f32`) with the `f64` reference.
///
/// - `name`: what the result is, for messages.
/// - `fused`, `naive`, `reference`: the same result from the kernel under test, this crate in
///   `f32` and this crate in `f64`, all of one length (a mismatch fails the check).
pub fn compare(name: impl Into<String>, fused: &[f32], naive: &[f32], reference: &[f64]) -> Check {
    judge(name.into(), fused, naive, reference)
}

/// The rule applied to arrays of any precision: the body of [`compare`] and [`compare_at_scale`].
fn judge<T: Float>(name: String, fused: &[T], naive: &[T], reference: &[f64]) -> Check {
    let (error, naive, magnitude) =
        (max_abs_diff(fused, reference), max_abs_diff(naive, reference), magnitude(reference));
    Check { name, error, naive, magnitude, bound: allowed_error(naive, magnitude) }
}

/// Compares a gradient through a clamped normalisation (AGNN's `dh`) under the rule, each slot at
/// the scale of its input (see the module documentation).
///
/// - `fused`, `naive`, `reference`: as for [`compare`], `[slots, width]` each.
/// - `scale`: one positive factor per slot (for `dh`, the `f64` norm of the `f32` input clamped at
///   `eps`, `Normalized::norm` of the reference); `reference.len()` must be a multiple of its
///   length, or the check fails.
pub fn compare_at_scale(
    name: impl Into<String>,
    fused: &[f32],
    naive: &[f32],
    reference: &[f64],
    scale: &[f64],
) -> Check {
    // `is_multiple_of(0)` holds for 0 only: without slots, only empty results fit.
    let fits = |a: usize| a == reference.len() && a.is_multiple_of(scale.len());
    if !(fits(fused.len()) && fits(naive.len())) {
        let infinite = f64::INFINITY;
        return Check { name: name.into(), error: infinite, naive: infinite, magnitude: infinite, bound: infinite };
    }
    let width = (reference.len() / scale.len().max(1)).max(1);
    let at_scale = |a: &[f64]| -> Vec<f64> { a.iter().enumerate().map(|(i, x)| x * scale[i / width]).collect() };
    judge(name.into(), &at_scale(&upcast(fused)), &at_scale(&upcast(naive)), &at_scale(reference))
}

/// Compares one scalar that is a sum of many terms (AGNN's dβ) under the rule.
///
/// - `magnitude`: the sum of the absolute terms (for dβ, `AgnnGrads::d_beta_magnitude` of the
///   `f64` reference), so that cancellation in the sum does not shrink the floor; at least
///   `|reference|` is used.
pub fn compare_scalar(name: impl Into<String>, fused: f32, naive: f32, reference: f64, magnitude: f64) -> Check {
    let (error, naive) = (max_abs_diff(&[fused], &[reference]), max_abs_diff(&[naive], &[reference]));
    let magnitude = magnitude.max(reference.abs());
    Check { name: name.into(), error, naive, magnitude, bound: allowed_error(naive, magnitude) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_allows_twice_the_naive_error_plus_the_floor() {
        assert_eq!(allowed_error(1e-6, 0.5), 2e-6 + RELATIVE_FLOOR);
        let c = compare("x", &[1.0 + 2e-6], &[1.0 + 1e-6], &[1.0]);
        assert!(c.passed(), "{c}");
        let c = compare("x", &[1.0 + 5e-5], &[1.0 + 1e-6], &[1.0]);
        assert!(!c.passed() && c.ratio() > 1.0, "{c}");
        // The floor scales with the magnitude.
        let c = compare("x", &[1000.0 + 0.005], &[1000.0], &[1000.0]);
        assert!(c.passed(), "{c}");
        let c = compare("x", &[1000.0 + 0.02], &[1000.0], &[1000.0]);
        assert!(!c.passed(), "{c}");
    }

    #[test]
    fn nan_infinities_and_length_mismatches_fail() {
        assert!(!compare("x", &[f32::NAN], &[0.0], &[0.0]).passed());
        assert!(compare("x", &[f32::NAN], &[0.0], &[0.0]).ratio().is_infinite());
        assert!(!compare("x", &[f32::NEG_INFINITY], &[0.0], &[0.0]).passed());
        assert!(compare("x", &[f32::NEG_INFINITY], &[f32::NEG_INFINITY], &[f64::NEG_INFINITY]).passed());
        assert!(!compare("x", &[0.0], &[0.0, 0.0], &[0.0]).passed());
        assert!(!compare("x", &[0.0], &[f32::NAN], &[0.0]).passed());
        assert_eq!(magnitude(&[f64::NEG_INFINITY, -3.0, 2.0]), 3.0);
    }

    #[test]
    fn a_scaled_gradient_is_judged_slot_by_slot_at_its_input_scale() {
        // Slot 0 is a zero vector (scale eps = 1e-12): a residue of 2e-7 in dq + dk is 2e5 in dh,
        // past the floor of its own magnitude, but 2e-7 at scale.
        let eps = 1e-12;
        let reference = [5e9, 0.0, 0.5, -0.25];
        let fused = [5e9, 2e5, 0.5, -0.25];
        assert!(!compare("dh", &fused, &reference.map(|x| x as f32), &reference).passed());
        let scale = [eps, 2.0];
        let c = compare_at_scale("dh", &fused, &reference.map(|x| x as f32), &reference, &scale);
        assert!(c.passed(), "{c}");
        // A slot off by a fraction of itself still fails, at either scale.
        let c = compare_at_scale("dh", &[5e9, 0.0, 0.5, -0.3], &reference.map(|x| x as f32), &reference, &scale);
        assert!(!c.passed(), "{c}");
        let c = compare_at_scale("dh", &[4e9, 0.0, 0.5, -0.25], &reference.map(|x| x as f32), &reference, &scale);
        assert!(!c.passed(), "{c}");
        // Lengths that do not fit the slots fail.
        assert!(!compare_at_scale("dh", &[0.0; 3], &[0.0; 3], &[0.0; 3], &scale).passed());
        assert!(!compare_at_scale("dh", &[0.0; 4], &[0.0; 3], &[0.0; 4], &scale).passed());
        assert!(compare_at_scale("dh", &[], &[], &[], &[]).passed());
    }

    #[test]
    fn a_scalar_floor_scales_with_its_terms() {
        // dβ = 1e-3 as the sum of terms of size 10: 5e-5 of error is within 1e-5 · 10 + 0.
        assert!(compare_scalar("dβ", 1e-3 + 5e-5, 1e-3, 1e-3, 10.0).passed());
        assert!(!compare_scalar("dβ", 1e-3 + 5e-5, 1e-3, 1e-3, 1.0).passed());
    }
}
