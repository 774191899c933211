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

use crate::abi::{LaneMap, Slot};
use crate::kernels::attention::{HeadScalar, Score, ScoreGradient};
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::Work;
use crate::kernels::common::vector::Vector;
use crate::kernels::gt::DotScore;

/// The cosine score of the stored queries and the values scaled by their inverse norms: GT's
/// [`DotScore`] (scale 1: β is in the queries; gradients times 1: β is folded by the
/// normalisation's backward) on the made keys, so the arithmetic is GT's by construction.
#[derive(Clone, Copy)]
pub struct CosineScore(pub DotScore);

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
        Score::<V, SLOTS>::query(&self.0, q)
    }

    #[inline(always)]
    fn score(&self, map: &LaneMap, query: &[V; SLOTS], inv: &[HeadScalar; SLOTS], h: &[V; SLOTS]) -> [f32; SLOTS] {
        self.0.score(map, query, &keys(inv, h), h)
    }
}

impl<V: Vector, const SLOTS: usize> ScoreGradient<V, SLOTS> for CosineScore {
    type RowSum = ();
    type KeyGrad = V;

    #[inline(always)]
    fn d_row(&self, s: usize, acc: V, q: V, inv: HeadScalar, h: V, ds: f32) -> V {
        ScoreGradient::<V, SLOTS>::d_row(&self.0, s, acc, q, h.scale(inv.0), h, ds)
    }

    #[inline(always)]
    fn d_key(&self, s: usize, acc: V, q: V, inv: HeadScalar, h: V, ds: f32) -> V {
        ScoreGradient::<V, SLOTS>::d_key(&self.0, s, acc, q, h.scale(inv.0), h, ds)
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
        ScoreGradient::<V, SLOTS>::grad_scale(&self.0)
    }
}
