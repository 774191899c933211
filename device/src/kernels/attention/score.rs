//! What a model supplies to the fused passes: its operands, the score of an edge and the score's
//! gradients.
//!
//! The passes read, per edge `(i, j)`, the destination's **row operand** (GT: the query vectors
//! `q_i`; GAT: the node score `el_i`), the source's **key operand** (GT: `k_j`; GAT: `er_j`) and
//! **value** vectors `v_j` (what is aggregated), in the slots of the [`LaneMap`]. An operand is
//! an [`Operand`]: vectors of an `[N, H, F]` array, or one scalar per head of an `[N, H]` array
//! ([`HeadScalars`]); its gradient has the same shape. A model turns the row operand into its
//! query once per row ([`Score::query`]), scores an edge from it and the key ([`Score::score`]),
//! and in the backward says how the score gradients `ds` reach the row operand
//! ([`Score::d_row`]) and the key ([`Score::d_key`]). It must not touch anything else: units,
//! gathers, the online softmax, the merges across teams and the epilogues are the passes' own.

use crate::abi::{LaneMap, Slot};
use crate::kernels::common::lanes::team_sum;
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{FULL_MASK, GSlice, GSliceMut, SharedSlice, WARP_SIZE, warp};

/// A per-node operand (or its gradient) in this lane's `SLOTS` slots.
pub trait Operand<V: Vector, const SLOTS: usize>: Copy {
    /// Whether `row_group` stages this operand of a group's sources in shared memory with the
    /// values (as `[stage_count, H, Fv]` vectors); otherwise it reads it from global memory.
    const STAGED: bool;

    /// How a pass views the operand's `f32` array (made once per unit by [`Operand::array`]).
    type Array: Copy;

    /// The view of `x`.
    fn array(x: GSlice<f32>) -> Self::Array;

    /// Zero in every slot.
    fn zero() -> Self;

    /// Loads slot `s` (active, at `slot`) of `node`'s operand from `x`.
    fn load_slot(&mut self, lanes: &Lanes<V>, x: &Self::Array, node: u32, s: usize, slot: Slot);

    /// `node`'s operand from `x` (zero in inactive slots).
    #[inline(always)]
    fn load(lanes: &Lanes<V>, x: &Self::Array, node: u32, slots: &[Slot; SLOTS]) -> Self {
        let mut operand = Self::zero();
        unroll!(SLOTS, |s| {
            if slots[s].active {
                operand.load_slot(lanes, x, node, s, slots[s]);
            }
        });
        operand
    }

    /// `node`'s operand for `row_group`: from `staged` (the group's copy, whose node 0 is node
    /// `first`) when given and [`Operand::STAGED`], else from `x`.
    fn load_group(
        lanes: &Lanes<V>,
        x: &Self::Array,
        staged: Option<(&SharedSlice<V>, u32)>,
        node: u32,
        slots: &[Slot; SLOTS],
    ) -> Self;

    /// Team 0 writes `node`'s operand times `factor` into `x` (active slots only).
    fn store(&self, lanes: &Lanes<V>, x: &GSliceMut<f32>, node: u32, slots: &[Slot; SLOTS], factor: f32);

    /// Sums over the warp's teams (every team ends with the total).
    fn team_sum(&mut self, map: &LaneMap);
}

/// Vectors of an `[N, H, F]` array: slot `s` holds the lane's vector of its head.
impl<V: Vector, const SLOTS: usize> Operand<V, SLOTS> for [V; SLOTS] {
    const STAGED: bool = true;
    type Array = GSlice<V>;

    #[inline(always)]
    fn array(x: GSlice<f32>) -> GSlice<V> {
        x.cast::<V>()
    }

    #[inline(always)]
    fn zero() -> Self {
        [V::zero(); SLOTS]
    }

    #[inline(always)]
    fn load_slot(&mut self, lanes: &Lanes<V>, x: &GSlice<V>, node: u32, s: usize, slot: Slot) {
        self[s] = x.load(lanes.at(node, slot));
    }

    #[inline(always)]
    fn load_group(
        lanes: &Lanes<V>,
        x: &Self::Array,
        staged: Option<(&SharedSlice<V>, u32)>,
        node: u32,
        slots: &[Slot; SLOTS],
    ) -> Self {
        match staged {
            Some((copy, first)) => core::array::from_fn(|s| {
                if slots[s].active { copy.load(lanes.at(node - first, slots[s])) } else { V::zero() }
            }),
            None => Self::load(lanes, x, node, slots),
        }
    }

    #[inline(always)]
    fn store(&self, lanes: &Lanes<V>, x: &GSliceMut<f32>, node: u32, slots: &[Slot; SLOTS], factor: f32) {
        lanes.store(x, node, slots, self, factor);
    }

    #[inline(always)]
    fn team_sum(&mut self, map: &LaneMap) {
        team_sum(map, self);
    }
}

/// One scalar per node and head (an `[N, H]` array, e.g. GAT's node scores): slot `s` holds its
/// head's scalar, the same in every lane and slot of the head.
#[derive(Clone, Copy)]
pub struct HeadScalars<const SLOTS: usize>(pub [f32; SLOTS]);

impl<V: Vector, const SLOTS: usize> Operand<V, SLOTS> for HeadScalars<SLOTS> {
    const STAGED: bool = false;
    type Array = GSlice<f32>;

    #[inline(always)]
    fn array(x: GSlice<f32>) -> GSlice<f32> {
        x
    }

    #[inline(always)]
    fn zero() -> Self {
        Self([0.0; SLOTS])
    }

    #[inline(always)]
    fn load_slot(&mut self, lanes: &Lanes<V>, x: &GSlice<f32>, node: u32, s: usize, slot: Slot) {
        self.0[s] = x.load(lanes.scalar(node, slot));
    }

    #[inline(always)]
    fn load_group(
        lanes: &Lanes<V>,
        x: &Self::Array,
        _staged: Option<(&SharedSlice<V>, u32)>,
        node: u32,
        slots: &[Slot; SLOTS],
    ) -> Self {
        <Self as Operand<V, SLOTS>>::load(lanes, x, node, slots)
    }

    #[inline(always)]
    fn store(&self, lanes: &Lanes<V>, x: &GSliceMut<f32>, node: u32, slots: &[Slot; SLOTS], factor: f32) {
        lanes.each_head_leader(slots, |s, slot| x.store(lanes.scalar(node, slot), self.0[s] * factor));
    }

    #[inline(always)]
    fn team_sum(&mut self, map: &LaneMap) {
        let mut offset = map.edge_lanes();
        while offset < WARP_SIZE {
            unroll!(SLOTS, |s| {
                self.0[s] += warp::shfl_xor(FULL_MASK, self.0[s], offset);
            });
            offset *= 2;
        }
    }
}

/// An attention score over `V` vectors held in `SLOTS` slots per lane.
pub trait Score<V: Vector, const SLOTS: usize> {
    /// A destination row's operand, as stored (GT: its query vectors).
    type Row: Operand<V, SLOTS>;
    /// A source node's operand, as stored (GT: its key vectors).
    type Key: Operand<V, SLOTS>;
    /// A destination row's operand, prepared once per row from its [`Score::Row`].
    type Query: Copy;

    /// Prepares a row's operand.
    fn query(&self, row: &Self::Row) -> Self::Query;

    /// One edge's score per slot, in base-2 units (natural score times `log2 e`), equal in every
    /// lane and slot of a head. Inactive slots hold zeros; their scores are not used.
    fn score(&self, map: &LaneMap, query: &Self::Query, key: &Self::Key) -> [f32; SLOTS];

    /// Slot `s` of `acc += (∂s/∂row)·ds` for one edge, before the final [`Score::grad_scale`]
    /// (`ds`: the gradient of the edge's natural score for the slot's head).
    fn d_row(&self, acc: &mut Self::Row, s: usize, row: &Self::Row, key: &Self::Key, ds: f32);

    /// Slot `s` of `acc += (∂s/∂key)·ds` for one edge, before the final [`Score::grad_scale`].
    fn d_key(&self, acc: &mut Self::Key, s: usize, row: &Self::Row, key: &Self::Key, ds: f32);

    /// The factor the summed row and key gradients are multiplied by at the end.
    fn grad_scale(&self) -> f32;
}
