//! GAT's node scores `s[n, h] = ⟨x[n, h, :], a[h, :]⟩` (`el` from the destinations' features and
//! `a_dst`, `er` from the sources' and `a_src`) and their backward: the features' gradient
//! `dx = base + d_s·a`, and the attention vector's `da = Σ_n d_s[n]·x[n]` as per-block partials
//! summed in block order (no atomics: bit-identical run after run).
//!
//! # Grid mapping
//! [`GAT_NODE_SCORES`]: warp `w` of the grid takes the [`NODE_HEADS_PER_WARP`] (node, head)
//! pairs from flat index `w·NODE_HEADS_PER_WARP` on (pair `i` is node `i / H`, head `i % H`),
//! lanes striding over the `F` features, with one or two attention vectors over the same loads.
//! [`GAT_NODE_SCORES_BACKWARD`]: one warp per (node, head), warp `w` of the grid takes node
//! `w / H`, head `w % H`; lanes stride over the `F` features.
//! [`GAT_VECTOR_GRAD_PARTIALS`]: block `b` takes `nodes_per_block` consecutive nodes; its threads
//! stride over the `H·F` elements, each summing its element over the block's nodes in order.
//! [`GAT_VECTOR_GRAD_SUM`]: one thread per element, summing the blocks' partials in order.
//!
//! # Numerics
//! f32; the node scores are butterfly warp sums.

use crate::abi::{GatNodeScoresBackwardParams, GatNodeScoresParams, GatVectorGradParams, GatVectorSumParams};
use crate::kernel;
use crate::kernels::common::reduce::warp_sum;
use crate::kernels::common::unroll::unroll;
use crate::simt::{self, WARP_SIZE};

/// The first of this warp's `per_warp` (node, head) pairs as a flat index, or `None` past the last.
#[inline(always)]
fn this_head(nodes: u32, heads: u32, per_warp: usize) -> Option<usize> {
    let warps = simt::block_dim().x / WARP_SIZE;
    let w = simt::block_idx().x as u64 * warps as u64 + simt::warp_id() as u64;
    let first = w * per_warp as u64;
    (first < nodes as u64 * heads as u64).then_some(first as usize)
}

/// (node, head) pairs one warp of [`GAT_NODE_SCORES`] takes: their loads are in flight together
/// (one pair of 64 features is two loads per lane, too little to cover the memory's latency).
pub const NODE_HEADS_PER_WARP: usize = 4;

kernel! {
    /// `scores[n, h] = ⟨x[n, h, :], a[h, :]⟩`, and `scores2` with `a2` unless it is empty.
    pub kernel GAT_NODE_SCORES = fn gat_node_scores(p: &GatNodeScoresParams) {
        let Some(first) = this_head(p.nodes, p.heads, NODE_HEADS_PER_WARP) else { return };
        let total = p.nodes as usize * p.heads as usize;
        let (feat, second) = (p.feat as usize, !p.a2.is_empty());
        let lane = simt::lane_id() as usize;
        let mut dots = [0.0f32; NODE_HEADS_PER_WARP];
        let mut dots2 = [0.0f32; NODE_HEADS_PER_WARP];
        let mut f = lane;
        while f < feat {
            let mut xs = [0.0f32; NODE_HEADS_PER_WARP];
            unroll!(NODE_HEADS_PER_WARP, |i| {
                let nh = first + i;
                if nh < total {
                    xs[i] = p.x.load(nh * feat + f);
                }
            });
            unroll!(NODE_HEADS_PER_WARP, |i| {
                let nh = first + i;
                if nh < total {
                    let at = (nh % p.heads as usize) * feat + f;
                    dots[i] += xs[i] * p.a.load(at);
                    if second {
                        dots2[i] += xs[i] * p.a2.load(at);
                    }
                }
            });
            f += WARP_SIZE as usize;
        }
        unroll!(NODE_HEADS_PER_WARP, |i| {
            let nh = first + i;
            let dot = warp_sum(dots[i]);
            let dot2 = if second { warp_sum(dots2[i]) } else { 0.0 };
            if lane == 0 && nh < total {
                p.scores.store(nh, dot);
                if second {
                    p.scores2.store(nh, dot2);
                }
            }
        });
    }
}

kernel! {
    /// `dx[n, h, :] = base[n, h, :] + d_scores[n, h]·a[h, :]` (no `base` when it is empty).
    pub kernel GAT_NODE_SCORES_BACKWARD = fn gat_node_scores_backward(p: &GatNodeScoresBackwardParams) {
        let Some(nh) = this_head(p.nodes, p.heads, 1) else { return };
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
