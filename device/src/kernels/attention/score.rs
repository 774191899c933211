//! What a model supplies to the fused passes: the score of an edge and the score's gradients.
//!
//! The passes gather, per edge `(i, j)`, the destination's **query** vectors `q_i`, the source's
//! **key** vectors `k_j` (the score's operands) and **value** vectors `v_j` (what is aggregated),
//! in the slots of the [`LaneMap`]. A model turns `q_i` into its query operand once per row
//! ([`Score::query`]), scores an edge from it and `k_j` ([`Score::score`]), and in the backward
//! says how a score gradient `ds` reaches `q_i` ([`Score::d_query`]) and `k_j`
//! ([`Score::d_key`]). It must not touch anything else: units, gathers, the online softmax, the
//! merges across teams and the epilogues are the passes' own.

use crate::abi::LaneMap;
use crate::kernels::common::vector::Vector;

/// An attention score over `V` vectors held in `SLOTS` slots per lane.
pub trait Score<V: Vector, const SLOTS: usize> {
    /// A destination row's operand, prepared once per row from its query vectors.
    type Query: Copy;

    /// Prepares a row's operand from its query vectors (zero in inactive slots).
    fn query(&self, q: &[V; SLOTS]) -> Self::Query;

    /// One edge's score per slot, in base-2 units (natural score times `log2 e`), equal in every
    /// lane and slot of a head. Inactive slots hold zero vectors; their scores are not used.
    fn score(&self, map: &LaneMap, query: &Self::Query, key: &[V; SLOTS]) -> [f32; SLOTS];

    /// `acc + (∂s/∂q_i)·ds` for one slot of one edge, before the final [`Score::grad_scale`]
    /// (`q`, `k`: the slot's query and key vectors; `ds`: the gradient of the natural score).
    fn d_query(&self, acc: V, q: V, k: V, ds: f32) -> V;

    /// `acc + (∂s/∂k_j)·ds` for one slot of one edge, before the final [`Score::grad_scale`].
    fn d_key(&self, acc: V, q: V, k: V, ds: f32) -> V;

    /// The factor the summed query and key gradients are multiplied by at the end.
    fn grad_scale(&self) -> f32;
}
