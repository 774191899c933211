//! The backward's column pass over the CSC: the gradients of each source node's key,
//! `Σ_i (∂s_ij/∂k_j)·ds_ij` (GT: `dk_j = c·Σ_i ds_ij·q_i`; GAT: `d er_j`), and value,
//! `dv_j = Σ_i α_ij·dO_i`, with α recomputed from the forward's `(m, 1/l)`, which the row pass
//! copied with `D` into its row record. A gather per column, in CSC order: no atomics,
//! bit-reproducible.
//!
//! # Grid mapping
//! One warp per unit of columns (a whole column, or a chunk of a split one; a column per team
//! for packed short columns); the lanes cover all heads of a source node as in the forward; per
//! step each team gathers `STEP` in-edges' row operands and output gradients, and their rows'
//! records (`(m, 1/l)`, `D` and a scalar row operand in one 16-byte record: GAT's `el` is not
//! gathered on its own).
//!
//! # Shared memory
//! None.
//!
//! # Numerics
//! f32, as the row pass; with dropout, `dv_j = Σ_i α_ij·factor_ij·dO_i` and `ds` as in the row
//! pass, the mask regenerated from the CSR id of each CSC slot (`edges.edge_ids`). Whole columns write the key gradient times [`ScoreGradient::grad_scale`] and the
//! value gradient; chunks of split columns write unscaled partial sums for [`super::combine`].
//! A model whose key is made from its value ([`ScoreGradient::key_into_value`]: GATv2, AGNN) gets
//! the source's whole gradient, written as the value gradient (its partials for chunks), and no
//! key gradient.

use crate::abi::{ColumnGrads, PassEdges};
use crate::kernels::attention::{ScoreGradient, SlotValue, load_slots};
use crate::kernels::common::dropout;
use crate::kernels::common::gather::{Step, gather};
use crate::kernels::common::lanes::{head_sum, team_sum};
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::{self, Work};
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{F2, GSlice, math};

/// The column pass over `edges` (a CSC pass: units are source nodes, neighbours are rows) of the
/// model `score` with the forward's inputs.
#[inline(always)]
pub fn backward_cols<
    V: Vector,
    const SLOTS: usize,
    const STEP: usize,
    const DROPOUT: bool,
    const PACKED: bool,
    M: ScoreGradient<V, SLOTS>,
>(
    edges: &PassEdges,
    score: &M,
    q: GSlice<f32>,
    k: GSlice<f32>,
    v: GSlice<f32>,
    grads: &ColumnGrads,
) {
    let mut units = segment::warp_units::<PACKED>(&edges.units, &edges.shape.lanes);
    while let Some(work) = units.next(&edges.offsets, &edges.units) {
        backward_cols_unit::<V, SLOTS, STEP, DROPOUT, PACKED, M>(edges, score, q, k, v, grads, &work);
    }
}

/// One task of [`backward_cols`]: `PACKED` when each team took a row of its own.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn backward_cols_unit<
    V: Vector,
    const SLOTS: usize,
    const STEP: usize,
    const DROPOUT: bool,
    const PACKED: bool,
    M: ScoreGradient<V, SLOTS>,
>(
    edges: &PassEdges,
    score: &M,
    q: GSlice<f32>,
    k: GSlice<f32>,
    v: GSlice<f32>,
    grads: &ColumnGrads,
    work: &Work,
) {
    let lanes = Lanes::<V>::for_work::<PACKED>(&edges.shape, work);
    let (q, k, v, d_out) =
        (<M::Row as SlotValue<V>>::Gathered::array(q), M::Key::array(k), v.cast::<V>(), grads.d_out.cast::<V>());
    let record = grads.record.cast::<F2>();
    lanes.each_head_pass(|head0| {
        let slots = lanes.slots::<SLOTS>(head0);
        let score = score.bind(&lanes, &slots);
        // Prologue: this source node's key and value.
        let kj = load_slots(&lanes, &k, work.node, &slots);
        let vj = lanes.load(&v, work.node, &slots);
        let mut dk = [M::KeyGrad::zero(); SLOTS];
        let mut dv = [V::zero(); SLOTS];

        // Main loop over steps of STEP in-edges per team.
        let mut base = work.start;
        while base < if PACKED { work.stop } else { work.end } {
            // Each in-edge's row record (its row scalars in one 16-byte record: `(m, 1/l)`, then
            // D and, where the row operand travels in it, that operand, which is not gathered),
            // loaded with its vectors so their latency overlaps.
            let mut ml = [[F2([0.0; 2]); SLOTS]; STEP];
            let mut words = [[F2([0.0; 2]); SLOTS]; STEP];
            let also = |c: usize, row: u32, s: usize| {
                let at = lanes.scalar(row, slots[s]);
                ml[c][s] = record.load(2 * at);
                words[c][s] =
                    if M::Row::IN_RECORD { record.load(2 * at + 1) } else { F2([grads.record.load(4 * at + 2), 0.0]) };
            };
            let Step { valid, first: gathered, second: grads_out, .. } =
                gather::<V, <M::Row as SlotValue<V>>::Gathered, SLOTS, STEP>(
                    &lanes,
                    &edges.neighbours,
                    &q,
                    &d_out,
                    &slots,
                    base,
                    work.end,
                    also,
                );
            let queries: [[M::Row; SLOTS]; STEP] = core::array::from_fn(|c| {
                core::array::from_fn(|s| M::Row::from_gathered(gathered[c][s], words[c][s].0[1]))
            });
            unroll!(STEP, |c| {
                // Scores with the forward's arithmetic.
                let mut dov: [f32; SLOTS] = core::array::from_fn(|s| grads_out[c][s].dot(vj[s]));
                head_sum(&lanes.map, &mut dov);
                let s2 = score.score(&lanes.map, &score.query(&queries[c]), &kj, &vj);
                if valid[c] {
                    // The edge's CSR id, for the dropout mask (read only when dropout is on).
                    let edge = if DROPOUT && edges.dropout.threshold != 0 {
                        edges.edge_ids.load(lanes.edge(base, c) as usize) as u64
                    } else {
                        0
                    };
                    unroll!(SLOTS, |s| {
                        if slots[s].active {
                            let alpha = math::exp2(s2[s] - ml[c][s].0[0]) * ml[c][s].0[1];
                            let factor = dropout::factor::<DROPOUT>(&edges.dropout, edge, slots[s].head);
                            let ds = alpha * (dov[s] * factor - words[c][s].0[0]);
                            dk[s] = score.d_key(s, dk[s], queries[c][s], kj[s], vj[s], ds);
                            dv[s] = grads_out[c][s].mul_add(alpha * factor, dv[s]);
                        }
                    });
                }
            });
            base += lanes.step_edges(STEP);
        }
        if !work.packed {
            M::KeyGrad::team_sum(&lanes.map, &mut dk);
            team_sum(&lanes.map, &mut dv);
        }

        // Epilogue. A key that is the value (ScoreGradient::key_into_value) gets one sum.
        let factor = if work.split { 1.0 } else { score.grad_scale() };
        if let Some(sum) = score.key_into_value(&lanes, &slots, work, &kj, &vj, &dk, &dv, factor) {
            let (x, at) = if work.split { (&grads.partial_d_value, work.partial) } else { (&grads.d_value, work.node) };
            lanes.store(x, at, &slots, &sum, 1.0);
        } else if work.split {
            M::KeyGrad::store(&dk, &lanes, &grads.partial_d_key, work.partial, &slots, 1.0);
            lanes.store(&grads.partial_d_value, work.partial, &slots, &dv, 1.0);
        } else {
            M::KeyGrad::store(&dk, &lanes, &grads.d_key, work.node, &slots, score.grad_scale());
            lanes.store(&grads.d_value, work.node, &slots, &dv, 1.0);
        }
    });
}
