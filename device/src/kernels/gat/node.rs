//! GAT's node scores `s[n, h] = ⟨x[n, h, :], a[h, :]⟩` (`el` from the destinations' features and
//! `a_dst`, `er` from the sources' and `a_src`) and their backward: the features' gradient
//! `dx = base + d_s·a`, and the attention vector's `da = Σ_n d_s[n]·x[n]` as per-block partials
//! summed in block order (no atomics: bit-identical run after run).
//!
//! # Grid mapping
//! [`GAT_NODE_SCORES`], [`GAT_NODE_SCORES_BACKWARD`]: one warp per (node, head), warp `w` of the
//! grid takes node `w / H`, head `w % H`; lanes stride over the `F` features.
//! [`GAT_VECTOR_GRAD_PARTIALS`]: block `b` takes `nodes_per_block` consecutive nodes; its threads
//! stride over the `H·F` elements, each summing its element over the block's nodes in order.
//! [`GAT_VECTOR_GRAD_SUM`]: one thread per element, summing the blocks' partials in order.
//!
//! # Numerics
//! f32; the node scores are butterfly warp sums.

use crate::abi::{GatNodeScoresBackwardParams, GatNodeScoresParams, GatVectorGradParams, GatVectorSumParams};
use crate::kernel;
use crate::kernels::common::reduce::warp_sum;
use crate::simt::{self, WARP_SIZE};

/// This warp's (node, head) as a flat index, or `None` past the last.
#[inline(always)]
fn this_head(nodes: u32, heads: u32) -> Option<usize> {
    let warps = simt::block_dim().x / WARP_SIZE;
    let w = simt::block_idx().x as u64 * warps as u64 + simt::warp_id() as u64;
    (w < nodes as u64 * heads as u64).then_some(w as usize)
}

kernel! {
    /// `scores[n, h] = ⟨x[n, h, :], a[h, :]⟩`.
    pub kernel GAT_NODE_SCORES = fn gat_node_scores(p: &GatNodeScoresParams) {
        let Some(nh) = this_head(p.nodes, p.heads) else { return };
        let feat = p.feat as usize;
        let (base, head) = (nh * feat, (nh % p.heads as usize) * feat);
        let lane = simt::lane_id() as usize;
        let mut dot = 0.0f32;
        let mut f = lane;
        while f < feat {
            dot += p.x.load(base + f) * p.a.load(head + f);
            f += WARP_SIZE as usize;
        }
        let dot = warp_sum(dot);
        if lane == 0 {
            p.scores.store(nh, dot);
        }
    }
}

kernel! {
    /// `dx[n, h, :] = base[n, h, :] + d_scores[n, h]·a[h, :]` (no `base` when it is empty).
    pub kernel GAT_NODE_SCORES_BACKWARD = fn gat_node_scores_backward(p: &GatNodeScoresBackwardParams) {
        let Some(nh) = this_head(p.nodes, p.heads) else { return };
        let feat = p.feat as usize;
        let (base, head) = (nh * feat, (nh % p.heads as usize) * feat);
        let d = p.d_scores.load(nh);
        let mut f = simt::lane_id() as usize;
        while f < feat {
            let through_score = d * p.a.load(head + f);
            let total = if p.base.is_empty() { through_score } else { p.base.load(base + f) + through_score };
            p.dx.store(base + f, total);
            f += WARP_SIZE as usize;
        }
    }
}

kernel! {
    /// `partial[b, h, f] = Σ_{n of block b} d_scores[n, h]·x[n, h, f]` (`d_scores` empty: 1),
    /// nodes in order.
    pub kernel GAT_VECTOR_GRAD_PARTIALS = fn gat_vector_grad_partials(p: &GatVectorGradParams) {
        let b = simt::block_idx().x;
        let len = p.heads as usize * p.feat as usize;
        let first = b as u64 * p.nodes_per_block as u64;
        if first >= p.nodes as u64 {
            return;
        }
        let end = (first + p.nodes_per_block as u64).min(p.nodes as u64);
        let mut i = simt::thread_idx().x as usize;
        while i < len {
            let h = i / p.feat as usize;
            let mut sum = 0.0f32;
            let mut n = first;
            while n < end {
                let x = p.x.load(n as usize * len + i);
                sum += if p.d_scores.is_empty() { x } else { p.d_scores.load(n as usize * p.heads as usize + h) * x };
                n += 1;
            }
            p.partial.store(b as usize * len + i, sum);
            i += simt::block_dim().x as usize;
        }
    }
}

kernel! {
    /// `out[i] = Σ_b partial[b, i]`, blocks in order.
    pub kernel GAT_VECTOR_GRAD_SUM = fn gat_vector_grad_sum(p: &GatVectorSumParams) {
        let i = simt::block_idx().x as usize * simt::block_dim().x as usize + simt::thread_idx().x as usize;
        if i >= p.len as usize {
            return;
        }
        let mut sum = 0.0f32;
        for b in 0..p.blocks as usize {
            sum += p.partial.load(b * p.len as usize + i);
        }
        p.out.store(i, sum);
    }
}
