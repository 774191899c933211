//! The `edge_parallel` schedule's row kernel (DF-GNN's "softmax"): per row and head, the softmax
//! of the scores [`unfused_sddmm`](super::sddmm) left in global memory, and the aggregation of the
//! values, in one kernel that never writes alpha. The schedule's backward is the shared
//! unfused backward (see the [module documentation](super)).
//!
//! # Grid mapping
//! One item per (row i, head h), item index `i·H + h`. A team of `p.team_lanes` lanes takes an item:
//! first its lanes stride over the row's edges (max, then sum of exponentials, reduced across the
//! team), then over the `F` features (in [`F4`] units when `F % 4 == 0`), each lane walking all
//! of the row's edges for its features. Teams sweep the `num_rows·H` items grid-stride. 1-D
//! grid and block, `block.x` a multiple of `WARP_SIZE`. The host's choice: `team_lanes` the smallest
//! power of two ≥ `F / 4` (vector path) or `≥ F` (scalar path), at most 32;
//! `grid.x = ⌈num_rows·H·team / block.x⌉` (fewer blocks are also correct).
//!
//! # Numerics
//! Two passes over the scores give `m` and `l = Σ 2^((s − m)·log2 e)` (each lane's terms in edge
//! order, the lanes' sums by a butterfly). The output is `(Σ_e 2^((s_e − m)·log2 e) · v_e) / l`,
//! one lane's `fma` chain per element in edge order, divided once; `lse = m + log2(l)·ln 2`.
//! A row that is empty, or whose scores are all `−∞`, writes 0 and `lse = −∞`.

use crate::abi::SoftmaxAggregateParams;
use crate::kernel;
use crate::kernels::common::softmax::natural_log_sum_exp;
use crate::kernels::common::vector::Vector;
use crate::kernels::unfused::{Teams, exp_shifted, item_row, row_stats};
use crate::simt::F4;

kernel! {
    /// `out[i, h, :] = Σ_{e in row i} softmax_row(scores)[e, h] · v[columns[e], h, :]` and
    /// `lse[i, h]`.
    pub kernel SOFTMAX_AGGREGATE = fn edge_parallel_softmax_aggregate(p: &SoftmaxAggregateParams) {
        if p.feat.is_multiple_of(4) {
            softmax_aggregate_body::<F4>(p);
        } else {
            softmax_aggregate_body::<f32>(p);
        }
    }
}

/// The kernel for feature unit `V`.
#[inline(always)]
fn softmax_aggregate_body<V: Vector>(p: &SoftmaxAggregateParams) {
    let v = p.v.cast::<V>();
    let out = p.out.cast::<V>();
    let heads = p.heads as u64;
    let units = (p.feat / V::WIDTH as u32) as u64;
    let total = p.num_rows as u64 * heads;
    let g = Teams::new(p.team_lanes);

    // The sweep's condition is warp-uniform, so every lane reaches the team reductions.
    let mut sweep = g.first;
    while sweep < total {
        let item = sweep + g.sub;
        let valid = item < total;

        // Phase 1: the item's row and head (an empty range for a lane without an item).
        let (start, end, h) = item_row(p.offsets, item, heads, valid);

        // Phase 2: max and sum of exponentials, lanes over edges (team reductions).
        let (m, l) = row_stats(p.scores, start, end, h, heads, &g);

        // Phase 3: lse, then the output, lanes over feature units.
        if valid {
            if g.lane == 0 {
                let lse = natural_log_sum_exp(m, l);
                p.lse.store(item as usize, lse);
            }
            let mut u = g.lane as u64;
            while u < units {
                let mut acc = V::zero();
                if l > 0.0 {
                    let mut e = start;
                    while e < end {
                        let weight = exp_shifted(p.scores.load((e * heads + h) as usize), m);
                        let j = p.columns.load(e as usize) as u64;
                        acc = v.load(((j * heads + h) * units + u) as usize).mul_add(weight, acc);
                        e += 1;
                    }
                    acc = acc.div(l);
                }
                out.store((item * units + u) as usize, acc);
                u += g.lanes as u64;
            }
        }
        sweep += g.stride;
    }
}
