//! The GPU side of the seam: each primitive of [`super`] as the PTX instruction it stands for.
//!
//! Only compiled for `nvptx64`. Every function is `#[inline(always)]`: after inlining, a kernel's
//! PTX holds the bare instructions. Global-memory accesses go through inline PTX because a pointer
//! read out of a by-value parameter struct is generic to LLVM, and a generic `ld` costs an address
//! space check that `ld.global` does not.

use core::arch::asm;
use core::arch::nvptx;

use super::word::{F4, Word};
use super::{Dim3, ShuffleMode};

#[inline(always)]
pub fn thread_idx() -> Dim3 {
    // SAFETY: reading special registers has no side effects.
    unsafe { Dim3::new(nvptx::_thread_idx_x() as u32, nvptx::_thread_idx_y() as u32, nvptx::_thread_idx_z() as u32) }
}

#[inline(always)]
pub fn block_idx() -> Dim3 {
    // SAFETY: reading special registers has no side effects.
    unsafe { Dim3::new(nvptx::_block_idx_x() as u32, nvptx::_block_idx_y() as u32, nvptx::_block_idx_z() as u32) }
}

#[inline(always)]
pub fn block_dim() -> Dim3 {
    // SAFETY: reading special registers has no side effects.
    unsafe { Dim3::new(nvptx::_block_dim_x() as u32, nvptx::_block_dim_y() as u32, nvptx::_block_dim_z() as u32) }
}

#[inline(always)]
pub fn grid_dim() -> Dim3 {
    // SAFETY: reading special registers has no side effects.
    unsafe { Dim3::new(nvptx::_grid_dim_x() as u32, nvptx::_grid_dim_y() as u32, nvptx::_grid_dim_z() as u32) }
}

#[inline(always)]
pub fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

#[inline(always)]
pub fn sync_threads() {
    // SAFETY: `bar.sync 0`; the kernels' barrier discipline is what the emulator checks.
    unsafe { nvptx::_syncthreads() }
}

#[inline(always)]
pub fn sync_warp(mask: u32) {
    // SAFETY: `bar.warp.sync` only synchronises the lanes of `mask`.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) };
}

#[inline(always)]
pub fn fence_device() {
    // SAFETY: a memory fence; it reads and writes nothing itself (no `nomem`: the compiler keeps
    // memory accesses on their side of it).
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) };
}

#[inline(always)]
pub fn shuffle(mode: ShuffleMode, mask: u32, value: u32, operand: u32) -> u32 {
    let r: u32;
    // SAFETY: `shfl.sync` exchanges registers among the lanes of `mask`. The third operand is the
    // clamp: 0x1f keeps `down`, `bfly` and `idx` inside the warp, 0 does the same for `up`.
    unsafe {
        match mode {
            ShuffleMode::Xor => {
                asm!("shfl.sync.bfly.b32 {r}, {v}, {b}, 0x1f, {m};", r = out(reg32) r, v = in(reg32) value, b = in(reg32) operand, m = in(reg32) mask, options(nostack))
            }
            ShuffleMode::Down => {
                asm!("shfl.sync.down.b32 {r}, {v}, {b}, 0x1f, {m};", r = out(reg32) r, v = in(reg32) value, b = in(reg32) operand, m = in(reg32) mask, options(nostack))
            }
            ShuffleMode::Up => {
                asm!("shfl.sync.up.b32 {r}, {v}, {b}, 0, {m};", r = out(reg32) r, v = in(reg32) value, b = in(reg32) operand, m = in(reg32) mask, options(nostack))
            }
            ShuffleMode::Idx => {
                asm!("shfl.sync.idx.b32 {r}, {v}, {b}, 0x1f, {m};", r = out(reg32) r, v = in(reg32) value, b = in(reg32) operand, m = in(reg32) mask, options(nostack))
            }
        }
    }
    r
}

#[inline(always)]
pub fn vote_ballot(mask: u32, predicate: bool) -> u32 {
    let r: u32;
    // SAFETY: `vote.sync.ballot` over the lanes of `mask`.
    unsafe {
        asm!(
            "{{ .reg .pred %p; setp.ne.u32 %p, {x}, 0; vote.sync.ballot.b32 {r}, %p, {m}; }}",
            r = out(reg32) r, x = in(reg32) predicate as u32, m = in(reg32) mask, options(nostack)
        )
    };
    r
}

#[inline(always)]
pub fn reduce_add_u32(mask: u32, value: u32) -> u32 {
    let r: u32;
    // SAFETY: `redux.sync` (sm_80+) over the lanes of `mask`.
    unsafe {
        asm!("redux.sync.add.u32 {r}, {v}, {m};", r = out(reg32) r, v = in(reg32) value, m = in(reg32) mask, options(nostack))
    };
    r
}

#[inline(always)]
pub fn reduce_max_u32(mask: u32, value: u32) -> u32 {
    let r: u32;
    // SAFETY: `redux.sync` (sm_80+) over the lanes of `mask`.
    unsafe {
        asm!("redux.sync.max.u32 {r}, {v}, {m};", r = out(reg32) r, v = in(reg32) value, m = in(reg32) mask, options(nostack))
    };
    r
}

#[inline(always)]
pub fn reduce_min_u32(mask: u32, value: u32) -> u32 {
    let r: u32;
    // SAFETY: `redux.sync` (sm_80+) over the lanes of `mask`.
    unsafe {
        asm!("redux.sync.min.u32 {r}, {v}, {m};", r = out(reg32) r, v = in(reg32) value, m = in(reg32) mask, options(nostack))
    };
    r
}

/// The dynamic shared memory of the launch: its base and its size in bytes.
#[inline(always)]
pub fn dynamic_shared() -> (*mut u8, usize) {
    let size: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {r}, %dynamic_smem_size;", r = out(reg32) size, options(pure, nomem, nostack)) };
    // Typed as `F4` so the module declares the region 16-byte aligned.
    let base = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<F4>() as *mut u8;
    (base, size as usize)
}

#[inline(always)]
pub fn exp2(x: f32) -> f32 {
    let r: f32;
    // SAFETY: arithmetic only.
    unsafe { asm!("ex2.approx.ftz.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack)) };
    r
}

#[inline(always)]
pub fn log2(x: f32) -> f32 {
    let r: f32;
    // SAFETY: arithmetic only.
    unsafe { asm!("lg2.approx.ftz.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack)) };
    r
}

#[inline(always)]
pub fn rcp(x: f32) -> f32 {
    let r: f32;
    // SAFETY: arithmetic only.
    unsafe { asm!("rcp.approx.ftz.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack)) };
    r
}

#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    let r: f32;
    // SAFETY: arithmetic only.
    unsafe { asm!("sqrt.rn.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack)) };
    r
}

#[inline(always)]
pub fn rsqrt(x: f32) -> f32 {
    let r: f32;
    // SAFETY: arithmetic only.
    unsafe { asm!("rsqrt.approx.ftz.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack)) };
    r
}

#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    let r: f32;
    // SAFETY: arithmetic only.
    unsafe {
        asm!("fma.rn.f32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    r
}

#[inline(always)]
pub fn global_slice_load<T: Word>(ptr: *const T, _len: usize, index: usize) -> T {
    // SAFETY: the launch contract puts `index` in bounds of a live, read-only allocation.
    unsafe { T::gpu_load_global_nc(ptr.add(index)) }
}

#[inline(always)]
pub fn global_slice_load_coherent<T: Word>(ptr: *mut T, _len: usize, index: usize) -> T {
    // SAFETY: the launch contract puts `index` in bounds of a live allocation.
    unsafe { T::gpu_load_global(ptr.add(index)) }
}

#[inline(always)]
pub fn global_slice_store<T: Word>(ptr: *mut T, _len: usize, index: usize, value: T) {
    // SAFETY: the launch contract puts `index` in bounds of a live, writable allocation.
    unsafe { T::gpu_store_global(ptr.add(index), value) }
}

/// Alignment is the host's promise on the GPU (a misaligned access faults there).
#[inline(always)]
pub fn check_alignment(_addr: usize, _align: usize) {}

/// Shared regions are sized by the host's launch on the GPU.
#[inline(always)]
pub fn check_shared_region(_offset: usize, _bytes: usize, _align: usize, _total: usize) {}

#[inline(always)]
pub fn global_atomic_add_u32(ptr: *mut u32, _len: usize, index: usize, value: u32) -> u32 {
    let r: u32;
    // SAFETY: the launch contract puts `index` in bounds of a live allocation.
    unsafe {
        asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; atom.global.add.u32 {r}, [%g], {v}; }}", r = out(reg32) r, p = in(reg64) ptr.add(index), v = in(reg32) value, options(nostack))
    };
    r
}

#[inline(always)]
pub fn global_atomic_max_u32(ptr: *mut u32, _len: usize, index: usize, value: u32) -> u32 {
    let r: u32;
    // SAFETY: the launch contract puts `index` in bounds of a live allocation.
    unsafe {
        asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; atom.global.max.u32 {r}, [%g], {v}; }}", r = out(reg32) r, p = in(reg64) ptr.add(index), v = in(reg32) value, options(nostack))
    };
    r
}

#[inline(always)]
pub fn global_atomic_add_f32(ptr: *mut f32, _len: usize, index: usize, value: f32) -> f32 {
    let r: f32;
    // SAFETY: the launch contract puts `index` in bounds of a live allocation.
    unsafe {
        asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; atom.global.add.f32 {r}, [%g], {v}; }}", r = out(reg32) r, p = in(reg64) ptr.add(index), v = in(reg32) value, options(nostack))
    };
    r
}

#[inline(always)]
pub fn shared_slice_load<T: Word>(base: *mut T, _len: usize, index: usize) -> T {
    // SAFETY: the launch sized the dynamic shared memory for every region the kernel carves, and
    // the kernel keeps `index` inside its region. LLVM sees the shared address space through
    // the intrinsic the base came from and emits `ld.shared`.
    unsafe { base.add(index).read() }
}

#[inline(always)]
pub fn shared_slice_store<T: Word>(base: *mut T, _len: usize, index: usize, value: T) {
    // SAFETY: the launch sized the dynamic shared memory for every region the kernel carves, and
    // the kernel keeps `index` inside its region.
    unsafe { base.add(index).write(value) }
}

#[inline(always)]
pub fn shared_atomic_add_u32(base: *mut u32, _len: usize, index: usize, value: u32) -> u32 {
    let r: u32;
    // SAFETY: the launch sized the dynamic shared memory for every region the kernel carves, and
    // the kernel keeps `index` inside its region; `cvta.to.shared` turns the generic address into
    // the shared window's.
    unsafe {
        asm!(
            "{{ .reg .u64 %s; cvta.to.shared.u64 %s, {p}; atom.shared.add.u32 {r}, [%s], {v}; }}",
            r = out(reg32) r, p = in(reg64) base.add(index), v = in(reg32) value, options(nostack)
        )
    };
    r
}

#[inline(always)]
pub fn shared_atomic_add_f32(base: *mut f32, _len: usize, index: usize, value: f32) -> f32 {
    let r: f32;
    // SAFETY: the launch sized the dynamic shared memory for every region the kernel carves, and
    // the kernel keeps `index` inside its region; `cvta.to.shared` turns the generic address into
    // the shared window's.
    unsafe {
        asm!(
            "{{ .reg .u64 %s; cvta.to.shared.u64 %s, {p}; atom.shared.add.f32 {r}, [%s], {v}; }}",
            r = out(reg32) r, p = in(reg64) base.add(index), v = in(reg32) value, options(nostack)
        )
    };
    r
}

#[inline(always)]
pub fn shared_copy_async<T: Word>(
    dst: *mut T,
    _len: usize,
    index: usize,
    src: *const T,
    _src_len: usize,
    src_index: usize,
    valid: bool,
) {
    // Bytes read from global memory: all of the word, or none (the word is zero-filled).
    let read = if valid { core::mem::size_of::<T>() as u32 } else { 0 };
    // An invalid copy reads nothing; its source operand is then the slice's base, never an address
    // past the slice.
    let from = if valid { src.wrapping_add(src_index) } else { src };
    // SAFETY: the launch sized the dynamic shared memory for every region the kernel carves and
    // the kernel keeps `index` inside its region; a valid copy's source is in bounds of a live
    // global allocation that nothing writes during the launch (the `GSlice` contract), and an
    // invalid one reads no byte. The copy writes shared memory behind the compiler's back until
    // `async_wait_all`, which the caller calls before it reads the word (and, for other threads,
    // before a barrier); the `asm!` blocks are not `nomem`, so the compiler keeps shared accesses
    // on their side of them.
    unsafe {
        let to = dst.add(index);
        match core::mem::size_of::<T>() {
            16 => asm!(
                "{{ .reg .u64 %s, %g; cvta.to.shared.u64 %s, {d}; cvta.to.global.u64 %g, {p}; cp.async.cg.shared.global [%s], [%g], 16, {n}; }}",
                d = in(reg64) to, p = in(reg64) from, n = in(reg32) read, options(nostack)
            ),
            8 => asm!(
                "{{ .reg .u64 %s, %g; cvta.to.shared.u64 %s, {d}; cvta.to.global.u64 %g, {p}; cp.async.ca.shared.global [%s], [%g], 8, {n}; }}",
                d = in(reg64) to, p = in(reg64) from, n = in(reg32) read, options(nostack)
            ),
            _ => asm!(
                "{{ .reg .u64 %s, %g; cvta.to.shared.u64 %s, {d}; cvta.to.global.u64 %g, {p}; cp.async.ca.shared.global [%s], [%g], 4, {n}; }}",
                d = in(reg64) to, p = in(reg64) from, n = in(reg32) read, options(nostack)
            ),
        }
    }
}

#[inline(always)]
pub fn no_unroll() {
    // SAFETY: a directive to the assembler; no instruction, no memory, no register.
    unsafe { asm!(".pragma \"nounroll\";", options(nomem, nostack, preserves_flags)) };
}

#[inline(always)]
pub fn async_wait_all() {
    // SAFETY: waits for the calling thread's own copies; reads and writes nothing else (not
    // `nomem`: the copies' writes become visible here, so no shared access may move above it).
    unsafe { asm!("cp.async.wait_all;", options(nostack)) };
}
