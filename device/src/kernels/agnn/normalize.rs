//! Per-head L2 normalisation `hn = h / max(‖h‖, eps)` (as `torch.nn.functional.normalize`), the
//! inverse norms, the attention's queries `q = β·hn` (β read from memory), and the backward of
//! both (which makes `hn` from `h` again, with the same arithmetic) for the baselines; the fused
//! column pass computes the same backward itself (`CosineScore::key_into_value`).
//!
//! # Grid mapping
//! One warp per (node, head): warp `w` of the grid takes node `w / H`, head `w % H`; lanes stride
//! over the head's `F` features. `block.x` a multiple of 32.
//!
//! # Numerics
//! f32; the sums of squares and dot products are butterfly warp sums (the same bits in every
//! lane). Backward: with `n = ‖h‖ ≥ eps`, `dh = dv + (g − hn·(hn·g)) / n` where
//! `g = β·dq + dk` (the attention ran on `q = β·hn`, `k = hn` with scale 1, so its query gradient
//! `Σ_j ds·hn_j` lacks the factor β and its key gradient has it); where the clamp is active the
//! norm is the constant eps, so `dh = dv + g / eps`. dβ's share of a node and head is `hn·dq`, in
//! the same lane order as the other sums. A non-finite β makes `q`, and so the scores, the
//! outputs and the gradients, NaN or infinite: arithmetic only, no index depends on it.

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
    /// Normalises each node's heads: `norm = ‖h‖`, `inv = 1 / max(‖h‖, eps)`, `q = β·hn` and,
    /// where asked, `hn = h·inv`.
    pub kernel AGNN_NORMALIZE = fn agnn_normalize(p: &AgnnNormalizeParams) {
        let Some(nh) = this_head(p.nodes, p.heads) else { return };
        let beta = p.beta.load(0);
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
        let write_hn = !p.hn.is_empty();
        let mut f = lane;
        while f < feat {
            let hn = p.h.load(base + f) * inv;
            if write_hn {
                p.hn.store(base + f, hn);
            }
            p.q.store(base + f, beta * hn);
            f += WARP_SIZE as usize;
        }
        if lane == 0 {
            p.norm.store(nh, norm);
            p.inv.store(nh, inv);
        }
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
