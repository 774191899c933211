//! The sum of an `f32` array into one `f32`, on the device and deterministic: [`SUM_PARTIALS`]
//! (each block sums a fixed range of the terms) and then [`SUM_FINISH`] (one block sums the
//! blocks' partials). AGNN's β gradient is its one user: the sum of per-(node, head) shares,
//! which the host never reads back, so the backward runs inside a captured CUDA graph.
//!
//! # Grid mapping
//! [`SUM_PARTIALS`]: block `b` takes the terms `[b·per_block, (b+1)·per_block)`, cut at `n`;
//! thread `t` of it the terms `t, t + blockDim, …` of that range (coalesced). [`SUM_FINISH`]: one
//! block; thread `t` takes the partials `t, t + blockDim, …`. Both: `blockDim.x` a power of two,
//! with `blockDim.x · 8` bytes of dynamic shared memory; [`sum_shape`] is the launch shape.
//!
//! # Numerics
//! f64 throughout, rounded to `f32` once at the end: each thread adds its terms in order, then the
//! block's threads are summed as a tree in shared memory (thread `t` adds `t + s` for
//! `s = blockDim/2, blockDim/4, …, 1`), and the partials the same way in one block. The order
//! depends only on `n` (the launch shape is a function of `n` alone) and there are no atomics, so
//! the bits are the same on every run, on the GPU and on the emulator (IEEE additions only). The
//! error is that of a few roundings of `f64`, far below one of the result's `f32` ulps for any
//! length a `u32` index allows.

use crate::abi::{SumFinishParams, SumPartialsParams};
use crate::kernel;
use crate::simt;

/// Threads per block of both kernels.
pub const SUM_BLOCK: u32 = 256;

/// Terms a block of [`SUM_PARTIALS`] takes, at most, until [`SUM_MAX_BLOCKS`] blocks are reached.
pub const SUM_TERMS_PER_BLOCK: usize = 4096;

/// Most blocks of [`SUM_PARTIALS`] (what [`SUM_FINISH`]'s one block sums).
pub const SUM_MAX_BLOCKS: usize = 1024;

/// Bytes of dynamic shared memory each kernel's block needs: one `f64` per thread.
pub const SUM_SHARED_BYTES: u32 = SUM_BLOCK * 8;

/// The launch shape of [`SUM_PARTIALS`] for `n` terms: `(blocks, per_block)`, a function of `n`
/// alone (so the order of the additions is too). At least one block, whose range may be empty.
pub const fn sum_shape(n: usize) -> (usize, u64) {
    let blocks = n.div_ceil(SUM_TERMS_PER_BLOCK);
    let blocks = if blocks == 0 {
        1
    } else if blocks > SUM_MAX_BLOCKS {
        SUM_MAX_BLOCKS
    } else {
        blocks
    };
    (blocks, n.div_ceil(blocks) as u64)
}

/// The sum of `term(i)` for `i < count` over this block's threads, as the module says; the total
/// is in thread 0 (the others return a partial sum). Every thread of the block must call it.
#[inline(always)]
fn block_sum(count: usize, term: impl Fn(usize) -> f64) -> f64 {
    let threads = simt::block_dim().x as usize;
    let t = simt::thread_idx().x as usize;
    let mut sum = 0.0f64;
    let mut i = t;
    while i < count {
        sum += term(i);
        i += threads;
    }
    let shared = simt::dynamic_shared().slice::<u64>(0, threads);
    shared.store(t, sum.to_bits());
    let mut stride = threads / 2;
    while stride > 0 {
        simt::sync_threads();
        if t < stride {
            sum += f64::from_bits(shared.load(t + stride));
            shared.store(t, sum.to_bits());
        }
        stride /= 2;
    }
    sum
}

kernel! {
    /// `partial[b] = Σ x[b·per_block .. (b+1)·per_block]` (cut at `n`), in f64, as its bits.
    pub kernel SUM_PARTIALS = fn sum_partials(p: &SumPartialsParams) {
        let b = simt::block_idx().x as usize;
        let n = p.x.len() as u64;
        let start = (b as u64 * p.per_block).min(n);
        let end = (start + p.per_block).min(n);
        let sum = block_sum((end - start) as usize, |i| p.x.load(start as usize + i) as f64);
        if simt::thread_idx().x == 0 {
            p.partial.store(b, sum.to_bits());
        }
    }
}

kernel! {
    /// `out[0] = Σ_b partial[b]`, in f64, rounded to `f32`.
    pub kernel SUM_FINISH = fn sum_finish(p: &SumFinishParams) {
        let sum = block_sum(p.partial.len(), |i| f64::from_bits(p.partial.load(i)));
        if simt::thread_idx().x == 0 {
            p.out.store(0, sum as f32);
        }
    }
}
