//! GAT's score: `s_ij = LeakyReLU(el_i + er_j)` from the node scores (one scalar per node and
//! head: [`HeadScalar`]), in base-2 units.

use crate::abi::{LaneMap, Slot};
use crate::kernels::attention::{HeadScalar, Score, ScoreGradient};
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::Work;
use crate::kernels::common::vector::Vector;
use crate::simt::math;

/// `LeakyReLU(x)` with negative slope `slope`: GAT's and GATv2's activation, the one definition
/// every kernel calls.
#[inline(always)]
pub fn leaky_relu(x: f32, slope: f32) -> f32 {
    if x > 0.0 { x } else { slope * x }
}

/// GAT's score of `x = el_i + er_j` in base-2 units, `LeakyReLU(x)·log2(e)`: the arithmetic of
/// every GAT kernel, so that a backward recomputing α matches its forward bit for bit.
#[inline(always)]
pub fn leaky_score(x: f32, slope: f32) -> f32 {
    leaky_relu(x, slope) * math::LOG2_E
}

/// The LeakyReLU score of the node scores with negative slope `slope`.
#[derive(Clone, Copy)]
pub struct LeakyScore {
    /// The LeakyReLU negative slope.
    pub slope: f32,
}

impl LeakyScore {
    /// `acc + ds·LeakyReLU'(el + er)`: the gradient of `el` and of `er` alike (LeakyReLU' is 1
    /// where `el + er > 0`, `slope` otherwise).
    #[inline(always)]
    fn d_sum(&self, acc: HeadScalar, el: HeadScalar, er: HeadScalar, ds: f32) -> HeadScalar {
        HeadScalar(acc.0 + ds * if el.0 + er.0 > 0.0 { 1.0 } else { self.slope })
    }
}

impl<V: Vector, const SLOTS: usize> Score<V, SLOTS> for LeakyScore {
    type Row = HeadScalar;
    type Key = HeadScalar;
    type Query = [HeadScalar; SLOTS];

    #[inline(always)]
    fn bind(&self, _lanes: &Lanes<V>, _slots: &[Slot; SLOTS]) -> Self {
        *self
    }

    #[inline(always)]
    fn query(&self, el: &[HeadScalar; SLOTS]) -> [HeadScalar; SLOTS] {
        *el
    }

    #[inline(always)]
    fn score(
        &self,
        _map: &LaneMap,
        el: &[HeadScalar; SLOTS],
        er: &[HeadScalar; SLOTS],
        _value: &[V; SLOTS],
    ) -> [f32; SLOTS] {
        core::array::from_fn(|s| leaky_score(el[s].0 + er[s].0, self.slope))
    }

    #[inline(always)]
    fn in_part(&self, el: &[HeadScalar; SLOTS], er: &[HeadScalar; SLOTS]) -> [bool; SLOTS] {
        core::array::from_fn(|s| el[s].0 + er[s].0 > 0.0)
    }
}

impl<V: Vector, const SLOTS: usize> ScoreGradient<V, SLOTS> for LeakyScore {
    type RowSum = ();
    type KeyGrad = HeadScalar;

    #[inline(always)]
    fn d_row(&self, _s: usize, acc: HeadScalar, el: HeadScalar, er: HeadScalar, _value: V, ds: f32) -> HeadScalar {
        self.d_sum(acc, el, er, ds)
    }

    #[inline(always)]
    fn d_key(&self, _s: usize, acc: HeadScalar, el: HeadScalar, er: HeadScalar, _value: V, ds: f32) -> HeadScalar {
        self.d_sum(acc, el, er, ds)
    }

    #[inline(always)]
    fn row_sum_zero(&self) -> [(); SLOTS] {
        [(); SLOTS]
    }

    #[inline(always)]
    fn add_row_sum(&self, _s: usize, _acc: (), _row: HeadScalar, _key: HeadScalar, _ds: f32) {}

    #[inline(always)]
    fn store_row_sum(&self, _sums: &mut [(); SLOTS], _lanes: &Lanes<V>, _slots: &[Slot; SLOTS], _work: &Work) {}

    #[inline(always)]
    fn grad_scale(&self) -> f32 {
        1.0
    }
}
