//! Pseudo-random fills made on the device, so benchmarks need not generate and upload gigabytes.
//!
//! # Grid mapping
//! A grid-stride loop: thread `t` of the grid fills elements `t, t + threads, …`.
//!
//! # Numerics
//! Element `i` is `low + (high − low)·u` with `u = hash(seed, i) / 2^24` (24 random bits), from
//! the `splitmix64` finaliser: the same on the GPU and the emulator, and the host can recompute
//! any element with [`uniform_at`].

use crate::abi::FillUniformParams;
use crate::kernel;
use crate::simt;

/// The `splitmix64` finaliser of `seed + i`.
#[inline(always)]
pub fn mix(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Element `i` of [`fill_uniform`] with `seed`, `low` and `high`.
#[inline(always)]
pub fn uniform_at(seed: u64, i: u64, low: f32, high: f32) -> f32 {
    let u = (mix(seed, i) >> 40) as f32 * (1.0 / (1u64 << 24) as f32);
    low + (high - low) * u
}

kernel! {
    /// Fills `p.out` with pseudo-random values uniform in `[p.low, p.high)`.
    pub kernel FILL_UNIFORM = fn fill_uniform(p: &FillUniformParams) {
        let threads = simt::grid_dim().x as usize * simt::block_dim().x as usize;
        let mut i = simt::block_idx().x as usize * simt::block_dim().x as usize + simt::thread_idx().x as usize;
        while i < p.out.len() {
            p.out.store(i, uniform_at(p.seed, i as u64, p.low, p.high));
            i += threads;
        }
    }
}
