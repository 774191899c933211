//! Small scalar helpers shared by the ops: a sequential dot product, `y += a * x`, and a
//! non-panicking `f64` to `T` conversion.

use num_traits::Float;

/// `Σ_f a[f] * b[f]`, accumulated left to right in `T`.
pub(crate) fn dot<T: Float>(a: &[T], b: &[T]) -> T {
    a.iter().zip(b).fold(T::zero(), |acc, (&x, &y)| acc + x * y)
}

/// `y[f] += a * x[f]` for every `f`.
pub(crate) fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    for (yf, &xf) in y.iter_mut().zip(x) {
        *yf = *yf + a * xf;
    }
}

/// Converts an `f64` constant to `T` (exact for `f64`, rounded to nearest for `f32`).
pub(crate) fn cast<T: Float>(x: f64) -> T {
    T::from(x).unwrap_or_else(T::nan)
}
