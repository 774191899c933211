//! Sums and counts of CSR row segments, computed cooperatively by the threads of a block.
//!
//! # Grid mapping
//! Block `b` owns the values `[b·tile, (b+1)·tile)`; thread `t` takes values `t, t + block.x, …`
//! of that tile, so each warp sees 32 consecutive values per step. `tile` is a multiple of
//! `block.x`, and `block.x` of 32.
//!
//! # Phases
//! 1. Thread 0 finds the first segment of the tile (binary search) and publishes it through
//!    shared memory; all threads zero the block's accumulators. Barrier.
//! 2. Per step, each warp reduces its 32 values by segment: when all 32 share one segment
//!    (`warp::all`), one butterfly sum; otherwise a segmented scan with `shfl_up` whose segment
//!    tails (`shfl_down`, `ballot`) add into shared accumulators with shared atomics. `redux.sync`
//!    counts the values seen. Barrier.
//! 3. The block flushes its accumulators to global memory with global atomics (segments may span
//!    tiles).
//!
//! # Shared memory
//! `[cap] f32` sums, `[cap] u32` counts, `[2] u32` (first segment, values seen), with
//! `cap = (shared bytes − 8) / 8`; segments of the tile past `cap` go straight to global atomics.
//!
//! # Numerics
//! f32 atomics: the order of additions across blocks varies on the GPU, so sums agree with a
//! sequential sum to rounding, not bit for bit. Counts are exact.

use crate::abi::SegmentSumParams;
use crate::kernel;
use crate::kernels::common::reduce::warp_sum;
use crate::simt::{self, FULL_MASK, WARP_SIZE, warp};

/// Marks a lane that holds no value.
const NO_SEGMENT: u32 = u32::MAX;

/// The segment holding value `e`: the last `s` with `offsets[s] <= e` (skipping empty segments).
#[inline(always)]
fn segment_of(p: &SegmentSumParams, e: u64) -> u32 {
    let (mut lo, mut hi) = (0u32, p.num_segments);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if p.offsets.load(mid as usize) <= e {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

kernel! {
    /// Adds each segment's values into `p.sums[segment]` and their number into `p.counts`.
    pub kernel SEGMENT_SUM = fn segment_sum(p: &SegmentSumParams) {
        let smem = simt::dynamic_shared();
        let cap = (smem.len_bytes() - 8) / 8;
        let acc_sum = smem.slice::<f32>(0, cap);
        let acc_count = smem.slice::<u32>(4 * cap, cap);
        let header = smem.slice::<u32>(8 * cap, 2);

        let t = simt::thread_idx().x;
        let threads = simt::block_dim().x;
        let lane = simt::lane_id();
        let nnz = p.values.len() as u64;
        let tile_start = simt::block_idx().x as u64 * p.tile as u64;

        // Phase 1: the tile's first segment, zeroed accumulators.
        if t == 0 {
            header.store(0, segment_of(p, tile_start.min(nnz.saturating_sub(1))));
            header.store(1, 0);
        }
        let mut i = t as usize;
        while i < cap {
            acc_sum.store(i, 0.0);
            acc_count.store(i, 0);
            i += threads as usize;
        }
        simt::sync_threads();
        let first = header.load(0);

        // Phase 2: warp-level segmented reduction into shared accumulators.
        let mut step = 0;
        while step < p.tile {
            let e = tile_start + (step + t) as u64;
            let valid = e < nnz;
            let seg = if valid { segment_of(p, e) } else { NO_SEGMENT };
            let mut value = if valid { p.values.load(e as usize) } else { 0.0 };
            let seen = warp::reduce_add_u32(FULL_MASK, valid as u32);
            if lane == 0 && seen > 0 {
                header.atomic_add(1, seen);
            }
            let lane0_seg = warp::shfl_idx(FULL_MASK, seg, 0);
            if warp::all(FULL_MASK, valid && seg == lane0_seg) {
                let total = warp_sum(value);
                if lane == 0 {
                    accumulate(p, acc_sum, acc_count, cap, first, seg, total, WARP_SIZE);
                }
            } else if warp::any(FULL_MASK, valid) {
                let mut count = valid as u32;
                let mut delta = 1;
                while delta < WARP_SIZE {
                    let up_value = warp::shfl_up(FULL_MASK, value, delta);
                    let up_count = warp::shfl_up(FULL_MASK, count, delta);
                    let up_seg = warp::shfl_up(FULL_MASK, seg, delta);
                    if lane >= delta && up_seg == seg {
                        value += up_value;
                        count += up_count;
                    }
                    delta *= 2;
                }
                let next_seg = warp::shfl_down(FULL_MASK, seg, 1);
                let is_tail = valid && (lane == WARP_SIZE - 1 || next_seg != seg);
                let tails = warp::ballot(FULL_MASK, is_tail);
                if tails & (1 << lane) != 0 {
                    accumulate(p, acc_sum, acc_count, cap, first, seg, value, count);
                }
            }
            step += threads;
        }
        simt::sync_threads();

        // Phase 3: flush to global memory.
        let mut i = t as usize;
        while i < cap {
            let count = acc_count.load(i);
            if count > 0 {
                let seg = first as usize + i;
                p.sums.atomic_add(seg, acc_sum.load(i));
                p.counts.atomic_add(seg, count);
            }
            i += threads as usize;
        }
        if t == 0 {
            p.processed.atomic_add(0, header.load(1));
        }
    }
}

/// Adds a run's `sum` and `count` for segment `seg` into the block's accumulator, or straight into
/// global memory when the segment lies past the accumulators.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn accumulate(
    p: &SegmentSumParams,
    acc_sum: simt::SharedSlice<f32>,
    acc_count: simt::SharedSlice<u32>,
    cap: usize,
    first: u32,
    seg: u32,
    sum: f32,
    count: u32,
) {
    let slot = (seg - first) as usize;
    if slot < cap {
        acc_sum.atomic_add(slot, sum);
        acc_count.atomic_add(slot, count);
    } else {
        p.sums.atomic_add(seg as usize, sum);
        p.counts.atomic_add(seg as usize, count);
    }
}
