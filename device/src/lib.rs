//! dfgnn's kernels, written once for two machines.
//!
//! Compiled for `nvptx64-nvidia-cuda` (nightly, `-Zbuild-std=core`) this crate becomes the PTX
//! module the host library loads on the GPU (`device/ptx/`, see `device/README.md`). Compiled for
//! the host (stable) the very same kernel source runs under the SIMT emulator in [`simt`], which
//! executes every thread of every block with the GPU's semantics and checks for barrier
//! divergence, deadlock, shared-memory races and out-of-bounds accesses.
//!
//! | module | what it holds |
//! |---|---|
//! | [`simt`] | the one seam between GPU and emulator: ids, barriers, warp operations, shared and global memory, atomics, fast math, the [`kernel!`] macro |
//! | [`abi`] | `#[repr(C)]` launch-parameter structs, shared with the host library |
//! | [`kernels`] | the kernels, one family per file |
//!
//! Architecture invariants: kernels never `cfg` anything (only [`simt`] knows which machine it
//! is on); kernels read sizes only from their parameter struct and [`simt`]; the device side has
//! no allocator and never formats a panic message.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        core_intrinsics
    ),
    allow(internal_features)
)]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod abi;
pub mod kernels;
pub mod simt;

/// On the GPU a panic (only reachable through a bug: an index the kernel did not guard) traps,
/// which the host sees as a launch failure.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing after it runs.
    unsafe { core::arch::nvptx::trap() }
}
