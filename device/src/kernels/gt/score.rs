//! GT's score: scaled dot-product attention, `s_ij = c·q_i·k_j`, in base-2 units
//! (`c·log2 e` folded into the query once per row).

use crate::abi::{LaneMap, Slot};
use crate::kernels::attention::{Score, ScoreGradient};
use crate::kernels::common::lanes::head_sum;
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::Work;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;

/// The dot-product score with `scale_log2 = c·log2 e`; gradients are multiplied by `grad_scale`
/// at the end (GT: `c`).
#[derive(Clone, Copy)]
pub struct DotScore {
    /// The score scale times log2(e).
    pub scale_log2: f32,
    /// The factor of the summed query and key gradients.
    pub grad_scale: f32,
}

impl<V: Vector, const SLOTS: usize> Score<V, SLOTS> for DotScore {
    type Row = V;
    type Key = V;
    type Query = [V; SLOTS];

    #[inline(always)]
    fn bind(&self, _lanes: &Lanes<V>, _slots: &[Slot; SLOTS]) -> Self {
        *self
    }

    #[inline(always)]
    fn query(&self, q: &[V; SLOTS]) -> [V; SLOTS] {
        let mut scaled = *q;
        unroll!(SLOTS, |s| {
            scaled[s] = q[s].scale(self.scale_log2);
        });
        scaled
    }

    #[inline(always)]
    fn score(&self, map: &LaneMap, query: &[V; SLOTS], key: &[V; SLOTS], _value: &[V; SLOTS]) -> [f32; SLOTS] {
        let mut partial = [0.0f32; SLOTS];
        unroll!(SLOTS, |s| {
            partial[s] = query[s].dot(key[s]);
        });
        head_sum(map, &mut partial);
        partial
    }
}

impl<V: Vector, const SLOTS: usize> ScoreGradient<V, SLOTS> for DotScore {
    type RowSum = ();
    type KeyGrad = V;

    #[inline(always)]
    fn d_row(&self, _s: usize, acc: V, _q: V, k: V, _value: V, ds: f32) -> V {
        k.mul_add(ds, acc)
    }

    #[inline(always)]
    fn d_key(&self, _s: usize, acc: V, q: V, _k: V, _value: V, ds: f32) -> V {
        q.mul_add(ds, acc)
    }

    #[inline(always)]
    fn row_sum_zero(&self) -> [(); SLOTS] {
        [(); SLOTS]
    }

    #[inline(always)]
    fn add_row_sum(&self, _s: usize, _acc: (), _row: V, _key: V, _ds: f32) {}

    #[inline(always)]
    fn store_row_sum(&self, _sums: &mut [(); SLOTS], _lanes: &Lanes<V>, _slots: &[Slot; SLOTS], _work: &Work) {}

    #[inline(always)]
    fn grad_scale(&self) -> f32 {
        self.grad_scale
    }
}
