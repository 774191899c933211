//! The bridge to `sprs`: one head's attention matrix as a `sprs` CSR matrix, so SpMM results can
//! be checked against `sprs`'s own sparse × dense products.

use num_traits::Float;
use sprs::{CsMat, TriMat};

use crate::pattern::{check_edges, check_heads};
use crate::{Pattern, RefError};

/// One head of a per-edge array as a `num_dst × num_src` CSR matrix.
///
/// - `pattern`: the graph, rows = destinations.
/// - `heads`: number of heads H.
/// - `head`: which head to extract, `< heads`.
/// - `alpha`: `[E, H]` edge values.
///
/// Duplicate edges are summed (`sprs` adds duplicate triplets when converting), which is what a
/// product with the matrix needs: `(A v)_i = Σ_{e in row i} alpha_e v_{j_e}`.
pub fn attention_csmat<T: Float>(
    pattern: &Pattern<'_>,
    heads: usize,
    head: usize,
    alpha: &[T],
) -> Result<CsMat<T>, RefError> {
    const OP: &str = "attention_csmat";
    pattern.validate()?;
    check_heads(OP, heads)?;
    if head >= heads {
        return Err(RefError::InvalidArgument { op: OP, what: "head should be < heads" });
    }
    check_edges(OP, "alpha", alpha, pattern, heads)?;
    let mut tri = TriMat::with_capacity((pattern.num_dst, pattern.num_src), pattern.num_edges());
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            tri.add_triplet(i, pattern.col(e), alpha[e * heads + head]);
        }
    }
    Ok(tri.to_csr())
}
