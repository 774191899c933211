//! SDDMM with a dot product: `s_e = scale · q_i · k_j` for every edge `e = (i, j)`, and its
//! backward.

use num_traits::Float;

use crate::num::{axpy, dot};
use crate::pattern::{check_dense, check_edges, layout, product};
use crate::{Dims, Pattern, RefError};

/// Scaled dot-product edge scores.
///
/// - `pattern`: the graph, rows = destinations.
/// - `dims`: heads H and features per head F.
/// - `q`: `[num_dst, H, F]` destination-side vectors.
/// - `k`: `[num_src, H, F]` source-side vectors.
/// - `scale`: the factor c applied after the dot product.
///
/// Returns `scores`, `[E, H]`: `scores[e*H + h] = scale * (q[i,h,:] · k[j,h,:])` for edge `e` of
/// row `i` with column `j`.
pub fn sddmm_dot<T: Float>(pattern: &Pattern<'_>, dims: Dims, q: &[T], k: &[T], scale: T) -> Result<Vec<T>, RefError> {
    const OP: &str = "sddmm_dot";
    pattern.validate()?;
    dims.validate(OP)?;
    check_dense(OP, "q", layout::DST_NODES, q, pattern.num_dst, dims)?;
    check_dense(OP, "k", layout::SRC_NODES, k, pattern.num_src, dims)?;
    let heads = dims.heads;
    let mut scores = vec![T::zero(); product(OP, &[pattern.num_edges(), heads])?];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            let j = pattern.col(e);
            for h in 0..heads {
                scores[e * heads + h] = scale * dot(dims.at(q, i, h), dims.at(k, j, h));
            }
        }
    }
    Ok(scores)
}

/// Gradients of [`sddmm_dot`] with respect to its two dense inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct SddmmGrads<T> {
    /// `[num_dst, H, F]`: `dq_i = scale · Σ_j ds_ij k_j` (row pass).
    pub dq: Vec<T>,
    /// `[num_src, H, F]`: `dk_j = scale · Σ_i ds_ij q_i` (column pass).
    pub dk: Vec<T>,
}

/// Backward of [`sddmm_dot`].
///
/// - `pattern`, `dims`, `q` `[num_dst, H, F]`, `k` `[num_src, H, F]`, `scale`: as in the forward.
/// - `d_scores`: `[E, H]` gradient of the loss with respect to the scores.
///
/// Sums run over edges in edge-id order, so duplicate edges contribute once each.
pub fn sddmm_backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    q: &[T],
    k: &[T],
    d_scores: &[T],
    scale: T,
) -> Result<SddmmGrads<T>, RefError> {
    const OP: &str = "sddmm_backward";
    pattern.validate()?;
    dims.validate(OP)?;
    check_dense(OP, "q", layout::DST_NODES, q, pattern.num_dst, dims)?;
    check_dense(OP, "k", layout::SRC_NODES, k, pattern.num_src, dims)?;
    check_edges(OP, "d_scores", d_scores, pattern, dims.heads)?;
    let heads = dims.heads;
    let mut dq = vec![T::zero(); q.len()];
    let mut dk = vec![T::zero(); k.len()];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            let j = pattern.col(e);
            for h in 0..heads {
                let g = scale * d_scores[e * heads + h];
                axpy(g, dims.at(k, j, h), dims.at_mut(&mut dq, i, h));
                axpy(g, dims.at(q, i, h), dims.at_mut(&mut dk, j, h));
            }
        }
    }
    Ok(SddmmGrads { dq, dk })
}
