//! Softmax of CSR edge values within each row: one warp per row.
//!
//! # Grid mapping
//! `grid.x · (block.x / 32)` warps; warp `w` of block `b` owns row `b · (block.x / 32) + w`.
//! Lanes stride over the row's edges. `block.x` is a multiple of 32.
//!
//! # Numerics
//! Max-subtracted in f32: `α_e = 2^((s_e − m)·log2 e) / l` with `l = Σ 2^((s_e − m)·log2 e)`;
//! `lse = m + log2(l)·ln 2`. An empty row writes no `out` and `lse = −∞`.

use crate::abi::RowSoftmaxParams;
use crate::kernel;
use crate::kernels::common::reduce::{warp_max, warp_sum_to_lane0};
use crate::simt::{self, FULL_MASK, WARP_SIZE, math, warp};

kernel! {
    /// Per-row softmax of `p.values` into `p.out`, and each row's log-sum-exp into `p.lse`.
    pub kernel ROW_SOFTMAX = fn row_softmax(p: &RowSoftmaxParams) {
        let warps_per_block = simt::block_dim().x / WARP_SIZE;
        let row = simt::block_idx().x * warps_per_block + simt::warp_id();
        if row >= p.num_rows {
            return;
        }
        let lane = simt::lane_id() as u64;
        let start = p.offsets.load(row as usize);
        let end = p.offsets.load(row as usize + 1);

        // Prologue: the row maximum.
        let mut m = f32::NEG_INFINITY;
        let mut e = start + lane;
        while e < end {
            m = m.max(p.values.load(e as usize));
            e += WARP_SIZE as u64;
        }
        let m = warp_max(m);

        // Main loop: the sum of exponentials, reduced to lane 0 and broadcast.
        let mut l = 0.0f32;
        let mut e = start + lane;
        while e < end {
            l += math::exp2((p.values.load(e as usize) - m) * math::LOG2_E);
            e += WARP_SIZE as u64;
        }
        let l = warp::shfl_idx(FULL_MASK, warp_sum_to_lane0(l), 0);

        // Epilogue: normalise. An empty row (l = 0) writes only its lse.
        if lane == 0 {
            let lse = if end > start { m + math::log2(l) * math::LN_2 } else { f32::NEG_INFINITY };
            p.lse.store(row as usize, lse);
        }
        let inv = math::rcp(l);
        let mut e = start + lane;
        while e < end {
            let s = p.values.load(e as usize);
            p.out.store(e as usize, math::exp2((s - m) * math::LOG2_E) * inv);
            e += WARP_SIZE as u64;
        }
    }
}
