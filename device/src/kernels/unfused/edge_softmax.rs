//! The row softmax of per-edge scores, and its backward, over CSR rows (the `unfused` schedule's
//! middle kernel and the backward's softmax step).
//!
//! # Grid mapping
//! One item per (row i, head h), item index `i·H + h`. A team of `p.team_lanes` lanes takes an item
//! and strides over the row's edges (reading `[E, H]` arrays at stride `H`). Teams sweep the
//! `num_rows·H` items grid-stride. 1-D grid and block, `block.x` a multiple of `WARP_SIZE`. The
//! host's choice: `team_lanes` a power of two near the average row length, at most 32 (32 for long
//! rows); `grid.x = ⌈num_rows·H·team / block.x⌉` (fewer blocks are also correct).
//!
//! # Numerics
//! Max-subtracted in f32: `α_e = 2^((s_e − m)·log2 e) / l`, `l = Σ 2^((s − m)·log2 e)`, with each
//! lane's terms added in edge order and the lanes' sums added by a butterfly (a fixed tree);
//! `lse = m + log2(l)·ln 2`. A row that is empty, or whose scores are all `−∞`, gets `α = 0` and
//! `lse = −∞`. The backward's row term `Σ α·dα` is summed the same way (with `fma`).

use crate::abi::{EdgeSoftmaxBackwardParams, EdgeSoftmaxParams};
use crate::kernel;
use crate::kernels::common::reduce::sum_over;
use crate::kernels::common::softmax::natural_log_sum_exp;
use crate::kernels::unfused::{Teams, exp_shifted, finite_or_zero, item_row, row_stats};
use crate::simt::math;

kernel! {
    /// `alpha[e, h]` = softmax over row `i` of `scores[·, h]`; `lse[i, h]` unless `lse` is empty.
    pub kernel EDGE_SOFTMAX = fn unfused_edge_softmax(p: &EdgeSoftmaxParams) {
        let heads = p.heads as u64;
        let total = p.num_rows as u64 * heads;
        let g = Teams::new(p.team_lanes);

        // The sweep's condition is warp-uniform, so every lane reaches the team reductions.
        let mut sweep = g.first;
        while sweep < total {
            let item = sweep + g.sub;
            let valid = item < total;

            // Phase 1: the item's row and head (an empty range for a lane without an item).
            let (start, end, h) = item_row(p.offsets, item, heads, valid);

            // Phase 2: max and sum of exponentials (team reductions).
            let (m, l) = row_stats(p.scores, start, end, h, heads, &g);

            // Phase 3: lse, then alpha; lanes stride over the edges again.
            if valid && g.lane == 0 && !p.lse.is_empty() {
                let lse = natural_log_sum_exp(m, l);
                p.lse.store(item as usize, lse);
            }
            let shift = finite_or_zero(m);
            let mut e = start + g.lane as u64;
            while e < end {
                let at = (e * heads + h) as usize;
                let alpha = if l > 0.0 { exp_shifted(p.scores.load(at), shift) / l } else { 0.0 };
                p.alpha.store(at, alpha);
                e += g.lanes as u64;
            }
            sweep += g.stride;
        }
    }
}

kernel! {
    /// `d_scores[e, h] = alpha[e, h] · (d_alpha[e, h] − Σ_{e' in row} alpha[e', h] · d_alpha[e', h])`.
    pub kernel EDGE_SOFTMAX_BACKWARD = fn unfused_edge_softmax_backward(p: &EdgeSoftmaxBackwardParams) {
        let heads = p.heads as u64;
        let total = p.num_rows as u64 * heads;
        let g = Teams::new(p.team_lanes);

        // The sweep's condition is warp-uniform, so every lane reaches the team reduction.
        let mut sweep = g.first;
        while sweep < total {
            let item = sweep + g.sub;
            let valid = item < total;

            // Phase 1: the item's row and head (an empty range for a lane without an item).
            let (start, end, h) = item_row(p.offsets, item, heads, valid);

            // Phase 2: the row term D = Σ alpha·d_alpha (team reduction).
            let mut partial = 0.0f32;
            let mut e = start + g.lane as u64;
            while e < end {
                let at = (e * heads + h) as usize;
                partial = math::fma(p.alpha.load(at), p.d_alpha.load(at), partial);
                e += g.lanes as u64;
            }
            let delta = sum_over(partial, g.lanes);

            // Phase 3: the score gradients; lanes stride over the edges again.
            let mut e = start + g.lane as u64;
            while e < end {
                let at = (e * heads + h) as usize;
                p.d_scores.store(at, p.alpha.load(at) * (p.d_alpha.load(at) - delta));
                e += g.lanes as u64;
            }
            sweep += g.stride;
        }
    }
}
