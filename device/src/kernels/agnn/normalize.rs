//! Per-head L2 normalisation `hn = h / max(‖h‖, eps)` (as `torch.nn.functional.normalize`), the
//! inverse norms, the attention's queries `q = β·hn` (β read from memory), and the backward of
//! both (which makes `hn` from `h` again, with the same arithmetic) for the baselines; the fused
//! column pass computes the same backward itself (`CosineScore::key_into_value`).
//!
//! # Grid mapping
//! [`AGNN_NORMALIZE`] (`_w4`: 16-byte loads and stores): the rows of
//! [`crate::kernels::common::node_rows`] (a row is a (node, head) pair, node `i / H`, head
//! `i % H`): a group of lanes per row, several rows side by side and in flight per group.
//! [`AGNN_NORMALIZE_BACKWARD`]: one warp per (node, head), warp `w` of the grid taking node
//! `w / H`, head `w % H`, lanes striding over the head's `F` features. `block.x` a multiple of 32.
//!
//! # Numerics
//! f32; the forward's sum of squares is each lane's terms in feature order, then a butterfly over
//! the row's group; the backward's dot products are lane-strided sums, then a warp butterfly (the
//! same bits in every lane). Backward: with `n = ‖h‖ ≥ eps`, `dh = dv + (g − hn·(hn·g)) / n` where
//! `g = β·dq + dk` (the attention ran on `q = β·hn`, `k = hn` with scale 1, so its query gradient
//! `Σ_j ds·hn_j` lacks the factor β and its key gradient has it); where the clamp is active the
//! norm is the constant eps, so `dh = dv + g / eps`. dβ's share of a node and head is `hn·dq`, in
//! the same lane order as the other sums. A non-finite β makes `q`, and so the scores, the
//! outputs and the gradients, NaN or infinite: arithmetic only, no index depends on it.

use crate::abi::{AgnnNormalizeBackwardParams, AgnnNormalizeParams};
use crate::kernel;
use crate::kernels::common::node_rows::{AGNN_LANES, LaneRows, NodeLanes, ROWS_IN_FLIGHT, dot_vector, load_vector};
use crate::kernels::common::reduce::{global_warp, sum_over, warp_sum};
use crate::kernels::common::unroll::unroll;
use crate::simt::{self, F4, GSliceMut, WARP_SIZE, math};

/// This warp's (node, head) as a flat index, or `None` past the last.
#[inline(always)]
fn this_head(nodes: u32, heads: u32) -> Option<usize> {
    let w = global_warp();
    (w < nodes as u64 * heads as u64).then_some(w as usize)
}

kernel! {
    /// Normalises each node's heads: `norm = ‖h‖`, `inv = 1 / max(‖h‖, eps)`, `q = β·hn` and,
    /// where asked, `hn = h·inv`; loads of one feature (any `F`).
    pub kernel AGNN_NORMALIZE = fn agnn_normalize(p: &AgnnNormalizeParams) {
        normalize::<false>(p)
    }
}

kernel! {
    /// [`AGNN_NORMALIZE`] with loads and stores of four features (`F % 4 == 0`).
    pub kernel AGNN_NORMALIZE_W4 = fn agnn_normalize_w4(p: &AgnnNormalizeParams) {
        normalize::<true>(p)
    }
}

/// The normalisation over the rows of [`NodeLanes::new`] (at most [`AGNN_LANES`] lanes a row) for
/// `F` (whose width the host matched with `WIDE`): each lane's squares in feature order
/// ([`dot_vector`]), a butterfly over the row's group, then the row read again (from L1, mostly)
/// for `hn` and `q`.
#[inline(always)]
fn normalize<const WIDE: bool>(p: &AgnnNormalizeParams) {
    const U: usize = ROWS_IN_FLIGHT;
    let feat = p.feat as usize;
    let layout = NodeLanes::new(feat, AGNN_LANES);
    let total = p.nodes as usize * p.heads as usize;
    let Some(LaneRows { rows, valid, member }) = LaneRows::of_warp(layout, total) else { return };
    let beta = p.beta.load(0);
    let width = if WIDE { 4 } else { 1 };
    let vectors = feat / width;
    let base: [usize; U] = core::array::from_fn(|u| rows[u] * feat);
    let mut sum_sq = [0.0f32; U];
    let mut v = member;
    while v < vectors {
        let mut xs = [F4::default(); U];
        unroll!(U, |u| {
            if valid[u] {
                xs[u] = load_vector::<WIDE>(p.h, base[u] + v * width);
            }
        });
        unroll!(U, |u| {
            sum_sq[u] += dot_vector::<WIDE>(xs[u], xs[u]);
        });
        v += layout.lanes;
    }
    let norm: [f32; U] = core::array::from_fn(|u| math::sqrt(sum_over(sum_sq[u], layout.lanes as u32)));
    let inv: [f32; U] = core::array::from_fn(|u| 1.0 / norm[u].max(p.eps));
    let write_hn = !p.hn.is_empty();
    let mut v = member;
    while v < vectors {
        let mut xs = [F4::default(); U];
        unroll!(U, |u| {
            if valid[u] {
                xs[u] = load_vector::<WIDE>(p.h, base[u] + v * width);
            }
        });
        unroll!(U, |u| {
            if valid[u] {
                let at = base[u] + v * width;
                let hn = F4(xs[u].0.map(|x| x * inv[u]));
                if write_hn {
                    store_vector::<WIDE>(p.hn, at, hn);
                }
                store_vector::<WIDE>(p.q, at, F4(hn.0.map(|x| beta * x)));
            }
        });
        v += layout.lanes;
    }
    unroll!(U, |u| {
        if member == 0 && valid[u] {
            p.norm.store(rows[u], norm[u]);
            p.inv.store(rows[u], inv[u]);
        }
    });
}

/// Stores the vector `x` of [`load_vector`] at features `[at, at + width)` of `y`.
#[inline(always)]
fn store_vector<const WIDE: bool>(y: GSliceMut<f32>, at: usize, x: F4) {
    if WIDE {
        y.cast::<F4>().store(at / 4, x);
    } else {
        y.store(at, x.0[0]);
    }
}

kernel! {
    /// `dh = dv + (∂hn/∂h)ᵀ (β·dq + dk)`, and dβ's share `hn·dq` per node and head.
    pub kernel AGNN_NORMALIZE_BACKWARD = fn agnn_normalize_backward(p: &AgnnNormalizeBackwardParams) {
        let Some(nh) = this_head(p.nodes, p.heads) else { return };
        let beta = p.beta.load(0);
        let feat = p.feat as usize;
        let base = nh * feat;
        let lane = simt::lane_id() as usize;
        let norm = p.norm.load(nh);
        let clamped = norm < p.eps;
        // `hn` as the forward's normalisation makes it, bit for bit.
        let inv = 1.0 / norm.max(p.eps);
        let (mut dot_q, mut dot_k) = (0.0f32, 0.0f32);
        let mut f = lane;
        while f < feat {
            let hn = p.h.load(base + f) * inv;
            dot_q += hn * p.dq.load(base + f);
            dot_k += hn * p.dk.load(base + f);
            f += WARP_SIZE as usize;
        }
        let (dot_q, dot_k) = (warp_sum(dot_q), warp_sum(dot_k));
        let dot = beta * dot_q + dot_k;
        let mut f = lane;
        while f < feat {
            let g = beta * p.dq.load(base + f) + p.dk.load(base + f);
            let through_norm = if clamped { g * inv } else { (g - p.h.load(base + f) * inv * dot) * inv };
            p.dh.store(base + f, p.dv.load(base + f) + through_norm);
            f += WARP_SIZE as usize;
        }
        if lane == 0 {
            p.d_beta_shares.store(nh, dot_q);
        }
    }
}
