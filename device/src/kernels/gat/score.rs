//! GAT's score: `s_ij = LeakyReLU(el_i + er_j)` from the node scores (one scalar per node and
//! head: [`HeadScalars`]), in base-2 units.

use crate::abi::LaneMap;
use crate::kernels::attention::{HeadScalars, Score};
use crate::kernels::common::vector::Vector;
use crate::simt::math;

/// The LeakyReLU score of the node scores with negative slope `slope`; LeakyReLU' is 1 where
/// `el_i + er_j > 0` and `slope` otherwise.
#[derive(Clone, Copy)]
pub struct LeakyScore {
    /// The LeakyReLU negative slope.
    pub slope: f32,
}

impl LeakyScore {
    /// `LeakyReLU'(el + er)`.
    #[inline(always)]
    fn derivative(&self, x: f32) -> f32 {
        if x > 0.0 { 1.0 } else { self.slope }
    }

    /// Slot `s` of `acc += ds·LeakyReLU'(el + er)`: the gradient of `el` and of `er` alike.
    #[inline(always)]
    fn d_sum<const SLOTS: usize>(
        &self,
        acc: &mut HeadScalars<SLOTS>,
        s: usize,
        el: &HeadScalars<SLOTS>,
        er: &HeadScalars<SLOTS>,
        ds: f32,
    ) {
        acc.0[s] += ds * self.derivative(el.0[s] + er.0[s]);
    }
}

impl<V: Vector, const SLOTS: usize> Score<V, SLOTS> for LeakyScore {
    type Row = HeadScalars<SLOTS>;
    type Key = HeadScalars<SLOTS>;
    type Query = HeadScalars<SLOTS>;

    #[inline(always)]
    fn query(&self, el: &HeadScalars<SLOTS>) -> HeadScalars<SLOTS> {
        *el
    }

    #[inline(always)]
    fn score(&self, _map: &LaneMap, el: &HeadScalars<SLOTS>, er: &HeadScalars<SLOTS>) -> [f32; SLOTS] {
        core::array::from_fn(|s| {
            let x = el.0[s] + er.0[s];
            (if x > 0.0 { x } else { self.slope * x }) * math::LOG2_E
        })
    }

    #[inline(always)]
    fn d_row(&self, acc: &mut HeadScalars<SLOTS>, s: usize, el: &HeadScalars<SLOTS>, er: &HeadScalars<SLOTS>, ds: f32) {
        self.d_sum(acc, s, el, er, ds);
    }

    #[inline(always)]
    fn d_key(&self, acc: &mut HeadScalars<SLOTS>, s: usize, el: &HeadScalars<SLOTS>, er: &HeadScalars<SLOTS>, ds: f32) {
        self.d_sum(acc, s, el, er, ds);
    }

    #[inline(always)]
    fn grad_scale(&self) -> f32 {
        1.0
    }
}
