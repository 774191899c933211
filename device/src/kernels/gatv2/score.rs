//! GATv2's score: `s_ij = ⟨a, LeakyReLU(xl_j + xr_i)⟩` per head, a score over the `F` features
//! of a head (like GT's dot product), in base-2 units.
//!
//! Its gradients: with `z = xl_j + xr_i`, `∂s/∂xr_i = ∂s/∂xl_j = a⊙LeakyReLU'(z)`, and the
//! attention vector's `∂s/∂a = LeakyReLU(z)`, which the row pass sums per row as the score's
//! [`ScoreGradient::RowSum`] (the host sums the rows in a fixed order).

use core::marker::PhantomData;

use crate::abi::{LaneMap, Slot};
use crate::kernels::attention::{Score, ScoreGradient};
use crate::kernels::common::lanes::{head_sum, team_sum};
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::Work;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::kernels::gat::leaky_relu;
use crate::simt::{GSlice, GSliceMut, math};

/// [`GatV2Score::a_at`] of an inactive slot.
const INACTIVE: u32 = u32::MAX;

/// The most slots whose vectors of `a` the forward's query holds in registers ([`Score::query`];
/// [`GatV2Score::holding`]): read once per row and head pass instead of once per scored edge.
/// Wider lanes, and the other passes, read `a` at each use.
const HELD_SLOTS: usize = 1;

/// The GATv2 score with negative slope `slope` and attention vector `a`.
#[derive(Clone, Copy)]
pub struct GatV2Score<V, const SLOTS: usize> {
    /// The LeakyReLU negative slope.
    pub slope: f32,
    /// `[H, F]` the attention vector.
    pub a: GSlice<f32>,
    /// Where the lane's vectors of `a` for the bound slots sit in `a` ([`Score::bind`];
    /// `INACTIVE` for an inactive slot, and before). Where [`GatV2Score::holds`], the query holds
    /// them; else the passes read `a` at each use (an L1 hit): held, its `SLOTS` vectors spilled
    /// the widest forward and row pass, and at one slot the row pass spilled more and ran
    /// slower (docs/results.md, thirty-seventh session).
    pub a_at: [u32; SLOTS],
    /// `[N_dst, H, F]` where whole rows write their term of `d a` (row pass only; else empty).
    pub d_a: GSliceMut<f32>,
    /// `[U, H, F]` where chunks of split rows write theirs (row pass only; else empty).
    pub partial_d_a: GSliceMut<f32>,
    /// Whether the query holds the lane's vectors of `a` ([`GatV2Score::holding`]).
    pub holds: bool,
    /// The load width.
    pub _vector: PhantomData<V>,
}

impl<V: Vector, const SLOTS: usize> GatV2Score<V, SLOTS> {
    /// The score of the forward passes (no `d a` outputs).
    #[inline(always)]
    pub fn new(slope: f32, a: GSlice<f32>) -> Self {
        Self {
            slope,
            a,
            a_at: [INACTIVE; SLOTS],
            d_a: GSliceMut::empty(),
            partial_d_a: GSliceMut::empty(),
            holds: false,
            _vector: PhantomData,
        }
    }

    /// [`GatV2Score::new`] whose query holds the lane's vectors of `a` up to [`HELD_SLOTS`]
    /// slots: the forward's (one query per row and head pass, many scored edges).
    #[inline(always)]
    pub fn holding(slope: f32, a: GSlice<f32>) -> Self {
        Self { holds: SLOTS <= HELD_SLOTS, ..Self::new(slope, a) }
    }

    /// `LeakyReLU(z)` element-wise.
    #[inline(always)]
    fn leaky(&self, z: V) -> V {
        let slope = self.slope;
        z.map(|x| leaky_relu(x, slope))
    }

    /// `acc + ds·a⊙LeakyReLU'(xr + xl)` for slot `s`: the gradient of `xr` and of `xl` alike
    /// (LeakyReLU' is 1 where the sum is positive, `slope` otherwise).
    #[inline(always)]
    fn d_sum(&self, s: usize, acc: V, xr: V, xl: V, ds: f32) -> V {
        let slope = self.slope;
        let d_leaky = xr.add(xl).map(|x| if x > 0.0 { 1.0 } else { slope });
        self.a_slot(s).mul(d_leaky).mul_add(ds, acc)
    }

    /// The lane's vector of `a` for slot `s` (zero where the slot is inactive).
    #[inline(always)]
    fn a_slot(&self, s: usize) -> V {
        if self.a_at[s] == INACTIVE { V::zero() } else { self.a.cast::<V>().load(self.a_at[s] as usize) }
    }
}

impl<V: Vector, const SLOTS: usize> Score<V, SLOTS> for GatV2Score<V, SLOTS> {
    type Row = V;
    type Key = V;
    /// `xr`, and the lane's vectors of `a` where held ([`GatV2Score::holds`]; zeros where not).
    type Query = ([V; SLOTS], [V; SLOTS]);

    #[inline(always)]
    fn bind(&self, lanes: &Lanes<V>, slots: &[Slot; SLOTS]) -> Self {
        Self {
            a_at: core::array::from_fn(|s| if slots[s].active { lanes.at(0, slots[s]) as u32 } else { INACTIVE }),
            ..*self
        }
    }

    #[inline(always)]
    fn query(&self, xr: &[V; SLOTS]) -> Self::Query {
        (*xr, core::array::from_fn(|s| if self.holds { self.a_slot(s) } else { V::zero() }))
    }

    #[inline(always)]
    fn score(&self, map: &LaneMap, (xr, a): &Self::Query, xl: &[V; SLOTS], _value: &[V; SLOTS]) -> [f32; SLOTS] {
        let mut partial = [0.0f32; SLOTS];
        unroll!(SLOTS, |s| {
            let a = if self.holds { a[s] } else { self.a_slot(s) };
            partial[s] = a.dot(self.leaky(xr[s].add(xl[s])));
        });
        head_sum(map, &mut partial);
        core::array::from_fn(|s| partial[s] * math::LOG2_E)
    }
}

impl<V: Vector, const SLOTS: usize> ScoreGradient<V, SLOTS> for GatV2Score<V, SLOTS> {
    type RowSum = V;
    type KeyGrad = V;

    #[inline(always)]
    fn d_row(&self, s: usize, acc: V, xr: V, xl: V, _value: V, ds: f32) -> V {
        self.d_sum(s, acc, xr, xl, ds)
    }

    #[inline(always)]
    fn d_key(&self, s: usize, acc: V, xr: V, xl: V, _value: V, ds: f32) -> V {
        self.d_sum(s, acc, xr, xl, ds)
    }

    #[inline(always)]
    fn row_sum_zero(&self) -> [V; SLOTS] {
        [V::zero(); SLOTS]
    }

    #[inline(always)]
    fn add_row_sum(&self, _s: usize, acc: V, xr: V, xl: V, ds: f32) -> V {
        self.leaky(xr.add(xl)).mul_add(ds, acc)
    }

    #[inline(always)]
    fn store_row_sum(&self, sums: &mut [V; SLOTS], lanes: &Lanes<V>, slots: &[Slot; SLOTS], work: &Work) {
        // A packed task's teams hold different rows: nothing to merge across them.
        if !work.packed {
            team_sum(&lanes.map, sums);
        }
        if work.split {
            lanes.store(&self.partial_d_a, work.partial, slots, sums, 1.0);
        } else {
            lanes.store(&self.d_a, work.node, slots, sums, 1.0);
        }
    }

    #[inline(always)]
    fn grad_scale(&self) -> f32 {
        1.0
    }

    /// `xl` is the key and the value: `d xl = factor·dk + dv`, one array.
    #[inline(always)]
    fn key_into_value(
        &self,
        _lanes: &Lanes<V>,
        _slots: &[Slot; SLOTS],
        _work: &Work,
        _key: &[Self::Key; SLOTS],
        _value: &[V; SLOTS],
        dk: &[V; SLOTS],
        dv: &[V; SLOTS],
        factor: f32,
    ) -> Option<[V; SLOTS]> {
        Some(core::array::from_fn(|s| dk[s].scale(factor).add(dv[s])))
    }
}
