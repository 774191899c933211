//! GAT attention (docs/design.md §3): `s_ij = LeakyReLU(el_i + er_j; slope)` with the node-level
//! scores `el_i = ⟨h_dst[i], a_dst⟩` and `er_j = ⟨h[j], a_src⟩` per head,
//! `alpha_ij = softmax_j(s_ij)`, `o_i = Σ_j alpha_ij h_j`.
//!
//! Two entry points: the full model (features and attention vectors in, so kernels that fuse the
//! node-level dot products are checked against it) and the `_precomputed` variant (el and er in).
//! `h_dst` is an explicit argument so bipartite blocks work; on a square graph where one feature
//! array plays both roles, pass it twice and add `dh` and `dh_dst`.

use num_traits::Float;

use crate::dropout::dropped;
use crate::ops::{alpha_from_lse, attention_delta, row_softmax, row_softmax_backward_with_delta, spmm, spmm_backward};
use crate::pattern::{check_dense, check_len, check_saved, check_scalars, layout, product};
use crate::{Dims, Pattern, RefError};

mod scores;

pub use scores::{
    EdgeScoreGrads, NodeScoreGrads, gat_edge_scores, gat_edge_scores_backward, gat_node_scores,
    gat_node_scores_backward,
};

/// What the GAT forward returns: the output and the state the backward needs.
#[derive(Debug, Clone, PartialEq)]
pub struct GatForward<T> {
    /// `[num_dst, H, F]` attention output; rows without edges are 0.
    pub out: Vec<T>,
    /// `[num_dst, H]` log-sum-exp of each row's scores; `−∞` for rows without edges.
    pub lse: Vec<T>,
}

/// Gradients of the full GAT model.
#[derive(Debug, Clone, PartialEq)]
pub struct GatGrads<T> {
    /// `[num_src, H, F]`: through the aggregation and through `er`.
    pub dh: Vec<T>,
    /// `[num_dst, H, F]`: through `el`.
    pub dh_dst: Vec<T>,
    /// `[H, F]`.
    pub da_dst: Vec<T>,
    /// `[H, F]`.
    pub da_src: Vec<T>,
}

/// Gradients of the GAT model with precomputed node scores.
#[derive(Debug, Clone, PartialEq)]
pub struct GatPrecomputedGrads<T> {
    /// `[num_src, H, F]`: through the aggregation only.
    pub dh: Vec<T>,
    /// `[num_dst, H]`: `d el_i = Σ_j de_ij` (row pass).
    pub d_el: Vec<T>,
    /// `[num_src, H]`: `d er_j = Σ_i de_ij` (column pass).
    pub d_er: Vec<T>,
}

/// GAT forward from features and attention vectors.
///
/// - `pattern`: the graph, rows = destinations.
/// - `dims`: heads H and features per head F.
/// - `h`: `[num_src, H, F]` source features (aggregated, and scored with `a_src`).
/// - `h_dst`: `[num_dst, H, F]` destination features (scored with `a_dst`); `h` again on a square
///   graph.
/// - `a_dst`: `[H, F]` destination attention vector (`el = ⟨h_dst, a_dst⟩`).
/// - `a_src`: `[H, F]` source attention vector (`er = ⟨h, a_src⟩`).
/// - `slope`: LeakyReLU negative slope.
pub fn gat_forward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    h_dst: &[T],
    a_dst: &[T],
    a_src: &[T],
    slope: T,
) -> Result<GatForward<T>, RefError> {
    const OP: &str = "gat_forward";
    check_full_inputs(OP, pattern, dims, h, h_dst, a_dst, a_src)?;
    let el = gat_node_scores(pattern.num_dst, dims, h_dst, a_dst)?;
    let er = gat_node_scores(pattern.num_src, dims, h, a_src)?;
    forward_precomputed(pattern, dims, h, &el, &er, slope, None)
}

/// [`gat_forward`] with attention dropout: `o_i = Σ_j α_ij·factor_ij·h_j`, `factors` the `[E, H]`
/// dropout factors (`crate::dropout_factors`: `1 / (1 − p)` where kept, 0 where dropped); `lse`
/// is the undropped softmax's.
#[expect(clippy::too_many_arguments, reason = "gat_forward's arguments and the mask")]
pub fn gat_forward_dropout<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    h_dst: &[T],
    a_dst: &[T],
    a_src: &[T],
    slope: T,
    factors: &[T],
) -> Result<GatForward<T>, RefError> {
    const OP: &str = "gat_forward_dropout";
    check_full_inputs(OP, pattern, dims, h, h_dst, a_dst, a_src)?;
    let el = gat_node_scores(pattern.num_dst, dims, h_dst, a_dst)?;
    let er = gat_node_scores(pattern.num_src, dims, h, a_src)?;
    forward_precomputed(pattern, dims, h, &el, &er, slope, Some(factors))
}

/// GAT forward from precomputed node scores.
///
/// - `pattern`: the graph, rows = destinations.
/// - `dims`: heads H and features per head F.
/// - `h`: `[num_src, H, F]` source features (aggregated).
/// - `el`: `[num_dst, H]` destination scores.
/// - `er`: `[num_src, H]` source scores.
/// - `slope`: LeakyReLU negative slope.
pub fn gat_forward_precomputed<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    el: &[T],
    er: &[T],
    slope: T,
) -> Result<GatForward<T>, RefError> {
    forward_precomputed(pattern, dims, h, el, er, slope, None)
}

/// [`gat_forward_precomputed`] with attention dropout (`factors` as in [`gat_forward_dropout`]).
pub fn gat_forward_precomputed_dropout<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    el: &[T],
    er: &[T],
    slope: T,
    factors: &[T],
) -> Result<GatForward<T>, RefError> {
    forward_precomputed(pattern, dims, h, el, er, slope, Some(factors))
}

fn forward_precomputed<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    el: &[T],
    er: &[T],
    slope: T,
    factors: Option<&[T]>,
) -> Result<GatForward<T>, RefError> {
    const OP: &str = "gat_forward_precomputed";
    check_precomputed_inputs(OP, pattern, dims, h, el, er)?;
    let scores = gat_edge_scores(pattern, dims.heads, el, er, slope)?;
    let (alpha, lse) = row_softmax(pattern, dims.heads, &scores)?;
    let alpha = dropped(OP, pattern, dims.heads, alpha, factors)?;
    let out = spmm(pattern, dims, &alpha, h)?;
    Ok(GatForward { out, lse })
}

/// GAT backward from features and attention vectors; alpha is recomputed from `lse`.
///
/// - `pattern`, `dims`, `h` `[num_src, H, F]`, `h_dst` `[num_dst, H, F]`, `a_dst` `[H, F]`,
///   `a_src` `[H, F]`, `slope`: as in [`gat_forward`].
/// - `out`: `[num_dst, H, F]` forward output.
/// - `lse`: `[num_dst, H]` forward log-sum-exp.
/// - `d_out`: `[num_dst, H, F]` gradient of the loss with respect to `out`.
///
/// [`gat_backward_precomputed`] followed by [`gat_node_scores_backward`] for `el` and `er`.
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the kernel interface: inputs, saved state and the incoming gradient"
)]
pub fn gat_backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    h_dst: &[T],
    a_dst: &[T],
    a_src: &[T],
    slope: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
) -> Result<GatGrads<T>, RefError> {
    backward(pattern, dims, (h, h_dst, a_dst, a_src), slope, (out, lse, d_out), None)
}

/// [`gat_backward`] of [`gat_forward_dropout`] with the same `factors`.
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the kernel interface: inputs, saved state, the incoming gradient and the mask"
)]
pub fn gat_backward_dropout<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    h_dst: &[T],
    a_dst: &[T],
    a_src: &[T],
    slope: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
    factors: &[T],
) -> Result<GatGrads<T>, RefError> {
    backward(pattern, dims, (h, h_dst, a_dst, a_src), slope, (out, lse, d_out), Some(factors))
}

fn backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    (h, h_dst, a_dst, a_src): (&[T], &[T], &[T], &[T]),
    slope: T,
    (out, lse, d_out): (&[T], &[T], &[T]),
    factors: Option<&[T]>,
) -> Result<GatGrads<T>, RefError> {
    const OP: &str = "gat_backward";
    check_full_inputs(OP, pattern, dims, h, h_dst, a_dst, a_src)?;
    check_saved(OP, pattern, dims, out, lse, d_out)?;
    let el = gat_node_scores(pattern.num_dst, dims, h_dst, a_dst)?;
    let er = gat_node_scores(pattern.num_src, dims, h, a_src)?;
    let pre = backward_precomputed(pattern, dims, (h, &el, &er), slope, (out, lse, d_out), factors)?;
    let dst = gat_node_scores_backward(pattern.num_dst, dims, h_dst, a_dst, &pre.d_el)?;
    let src = gat_node_scores_backward(pattern.num_src, dims, h, a_src, &pre.d_er)?;
    let mut dh = pre.dh;
    for (total, &through_er) in dh.iter_mut().zip(&src.dh) {
        *total = *total + through_er;
    }
    Ok(GatGrads { dh, dh_dst: dst.dh, da_dst: dst.da, da_src: src.da })
}

/// GAT backward from precomputed node scores; alpha is recomputed from `lse`.
///
/// - `pattern`, `dims`, `h` `[num_src, H, F]`, `el` `[num_dst, H]`, `er` `[num_src, H]`,
///   `slope`: as in [`gat_forward_precomputed`].
/// - `out`: `[num_dst, H, F]` forward output.
/// - `lse`: `[num_dst, H]` forward log-sum-exp.
/// - `d_out`: `[num_dst, H, F]` gradient of the loss with respect to `out`.
///
/// With `D_i = dO_i·o_i`: `dh_j = Σ_i α_ij dO_i`, `ds_ij = α_ij (dO_i·h_j − D_i)`,
/// then [`gat_edge_scores_backward`].
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the kernel interface: inputs, saved state and the incoming gradient"
)]
pub fn gat_backward_precomputed<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    el: &[T],
    er: &[T],
    slope: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
) -> Result<GatPrecomputedGrads<T>, RefError> {
    backward_precomputed(pattern, dims, (h, el, er), slope, (out, lse, d_out), None)
}

/// [`gat_backward_precomputed`] of [`gat_forward_precomputed_dropout`] with the same `factors`.
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the kernel interface: inputs, saved state, the incoming gradient and the mask"
)]
pub fn gat_backward_precomputed_dropout<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    el: &[T],
    er: &[T],
    slope: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
    factors: &[T],
) -> Result<GatPrecomputedGrads<T>, RefError> {
    backward_precomputed(pattern, dims, (h, el, er), slope, (out, lse, d_out), Some(factors))
}

/// The precomputed backward: with dropout factors `m`, `o = (α⊙m)·h`, so the aggregation's
/// gradient of `α⊙m` is multiplied by `m` on its way to α, and `D = dO·o` as without dropout.
fn backward_precomputed<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    (h, el, er): (&[T], &[T], &[T]),
    slope: T,
    (out, lse, d_out): (&[T], &[T], &[T]),
    factors: Option<&[T]>,
) -> Result<GatPrecomputedGrads<T>, RefError> {
    const OP: &str = "gat_backward_precomputed";
    check_precomputed_inputs(OP, pattern, dims, h, el, er)?;
    check_saved(OP, pattern, dims, out, lse, d_out)?;
    let scores = gat_edge_scores(pattern, dims.heads, el, er, slope)?;
    let alpha = alpha_from_lse(pattern, dims.heads, &scores, lse)?;
    let kept = dropped(OP, pattern, dims.heads, alpha.clone(), factors)?;
    let delta = attention_delta(pattern.num_dst, dims, out, d_out)?;
    let agg = spmm_backward(pattern, dims, &kept, h, d_out)?;
    let d_alpha = dropped(OP, pattern, dims.heads, agg.d_alpha, factors)?;
    let ds = row_softmax_backward_with_delta(pattern, dims.heads, &alpha, &d_alpha, &delta)?;
    let node = gat_edge_scores_backward(pattern, dims.heads, el, er, slope, &ds)?;
    Ok(GatPrecomputedGrads { dh: agg.dv, d_el: node.d_el, d_er: node.d_er })
}

fn check_full_inputs<T>(
    op: &'static str,
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    h_dst: &[T],
    a_dst: &[T],
    a_src: &[T],
) -> Result<(), RefError> {
    pattern.validate()?;
    dims.validate(op)?;
    check_dense(op, "h", layout::SRC_NODES, h, pattern.num_src, dims)?;
    check_dense(op, "h_dst", layout::DST_NODES, h_dst, pattern.num_dst, dims)?;
    let head_vec = product(op, &[dims.heads, dims.feat])?;
    check_len(op, "a_dst", layout::HEAD_VECTORS, a_dst, head_vec)?;
    check_len(op, "a_src", layout::HEAD_VECTORS, a_src, head_vec)
}

fn check_precomputed_inputs<T>(
    op: &'static str,
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    el: &[T],
    er: &[T],
) -> Result<(), RefError> {
    pattern.validate()?;
    dims.validate(op)?;
    check_dense(op, "h", layout::SRC_NODES, h, pattern.num_src, dims)?;
    check_scalars(op, "el", layout::DST_SCALARS, el, pattern.num_dst, dims.heads)?;
    check_scalars(op, "er", layout::SRC_SCALARS, er, pattern.num_src, dims.heads)
}
