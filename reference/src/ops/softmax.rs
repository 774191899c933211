//! The max-subtracted softmax over each CSR row, its log-sum-exp (the only state the backward
//! saves), and the softmax backward.
//!
//! # Numerics
//! For a row with scores `s_e` and max `m`: `alpha_e = exp(s_e − m) / Σ exp(s − m)` and
//! `lse = m + ln Σ exp(s − m)`. An empty row has no alpha and `lse = −∞`; a row whose scores are all
//! `−∞` is treated the same way (alpha 0, `lse = −∞`) instead of producing NaN. Recomputing alpha
//! from the saved lse (`exp(s − lse)`) gives 0 wherever `lse = −∞`.

use num_traits::Float;

use crate::num::dot;
use crate::pattern::{check_dense, check_edges, check_heads, check_scalars, layout, product};
use crate::{Dims, Pattern, RefError};

/// Softmax of the scores over each row, per head.
///
/// - `pattern`: the graph, rows = destinations.
/// - `heads`: number of heads H.
/// - `scores`: `[E, H]` edge scores.
///
/// Returns `(alpha, lse)`: `alpha` is `[E, H]` and sums to 1 over each non-empty row and head;
/// `lse` is `[num_dst, H]`, the row's log-sum-exp, `−∞` for empty rows.
pub fn row_softmax<T: Float>(pattern: &Pattern<'_>, heads: usize, scores: &[T]) -> Result<(Vec<T>, Vec<T>), RefError> {
    const OP: &str = "row_softmax";
    pattern.validate()?;
    check_heads(OP, heads)?;
    check_edges(OP, "scores", scores, pattern, heads)?;
    let mut alpha = vec![T::zero(); scores.len()];
    let mut lse = vec![T::neg_infinity(); product(OP, &[pattern.num_dst, heads])?];
    for i in 0..pattern.num_dst {
        let row = pattern.row(i);
        for h in 0..heads {
            let s = |e: usize| scores[e * heads + h];
            let m = row.clone().map(s).fold(T::neg_infinity(), T::max);
            // An empty row, or one whose scores are all −∞, keeps alpha = 0 and lse = −∞.
            if m == T::neg_infinity() {
                continue;
            }
            let sum = row.clone().fold(T::zero(), |acc, e| acc + (s(e) - m).exp());
            for e in row.clone() {
                alpha[e * heads + h] = (s(e) - m).exp() / sum;
            }
            lse[i * heads + h] = m + sum.ln();
        }
    }
    Ok((alpha, lse))
}

/// Recomputes the softmax from saved log-sum-exps, as the backward passes do.
///
/// - `pattern`, `heads`, `scores` `[E, H]`: as in [`row_softmax`].
/// - `lse`: `[num_dst, H]` log-sum-exp of each row, as returned by [`row_softmax`].
///
/// Returns `alpha`, `[E, H]`: `exp(scores[e,h] − lse[i,h])`, and 0 where `lse[i,h] = −∞`.
pub fn alpha_from_lse<T: Float>(
    pattern: &Pattern<'_>,
    heads: usize,
    scores: &[T],
    lse: &[T],
) -> Result<Vec<T>, RefError> {
    const OP: &str = "alpha_from_lse";
    pattern.validate()?;
    check_heads(OP, heads)?;
    check_edges(OP, "scores", scores, pattern, heads)?;
    check_scalars(OP, "lse", layout::DST_SCALARS, lse, pattern.num_dst, heads)?;
    let mut alpha = vec![T::zero(); scores.len()];
    for i in 0..pattern.num_dst {
        for h in 0..heads {
            let l = lse[i * heads + h];
            if l == T::neg_infinity() {
                continue;
            }
            for e in pattern.row(i) {
                alpha[e * heads + h] = (scores[e * heads + h] - l).exp();
            }
        }
    }
    Ok(alpha)
}

/// The per-row term of the attention backward: `D_i = d_out_i · out_i` per head.
///
/// - `num_dst`: number of destination nodes.
/// - `dims`: heads H and features per head F.
/// - `out`: `[num_dst, H, F]` forward output.
/// - `d_out`: `[num_dst, H, F]` gradient of the loss with respect to `out`.
///
/// Returns `delta`, `[num_dst, H]`. Mathematically `D_i = Σ_j alpha_ij d_alpha_ij`, the term
/// [`row_softmax_backward`] computes from the edges instead.
pub fn attention_delta<T: Float>(num_dst: usize, dims: Dims, out: &[T], d_out: &[T]) -> Result<Vec<T>, RefError> {
    const OP: &str = "attention_delta";
    dims.validate(OP)?;
    check_dense(OP, "out", layout::DST_NODES, out, num_dst, dims)?;
    check_dense(OP, "d_out", layout::DST_NODES, d_out, num_dst, dims)?;
    let mut delta = vec![T::zero(); num_dst * dims.heads];
    for i in 0..num_dst {
        for h in 0..dims.heads {
            delta[i * dims.heads + h] = dot(dims.at(d_out, i, h), dims.at(out, i, h));
        }
    }
    Ok(delta)
}

/// Softmax backward with the row term computed from the edges:
/// `ds_e = alpha_e (d_alpha_e − Σ_{e' in row} alpha_e' d_alpha_e')`.
///
/// - `pattern`, `heads`: as in [`row_softmax`].
/// - `alpha`: `[E, H]` softmax output.
/// - `d_alpha`: `[E, H]` gradient of the loss with respect to `alpha`.
///
/// Returns `d_scores`, `[E, H]`.
pub fn row_softmax_backward<T: Float>(
    pattern: &Pattern<'_>,
    heads: usize,
    alpha: &[T],
    d_alpha: &[T],
) -> Result<Vec<T>, RefError> {
    const OP: &str = "row_softmax_backward";
    pattern.validate()?;
    check_heads(OP, heads)?;
    check_edges(OP, "alpha", alpha, pattern, heads)?;
    check_edges(OP, "d_alpha", d_alpha, pattern, heads)?;
    let mut delta = vec![T::zero(); product(OP, &[pattern.num_dst, heads])?];
    for i in 0..pattern.num_dst {
        for h in 0..heads {
            delta[i * heads + h] =
                pattern.row(i).fold(T::zero(), |acc, e| acc + alpha[e * heads + h] * d_alpha[e * heads + h]);
        }
    }
    row_softmax_backward_with_delta(pattern, heads, alpha, d_alpha, &delta)
}

/// Softmax backward with a given row term, as the fused backward kernels compute it:
/// `ds_e = alpha_e (d_alpha_e − delta_i)`.
///
/// - `pattern`, `heads`: as in [`row_softmax`].
/// - `alpha`: `[E, H]` softmax output.
/// - `d_alpha`: `[E, H]` gradient of the loss with respect to `alpha`.
/// - `delta`: `[num_dst, H]` row term, `D_i = d_out_i · out_i` (see [`attention_delta`]).
///
/// Returns `d_scores`, `[E, H]`.
pub fn row_softmax_backward_with_delta<T: Float>(
    pattern: &Pattern<'_>,
    heads: usize,
    alpha: &[T],
    d_alpha: &[T],
    delta: &[T],
) -> Result<Vec<T>, RefError> {
    const OP: &str = "row_softmax_backward_with_delta";
    pattern.validate()?;
    check_heads(OP, heads)?;
    check_edges(OP, "alpha", alpha, pattern, heads)?;
    check_edges(OP, "d_alpha", d_alpha, pattern, heads)?;
    check_scalars(OP, "delta", layout::DST_SCALARS, delta, pattern.num_dst, heads)?;
    let mut d_scores = vec![T::zero(); alpha.len()];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            for h in 0..heads {
                let x = e * heads + h;
                d_scores[x] = alpha[x] * (d_alpha[x] - delta[i * heads + h]);
            }
        }
    }
    Ok(d_scores)
}
