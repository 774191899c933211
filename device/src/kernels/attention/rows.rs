//! The backward's row pass: `D_i = dO_i·o_i` (into the row record the column pass reads) and
//! the gradient of the row's operand, `Σ_j (∂s_ij/∂q_i)·ds_ij` (GT: `dq_i = c·Σ_j ds_ij·k_j`;
//! GAT: `d el_i = Σ_j ds_ij·LeakyReLU'`), with α recomputed from the forward's `(m, 1/l)`. No
//! float atomics: each row's sum is one warp's, in edge order.
//!
//! # Grid mapping
//! As the forward ([`super::forward`]): one warp per unit (a row or a chunk of a split row), or
//! a row per team for packed short rows, all heads of an edge together, `STEP` edges' keys and
//! values in flight per team.
//!
//! # Shared memory
//! None.
//!
//! # Numerics
//! f32. `α = 2^(s − m)·(1/l)` with the forward's `(m, 1/l)` and its score arithmetic, so α matches
//! the forward's weights to the last bit of the exponent; `ds = α·(dO·v·factor − D)` with the
//! edge's dropout factor (1 without dropout), the mask regenerated from the edge's CSR id.
//! `D = dO·o` from the forward's output, except in a whole row that one step covers: there
//! `D = Σ_j α_ij·factor_ij·(dO_i·v_j)` in edge order (mathematically the same; at most a step's
//! terms), so short rows read no output. Whole rows write the gradient times
//! [`ScoreGradient::grad_scale`] and the row record for the column pass (`(m, 1/l)`, `D` and a
//! scalar row operand: [`crate::abi::ColumnGrads::record`]); chunks of split rows write unscaled
//! partial sums (summed by [`super::combine`]); chunk 0 writes the record.

use crate::abi::{PassEdges, RowGrads};
use crate::kernels::attention::{ScoreGradient, SlotValue, load_slots};
use crate::kernels::common::dropout;
use crate::kernels::common::gather::{Step, gather};
use crate::kernels::common::lanes::{head_sum, team_sum};
use crate::kernels::common::pass::Lanes;
use crate::kernels::common::segment::{self, Work};
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{F2, F4, GSlice, math};

/// The row pass over `edges` (a CSR pass) of the model `score` with the forward's inputs.
#[inline(always)]
pub fn backward_rows<
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
    grads: &RowGrads,
) {
    let mut units = segment::warp_units::<PACKED>(&edges.units, &edges.shape.lanes);
    while let Some(work) = units.next(&edges.offsets, &edges.units) {
        backward_rows_unit::<V, SLOTS, STEP, DROPOUT, PACKED, M>(edges, score, q, k, v, grads, &work);
    }
}

/// One task of [`backward_rows`]: `PACKED` when each team took a row of its own.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn backward_rows_unit<
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
    grads: &RowGrads,
    work: &Work,
) {
    let lanes = Lanes::<V>::for_work::<PACKED>(&edges.shape, work);
    let (q, k, v) = (M::Row::array(q), M::Key::array(k), v.cast::<V>());
    let (out, d_out) = (grads.out.cast::<V>(), grads.d_out.cast::<V>());
    let stats = grads.stats.cast::<F2>();
    lanes.each_head_pass(|head0| {
        let slots = lanes.slots::<SLOTS>(head0);
        let score = score.bind(&lanes, &slots);
        // Prologue: the row operand, dO and D = dO·o of this row, and the forward's (max, 1/sum).
        // A whole row that one step covers (warp-uniform: `stop` is the teams' longest when
        // packed) takes D from its edges instead, Σ_j α_ij·factor_ij·(dO_i·v_j), all of them in
        // registers at once: one vector fewer read per row where rows are short.
        let one_step =
            !work.split && (if PACKED { work.stop } else { work.end }) - work.start <= lanes.step_edges(STEP);
        let qi = load_slots(&lanes, &q, work.node, &slots);
        let doi = lanes.load(&d_out, work.node, &slots);
        let mut delta = [0.0f32; SLOTS];
        if !one_step {
            let oi = lanes.load(&out, work.node, &slots);
            delta = core::array::from_fn(|s| doi[s].dot(oi[s]));
            head_sum(&lanes.map, &mut delta);
        }
        let ml: [F2; SLOTS] = core::array::from_fn(|s| {
            if slots[s].active { stats.load(lanes.scalar(work.node, slots[s])) } else { F2([0.0; 2]) }
        });
        let query = score.query(&qi);
        let mut d_row = [M::Row::zero(); SLOTS];
        let mut row_sum = score.row_sum_zero();

        // Main loop over steps of STEP edges per team.
        let mut base = work.start;
        while base < if PACKED { work.stop } else { work.end } {
            let Step { valid, first: keys, second: values, .. } = gather::<V, M::Key, SLOTS, STEP>(
                &lanes,
                &edges.neighbours,
                &k,
                &v,
                &slots,
                base,
                work.end,
                |_, _, _| {},
            );
            // Each edge's α and dα = factor·(dO·v) (zero where not valid).
            let mut alpha = [[0.0f32; SLOTS]; STEP];
            let mut d_alpha = [[0.0f32; SLOTS]; STEP];
            unroll!(STEP, |c| {
                let s2 = score.score(&lanes.map, &query, &keys[c], &values[c]);
                let mut dov: [f32; SLOTS] = core::array::from_fn(|s| doi[s].dot(values[c][s]));
                head_sum(&lanes.map, &mut dov);
                if valid[c] {
                    let edge = lanes.edge(base, c);
                    unroll!(SLOTS, |s| {
                        alpha[c][s] = math::exp2(s2[s] - ml[s].0[0]) * ml[s].0[1];
                        d_alpha[c][s] = dov[s] * dropout::factor::<DROPOUT>(&edges.dropout, edge, slots[s].head);
                    });
                }
            });
            if one_step {
                unroll!(STEP, |c| {
                    unroll!(SLOTS, |s| {
                        delta[s] = math::fma(alpha[c][s], d_alpha[c][s], delta[s]);
                    });
                });
                if !work.packed {
                    team_sum(&lanes.map, &mut delta);
                }
            }
            unroll!(STEP, |c| {
                if valid[c] {
                    unroll!(SLOTS, |s| {
                        let ds = alpha[c][s] * (d_alpha[c][s] - delta[s]);
                        d_row[s] = score.d_row(s, d_row[s], qi[s], keys[c][s], values[c][s], ds);
                        row_sum[s] = score.add_row_sum(s, row_sum[s], qi[s], keys[c][s], ds);
                    });
                }
            });
            base += lanes.step_edges(STEP);
        }
        if work.chunk == 0 {
            let record = grads.record.cast::<F4>();
            lanes.each_head_leader(&slots, |s, slot| {
                let [max, inv_sum] = ml[s].0;
                record.store(lanes.scalar(work.node, slot), F4([max, inv_sum, delta[s], qi[s].record_word()]));
            });
        }
        if !work.packed {
            M::Row::team_sum(&lanes.map, &mut d_row);
        }
        score.store_row_sum(&mut row_sum, &lanes, &slots, work);

        // Epilogue.
        if work.split {
            M::Row::store(&d_row, &lanes, &grads.partial, work.partial, &slots, 1.0);
        } else {
            M::Row::store(&d_row, &lanes, &grads.d_row, work.node, &slots, score.grad_scale());
        }
    });
}
