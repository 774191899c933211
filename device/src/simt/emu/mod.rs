//! The SIMT emulator: runs a kernel launch on the CPU with the GPU's semantics, and checks it.
//!
//! Every thread of a block is a stackful coroutine ([`corosensei`]) that runs until it reaches a
//! synchronisation point — a block barrier or a warp operation — and then yields to the block's
//! scheduler. The last thread to arrive completes the barrier or the warp operation and runs on;
//! the others are queued again. Blocks run one after another on the calling OS thread, threads
//! within a block in a fixed order, so a launch's result is deterministic.
//!
//! The emulator is also a checker. A launch stops at the first defect and returns an [`EmuError`]
//! naming the kernel, block, thread and address:
//! - barrier divergence (threads at different barriers, or at a barrier some threads can no longer
//!   reach because they exited) and deadlock (no thread can make progress);
//! - shared-memory data races between barriers (an asynchronous copy counts as a write from its
//!   start to its wait) (write/write, read/write by different threads,
//!   see `shadow.rs`) and reads of shared memory no thread of the block wrote;
//! - out-of-bounds global and shared accesses, misaligned vector views;
//! - misused warp operations (masks without the caller, lanes that exited, mismatched calls,
//!   shuffles from lanes outside the mask);
//! - launches the GPU would refuse (more than 1024 threads per block, more shared memory than the
//!   H200's 227 KiB per block).
//!
//! Approximate GPU instructions (`ex2.approx`, `rcp.approx`, …) are exact here.
//!
//! | module | concern |
//! |---|---|
//! | `block` | the block's state, and `with_block`, the one access to it (its `SAFETY` comment is the emulator's whole aliasing argument); thread and block ids |
//! | `scheduler` | per-OS-thread workspace (stacks, shared memory, shadow), the coroutines, the run loop, thread exit and deadlock |
//! | `barrier` | `sync_threads` |
//! | `warp` | shuffles, votes, reductions, `sync_warp` |
//! | `memory` | checked global and shared accesses, atomics, asynchronous copies |
//! | `shadow` | the shared-memory race and initialisation checker |
//! | `error` | what a launch reports |

mod barrier;
mod block;
mod error;
mod memory;
mod scheduler;
mod shadow;
mod warp;

use std::format;
use std::string::ToString;

pub(crate) use barrier::sync_threads;
pub(crate) use block::{block_dim, block_idx, grid_dim, lane_id, thread_idx};
pub use error::{EmuError, EmuErrorKind};
pub(crate) use memory::fence_device;
pub(crate) use memory::{
    async_wait_all, check_alignment, check_shared_region, dynamic_shared, global_atomic_add_f32, global_atomic_add_u32,
    global_atomic_max_u32, global_slice_load, global_slice_load_coherent, global_slice_store, shared_atomic_add_f32,
    shared_atomic_add_u32, shared_copy_async, shared_slice_load, shared_slice_store,
};
pub(crate) use warp::{reduce_add_u32, reduce_max_u32, reduce_min_u32, shuffle, sync_warp, vote_ballot};

pub use super::LaunchConfig;
use super::{Dim3, KernelRef};

/// Largest block the GPU runs.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Largest dynamic shared memory per block on the H200 (227 KiB, after the opt-in).
pub const MAX_SHARED_BYTES: u32 = 227 * 1024;
/// Largest grid: x below 2^31, y and z below 2^16.
pub const MAX_GRID: Dim3 = Dim3::new(i32::MAX as u32, u16::MAX as u32, u16::MAX as u32);

/// A directive to the PTX assembler only (`simt::no_unroll`): nothing to do here.
pub(crate) fn no_unroll() {}

/// Counts from one emulated launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchStats {
    /// Threads run.
    pub threads: u64,
    /// Block barriers completed (counted once per barrier, not per thread).
    pub barriers: u64,
    /// Warp operations completed (once per operation, not per lane).
    pub warp_ops: u64,
}

/// Runs `kernel` over the whole grid of `config` with `params`, one block after another.
///
/// Returns the first defect found (see the module documentation). A kernel that loops forever
/// without reaching a synchronisation point hangs here as it would on the GPU.
///
/// # Safety
/// Every pointer inside `params` must be valid for the length that goes with it (as for a GPU
/// launch, with host memory in place of device memory), and no other code may touch that memory
/// while the launch runs.
pub unsafe fn launch<P: Sync>(
    kernel: &KernelRef<P>,
    config: &LaunchConfig,
    params: &P,
) -> Result<LaunchStats, EmuError> {
    validate(kernel.name, config)?;
    let mut stats = LaunchStats::default();
    let g = config.grid;
    for z in 0..g.z {
        for y in 0..g.y {
            for x in 0..g.x {
                scheduler::run_block(kernel, config, params, Dim3::new(x, y, z), &mut stats)?;
            }
        }
    }
    Ok(stats)
}

fn validate(kernel: &'static str, c: &LaunchConfig) -> Result<(), EmuError> {
    let threads = c.block.volume();
    let reason = if threads == 0 || c.grid.volume() == 0 {
        Some("empty grid or block (the GPU refuses a zero dimension)".to_string())
    } else if threads > MAX_THREADS_PER_BLOCK as u64 || c.block.z > 64 {
        Some(format!("{threads} threads per block (at most {MAX_THREADS_PER_BLOCK}, z at most 64)"))
    } else if c.shared_bytes > MAX_SHARED_BYTES {
        Some(format!("{} bytes of dynamic shared memory (at most {MAX_SHARED_BYTES})", c.shared_bytes))
    } else if c.grid.x > MAX_GRID.x || c.grid.y > MAX_GRID.y || c.grid.z > MAX_GRID.z {
        Some(format!(
            "grid ({}, {}, {}) exceeds ({}, {}, {})",
            c.grid.x, c.grid.y, c.grid.z, MAX_GRID.x, MAX_GRID.y, MAX_GRID.z
        ))
    } else {
        None
    };
    match reason {
        Some(reason) => Err(EmuError {
            kernel,
            block: Dim3::default(),
            thread: Dim3::default(),
            kind: EmuErrorKind::InvalidLaunch { reason },
        }),
        None => Ok(()),
    }
}

// ---- math ---------------------------------------------------------------------------------

pub(crate) fn exp2(x: f32) -> f32 {
    x.exp2()
}

pub(crate) fn log2(x: f32) -> f32 {
    x.log2()
}

pub(crate) fn rcp(x: f32) -> f32 {
    1.0 / x
}

pub(crate) fn sqrt(x: f32) -> f32 {
    x.sqrt()
}

pub(crate) fn rsqrt(x: f32) -> f32 {
    1.0 / x.sqrt()
}

pub(crate) fn fma(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}
