//! GAT scores: the node-level dot products `el = ⟨h_dst, a_dst⟩`, `er = ⟨h, a_src⟩` and the
//! edge-level `s_ij = LeakyReLU(el_i + er_j; slope)`, each with its backward.
//!
//! The LeakyReLU derivative is 1 where `el_i + er_j > 0` and `slope` otherwise (also at exactly 0).

use num_traits::Float;

use crate::num::{axpy, dot};
use crate::pattern::{check_dense, check_edges, check_heads, check_len, check_scalars, layout, product};
use crate::{Dims, Pattern, RefError};

/// Gradients of [`gat_node_scores`].
#[derive(Debug, Clone, PartialEq)]
pub struct NodeScoreGrads<T> {
    /// `[num_nodes, H, F]`: `dh[n,h,:] = d_scores[n,h] · a[h,:]`.
    pub dh: Vec<T>,
    /// `[H, F]`: `da[h,:] = Σ_n d_scores[n,h] · h[n,h,:]`.
    pub da: Vec<T>,
}

/// Gradients of [`gat_edge_scores`].
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeScoreGrads<T> {
    /// `[num_dst, H]`.
    pub d_el: Vec<T>,
    /// `[num_src, H]`.
    pub d_er: Vec<T>,
}

/// Node-level GAT scores `⟨h[n,h,:], a[h,:]⟩`, i.e. `el` (with `h_dst`, `a_dst`) or `er` (with
/// `h`, `a_src`).
///
/// - `num_nodes`: number of nodes N.
/// - `dims`: heads H and features per head F.
/// - `h`: `[N, H, F]` node features.
/// - `a`: `[H, F]` attention vector.
///
/// Returns `[N, H]`.
pub fn gat_node_scores<T: Float>(num_nodes: usize, dims: Dims, h: &[T], a: &[T]) -> Result<Vec<T>, RefError> {
    const OP: &str = "gat_node_scores";
    check_node_scores(OP, num_nodes, dims, h, a)?;
    let mut scores = vec![T::zero(); num_nodes * dims.heads];
    for n in 0..num_nodes {
        for hd in 0..dims.heads {
            scores[n * dims.heads + hd] = dot(dims.at(h, n, hd), dims.at(a, 0, hd));
        }
    }
    Ok(scores)
}

/// Backward of [`gat_node_scores`].
///
/// - `num_nodes`, `dims`, `h` `[N, H, F]`, `a` `[H, F]`: as in the forward.
/// - `d_scores`: `[N, H]` gradient of the loss with respect to the node scores.
pub fn gat_node_scores_backward<T: Float>(
    num_nodes: usize,
    dims: Dims,
    h: &[T],
    a: &[T],
    d_scores: &[T],
) -> Result<NodeScoreGrads<T>, RefError> {
    const OP: &str = "gat_node_scores_backward";
    check_node_scores(OP, num_nodes, dims, h, a)?;
    check_scalars(OP, "d_scores", layout::NODE_SCALARS, d_scores, num_nodes, dims.heads)?;
    let mut dh = vec![T::zero(); h.len()];
    let mut da = vec![T::zero(); a.len()];
    for n in 0..num_nodes {
        for hd in 0..dims.heads {
            let g = d_scores[n * dims.heads + hd];
            axpy(g, dims.at(a, 0, hd), dims.at_mut(&mut dh, n, hd));
            axpy(g, dims.at(h, n, hd), dims.at_mut(&mut da, 0, hd));
        }
    }
    Ok(NodeScoreGrads { dh, da })
}

fn check_node_scores<T>(op: &'static str, num_nodes: usize, dims: Dims, h: &[T], a: &[T]) -> Result<(), RefError> {
    dims.validate(op)?;
    check_dense(op, "h", layout::NODES, h, num_nodes, dims)?;
    check_len(op, "a", layout::HEAD_VECTORS, a, product(op, &[dims.heads, dims.feat])?)
}

/// `LeakyReLU(x) = x` for `x > 0`, `slope · x` otherwise.
fn leaky_relu<T: Float>(x: T, slope: T) -> T {
    if x > T::zero() { x } else { slope * x }
}

/// Edge-level GAT scores `s_e = LeakyReLU(el_i + er_j; slope)`.
///
/// - `pattern`: the graph, rows = destinations.
/// - `heads`: number of heads H.
/// - `el`: `[num_dst, H]` destination scores.
/// - `er`: `[num_src, H]` source scores.
/// - `slope`: LeakyReLU negative slope (0.2 in GAT).
///
/// Returns `[E, H]`.
pub fn gat_edge_scores<T: Float>(
    pattern: &Pattern<'_>,
    heads: usize,
    el: &[T],
    er: &[T],
    slope: T,
) -> Result<Vec<T>, RefError> {
    const OP: &str = "gat_edge_scores";
    check_el_er(OP, pattern, heads, el, er)?;
    let mut scores = vec![T::zero(); product(OP, &[pattern.num_edges(), heads])?];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            let j = pattern.col(e);
            for h in 0..heads {
                scores[e * heads + h] = leaky_relu(el[i * heads + h] + er[j * heads + h], slope);
            }
        }
    }
    Ok(scores)
}

/// Backward of [`gat_edge_scores`]: `de = ds · (1 if el_i + er_j > 0 else slope)`,
/// `d el_i = Σ_j de_ij`, `d er_j = Σ_i de_ij`.
///
/// - `pattern`, `heads`, `el` `[num_dst, H]`, `er` `[num_src, H]`, `slope`: as in the forward.
/// - `d_scores`: `[E, H]` gradient of the loss with respect to the edge scores.
pub fn gat_edge_scores_backward<T: Float>(
    pattern: &Pattern<'_>,
    heads: usize,
    el: &[T],
    er: &[T],
    slope: T,
    d_scores: &[T],
) -> Result<EdgeScoreGrads<T>, RefError> {
    const OP: &str = "gat_edge_scores_backward";
    check_el_er(OP, pattern, heads, el, er)?;
    check_edges(OP, "d_scores", d_scores, pattern, heads)?;
    let mut d_el = vec![T::zero(); el.len()];
    let mut d_er = vec![T::zero(); er.len()];
    for i in 0..pattern.num_dst {
        for e in pattern.row(i) {
            let j = pattern.col(e);
            for h in 0..heads {
                let x = el[i * heads + h] + er[j * heads + h];
                let slope_at = if x > T::zero() { T::one() } else { slope };
                let de = d_scores[e * heads + h] * slope_at;
                d_el[i * heads + h] = d_el[i * heads + h] + de;
                d_er[j * heads + h] = d_er[j * heads + h] + de;
            }
        }
    }
    Ok(EdgeScoreGrads { d_el, d_er })
}

fn check_el_er<T>(op: &'static str, pattern: &Pattern<'_>, heads: usize, el: &[T], er: &[T]) -> Result<(), RefError> {
    pattern.validate()?;
    check_heads(op, heads)?;
    check_scalars(op, "el", layout::DST_SCALARS, el, pattern.num_dst, heads)?;
    check_scalars(op, "er", layout::SRC_SCALARS, er, pattern.num_src, heads)
}
