//! Per-head L2 normalisation `hn = h / max(‖h‖, eps)` (as `torch.nn.functional.normalize`) and
//! its backward.
//!
//! # Grid mapping
//! One warp per (node, head): warp `w` of the grid takes node `w / H`, head `w % H`; lanes stride
//! over the head's `F` features. `block.x` a multiple of 32.
//!
//! # Numerics
//! f32; the sums of squares and dot products are butterfly warp sums (the same bits in every
//! lane). Backward: with `n = ‖h‖ ≥ eps`, `dh = dv + (g − hn·(hn·g)) / n` where
//! `g = β·(dq + dk)` (the attention's query and key gradients come unscaled); where the clamp is
//! active the norm is the constant eps, so `dh = dv + g / eps`. dβ's share of a node and head is
//! `hn·dq`, in the same lane order as the other sums.

use crate::abi::{AgnnNormalizeBackwardParams, AgnnNormalizeParams};
use crate::kernel;
use crate::kernels::common::reduce::{global_warp, warp_sum};
use crate::simt::{self, WARP_SIZE, math};

/// This warp's (node, head) as a flat index, or `None` past the last.
#[inline(always)]
fn this_head(nodes: u32, heads: u32) -> Option<usize> {
    let w = global_warp();
    (w < nodes as u64 * heads as u64).then_some(w as usize)
}

kernel! {
    /// Normalises each node's heads: `hn = h / max(‖h‖, eps)`, `norm = ‖h‖`.
    pub kernel AGNN_NORMALIZE = fn agnn_normalize(p: &AgnnNormalizeParams) {
        let Some(nh) = this_head(p.nodes, p.heads) else { return };
        let feat = p.feat as usize;
        let base = nh * feat;
        let lane = simt::lane_id() as usize;
        let mut sum_sq = 0.0f32;
        let mut f = lane;
        while f < feat {
            let x = p.h.load(base + f);
            sum_sq += x * x;
            f += WARP_SIZE as usize;
        }
        let norm = math::sqrt(warp_sum(sum_sq));
        let inv = 1.0 / norm.max(p.eps);
        let mut f = lane;
        while f < feat {
            p.hn.store(base + f, p.h.load(base + f) * inv);
            f += WARP_SIZE as usize;
        }
        if lane == 0 {
            p.norm.store(nh, norm);
        }
    }
}

kernel! {
    /// `dh = dv + (∂hn/∂h)ᵀ β(dq + dk)`, and `d_beta = hn·dq` per node and head.
    pub kernel AGNN_NORMALIZE_BACKWARD = fn agnn_normalize_backward(p: &AgnnNormalizeBackwardParams) {
        let Some(nh) = this_head(p.nodes, p.heads) else { return };
        let feat = p.feat as usize;
        let base = nh * feat;
        let lane = simt::lane_id() as usize;
        let norm = p.norm.load(nh);
        let clamped = norm < p.eps;
        let (mut dot_q, mut dot_k) = (0.0f32, 0.0f32);
        let mut f = lane;
        while f < feat {
            let hn = p.hn.load(base + f);
            dot_q += hn * p.dq.load(base + f);
            dot_k += hn * p.dk.load(base + f);
            f += WARP_SIZE as usize;
        }
        let (dot_q, dot_k) = (warp_sum(dot_q), warp_sum(dot_k));
        let dot = p.beta * (dot_q + dot_k);
        let inv = 1.0 / norm.max(p.eps);
        let mut f = lane;
        while f < feat {
            let g = p.beta * (p.dq.load(base + f) + p.dk.load(base + f));
            let through_norm = if clamped { g * inv } else { (g - p.hn.load(base + f) * dot) * inv };
            p.dh.store(base + f, p.dv.load(base + f) + through_norm);
            f += WARP_SIZE as usize;
        }
        if lane == 0 {
            p.d_beta.store(nh, dot_q);
        }
    }
}
