//! AGNN's score: `s_ij = q_i·hn_j` with the queries `q = β·hn` stored and each key
//! `hn_j = h_j·(1/‖h_j‖)` made from the source's value `h_j` and its inverse norm (one scalar per
//! node and head: [`HeadScalar`]), in base-2 units. So the forward and the backward's row pass
//! gather one vector per edge, the value, instead of a key and a value, and need no stored `hn`.
//!
//! The arithmetic is GT's ([`DotScore`]) on the normalised features element for element: the query scaled once per row by `log2 e`, each key element the product
//! `inv·h` that the normalisation would write as `hn`, the same dot product and head sum; so are
//! the gradients: the row pass sums `ds·hn_j` (the query gradient), the column pass `ds·q_i`
//! (the gradient of the made key, [`ScoreGradient::KeyGrad`]: a vector, where the key operand is
//! a scalar). GT's forward over tiles, which reads a stored `hn`, gives the same scores.

use crate::abi::{LaneMap, NormalizeGrads, Slot};
use crate::kernels::attention::{HeadScalar, Score, ScoreGradient};
use crate::kernels::common::lanes::head_sum;
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::Work;
use crate::kernels::common::vector::Vector;
use crate::kernels::gt::DotScore;

/// The cosine score of the stored queries and the values scaled by their inverse norms: GT's
/// [`DotScore`] (scale 1: β is in the queries; gradients times 1: β is folded by the
/// normalisation's backward) on the made keys, so the arithmetic is GT's by construction. The
/// column pass also carries each source's key gradient through the normalisation
/// ([`ScoreGradient::key_into_value`]) with `normalize` (unused by the other passes).
#[derive(Clone, Copy)]
pub struct CosineScore {
    /// GT's score on the made keys.
    pub dot: DotScore,
    /// The normalisation's backward, for the column pass ([`NormalizeGrads::NONE`] elsewhere).
    pub normalize: NormalizeGrads,
}

/// The keys `hn_j = h_j·inv_j` of one edge's slots.
#[inline(always)]
fn keys<V: Vector, const SLOTS: usize>(inv: &[HeadScalar; SLOTS], h: &[V; SLOTS]) -> [V; SLOTS] {
    core::array::from_fn(|s| h[s].scale(inv[s].0))
}

impl<V: Vector, const SLOTS: usize> Score<V, SLOTS> for CosineScore {
    type Row = V;
    type Key = HeadScalar;
    type Query = [V; SLOTS];

    #[inline(always)]
    fn bind(&self, _lanes: &Lanes<V>, _slots: &[Slot; SLOTS]) -> Self {
        *self
    }

    #[inline(always)]
    fn query(&self, q: &[V; SLOTS]) -> [V; SLOTS] {
        Score::<V, SLOTS>::query(&self.dot, q)
    }

    #[inline(always)]
    fn score(&self, map: &LaneMap, query: &[V; SLOTS], inv: &[HeadScalar; SLOTS], h: &[V; SLOTS]) -> [f32; SLOTS] {
        self.dot.score(map, query, &keys(inv, h), h)
    }
}

impl<V: Vector, const SLOTS: usize> ScoreGradient<V, SLOTS> for CosineScore {
    type RowSum = ();
    type KeyGrad = V;

    #[inline(always)]
    fn d_row(&self, s: usize, acc: V, q: V, inv: HeadScalar, h: V, ds: f32) -> V {
        ScoreGradient::<V, SLOTS>::d_row(&self.dot, s, acc, q, h.scale(inv.0), h, ds)
    }

    #[inline(always)]
    fn d_key(&self, s: usize, acc: V, q: V, inv: HeadScalar, h: V, ds: f32) -> V {
        ScoreGradient::<V, SLOTS>::d_key(&self.dot, s, acc, q, h.scale(inv.0), h, ds)
    }

    #[inline(always)]
    fn row_sum_zero(&self) -> [(); SLOTS] {
        [(); SLOTS]
    }

    #[inline(always)]
    fn add_row_sum(&self, _s: usize, _acc: (), _row: V, _key: HeadScalar, _ds: f32) {}

    #[inline(always)]
    fn store_row_sum(&self, _sums: &mut [(); SLOTS], _lanes: &Lanes<V>, _slots: &[Slot; SLOTS], _work: &Work) {}

    #[inline(always)]
    fn grad_scale(&self) -> f32 {
        ScoreGradient::<V, SLOTS>::grad_scale(&self.dot)
    }

    /// `dh_j = dv_j + J_j·(β·dq_j + factor·dk_j)`, `J_j` the normalisation's Jacobian
    /// (transposed; symmetric): `J·g = (g − hn·(hn·g))/n`, or `g/eps` where the norm `n` is
    /// clamped, as `agnn_normalize_backward` computes it. `J` is linear, so a split column's
    /// chunks each carry their own `dk` and chunk 0 adds `β·dq_j` and writes dβ's share
    /// `hn_j·dq_j`; the combine step sums the chunks' partials.
    #[inline(always)]
    fn key_into_value(
        &self,
        lanes: &Lanes<V>,
        slots: &[Slot; SLOTS],
        work: &Work,
        inv: &[HeadScalar; SLOTS],
        h: &[V; SLOTS],
        dk: &[V; SLOTS],
        dv: &[V; SLOTS],
        factor: f32,
    ) -> Option<[V; SLOTS]> {
        let n = &self.normalize;
        let first = work.chunk == 0;
        let hn = keys(inv, h);
        let mut g: [V; SLOTS] = core::array::from_fn(|s| dk[s].scale(factor));
        if first {
            let beta = n.beta.load(0);
            let dq = lanes.load(&n.dq.cast::<V>(), work.node, slots);
            let mut share: [f32; SLOTS] = core::array::from_fn(|s| hn[s].dot(dq[s]));
            head_sum(&lanes.map, &mut share);
            lanes.each_head_leader(slots, |s, slot| n.d_beta_shares.store(lanes.scalar(work.node, slot), share[s]));
            g = core::array::from_fn(|s| dq[s].mul_add(beta, g[s]));
        }
        let mut dot: [f32; SLOTS] = core::array::from_fn(|s| hn[s].dot(g[s]));
        head_sum(&lanes.map, &mut dot);
        Some(core::array::from_fn(|s| {
            let clamped = slots[s].active && n.norm.load(lanes.scalar(work.node, slots[s])) < n.eps;
            let through = if clamped { g[s] } else { hn[s].mul_add(-dot[s], g[s]) };
            through.mul_add(inv[s].0, dv[s])
        }))
    }
}
