//! What a model supplies to the fused passes: its operands, the score of an edge and the score's
//! gradients.
//!
//! The passes read, per edge `(i, j)`, the destination's **row operand** (GT: the query vectors
//! `q_i`; GAT: the node score `el_i`), the source's **key operand** (GT: `k_j`; GAT: `er_j`) and
//! **value** vectors `v_j` (what is aggregated), in the slots of the [`LaneMap`]. An operand
//! holds a [`SlotValue`] per slot: a vector of an `[N, H, F]` array, or its head's scalar of an
//! `[N, H]` array ([`HeadScalar`]); its gradient has the same shape. A model turns the row operand into its
//! query once per row ([`Score::query`]) and scores an edge from it, the key and the value
//! ([`Score::score`]: AGNN's key is a per-node scalar that scales the value); that is all the
//! forward passes need. In the backward it says how the score gradients `ds` reach the row
//! operand ([`ScoreGradient::d_row`]) and the key ([`ScoreGradient::d_key`]). It must not touch
//! anything else: units, gathers, the online softmax, the merges across teams and the epilogues
//! are the passes' own.

use crate::abi::{LaneMap, Slot};
use crate::kernels::common::lanes::team_sum;
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::Work;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{FULL_MASK, GSlice, GSliceMut, SharedSlice, WARP_SIZE, warp};

/// What one slot of a per-node operand (or of its gradient) holds: the lane's vector of an
/// `[N, H, F]` array (the vector type `V` itself), or its head's scalar of an `[N, H]` array
/// ([`HeadScalar`]). A pass holds an operand as `[Self; SLOTS]` and reads each slot by value, so
/// that a model of vectors compiles to the same code as a pass written for vectors alone.
pub trait SlotValue<V: Vector>: Copy {
    /// Whether `row_group` stages this operand of a group's sources in shared memory with the
    /// values (as `[stage_count, H, Fv]` vectors); otherwise it reads it from global memory.
    const STAGED: bool;

    /// How a pass views the operand's `f32` array (made once per unit by [`SlotValue::array`]).
    type Array: Copy;

    /// The view of `x`.
    fn array(x: GSlice<f32>) -> Self::Array;

    /// Zero.
    fn zero() -> Self;

    /// The value of a slot from `x`, given where the slot's vector sits in an `[N, H, Fv]` array
    /// (`at`) and its head's scalar in an `[N, H]` array (`scalar`); each kind reads its own. The
    /// passes compute both indices themselves (see [`load_slot`]): index arithmetic inside a
    /// trait method is not inlined before LLVM and compiles to costlier code (measured: GT's
    /// forward at 4 slots took 146 registers instead of 102).
    fn load(x: &Self::Array, at: usize, scalar: usize) -> Self;

    /// Element `index` of a group's staged copy (`[stage_count, H, Fv]` vectors), or `None` when
    /// this operand is not staged ([`SlotValue::STAGED`] false).
    fn load_staged(copy: &SharedSlice<V>, index: usize) -> Option<Self>;

    /// Team 0 writes `node`'s `values` (active slots) times `factor` into `x`.
    fn store<const SLOTS: usize>(
        values: &[Self; SLOTS],
        lanes: &Lanes<V>,
        x: &GSliceMut<f32>,
        node: u32,
        slots: &[Slot; SLOTS],
        factor: f32,
    );

    /// Sums `values` over the warp's teams (every team ends with the total).
    fn team_sum<const SLOTS: usize>(map: &LaneMap, values: &mut [Self; SLOTS]);

    /// What the column pass gathers per in-edge for a row operand of this kind: the operand
    /// itself (vectors), or nothing ([`NotGathered`]: a head's scalar travels in the row record,
    /// the fourth word of [`crate::abi::ColumnGrads::record`]).
    type Gathered: SlotValue<V>;

    /// Whether a row operand of this kind travels in the row record: exactly where
    /// [`SlotValue::Gathered`] is [`NotGathered`] (a type the column pass cannot test, so it
    /// reads this to load the record's fourth word or not).
    const IN_RECORD: bool;

    /// This row operand's word of the row record (0 for vectors, which do not travel in it).
    fn record_word(self) -> f32;

    /// The row operand from what the column pass gathered and its word of the row record.
    fn from_gathered(gathered: Self::Gathered, word: f32) -> Self;
}

/// `node`'s value for (active) `slot` from `x`.
#[inline(always)]
pub fn load_slot<V: Vector, E: SlotValue<V>>(lanes: &Lanes<V>, x: &E::Array, node: u32, slot: Slot) -> E {
    E::load(x, lanes.at(node, slot), lanes.scalar(node, slot))
}

/// `node`'s operand from `x` in `slots` (zero in inactive slots).
#[inline(always)]
pub fn load_slots<V: Vector, E: SlotValue<V>, const SLOTS: usize>(
    lanes: &Lanes<V>,
    x: &E::Array,
    node: u32,
    slots: &[Slot; SLOTS],
) -> [E; SLOTS] {
    core::array::from_fn(|s| if slots[s].active { load_slot(lanes, x, node, slots[s]) } else { E::zero() })
}

/// Vectors of an `[N, H, F]` array: slot `s` holds the lane's vector of its head.
impl<V: Vector> SlotValue<V> for V {
    const STAGED: bool = true;
    type Array = GSlice<V>;

    #[inline(always)]
    fn array(x: GSlice<f32>) -> GSlice<V> {
        x.cast::<V>()
    }

    #[inline(always)]
    fn zero() -> Self {
        V::zero()
    }

    #[inline(always)]
    fn load(x: &GSlice<V>, at: usize, _scalar: usize) -> V {
        x.load(at)
    }

    #[inline(always)]
    fn load_staged(copy: &SharedSlice<V>, index: usize) -> Option<V> {
        Some(copy.load(index))
    }

    #[inline(always)]
    fn store<const SLOTS: usize>(
        values: &[V; SLOTS],
        lanes: &Lanes<V>,
        x: &GSliceMut<f32>,
        node: u32,
        slots: &[Slot; SLOTS],
        factor: f32,
    ) {
        lanes.store(x, node, slots, values, factor);
    }

    #[inline(always)]
    fn team_sum<const SLOTS: usize>(map: &LaneMap, values: &mut [V; SLOTS]) {
        team_sum(map, values);
    }

    type Gathered = V;

    const IN_RECORD: bool = false;

    #[inline(always)]
    fn record_word(self) -> f32 {
        0.0
    }

    #[inline(always)]
    fn from_gathered(gathered: V, _word: f32) -> Self {
        gathered
    }
}

/// A node's scalar for one head (an `[N, H]` array, e.g. GAT's node scores): the same in every
/// lane and slot of the head.
#[derive(Clone, Copy)]
pub struct HeadScalar(pub f32);

impl<V: Vector> SlotValue<V> for HeadScalar {
    const STAGED: bool = false;
    type Array = GSlice<f32>;

    #[inline(always)]
    fn array(x: GSlice<f32>) -> GSlice<f32> {
        x
    }

    #[inline(always)]
    fn zero() -> Self {
        Self(0.0)
    }

    #[inline(always)]
    fn load(x: &GSlice<f32>, _at: usize, scalar: usize) -> Self {
        Self(x.load(scalar))
    }

    #[inline(always)]
    fn load_staged(_copy: &SharedSlice<V>, _index: usize) -> Option<Self> {
        None
    }

    #[inline(always)]
    fn store<const SLOTS: usize>(
        values: &[Self; SLOTS],
        lanes: &Lanes<V>,
        x: &GSliceMut<f32>,
        node: u32,
        slots: &[Slot; SLOTS],
        factor: f32,
    ) {
        lanes.each_head_leader(slots, |s, slot| x.store(lanes.scalar(node, slot), values[s].0 * factor));
    }

    #[inline(always)]
    fn team_sum<const SLOTS: usize>(map: &LaneMap, values: &mut [Self; SLOTS]) {
        let mut offset = map.edge_lanes();
        while offset < WARP_SIZE {
            unroll!(SLOTS, |s| {
                values[s].0 += warp::shfl_xor(FULL_MASK, values[s].0, offset);
            });
            offset *= 2;
        }
    }

    type Gathered = NotGathered;

    const IN_RECORD: bool = true;

    #[inline(always)]
    fn record_word(self) -> f32 {
        self.0
    }

    #[inline(always)]
    fn from_gathered(_gathered: NotGathered, word: f32) -> Self {
        Self(word)
    }
}

/// An operand the column pass does not gather (a [`HeadScalar`] row operand, which it reads from
/// the row record instead): no array, no load, always zero.
#[derive(Clone, Copy)]
pub struct NotGathered;

impl<V: Vector> SlotValue<V> for NotGathered {
    const STAGED: bool = false;
    type Array = ();

    #[inline(always)]
    fn array(_x: GSlice<f32>) {}

    #[inline(always)]
    fn zero() -> Self {
        Self
    }

    #[inline(always)]
    fn load(_x: &(), _at: usize, _scalar: usize) -> Self {
        Self
    }

    #[inline(always)]
    fn load_staged(_copy: &SharedSlice<V>, _index: usize) -> Option<Self> {
        None
    }

    #[inline(always)]
    fn store<const SLOTS: usize>(
        _values: &[Self; SLOTS],
        _lanes: &Lanes<V>,
        _x: &GSliceMut<f32>,
        _node: u32,
        _slots: &[Slot; SLOTS],
        _factor: f32,
    ) {
    }

    #[inline(always)]
    fn team_sum<const SLOTS: usize>(_map: &LaneMap, _values: &mut [Self; SLOTS]) {}

    type Gathered = Self;

    const IN_RECORD: bool = false;

    #[inline(always)]
    fn record_word(self) -> f32 {
        0.0
    }

    #[inline(always)]
    fn from_gathered(_gathered: Self, _word: f32) -> Self {
        Self
    }
}

/// An attention score over `V` vectors held in `SLOTS` slots per lane: what the forward passes
/// call.
pub trait Score<V: Vector, const SLOTS: usize>: Copy {
    /// A slot of a destination row's operand, as stored (GT: a query vector).
    type Row: SlotValue<V>;
    /// A slot of a source node's operand, as stored (GT: a key vector).
    type Key: SlotValue<V>;
    /// A destination row's operand, prepared once per row from its [`Score::Row`] slots.
    type Query: Copy;

    /// The score for the lanes' `slots` of one pass over the heads, called once per head pass
    /// before any other method (GATv2 loads its attention vector's slots here); most models
    /// return `*self`.
    fn bind(&self, lanes: &Lanes<V>, slots: &[Slot; SLOTS]) -> Self;

    /// Prepares a row's operand.
    fn query(&self, row: &[Self::Row; SLOTS]) -> Self::Query;

    /// One edge's score per slot, in base-2 units (natural score times `log2 e`), equal in every
    /// lane and slot of a head, from the row's query, the source's key and its value vectors
    /// (which most models ignore). Inactive slots hold zeros; their scores are not used.
    fn score(&self, map: &LaneMap, query: &Self::Query, key: &[Self::Key; SLOTS], value: &[V; SLOTS]) -> [f32; SLOTS];

    /// Whether one edge is in the score's part, per slot (the forward also sums the part when
    /// asked: [`crate::abi::PartOut`]; GAT: `el_i + er_j > 0`, where LeakyReLU' is 1). Models
    /// whose forward is never asked for a part keep the default, none.
    #[inline(always)]
    fn in_part(&self, _query: &Self::Query, _key: &[Self::Key; SLOTS]) -> [bool; SLOTS] {
        [false; SLOTS]
    }
}

/// A score's gradients: what the backward passes call besides [`Score`].
pub trait ScoreGradient<V: Vector, const SLOTS: usize>: Score<V, SLOTS> {
    /// A model's own per-slot sum over the edges of a row-pass unit, beside the row operand's
    /// gradient (GATv2: its row's term of the attention vector's gradient); `()` for none.
    type RowSum: Copy;

    /// A slot of the gradient the column pass sums per source node: the key operand's (most
    /// models: [`Score::Key`]), or, for a key made from the value (AGNN), the made key's.
    type KeyGrad: SlotValue<V>;

    /// `acc + (∂s/∂row)·ds` for slot `s` of one edge, before the final
    /// [`ScoreGradient::grad_scale`] (`row`, `key`, `value`: the slot's operands and value;
    /// `ds`: the gradient of the edge's natural score for the slot's head).
    fn d_row(&self, s: usize, acc: Self::Row, row: Self::Row, key: Self::Key, value: V, ds: f32) -> Self::Row;

    /// `acc + (∂s/∂key)·ds` for slot `s` of one edge (arguments as [`ScoreGradient::d_row`]),
    /// before the final [`ScoreGradient::grad_scale`].
    fn d_key(&self, s: usize, acc: Self::KeyGrad, row: Self::Row, key: Self::Key, value: V, ds: f32) -> Self::KeyGrad;

    /// The row sums' start, zero.
    fn row_sum_zero(&self) -> [Self::RowSum; SLOTS];

    /// `acc` plus slot `s`'s term of one edge (arguments as [`ScoreGradient::d_row`]).
    fn add_row_sum(&self, s: usize, acc: Self::RowSum, row: Self::Row, key: Self::Key, ds: f32) -> Self::RowSum;

    /// Sums `sums` over the warp's teams and writes them for `work` (a whole row, or a chunk of a
    /// split row), as the row pass writes the row gradient.
    fn store_row_sum(&self, sums: &mut [Self::RowSum; SLOTS], lanes: &Lanes<V>, slots: &[Slot; SLOTS], work: &Work);

    /// The factor the summed row and key gradients are multiplied by at the end.
    fn grad_scale(&self) -> f32;

    /// For a model whose key is made from its value (GATv2's `xl` is both; AGNN's key is the
    /// normalised value), the source's whole gradient from the column pass's sums: the key
    /// gradient `dk` times `factor`, carried to the value, plus the value gradient `dv`, for the
    /// column's `key` and `value` operands and its unit `work` (a whole column, or chunk
    /// `work.chunk` of a split one, whose results are partials the combine step sums: a term that
    /// must be added once goes into chunk 0's). The pass then writes this sum alone, as the value
    /// gradient (`d_value`, or its partials for split columns), and no key gradient: one array
    /// written instead of two and no later kernel. A model may also write its own per-node
    /// results here (AGNN: dβ's shares). `None` (the default) for models whose key and value
    /// are different arrays.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn key_into_value(
        &self,
        _lanes: &Lanes<V>,
        _slots: &[Slot; SLOTS],
        _work: &Work,
        _key: &[Self::Key; SLOTS],
        _value: &[V; SLOTS],
        _dk: &[Self::KeyGrad; SLOTS],
        _dv: &[V; SLOTS],
        _factor: f32,
    ) -> Option<[V; SLOTS]> {
        None
    }
}
