//! Global and shared memory accesses, each checked before it is made.
//!
//! Global memory is host memory that the launch's contract makes valid; an access is checked
//! against its slice's bounds. Shared memory is the block's dynamic shared memory; an access is
//! checked against its region's bounds and fed to the race checker ([`super::shadow`]). Only one
//! emulated thread runs at a time, so an atomic is a plain read-modify-write here.

use core::sync::atomic::{AtomicU32, Ordering};

use super::block::{Block, PendingCopy, fail, or_fail, with_block};
use super::error::EmuErrorKind;
use super::shadow::Accessor;
use crate::simt::WARP_SIZE;
use crate::simt::word::Word;

// ---- global memory ------------------------------------------------------------------------

#[inline]
fn check_global<T>(ptr: *const T, len: usize, index: usize) {
    if index >= len {
        fail(EmuErrorKind::GlobalOutOfBounds { index, len, base: ptr as u64, elem_bytes: core::mem::size_of::<T>() });
    }
}

pub(crate) fn global_slice_load<T: Word>(ptr: *const T, len: usize, index: usize) -> T {
    check_global(ptr, len, index);
    // SAFETY: `index < len` (checked above), and the launch's contract makes the `len` elements
    // at `ptr` valid, aligned and readable for the whole launch.
    unsafe { ptr.add(index).read() }
}

pub(crate) fn global_slice_load_coherent<T: Word>(ptr: *mut T, len: usize, index: usize) -> T {
    global_slice_load(ptr as *const T, len, index)
}

pub(crate) fn global_slice_store<T: Word>(ptr: *mut T, len: usize, index: usize, value: T) {
    check_global(ptr, len, index);
    // SAFETY: `index < len` (checked above), and the launch's contract makes the `len` elements
    // at `ptr` valid, aligned and writable for the whole launch, untouched by other code.
    unsafe { ptr.add(index).write(value) }
}

/// One emulated thread runs at a time, so every write before is already seen by every later read:
/// the fence orders nothing more than the host's own fence does.
pub(crate) fn fence_device() {
    core::sync::atomic::fence(Ordering::SeqCst);
}

pub(crate) fn check_alignment(addr: usize, align: usize) {
    if !addr.is_multiple_of(align) {
        fail(EmuErrorKind::Misaligned { address: addr as u64, align });
    }
}

/// Applies `f` to element `index` of the `u32` slice at `ptr` atomically; returns the old value.
fn global_atomic_rmw(ptr: *mut u32, len: usize, index: usize, f: impl Fn(u32) -> u32) -> u32 {
    use Ordering::Relaxed;
    check_global(ptr, len, index);
    // SAFETY: `index < len` (checked above); the launch's contract makes the element valid,
    // aligned and writable for the whole launch, and the launch's threads, which all run on
    // this OS thread, are the only code touching it meanwhile.
    let cell = unsafe { AtomicU32::from_ptr(ptr.add(index)) };
    let mut old = cell.load(Relaxed);
    loop {
        match cell.compare_exchange_weak(old, f(old), Relaxed, Relaxed) {
            Ok(v) => return v,
            Err(v) => old = v,
        }
    }
}

pub(crate) fn global_atomic_add_u32(ptr: *mut u32, len: usize, index: usize, value: u32) -> u32 {
    global_atomic_rmw(ptr, len, index, |v| v.wrapping_add(value))
}

pub(crate) fn global_atomic_max_u32(ptr: *mut u32, len: usize, index: usize, value: u32) -> u32 {
    global_atomic_rmw(ptr, len, index, |v| v.max(value))
}

pub(crate) fn global_atomic_add_f32(ptr: *mut f32, len: usize, index: usize, value: f32) -> f32 {
    f32::from_bits(global_atomic_rmw(ptr as *mut u32, len, index, |v| (f32::from_bits(v) + value).to_bits()))
}

// ---- shared memory ------------------------------------------------------------------------

/// How a shared access touches its words, for the race checker.
#[derive(Clone, Copy)]
enum Access {
    Read,
    Write,
    Atomic,
}

pub(crate) fn dynamic_shared() -> (*mut u8, usize) {
    with_block(|b| (b.shared, b.shared_bytes))
}

pub(crate) fn check_shared_region(offset: usize, bytes: usize, align: usize, total: usize) {
    if offset.checked_add(bytes).is_none_or(|end| end > total) {
        fail(EmuErrorKind::SharedOutOfBounds { address: offset, bytes, limit: total });
    }
    if !offset.is_multiple_of(align) {
        fail(EmuErrorKind::Misaligned { address: offset as u64, align });
    }
}

impl Block {
    /// Checks the running thread's access of element `index` of the shared region at `base`
    /// (`len` elements) and records it with the race checker; the element's byte offset in the
    /// shared memory.
    #[inline]
    fn check_shared<T>(
        &mut self,
        base: *mut T,
        len: usize,
        index: usize,
        access: Access,
    ) -> Result<usize, EmuErrorKind> {
        let size = core::mem::size_of::<T>();
        let region = base as usize - self.shared as usize;
        if index >= len {
            return Err(EmuErrorKind::SharedOutOfBounds {
                address: region + index.saturating_mul(size),
                bytes: size,
                limit: region + len * size,
            });
        }
        let offset = region + index * size;
        self.record_shared(offset, size, access).map(|()| offset)
    }

    /// Records the running thread's access of the `bytes` bytes at byte offset `offset` of the
    /// shared memory (in bounds, 4-byte aligned) with the race checker.
    #[inline]
    fn record_shared(&mut self, offset: usize, bytes: usize, access: Access) -> Result<(), EmuErrorKind> {
        let t = self.current;
        let who = Accessor {
            thread: t as u32,
            warp: t as u32 / WARP_SIZE,
            block_serial: self.block_serial,
            epoch: self.epoch,
            warp_epoch: self.warp_epoch[t / WARP_SIZE as usize],
        };
        let (first, words) = (offset / 4, bytes / 4);
        match access {
            Access::Read => self.shadow.read(first, words, who),
            Access::Write => self.shadow.write(first, words, who, false),
            Access::Atomic => self.shadow.write(first, words, who, true),
        }
    }
}

/// Checks an access of element `index` of the shared region at `base` (the running thread fails
/// on a defect); the element's byte offset in the shared memory.
#[inline]
fn check_shared<T>(base: *mut T, len: usize, index: usize, access: Access) -> usize {
    or_fail(with_block(|b| b.check_shared(base, len, index, access)))
}

pub(crate) fn shared_slice_load<T: Word>(base: *mut T, len: usize, index: usize) -> T {
    check_shared(base, len, index, Access::Read);
    // SAFETY: `index < len` (checked above) and `SharedMem::slice` checked that the region's
    // `len` elements lie, aligned, inside the block's dynamic shared memory, which the scheduler's
    // workspace holds for the whole launch and which no reference covers.
    unsafe { base.add(index).read() }
}

pub(crate) fn shared_slice_store<T: Word>(base: *mut T, len: usize, index: usize, value: T) {
    check_shared(base, len, index, Access::Write);
    // SAFETY: `index < len` (checked above) and `SharedMem::slice` checked that the region's
    // `len` elements lie, aligned, inside the block's dynamic shared memory, which the scheduler's
    // workspace holds for the whole launch and which no reference covers.
    unsafe { base.add(index).write(value) }
}

/// Starts the asynchronous copy of global element `src_index` of `src` (`src_len` elements), or
/// of zeros when `!valid`, into element `index` of the shared region at `base`; it lands when
/// the thread calls [`async_wait_all`]. The global element is read now (the launch keeps it
/// unchanged); the shared word counts as written both now and when the copy lands, so the race
/// checker reports any other thread's access from the start of the copy to the barrier after its
/// wait, and a thread that exits without waiting is a defect.
pub(crate) fn shared_copy_async<T: Word>(
    base: *mut T,
    len: usize,
    index: usize,
    src: *const T,
    src_len: usize,
    src_index: usize,
    valid: bool,
) {
    let bytes = core::mem::size_of::<T>();
    let mut data = [0u8; 16];
    if valid {
        let value = global_slice_load(src, src_len, src_index);
        // SAFETY: `value` is a `Word`, plain data of `bytes` ≤ 16 bytes, and `data` holds 16.
        unsafe { core::ptr::copy_nonoverlapping(&value as *const T as *const u8, data.as_mut_ptr(), bytes) };
    }
    let offset = check_shared(base, len, index, Access::Write);
    with_block(|b| b.threads[b.current].copies.push(PendingCopy { offset, data, bytes }));
}

/// Lands every asynchronous copy the running thread started ([`shared_copy_async`]).
pub(crate) fn async_wait_all() {
    let copies = with_block(|b| core::mem::take(&mut b.threads[b.current].copies));
    for copy in copies {
        or_fail(with_block(|b| b.record_shared(copy.offset, copy.bytes, Access::Write)));
        let (shared, _) = dynamic_shared();
        // SAFETY: `shared_copy_async` checked that the copy's `bytes` at `offset` lie inside the
        // block's dynamic shared memory, which the scheduler's workspace holds for the whole
        // launch and which no reference covers.
        unsafe { core::ptr::copy_nonoverlapping(copy.data.as_ptr(), shared.add(copy.offset), copy.bytes) };
    }
}

/// Applies `f` to element `index` of the shared `u32` region at `base`; returns the old value.
fn shared_atomic_rmw(base: *mut u32, len: usize, index: usize, f: impl Fn(u32) -> u32) -> u32 {
    check_shared(base, len, index, Access::Atomic);
    // SAFETY: in bounds of the block's dynamic shared memory, as for `shared_slice_store`; only
    // this emulated thread runs until it suspends, so the read and the write are one atomic step.
    unsafe {
        let p = base.add(index);
        let old = p.read();
        p.write(f(old));
        old
    }
}

pub(crate) fn shared_atomic_add_u32(base: *mut u32, len: usize, index: usize, value: u32) -> u32 {
    shared_atomic_rmw(base, len, index, |v| v.wrapping_add(value))
}

pub(crate) fn shared_atomic_add_f32(base: *mut f32, len: usize, index: usize, value: f32) -> f32 {
    f32::from_bits(shared_atomic_rmw(base as *mut u32, len, index, |v| (f32::from_bits(v) + value).to_bits()))
}
