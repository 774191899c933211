//! GT, sparse scaled dot-product attention (docs/design.md §3):
//! `s_ij = c · q_i·k_j`, `alpha_ij = softmax_j(s_ij)`, `o_i = Σ_j alpha_ij v_j`.

use num_traits::Float;

use crate::dropout::dropped;
use crate::num::cast;
use crate::ops::{
    alpha_from_lse, attention_delta, row_softmax, row_softmax_backward_with_delta, sddmm_backward, sddmm_dot, spmm,
    spmm_backward,
};
use crate::pattern::{check_dense, check_saved, layout};
use crate::{Dims, Pattern, RefError};

/// The default GT scale `c = 1/√feat` (`+∞` for `feat = 0`, which every op rejects anyway).
///
/// - `feat`: features per head F.
///
/// Computed in `f64` and rounded once to `T`.
pub fn default_gt_scale<T: Float>(feat: usize) -> T {
    cast(1.0 / (feat as f64).sqrt())
}

/// What the GT forward returns: the output and the state the backward needs.
#[derive(Debug, Clone, PartialEq)]
pub struct GtForward<T> {
    /// `[num_dst, H, F]` attention output; rows without edges are 0.
    pub out: Vec<T>,
    /// `[num_dst, H]` log-sum-exp of each row's scores; `−∞` for rows without edges.
    pub lse: Vec<T>,
}

/// Gradients of the GT loss with respect to the three inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct GtGrads<T> {
    /// `[num_dst, H, F]`.
    pub dq: Vec<T>,
    /// `[num_src, H, F]`.
    pub dk: Vec<T>,
    /// `[num_src, H, F]`.
    pub dv: Vec<T>,
}

/// GT forward.
///
/// - `pattern`: the graph, rows = destinations.
/// - `dims`: heads H and features per head F.
/// - `q`: `[num_dst, H, F]` queries.
/// - `k`: `[num_src, H, F]` keys.
/// - `v`: `[num_src, H, F]` values.
/// - `scale`: the score scale c (see [`default_gt_scale`]).
pub fn gt_forward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    q: &[T],
    k: &[T],
    v: &[T],
    scale: T,
) -> Result<GtForward<T>, RefError> {
    forward(pattern, dims, (q, k, v), scale, None)
}

/// [`gt_forward`] with attention dropout: `o_i = Σ_j α_ij·factor_ij·v_j`, `factors` the `[E, H]`
/// dropout factors (`crate::dropout_factors`: `1 / (1 − p)` where kept, 0 where dropped); `lse`
/// is the undropped softmax's.
pub fn gt_forward_dropout<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    q: &[T],
    k: &[T],
    v: &[T],
    scale: T,
    factors: &[T],
) -> Result<GtForward<T>, RefError> {
    forward(pattern, dims, (q, k, v), scale, Some(factors))
}

fn forward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    (q, k, v): (&[T], &[T], &[T]),
    scale: T,
    factors: Option<&[T]>,
) -> Result<GtForward<T>, RefError> {
    const OP: &str = "gt_forward";
    check_inputs(OP, pattern, dims, q, k, v)?;
    let scores = sddmm_dot(pattern, dims, q, k, scale)?;
    let (alpha, lse) = row_softmax(pattern, dims.heads, &scores)?;
    let alpha = dropped(OP, pattern, dims.heads, alpha, factors)?;
    let out = spmm(pattern, dims, &alpha, v)?;
    Ok(GtForward { out, lse })
}

/// GT backward; alpha is recomputed from `lse`.
///
/// - `pattern`, `dims`, `q` `[num_dst, H, F]`, `k` `[num_src, H, F]`, `v` `[num_src, H, F]`,
///   `scale`: as in [`gt_forward`].
/// - `out`: `[num_dst, H, F]` forward output.
/// - `lse`: `[num_dst, H]` forward log-sum-exp.
/// - `d_out`: `[num_dst, H, F]` gradient of the loss with respect to `out`.
///
/// With `D_i = dO_i·o_i`: `dα_ij = dO_i·v_j`, `ds_ij = α_ij (dα_ij − D_i)`,
/// `dq_i = c Σ_j ds_ij k_j`, `dk_j = c Σ_i ds_ij q_i`, `dv_j = Σ_i α_ij dO_i`.
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the kernel interface: inputs, saved state and the incoming gradient"
)]
pub fn gt_backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    q: &[T],
    k: &[T],
    v: &[T],
    scale: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
) -> Result<GtGrads<T>, RefError> {
    const OP: &str = "gt_backward";
    check_inputs(OP, pattern, dims, q, k, v)?;
    check_saved(OP, pattern, dims, out, lse, d_out)?;
    gt_backward_with_scores(pattern, dims, q, k, v, scale, out, lse, d_out).map(|(grads, _)| grads)
}

/// [`gt_backward`] of [`gt_forward_dropout`] with the same `factors`: with `o = (α⊙m)·v`, the
/// aggregation's gradient of `α⊙m` is multiplied by `m` on its way to α, and `D = dO·o` as
/// without dropout.
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the kernel interface: inputs, saved state, the incoming gradient and the mask"
)]
pub fn gt_backward_dropout<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    q: &[T],
    k: &[T],
    v: &[T],
    scale: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
    factors: &[T],
) -> Result<GtGrads<T>, RefError> {
    const OP: &str = "gt_backward";
    check_inputs(OP, pattern, dims, q, k, v)?;
    check_saved(OP, pattern, dims, out, lse, d_out)?;
    backward(pattern, dims, (q, k, v), scale, (out, lse, d_out), Some(factors)).map(|(grads, _)| grads)
}

/// Validates the pattern and dims and checks the shapes of `q`, `k` and `v`.
fn check_inputs<T>(
    op: &'static str,
    pattern: &Pattern<'_>,
    dims: Dims,
    q: &[T],
    k: &[T],
    v: &[T],
) -> Result<(), RefError> {
    pattern.validate()?;
    dims.validate(op)?;
    check_dense(op, "q", layout::DST_NODES, q, pattern.num_dst, dims)?;
    check_dense(op, "k", layout::SRC_NODES, k, pattern.num_src, dims)?;
    check_dense(op, "v", layout::SRC_NODES, v, pattern.num_src, dims)
}

/// [`gt_backward`] that also returns the score gradient `ds`, `[E, H]` (AGNN needs it for dβ).
#[expect(clippy::too_many_arguments, reason = "the same arguments as gt_backward")]
pub(crate) fn gt_backward_with_scores<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    q: &[T],
    k: &[T],
    v: &[T],
    scale: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
) -> Result<(GtGrads<T>, Vec<T>), RefError> {
    backward(pattern, dims, (q, k, v), scale, (out, lse, d_out), None)
}

fn backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    (q, k, v): (&[T], &[T], &[T]),
    scale: T,
    (out, lse, d_out): (&[T], &[T], &[T]),
    factors: Option<&[T]>,
) -> Result<(GtGrads<T>, Vec<T>), RefError> {
    const OP: &str = "gt_backward";
    let scores = sddmm_dot(pattern, dims, q, k, scale)?;
    let alpha = alpha_from_lse(pattern, dims.heads, &scores, lse)?;
    let kept = dropped(OP, pattern, dims.heads, alpha.clone(), factors)?;
    let delta = attention_delta(pattern.num_dst, dims, out, d_out)?;
    let agg = spmm_backward(pattern, dims, &kept, v, d_out)?;
    let d_alpha = dropped(OP, pattern, dims.heads, agg.d_alpha, factors)?;
    let ds = row_softmax_backward_with_delta(pattern, dims.heads, &alpha, &d_alpha, &delta)?;
    let qk = sddmm_backward(pattern, dims, q, k, &ds, scale)?;
    let grads = GtGrads { dq: qk.dq, dk: qk.dk, dv: agg.dv };
    Ok((grads, ds))
}
