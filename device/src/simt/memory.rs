//! Memory the kernels touch: checked global slices and dynamic shared memory.
//!
//! A [`GSlice`] / [`GSliceMut`] is a pointer and a length in a launch-parameter struct. On the GPU
//! an access is a bare `ld.global` / `st.global`; under the emulator it is bounds-checked and an
//! out-of-range index is reported with the kernel, block, thread and address. The host guarantees
//! (and the launch's `SAFETY` comment states) that a [`GSlice`] is read-only for the whole launch
//! and aliases no [`GSliceMut`] of it, which is what lets it use the read-only data path.
//!
//! Shared memory is the launch's dynamic shared memory, carved into typed [`SharedSlice`]s. Under
//! the emulator every shared access also feeds the race checker.

use core::marker::PhantomData;

#[cfg(not(target_arch = "nvptx64"))]
use super::emu as backend;
#[cfg(target_arch = "nvptx64")]
use super::gpu as backend;
use super::word::Word;

/// A read-only global array of a launch: pointer and length.
///
/// Read-only for the whole launch (the host never passes memory that a [`GSliceMut`] of the same
/// launch also covers), so loads may take the GPU's non-coherent read-only path.
#[repr(C)]
#[derive(Debug)]
pub struct GSlice<T> {
    ptr: *const T,
    len: usize,
}

impl<T> Clone for GSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GSlice<T> {}

// SAFETY: a `GSlice` is a read-only view; the launch contract makes concurrent reads sound.
unsafe impl<T: Sync> Sync for GSlice<T> {}
// SAFETY: sending the view sends only a pointer to memory the launch contract keeps read-only.
unsafe impl<T: Sync> Send for GSlice<T> {}

impl<T: Word> GSlice<T> {
    /// A view of `len` elements at device (or, for the emulator, host) address `addr`.
    ///
    /// # Safety
    /// `addr` is aligned for `T` and `len` elements of `T` are readable there for as long as any
    /// launch uses the view; nothing writes them during such a launch.
    pub const unsafe fn from_raw_parts(addr: u64, len: usize) -> Self {
        Self { ptr: addr as usize as *const T, len }
    }

    /// An empty view (a null pointer of length zero).
    pub const fn empty() -> Self {
        Self { ptr: core::ptr::null(), len: 0 }
    }

    /// A view of host memory, for an emulated launch (which is `unsafe`: `data` must outlive it).
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn from_host(data: &[T]) -> Self {
        Self { ptr: data.as_ptr(), len: data.len() }
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index` (unchecked on the GPU, bounds-checked under the emulator).
    #[inline(always)]
    pub fn load(&self, index: usize) -> T {
        backend::global_slice_load(self.ptr, self.len, index)
    }

    /// The same bytes viewed as elements of `U` (e.g. `f32` as [`F4`](super::F4)); `len` shrinks accordingly.
    /// The emulator reports a misaligned base.
    #[inline(always)]
    pub fn cast<U: Word>(&self) -> GSlice<U> {
        let bytes = self.len * core::mem::size_of::<T>();
        backend::check_alignment(self.ptr as usize, core::mem::align_of::<U>());
        GSlice { ptr: self.ptr as *const U, len: bytes / core::mem::size_of::<U>() }
    }
}

/// A writable global array of a launch: pointer and length.
#[repr(C)]
#[derive(Debug)]
pub struct GSliceMut<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> Clone for GSliceMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GSliceMut<T> {}

// SAFETY: threads of a launch write disjoint elements or use atomics; the emulator runs one
// launch's threads on one OS thread.
unsafe impl<T: Sync> Sync for GSliceMut<T> {}
// SAFETY: sending the view sends only a pointer; the writes through it are the disjoint or
// atomic ones above, wherever the view is.
unsafe impl<T: Sync> Send for GSliceMut<T> {}

impl<T: Word> GSliceMut<T> {
    /// A view of `len` writable elements at device (or, for the emulator, host) address `addr`.
    ///
    /// # Safety
    /// `addr` is aligned for `T` and `len` elements of `T` are readable and writable there for as
    /// long as any launch uses the view.
    pub const unsafe fn from_raw_parts(addr: u64, len: usize) -> Self {
        Self { ptr: addr as usize as *mut T, len }
    }

    /// An empty view (a null pointer of length zero).
    pub const fn empty() -> Self {
        Self { ptr: core::ptr::null_mut(), len: 0 }
    }

    /// A writable view of host memory, for an emulated launch (which is `unsafe`: `data` must
    /// outlive it and nothing else may touch it meanwhile).
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn from_host(data: &mut [T]) -> Self {
        Self { ptr: data.as_mut_ptr(), len: data.len() }
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index`, read through the coherent path.
    #[inline(always)]
    pub fn load(&self, index: usize) -> T {
        backend::global_slice_load_coherent(self.ptr, self.len, index)
    }

    /// Writes element `index`.
    #[inline(always)]
    pub fn store(&self, index: usize, value: T) {
        backend::global_slice_store(self.ptr, self.len, index, value)
    }

    /// The same bytes viewed as elements of `U`; `len` shrinks accordingly.
    #[inline(always)]
    pub fn cast<U: Word>(&self) -> GSliceMut<U> {
        let bytes = self.len * core::mem::size_of::<T>();
        backend::check_alignment(self.ptr as usize, core::mem::align_of::<U>());
        GSliceMut { ptr: self.ptr as *mut U, len: bytes / core::mem::size_of::<U>() }
    }
}

impl GSliceMut<u32> {
    /// `atomicAdd` on element `index`; returns the old value.
    #[inline(always)]
    pub fn atomic_add(&self, index: usize, value: u32) -> u32 {
        backend::global_atomic_add_u32(self.ptr, self.len, index, value)
    }

    /// `atomicMax` on element `index`; returns the old value.
    #[inline(always)]
    pub fn atomic_max(&self, index: usize, value: u32) -> u32 {
        backend::global_atomic_max_u32(self.ptr, self.len, index, value)
    }
}

impl GSliceMut<f32> {
    /// `atomicAdd` on element `index`; returns the old value. The order of concurrent adds is not
    /// fixed, so results that feed outputs never come from it (docs/design.md §3).
    #[inline(always)]
    pub fn atomic_add(&self, index: usize, value: f32) -> f32 {
        backend::global_atomic_add_f32(self.ptr, self.len, index, value)
    }
}

/// The launch's dynamic shared memory, to be carved into typed slices.
#[derive(Clone, Copy, Debug)]
pub struct SharedMem {
    base: *mut u8,
    bytes: usize,
}

/// The dynamic shared memory of the running launch (its size is the launch's, known here).
#[inline(always)]
pub fn dynamic_shared() -> SharedMem {
    let (base, bytes) = backend::dynamic_shared();
    SharedMem { base, bytes }
}

impl SharedMem {
    /// Size in bytes.
    #[inline(always)]
    pub fn len_bytes(&self) -> usize {
        self.bytes
    }

    /// `count` elements of `T` starting `byte_offset` bytes in. The emulator reports a region that
    /// does not fit or is misaligned; on the GPU the caller sized the launch for it.
    #[inline(always)]
    pub fn slice<T: Word>(&self, byte_offset: usize, count: usize) -> SharedSlice<T> {
        backend::check_shared_region(
            byte_offset,
            count * core::mem::size_of::<T>(),
            core::mem::align_of::<T>(),
            self.bytes,
        );
        // The pointer is only formed here; every access goes through the checked accessors.
        SharedSlice { base: self.base.wrapping_add(byte_offset) as *mut T, len: count, _t: PhantomData }
    }
}

/// A typed region of dynamic shared memory.
#[derive(Debug)]
pub struct SharedSlice<T> {
    base: *mut T,
    len: usize,
    _t: PhantomData<T>,
}

impl<T> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedSlice<T> {}

impl<T: Word> SharedSlice<T> {
    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index`.
    #[inline(always)]
    pub fn load(&self, index: usize) -> T {
        backend::shared_slice_load(self.base, self.len, index)
    }

    /// Writes element `index`.
    #[inline(always)]
    pub fn store(&self, index: usize, value: T) {
        backend::shared_slice_store(self.base, self.len, index, value)
    }

    /// Starts copying element `src_index` of `src` into element `index` without the thread
    /// waiting for it (`cp.async`: 16-byte words through L2 only, smaller ones through L1), or
    /// zeros when `!valid` (then `src_index` is not read and may be out of range). The word is
    /// undefined until the thread's [`async_wait_all`](super::async_wait_all); other threads may
    /// read it only after a barrier that follows that wait.
    #[inline(always)]
    pub fn copy_async(&self, index: usize, src: GSlice<T>, src_index: usize, valid: bool) {
        backend::shared_copy_async(self.base, self.len, index, src.ptr, src.len, src_index, valid)
    }
}

impl SharedSlice<u32> {
    /// Shared-memory `atomicAdd`; returns the old value.
    #[inline(always)]
    pub fn atomic_add(&self, index: usize, value: u32) -> u32 {
        backend::shared_atomic_add_u32(self.base, self.len, index, value)
    }
}

impl SharedSlice<f32> {
    /// Shared-memory `atomicAdd`; returns the old value.
    #[inline(always)]
    pub fn atomic_add(&self, index: usize, value: f32) -> f32 {
        backend::shared_atomic_add_f32(self.base, self.len, index, value)
    }
}
