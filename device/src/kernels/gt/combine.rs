//! Combine steps of split rows: merge the partial online-softmax states of a row's chunks
//! (forward), or sum a row's partial gradients (backward). In chunk order: deterministic.
//!
//! # Grid mapping
//! One warp per split row; lanes stride over the row's `H·F` features (scalar).
//!
//! # Numerics
//! Forward: `out = Σ_u acc_u·2^(m_u − M) / Σ_u l_u·2^(m_u − M)` with `M = max_u m_u`, and
//! `lse = (M + log2 Σ …)·ln 2`. Backward: `out = factor·Σ_u partial_u`.

use crate::abi::GtCombineParams;
use crate::kernel;
use crate::kernels::common::softmax::{log_sum_exp, rescale_factor};
use crate::simt::{self, WARP_SIZE, math};

/// The row of this warp and the range of its partials, or `None` past the last row.
#[inline(always)]
fn this_row(p: &GtCombineParams) -> Option<(u32, usize, usize)> {
    let warps = simt::block_dim().x / WARP_SIZE;
    let r = simt::block_idx().x * warps + simt::warp_id();
    if r >= p.num_rows {
        return None;
    }
    let row = p.rows.load(r as usize);
    Some((row, p.first_unit.load(r as usize) as usize, p.first_unit.load(r as usize + 1) as usize))
}

kernel! {
    /// Merges the forward partials of each split row into `out` and `lse`.
    pub kernel GT_FWD_COMBINE = fn gt_fwd_combine(p: &GtCombineParams) {
        let Some((row, first, last)) = this_row(p) else { return };
        let (heads, feat) = (p.heads as usize, p.feat as usize);
        let mut x = simt::lane_id() as usize;
        while x < heads * feat {
            let head = x / feat;
            let ml = |u: usize, i: usize| p.partial_ml.load(2 * (u * heads + head) + i);
            let mut m = f32::NEG_INFINITY;
            for u in first..last {
                m = m.max(ml(u, 0));
            }
            let (mut l, mut acc) = (0.0f32, 0.0f32);
            for u in first..last {
                let r = rescale_factor(ml(u, 0), m);
                l += ml(u, 1) * r;
                acc += p.partial_acc.load(u * heads * feat + x) * r;
            }
            let inv = if l > 0.0 { math::rcp(l) } else { 0.0 };
            p.out.store(row as usize * heads * feat + x, acc * inv);
            if x.is_multiple_of(feat) {
                p.lse.store(row as usize * heads + head, log_sum_exp(m, l));
            }
            x += WARP_SIZE as usize;
        }
    }
}

kernel! {
    /// Sums the backward partials of each split row (or column) into `out`, times `factor`.
    pub kernel GT_SUM_COMBINE = fn gt_sum_combine(p: &GtCombineParams) {
        let Some((row, first, last)) = this_row(p) else { return };
        let width = p.heads as usize * p.feat as usize;
        let mut x = simt::lane_id() as usize;
        while x < width {
            let mut sum = 0.0f32;
            for u in first..last {
                sum += p.partial_acc.load(u * width + x);
            }
            p.out.store(row as usize * width + x, sum * p.factor);
            x += WARP_SIZE as usize;
        }
    }
}
