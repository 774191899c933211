//! SpMM: `o_i = Σ_j α_ij v_j` per head, and its backward.

use num_traits::Float;

use crate::num::{axpy, dot};
use crate::pattern::{check_dense, check_edges, layout, product};
use crate::{Dims, Pattern, RefError};

/// Aggregates source vectors with per-edge weights.
///
/// - `pattern`: the graph, rows = destinations.
/// - `dims`: heads H and features per head F.
/// - `alpha`: `[E, H]` edge weights (attention probabilities in the models).
/// - `v`: `[num_src, H, F]` source vectors.
///
/// Returns `out`, `[num_dst, H, F]`: `out[i,h,:] = Σ_{e in row i} alpha[e,h] · v[j_e,h,:]`, summed
/// in edge order; empty rows give 0.
pub fn spmm<T: Float>(pattern: &Pattern<'_>, dims: Dims, alpha: &[T], v: &[T]) -> Result<Vec<T>, RefError> {
    const OP: &str = "spmm";
    pattern.validate()?;
    dims.validate(OP)?;
    check_edges(OP, "alpha", alpha, pattern, dims.heads)?;
    check_dense(OP, "v", layout::SRC_NODES, v, pattern.num_src, dims)?;
    let heads = dims.heads;
    let mut out = vec![T::zero(); product(OP, &[pattern.num_dst, heads, dims.feat])?];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            let j = pattern.col(e);
            for h in 0..heads {
                axpy(alpha[e * heads + h], dims.at(v, j, h), dims.at_mut(&mut out, i, h));
            }
        }
    }
    Ok(out)
}

/// Gradients of [`spmm`] with respect to its two inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct SpmmGrads<T> {
    /// `[E, H]`: `d_alpha[e,h] = d_out[i,h,:] · v[j,h,:]`.
    pub d_alpha: Vec<T>,
    /// `[num_src, H, F]`: `dv_j = Σ_i alpha_ij d_out_i` (column pass).
    pub dv: Vec<T>,
}

/// Backward of [`spmm`].
///
/// - `pattern`, `dims`, `alpha` `[E, H]`, `v` `[num_src, H, F]`: as in the forward.
/// - `d_out`: `[num_dst, H, F]` gradient of the loss with respect to `out`.
pub fn spmm_backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    alpha: &[T],
    v: &[T],
    d_out: &[T],
) -> Result<SpmmGrads<T>, RefError> {
    const OP: &str = "spmm_backward";
    pattern.validate()?;
    dims.validate(OP)?;
    check_edges(OP, "alpha", alpha, pattern, dims.heads)?;
    check_dense(OP, "v", layout::SRC_NODES, v, pattern.num_src, dims)?;
    check_dense(OP, "d_out", layout::DST_NODES, d_out, pattern.num_dst, dims)?;
    let heads = dims.heads;
    let mut d_alpha = vec![T::zero(); alpha.len()];
    let mut dv = vec![T::zero(); v.len()];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            let j = pattern.col(e);
            for h in 0..heads {
                let g = dims.at(d_out, i, h);
                d_alpha[e * heads + h] = dot(g, dims.at(v, j, h));
                axpy(alpha[e * heads + h], g, dims.at_mut(&mut dv, j, h));
            }
        }
    }
    Ok(SpmmGrads { d_alpha, dv })
}
