//! GATv2 attention (Brody et al., "How attentive are graph attention networks?", PyG's
//! `GATv2Conv`): `s_ij = ⟨a, LeakyReLU(xl_j + xr_i; slope)⟩` per head, a score over the `F`
//! features of a head, `alpha_ij = softmax_j(s_ij)`, `o_i = Σ_j alpha_ij xl_j`.
//!
//! `xl` (`[num_src, H, F]`, the sources' transformed features) is both the score's key and the
//! aggregated value; `xr` (`[num_dst, H, F]`) is the destinations' operand; `a` is `[H, F]`.
//! The LeakyReLU derivative is 1 where `xl_j + xr_i > 0` and `slope` otherwise (also at exactly 0).

use num_traits::Float;

use crate::dropout::dropped;
use crate::ops::{alpha_from_lse, attention_delta, row_softmax, row_softmax_backward_with_delta, spmm, spmm_backward};
use crate::pattern::{check_dense, check_edges, check_len, check_saved, layout, product};
use crate::{Dims, Pattern, RefError};

/// What the GATv2 forward returns: the output and the state the backward needs.
#[derive(Debug, Clone, PartialEq)]
pub struct GatV2Forward<T> {
    /// `[num_dst, H, F]` attention output; rows without edges are 0.
    pub out: Vec<T>,
    /// `[num_dst, H]` log-sum-exp of each row's scores; `−∞` for rows without edges.
    pub lse: Vec<T>,
}

/// Gradients of GATv2.
#[derive(Debug, Clone, PartialEq)]
pub struct GatV2Grads<T> {
    /// `[num_src, H, F]`: through the aggregation and through the scores.
    pub dxl: Vec<T>,
    /// `[num_dst, H, F]`: through the scores.
    pub dxr: Vec<T>,
    /// `[H, F]`.
    pub da: Vec<T>,
}

/// Gradients of [`gatv2_edge_scores`].
#[derive(Debug, Clone, PartialEq)]
pub struct GatV2ScoreGrads<T> {
    /// `[num_src, H, F]`.
    pub dxl: Vec<T>,
    /// `[num_dst, H, F]`.
    pub dxr: Vec<T>,
    /// `[H, F]`.
    pub da: Vec<T>,
}

fn leaky_relu<T: Float>(x: T, slope: T) -> T {
    if x > T::zero() { x } else { slope * x }
}

fn leaky_relu_slope<T: Float>(x: T, slope: T) -> T {
    if x > T::zero() { T::one() } else { slope }
}

fn check_inputs<T>(
    op: &'static str,
    pattern: &Pattern<'_>,
    dims: Dims,
    xl: &[T],
    xr: &[T],
    a: &[T],
) -> Result<(), RefError> {
    pattern.validate()?;
    dims.validate(op)?;
    check_dense(op, "xl", layout::SRC_NODES, xl, pattern.num_src, dims)?;
    check_dense(op, "xr", layout::DST_NODES, xr, pattern.num_dst, dims)?;
    check_len(op, "a", layout::HEAD_VECTORS, a, product(op, &[dims.heads, dims.feat])?)
}

/// Edge-level GATv2 scores `s_e = Σ_f a[h,f]·LeakyReLU(xl[j,h,f] + xr[i,h,f])`.
///
/// - `pattern`: the graph, rows = destinations.
/// - `dims`: heads H and features per head F.
/// - `xl`: `[num_src, H, F]`; `xr`: `[num_dst, H, F]`; `a`: `[H, F]`.
/// - `slope`: LeakyReLU negative slope (0.2 in GATv2).
///
/// Returns `[E, H]`.
pub fn gatv2_edge_scores<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    xl: &[T],
    xr: &[T],
    a: &[T],
    slope: T,
) -> Result<Vec<T>, RefError> {
    const OP: &str = "gatv2_edge_scores";
    check_inputs(OP, pattern, dims, xl, xr, a)?;
    let heads = dims.heads;
    let mut scores = vec![T::zero(); product(OP, &[pattern.num_edges(), heads])?];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            let j = pattern.col(e);
            for h in 0..heads {
                let (l, r, ah) = (dims.at(xl, j, h), dims.at(xr, i, h), dims.at(a, 0, h));
                scores[e * heads + h] =
                    (0..dims.feat).fold(T::zero(), |acc, f| acc + ah[f] * leaky_relu(l[f] + r[f], slope));
            }
        }
    }
    Ok(scores)
}

/// Backward of [`gatv2_edge_scores`]: with `z = xl_j + xr_i`,
/// `dxl_j += ds·a⊙LeakyReLU'(z)`, `dxr_i += ds·a⊙LeakyReLU'(z)`, `da += ds·LeakyReLU(z)`.
///
/// - `pattern`, `dims`, `xl`, `xr`, `a`, `slope`: as in the forward.
/// - `d_scores`: `[E, H]` gradient of the loss with respect to the edge scores.
pub fn gatv2_edge_scores_backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    xl: &[T],
    xr: &[T],
    a: &[T],
    slope: T,
    d_scores: &[T],
) -> Result<GatV2ScoreGrads<T>, RefError> {
    const OP: &str = "gatv2_edge_scores_backward";
    check_inputs(OP, pattern, dims, xl, xr, a)?;
    check_edges(OP, "d_scores", d_scores, pattern, dims.heads)?;
    let mut dxl = vec![T::zero(); xl.len()];
    let mut dxr = vec![T::zero(); xr.len()];
    let mut da = vec![T::zero(); a.len()];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            let j = pattern.col(e);
            for h in 0..dims.heads {
                let ds = d_scores[e * dims.heads + h];
                for f in 0..dims.feat {
                    let z = dims.at(xl, j, h)[f] + dims.at(xr, i, h)[f];
                    let dz = ds * dims.at(a, 0, h)[f] * leaky_relu_slope(z, slope);
                    dims.at_mut(&mut dxl, j, h)[f] = dims.at(&dxl, j, h)[f] + dz;
                    dims.at_mut(&mut dxr, i, h)[f] = dims.at(&dxr, i, h)[f] + dz;
                    dims.at_mut(&mut da, 0, h)[f] = dims.at(&da, 0, h)[f] + ds * leaky_relu(z, slope);
                }
            }
        }
    }
    Ok(GatV2ScoreGrads { dxl, dxr, da })
}

/// GATv2 forward.
///
/// - `pattern`: the graph, rows = destinations.
/// - `dims`: heads H and features per head F.
/// - `xl`: `[num_src, H, F]` source features (scored and aggregated).
/// - `xr`: `[num_dst, H, F]` destination features (scored).
/// - `a`: `[H, F]` attention vector.
/// - `slope`: LeakyReLU negative slope.
pub fn gatv2_forward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    xl: &[T],
    xr: &[T],
    a: &[T],
    slope: T,
) -> Result<GatV2Forward<T>, RefError> {
    forward(pattern, dims, xl, xr, a, slope, None)
}

/// [`gatv2_forward`] with attention dropout: `o_i = Σ_j α_ij·factor_ij·xl_j`, `factors` the
/// `[E, H]` dropout factors (`crate::dropout_factors`: `1 / (1 − p)` where kept, 0 where
/// dropped); `lse` is the undropped softmax's.
pub fn gatv2_forward_dropout<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    xl: &[T],
    xr: &[T],
    a: &[T],
    slope: T,
    factors: &[T],
) -> Result<GatV2Forward<T>, RefError> {
    forward(pattern, dims, xl, xr, a, slope, Some(factors))
}

fn forward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    xl: &[T],
    xr: &[T],
    a: &[T],
    slope: T,
    factors: Option<&[T]>,
) -> Result<GatV2Forward<T>, RefError> {
    let scores = gatv2_edge_scores(pattern, dims, xl, xr, a, slope)?;
    let (alpha, lse) = row_softmax(pattern, dims.heads, &scores)?;
    let alpha = dropped("gatv2_forward", pattern, dims.heads, alpha, factors)?;
    let out = spmm(pattern, dims, &alpha, xl)?;
    Ok(GatV2Forward { out, lse })
}

/// GATv2 backward; alpha is recomputed from `lse`.
///
/// - `pattern`, `dims`, `xl`, `xr`, `a`, `slope`: as in [`gatv2_forward`].
/// - `out`: `[num_dst, H, F]` forward output.
/// - `lse`: `[num_dst, H]` forward log-sum-exp.
/// - `d_out`: `[num_dst, H, F]` gradient of the loss with respect to `out`.
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the kernel interface: inputs, saved state and the incoming gradient"
)]
pub fn gatv2_backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    xl: &[T],
    xr: &[T],
    a: &[T],
    slope: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
) -> Result<GatV2Grads<T>, RefError> {
    backward(pattern, dims, (xl, xr, a), slope, (out, lse, d_out), None)
}

/// [`gatv2_backward`] of [`gatv2_forward_dropout`] with the same `factors`.
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the kernel interface: inputs, saved state, the incoming gradient and the mask"
)]
pub fn gatv2_backward_dropout<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    xl: &[T],
    xr: &[T],
    a: &[T],
    slope: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
    factors: &[T],
) -> Result<GatV2Grads<T>, RefError> {
    backward(pattern, dims, (xl, xr, a), slope, (out, lse, d_out), Some(factors))
}

/// The backward: with dropout factors `m`, `o = (α⊙m)·xl`, so the aggregation's gradient of
/// `α⊙m` is multiplied by `m` on its way to α, and `D = dO·o` as without dropout.
fn backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    (xl, xr, a): (&[T], &[T], &[T]),
    slope: T,
    (out, lse, d_out): (&[T], &[T], &[T]),
    factors: Option<&[T]>,
) -> Result<GatV2Grads<T>, RefError> {
    const OP: &str = "gatv2_backward";
    check_inputs(OP, pattern, dims, xl, xr, a)?;
    check_saved(OP, pattern, dims, out, lse, d_out)?;
    let scores = gatv2_edge_scores(pattern, dims, xl, xr, a, slope)?;
    let alpha = alpha_from_lse(pattern, dims.heads, &scores, lse)?;
    let kept = dropped(OP, pattern, dims.heads, alpha.clone(), factors)?;
    let delta = attention_delta(pattern.num_dst, dims, out, d_out)?;
    let agg = spmm_backward(pattern, dims, &kept, xl, d_out)?;
    let d_alpha = dropped(OP, pattern, dims.heads, agg.d_alpha, factors)?;
    let ds = row_softmax_backward_with_delta(pattern, dims.heads, &alpha, &d_alpha, &delta)?;
    let score = gatv2_edge_scores_backward(pattern, dims, xl, xr, a, slope, &ds)?;
    let dxl = agg.dv.iter().zip(&score.dxl).map(|(&v, &s)| v + s).collect();
    Ok(GatV2Grads { dxl, dxr: score.dxr, da: score.da })
}
