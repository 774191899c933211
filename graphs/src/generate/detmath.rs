//! `ln`, `exp` and `powf` from IEEE-754 basic operations only.
//!
//! `f64::powf` and friends call the platform's libm, whose last-bit results differ between
//! systems. These versions use only `+ - * /` and bit manipulation, which IEEE-754 defines
//! exactly, so a generator's weights (and hence its graph) are the same everywhere. They are
//! accurate to a few ulps, which is all a random-graph weight needs.

const LN2: f64 = std::f64::consts::LN_2;
/// ln 2 split in a high part with trailing zero bits (so `k * LN2_HI` is exact for the `k` used
/// here) and the rest (Cody and Waite's argument reduction).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);

/// The natural logarithm of a positive, finite, normal `x`.
pub(crate) fn ln(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)).
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > std::f64::consts::SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series converges fast.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum = 0.0;
    let mut k = 1.0;
    while k < 40.0 {
        sum += term / k;
        term *= s2;
        k += 2.0;
    }
    e as f64 * LN2 + 2.0 * sum
}

/// `e^x` for `|x| < 700`.
pub(crate) fn exp(x: f64) -> f64 {
    debug_assert!(x.abs() < 700.0);
    // x = k ln2 + r with |r| <= ln2 / 2; e^x = 2^k e^r.
    let k = (x / LN2).round();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut i = 1.0;
    while i < 24.0 {
        term *= r / i;
        sum += term;
        i += 1.0;
    }
    let scale = f64::from_bits(((k as i64 + 1023) as u64) << 52);
    sum * scale
}

/// `x^y` for positive `x` and moderate `|y ln x|`.
pub(crate) fn powf(x: f64, y: f64) -> f64 {
    exp(y * ln(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_libm_to_a_few_ulps() {
        for &x in &[1e-9, 0.3, 1.0, 1.5, 2.0, 10.0, 12345.678, 1048576.0, 3.0e12] {
            let rel = (ln(x) - x.ln()).abs() / x.ln().abs().max(1e-300);
            assert!(x == 1.0 || rel < 1e-14, "ln({x}): {} vs {}", ln(x), x.ln());
        }
        assert_eq!(ln(1.0), 0.0);
        for &x in &[-50.0, -3.3, -0.5, 0.0, 0.25, 1.0, 7.7, 300.0] {
            let rel = (exp(x) - x.exp()).abs() / x.exp();
            assert!(rel < 1e-14, "exp({x}): {} vs {}", exp(x), x.exp());
        }
        let rel = (powf(1000.0, -1.0 / 1.1) - 1000f64.powf(-1.0 / 1.1)).abs();
        assert!(rel < 1e-15, "{rel}");
    }
}
