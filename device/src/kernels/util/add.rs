//! Element-wise sum of two arrays (GATv2 adds the two parts of a feature gradient).
//!
//! # Grid mapping
//! A grid-stride loop: thread `t` of the grid writes elements `t, t + threads, …`.

use crate::abi::AddParams;
use crate::kernel;
use crate::simt;

kernel! {
    /// `out[i] = a[i] + b[i]`.
    pub kernel ADD = fn add(p: &AddParams) {
        let threads = simt::grid_dim().x as usize * simt::block_dim().x as usize;
        let mut i = simt::block_idx().x as usize * simt::block_dim().x as usize + simt::thread_idx().x as usize;
        while i < p.out.len() {
            p.out.store(i, p.a.load(i) + p.b.load(i));
            i += threads;
        }
    }
}
