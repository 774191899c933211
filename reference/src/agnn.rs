//! AGNN attention (docs/design.md §3): `s_ij = β · cos(h_i, h_j)` per head,
//! `alpha_ij = softmax_j(s_ij)`, `o_i = Σ_j alpha_ij h_j`; i.e. GT with `q = k = h/‖h‖`, `v = h`
//! and scale β, plus the normalisation's backward and `dβ`.
//!
//! # Numerics
//! The norm is taken per node and head over the F features and clamped like torch's
//! `F.normalize`: `‖h‖ := max(‖h‖₂, eps)` with eps = [`AGNN_NORM_EPS`] = 1e-12. A zero vector
//! therefore normalises to 0 (its scores are 0, not NaN), and where the clamp is active the
//! backward treats the norm as the constant eps (`dh = d_hn / eps`).

use num_traits::Float;

use crate::gt::{gt_backward_with_scores, gt_forward};
use crate::num::{cast, dot};
use crate::ops::sddmm_dot;
use crate::pattern::{check_dense, check_saved, layout};
use crate::{Dims, Pattern, RefError};

/// The clamp of the AGNN norm, as in torch `F.normalize` (`eps = 1e-12`).
pub const AGNN_NORM_EPS: f64 = 1e-12;

/// What the AGNN forward returns: the output and the state the backward needs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgnnForward<T> {
    /// `[N, H, F]` attention output; rows without edges are 0.
    pub out: Vec<T>,
    /// `[N, H]` log-sum-exp of each row's scores; `−∞` for rows without edges.
    pub lse: Vec<T>,
}

/// Gradients of the AGNN loss.
#[derive(Debug, Clone, PartialEq)]
pub struct AgnnGrads<T> {
    /// `[N, H, F]`: the sum of the paths through q, k (both via the normalisation) and v.
    pub dh: Vec<T>,
    /// `dL/dβ`, a scalar: `Σ_{e,h} ds_e,h · cos_e,h`.
    pub d_beta: T,
    /// `Σ_{e,h} |ds_e,h · cos_e,h|`, the size of dβ's terms. Their sum cancels (each row's `ds`
    /// sums to 0), so dβ's rounding error scales with this rather than with |dβ|: the magnitude
    /// for [`compare_scalar`](crate::compare_scalar).
    pub d_beta_magnitude: T,
}

/// Per node and head L2-normalised features and the clamped norms.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized<T> {
    /// `[N, H, F]`: `h / max(‖h‖, eps)`.
    pub hn: Vec<T>,
    /// `[N, H]`: `max(‖h‖, eps)`.
    pub norm: Vec<T>,
}

/// L2-normalises every node's features per head, clamping the norm at [`AGNN_NORM_EPS`].
///
/// - `num_nodes`: number of nodes N.
/// - `dims`: heads H and features per head F.
/// - `h`: `[N, H, F]` features.
pub fn l2_normalize<T: Float>(num_nodes: usize, dims: Dims, h: &[T]) -> Result<Normalized<T>, RefError> {
    const OP: &str = "l2_normalize";
    dims.validate(OP)?;
    check_dense(OP, "h", layout::NODES, h, num_nodes, dims)?;
    let eps = cast::<T>(AGNN_NORM_EPS);
    let mut hn = vec![T::zero(); h.len()];
    let mut norm = vec![T::zero(); num_nodes * dims.heads];
    for n in 0..num_nodes {
        for hd in 0..dims.heads {
            let x = dims.at(h, n, hd);
            let r = dot(x, x).sqrt().max(eps);
            for (y, &xf) in dims.at_mut(&mut hn, n, hd).iter_mut().zip(x) {
                *y = xf / r;
            }
            norm[n * dims.heads + hd] = r;
        }
    }
    Ok(Normalized { hn, norm })
}

/// Backward of [`l2_normalize`].
///
/// - `num_nodes`, `dims`, `h` `[N, H, F]`: as in the forward.
/// - `d_hn`: `[N, H, F]` gradient of the loss with respect to the normalised features.
///
/// Returns `dh`, `[N, H, F]`: `(d_hn − hn (hn·d_hn)) / ‖h‖` where `‖h‖ ≥ eps`, and `d_hn / eps`
/// where the clamp is active.
pub fn l2_normalize_backward<T: Float>(num_nodes: usize, dims: Dims, h: &[T], d_hn: &[T]) -> Result<Vec<T>, RefError> {
    const OP: &str = "l2_normalize_backward";
    dims.validate(OP)?;
    check_dense(OP, "h", layout::NODES, h, num_nodes, dims)?;
    check_dense(OP, "d_hn", layout::NODES, d_hn, num_nodes, dims)?;
    let eps = cast::<T>(AGNN_NORM_EPS);
    let mut dh = vec![T::zero(); h.len()];
    for n in 0..num_nodes {
        for hd in 0..dims.heads {
            let x = dims.at(h, n, hd);
            let g = dims.at(d_hn, n, hd);
            let r = dot(x, x).sqrt();
            let out = dims.at_mut(&mut dh, n, hd);
            if r >= eps {
                // hn·d_hn = (x·g) / r, so the projection term is x (x·g) / r³.
                let proj = dot(x, g) / (r * r);
                for ((o, &gf), &xf) in out.iter_mut().zip(g).zip(x) {
                    *o = (gf - xf * proj) / r;
                }
            } else {
                for (o, &gf) in out.iter_mut().zip(g) {
                    *o = gf / eps;
                }
            }
        }
    }
    Ok(dh)
}

/// AGNN forward on a square graph.
///
/// - `pattern`: the graph, rows = destinations; `num_dst` must equal `num_src`
///   ([`RefError::NotSquare`] otherwise).
/// - `dims`: heads H and features per head F.
/// - `h`: `[N, H, F]` node features, both sources and destinations.
/// - `beta`: the temperature β multiplying the cosine.
pub fn agnn_forward<T: Float>(pattern: &Pattern<'_>, dims: Dims, h: &[T], beta: T) -> Result<AgnnForward<T>, RefError> {
    const OP: &str = "agnn_forward";
    check_inputs(OP, pattern, dims, h)?;
    let Normalized { hn, .. } = l2_normalize(pattern.num_dst, dims, h)?;
    let fwd = gt_forward(pattern, dims, &hn, &hn, h, beta)?;
    Ok(AgnnForward { out: fwd.out, lse: fwd.lse })
}

/// AGNN backward on a square graph; alpha is recomputed from `lse`.
///
/// - `pattern`, `dims`, `h` `[N, H, F]`, `beta`: as in [`agnn_forward`].
/// - `out`: `[N, H, F]` forward output.
/// - `lse`: `[N, H]` forward log-sum-exp.
/// - `d_out`: `[N, H, F]` gradient of the loss with respect to `out`.
///
/// The GT backward with `q = k = hn`, `v = h`, `c = β` gives `dq`, `dk`, `dv` and `ds`; then
/// `dh = dv + normalize_backward(dq + dk)` and `dβ = Σ ds · cos`.
pub fn agnn_backward<T: Float>(
    pattern: &Pattern<'_>,
    dims: Dims,
    h: &[T],
    beta: T,
    out: &[T],
    lse: &[T],
    d_out: &[T],
) -> Result<AgnnGrads<T>, RefError> {
    const OP: &str = "agnn_backward";
    check_inputs(OP, pattern, dims, h)?;
    check_saved(OP, pattern, dims, out, lse, d_out)?;
    let n = pattern.num_dst;
    let Normalized { hn, .. } = l2_normalize(n, dims, h)?;
    let (grads, ds) = gt_backward_with_scores(pattern, dims, &hn, &hn, h, beta, out, lse, d_out)?;
    let cos = sddmm_dot(pattern, dims, &hn, &hn, T::one())?;
    let d_beta = ds.iter().zip(&cos).fold(T::zero(), |acc, (&g, &c)| acc + g * c);
    let d_beta_magnitude = ds.iter().zip(&cos).fold(T::zero(), |acc, (&g, &c)| acc + (g * c).abs());
    let d_hn: Vec<T> = grads.dq.iter().zip(&grads.dk).map(|(&a, &b)| a + b).collect();
    let mut dh = l2_normalize_backward(n, dims, h, &d_hn)?;
    for (total, &through_v) in dh.iter_mut().zip(&grads.dv) {
        *total = *total + through_v;
    }
    Ok(AgnnGrads { dh, d_beta, d_beta_magnitude })
}

fn check_inputs<T>(op: &'static str, pattern: &Pattern<'_>, dims: Dims, h: &[T]) -> Result<(), RefError> {
    pattern.validate()?;
    if !pattern.is_square() {
        return Err(RefError::NotSquare { op, num_dst: pattern.num_dst, num_src: pattern.num_src });
    }
    dims.validate(op)?;
    check_dense(op, "h", layout::NODES, h, pattern.num_dst, dims)
}
