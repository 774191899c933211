//! GAT's node scores `s[n, h] = ⟨x[n, h, :], a[h, :]⟩` (`el` from the destinations' features and
//! `a_dst`, `er` from the sources' and `a_src`) and their backward: in one pass over the nodes,
//! the features' gradient `dx = base + d_s·a` (with both scores' terms when one array gave both)
//! and the attention vectors' `da = Σ_n d_s[n]·x[n]` as per-block partials, then those summed in
//! a fixed order (no atomics: bit-identical run after run).
//!
//! # Grid mapping
//! [`GAT_NODE_SCORES`] (`_w4`: 16-byte loads): the rows of [`NodeLanes`] (a row is a
//! (node, head) pair `i`, node `i / H`, head `i % H`, the `F` contiguous floats of `x` from
//! `i·F`): a group of lanes per row, several groups side by side, each taking
//! [`ROWS_IN_FLIGHT`] rows with their loads in flight together, with one or two attention vectors
//! over the same loads.
//! [`GAT_NODE_BACKWARD`]: block `b` takes `nodes_per_block` consecutive nodes; its threads stride
//! over the `H·F` elements (coalesced), each walking its element down the block's nodes
//! [`NODE_BACKWARD_UNROLL`] at a time (their loads in flight together), adding to its partials
//! in node order and writing `dx` as it goes.
//! [`GAT_VECTOR_GRAD_SUM`]: a block per 32 elements of one of the (one or two) vectors, a lane
//! per element; each warp sums a contiguous range of the node blocks' partials in order,
//! [`VECTOR_SUM_UNROLL`] loads at a time, and the block adds its warps' sums in warp order
//! through shared memory (one thread walking all partials was a serial tail of about 80 µs at a
//! thousand partials).
//!
//! # Numerics
//! f32; the node scores are each lane's terms in feature order, then a butterfly over the pair's
//! group; `dx = (base + d_s·a) + d_s2·a2` and the partials
//! `((d_s[n0]·x[n0] + d_s[n1]·x[n1]) + …)`, each product rounded before its sum (no contraction),
//! the same on the GPU and the emulator.

use crate::abi::{GatNodeBackwardParams, GatNodeScoresParams, GatVectorSumParams};
use crate::kernel;
use crate::kernels::common::node_rows::{GAT_LANES, LaneRows, NodeLanes, ROWS_IN_FLIGHT, dot_vector, load_vector};
use crate::kernels::common::reduce::sum_over;
use crate::kernels::common::unroll::unroll;
use crate::simt::{self, F4, WARP_SIZE};

kernel! {
    /// `scores[n, h] = ⟨x[n, h, :], a[h, :]⟩`, and `scores2` with `a2` unless it is empty; loads
    /// of one feature (any `F`).
    pub kernel GAT_NODE_SCORES = fn gat_node_scores(p: &GatNodeScoresParams) {
        node_scores::<false>(p)
    }
}

kernel! {
    /// [`GAT_NODE_SCORES`] with loads of four features (`F % 4 == 0`).
    pub kernel GAT_NODE_SCORES_W4 = fn gat_node_scores_w4(p: &GatNodeScoresParams) {
        node_scores::<true>(p)
    }
}

/// The node scores over the layout [`NodeLanes::new`] (at most [`GAT_LANES`] lanes a row) gives `F`
/// (whose width the host matched with `WIDE`): lane `ℓ` of a row's group adds the terms of vectors
/// `ℓ, ℓ + lanes, …` in that order ([`dot_vector`]), then a butterfly over the group.
#[inline(always)]
fn node_scores<const WIDE: bool>(p: &GatNodeScoresParams) {
    const U: usize = ROWS_IN_FLIGHT;
    let feat = p.feat as usize;
    let layout = NodeLanes::new(feat, GAT_LANES);
    let total = p.nodes as usize * p.heads as usize;
    let Some(LaneRows { rows, valid, member }) = LaneRows::of_warp(layout, total) else { return };
    let heads = p.heads as usize;
    let second = !p.a2.is_empty();
    let width = if WIDE { 4 } else { 1 };
    let vectors = feat / width;
    // Each row's start in `x` and in the attention vectors, once (not per load).
    let x_row: [usize; U] = core::array::from_fn(|u| rows[u] * feat);
    let a_row: [usize; U] = core::array::from_fn(|u| (rows[u] % heads) * feat);
    let mut dots = [0.0f32; U];
    let mut dots2 = [0.0f32; U];
    let mut v = member;
    while v < vectors {
        let f = v * width;
        let mut xs = [F4::default(); U];
        unroll!(U, |u| {
            if valid[u] {
                xs[u] = load_vector::<WIDE>(p.x, x_row[u] + f);
            }
        });
        unroll!(U, |u| {
            if valid[u] {
                dots[u] += dot_vector::<WIDE>(xs[u], load_vector::<WIDE>(p.a, a_row[u] + f));
                if second {
                    dots2[u] += dot_vector::<WIDE>(xs[u], load_vector::<WIDE>(p.a2, a_row[u] + f));
                }
            }
        });
        v += layout.lanes;
    }
    unroll!(U, |u| {
        let total_dot = sum_over(dots[u], layout.lanes as u32);
        let total_dot2 = if second { sum_over(dots2[u], layout.lanes as u32) } else { 0.0 };
        if member == 0 && valid[u] {
            p.scores.store(rows[u], total_dot);
            if second {
                p.scores2.store(rows[u], total_dot2);
            }
        }
    });
}

/// Nodes one thread of [`GAT_NODE_BACKWARD`] reads at once: a node is one or two loads per thread
/// (its `dx` and `x`), too few in flight to cover the memory's latency.
pub const NODE_BACKWARD_UNROLL: usize = 4;

kernel! {
    /// Over block `b`'s nodes: `dx[n, i] = (dx[n, i] if accumulate) + d_scores[n, h]·a[i] +
    /// d_scores2[n, h]·a2[i]` (no `dx` when it is empty), `partial[b, i] = Σ_n d_scores[n, h]·x[n, i]`
    /// (`d_scores` empty: ones) and `partial2[b, i]` with `d_scores2` (none when `partial2` is
    /// empty),
    /// nodes in order; `i` is a flat (head, feature) index, `h = i / F`. A block with no nodes
    /// writes zero partials.
    pub kernel GAT_NODE_BACKWARD = fn gat_node_backward(p: &GatNodeBackwardParams) {
        const U: usize = NODE_BACKWARD_UNROLL;
        let b = simt::block_idx().x as usize;
        let (heads, len) = (p.heads as usize, p.heads as usize * p.feat as usize);
        let nodes = p.nodes as u64;
        let first = (b as u64 * p.nodes_per_block as u64).min(nodes) as usize;
        let end = (first as u64 + p.nodes_per_block as u64).min(nodes) as usize;
        let (write_dx, ones, second) = (!p.dx.is_empty(), p.d_scores.is_empty(), !p.partial2.is_empty());
        let accumulate = p.accumulate != 0;
        let mut i = simt::thread_idx().x as usize;
        while i < len {
            let h = i / p.feat as usize;
            let a = if write_dx { p.a.load(i) } else { 0.0 };
            let a2 = if write_dx && second { p.a2.load(i) } else { 0.0 };
            let (mut sum, mut sum2) = (0.0f32, 0.0f32);
            let mut n = first;
            while n < end {
                let mut xs = [0.0f32; U];
                let mut ds = [1.0f32; U];
                let mut ds2 = [0.0f32; U];
                let mut bases = [0.0f32; U];
                unroll!(U, |u| {
                    let m = n + u;
                    if m < end {
                        xs[u] = p.x.load(m * len + i);
                        if !ones {
                            ds[u] = p.d_scores.load(m * heads + h);
                        }
                        if second {
                            ds2[u] = p.d_scores2.load(m * heads + h);
                        }
                        if accumulate {
                            bases[u] = p.dx.load(m * len + i);
                        }
                    }
                });
                unroll!(U, |u| {
                    let m = n + u;
                    if m < end {
                        sum += ds[u] * xs[u];
                        if second {
                            sum2 += ds2[u] * xs[u];
                        }
                        if write_dx {
                            let through = ds[u] * a;
                            let mut total = if accumulate { bases[u] + through } else { through };
                            if second {
                                total += ds2[u] * a2;
                            }
                            p.dx.store(m * len + i, total);
                        }
                    }
                });
                n += U;
            }
            p.partial.store(b * len + i, sum);
            if second {
                p.partial2.store(b * len + i, sum2);
            }
            i += simt::block_dim().x as usize;
        }
    }
}

/// Partials one thread of [`GAT_VECTOR_GRAD_SUM`] loads at once (then adds in order).
pub const VECTOR_SUM_UNROLL: usize = 8;

/// Warps of one [`GAT_VECTOR_GRAD_SUM`] block: each sums a contiguous range of the partials.
pub const VECTOR_SUM_WARPS: u32 = 8;

/// Elements of one vector one [`GAT_VECTOR_GRAD_SUM`] block sums (a lane each).
pub const VECTOR_SUM_ELEMENTS: u32 = WARP_SIZE;

kernel! {
    /// `out[i] = Σ_b partial[b, i]` for `i < len`, and `out2` from `partial2` unless it is empty.
    /// Block `c` takes elements `32·c ..` of the first vector, block `⌈len/32⌉ + c` those of the
    /// second; its warp `w` sums the partials `[w·P, (w+1)·P)` (`P = ⌈B/warps⌉`) in order, and
    /// warp 0 adds the warps' sums in warp order (`block.x = 32·VECTOR_SUM_WARPS`, dynamic shared
    /// memory for `VECTOR_SUM_WARPS × 32` floats).
    pub kernel GAT_VECTOR_GRAD_SUM = fn gat_vector_grad_sum(p: &GatVectorSumParams) {
        const U: usize = VECTOR_SUM_UNROLL;
        let lanes = VECTOR_SUM_ELEMENTS as usize;
        let len = p.len as usize;
        let chunks = len.div_ceil(lanes);
        let c = simt::block_idx().x as usize;
        let (partial, out, blocks, chunk) = if c < chunks {
            (p.partial, p.out, p.blocks as usize, c)
        } else {
            (p.partial2, p.out2, p.blocks2 as usize, c - chunks)
        };
        let (warp, lane) = (simt::warp_id() as usize, simt::lane_id() as usize);
        let warps = (simt::block_dim().x / WARP_SIZE) as usize;
        let i = chunk * lanes + lane;
        let per_warp = blocks.div_ceil(warps);
        let (first, end) = ((warp * per_warp).min(blocks), ((warp + 1) * per_warp).min(blocks));
        let mut sum = 0.0f32;
        if i < len {
            let mut b = first;
            while b < end {
                let mut terms = [0.0f32; U];
                unroll!(U, |k| {
                    if b + k < end {
                        terms[k] = partial.load((b + k) * len + i);
                    }
                });
                unroll!(U, |k| {
                    if b + k < end {
                        sum += terms[k];
                    }
                });
                b += U;
            }
        }
        let sums = simt::dynamic_shared().slice::<f32>(0, warps * lanes);
        sums.store(warp * lanes + lane, sum);
        simt::sync_threads();
        if warp == 0 && i < len {
            let mut total = sums.load(lane);
            let mut w = 1;
            while w < warps {
                total += sums.load(w * lanes + lane);
                w += 1;
            }
            out.store(i, total);
        }
    }
}
