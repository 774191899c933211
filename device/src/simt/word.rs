//! The values one load or store instruction moves: the [`Word`] trait and the vector types.
//!
//! Kept apart from [`super::memory`] so that both backends can name [`Word`] without importing
//! the module that dispatches to them: `memory` → backend → `word`, with no cycle.

/// Four `f32` read or written by one 16-byte instruction (`ld.global.v4.f32`).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F4(pub [f32; 4]);

/// Two `f32` read or written by one 8-byte instruction.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F2(pub [f32; 2]);

/// A plain value that one load or store instruction moves: 4, 8 or 16 bytes, aligned to its size.
///
/// # Safety
/// Implementors are `Copy` types without padding whose size is a multiple of 4 bytes and whose
/// alignment equals their size, and (on the GPU) the load and store functions move exactly
/// `size_of::<Self>()` bytes at the given address.
pub unsafe trait Word: Copy + 'static {
    /// Loads through the read-only data path.
    ///
    /// # Safety
    /// `ptr` is a valid, aligned global address, read-only for the whole launch.
    #[cfg(target_arch = "nvptx64")]
    unsafe fn gpu_load_global_nc(ptr: *const Self) -> Self;
    /// Loads through the coherent path.
    ///
    /// # Safety
    /// `ptr` is a valid, aligned global address.
    #[cfg(target_arch = "nvptx64")]
    unsafe fn gpu_load_global(ptr: *const Self) -> Self;
    /// Stores to global memory.
    ///
    /// # Safety
    /// `ptr` is a valid, aligned global address.
    #[cfg(target_arch = "nvptx64")]
    unsafe fn gpu_store_global(ptr: *mut Self, value: Self);
}

#[cfg(target_arch = "nvptx64")]
macro_rules! word_32 {
    ($t:ty, $suffix:literal) => {
        unsafe impl Word for $t {
            #[inline(always)]
            unsafe fn gpu_load_global_nc(ptr: *const Self) -> Self {
                let r: $t;
                // SAFETY: the caller guarantees a valid, aligned global address that nothing writes
                // during the launch; the load reads exactly `size_of::<Self>()` bytes there.
                unsafe { core::arch::asm!(concat!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; ld.global.nc.", $suffix, " {r}, [%g]; }}"), r = out(reg32) r, p = in(reg64) ptr, options(pure, readonly, nostack)) };
                r
            }
            #[inline(always)]
            unsafe fn gpu_load_global(ptr: *const Self) -> Self {
                let r: $t;
                // SAFETY: the caller guarantees a valid, aligned global address; the load reads
                // exactly `size_of::<Self>()` bytes there.
                unsafe { core::arch::asm!(concat!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; ld.global.", $suffix, " {r}, [%g]; }}"), r = out(reg32) r, p = in(reg64) ptr, options(readonly, nostack)) };
                r
            }
            #[inline(always)]
            unsafe fn gpu_store_global(ptr: *mut Self, value: Self) {
                // SAFETY: the caller guarantees a valid, aligned, writable global address; the
                // store writes exactly `size_of::<Self>()` bytes there.
                unsafe { core::arch::asm!(concat!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; st.global.", $suffix, " [%g], {v}; }}"), p = in(reg64) ptr, v = in(reg32) value, options(nostack)) };
            }
        }
    };
}

#[cfg(target_arch = "nvptx64")]
word_32!(f32, "f32");
#[cfg(target_arch = "nvptx64")]
word_32!(u32, "u32");
#[cfg(target_arch = "nvptx64")]
word_32!(i32, "s32");

#[cfg(target_arch = "nvptx64")]
unsafe impl Word for u64 {
    #[inline(always)]
    unsafe fn gpu_load_global_nc(ptr: *const Self) -> Self {
        let r: u64;
        // SAFETY: the caller guarantees a valid, aligned global address that nothing writes during
        // the launch; the load reads exactly `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; ld.global.nc.u64 {r}, [%g]; }}", r = out(reg64) r, p = in(reg64) ptr, options(pure, readonly, nostack))
        };
        r
    }
    #[inline(always)]
    unsafe fn gpu_load_global(ptr: *const Self) -> Self {
        let r: u64;
        // SAFETY: the caller guarantees a valid, aligned global address; the load reads exactly
        // `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; ld.global.u64 {r}, [%g]; }}", r = out(reg64) r, p = in(reg64) ptr, options(readonly, nostack))
        };
        r
    }
    #[inline(always)]
    unsafe fn gpu_store_global(ptr: *mut Self, value: Self) {
        // SAFETY: the caller guarantees a valid, aligned, writable global address; the store writes
        // exactly `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; st.global.u64 [%g], {v}; }}", p = in(reg64) ptr, v = in(reg64) value, options(nostack))
        };
    }
}

#[cfg(target_arch = "nvptx64")]
unsafe impl Word for F2 {
    #[inline(always)]
    unsafe fn gpu_load_global_nc(ptr: *const Self) -> Self {
        let (a, b): (f32, f32);
        // SAFETY: the caller guarantees a valid, aligned global address that nothing writes during
        // the launch; the load reads exactly `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; ld.global.nc.v2.f32 {{{a}, {b}}}, [%g]; }}", a = out(reg32) a, b = out(reg32) b, p = in(reg64) ptr, options(pure, readonly, nostack))
        };
        F2([a, b])
    }
    #[inline(always)]
    unsafe fn gpu_load_global(ptr: *const Self) -> Self {
        let (a, b): (f32, f32);
        // SAFETY: the caller guarantees a valid, aligned global address; the load reads exactly
        // `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; ld.global.v2.f32 {{{a}, {b}}}, [%g]; }}", a = out(reg32) a, b = out(reg32) b, p = in(reg64) ptr, options(readonly, nostack))
        };
        F2([a, b])
    }
    #[inline(always)]
    unsafe fn gpu_store_global(ptr: *mut Self, value: Self) {
        let [a, b] = value.0;
        // SAFETY: the caller guarantees a valid, aligned, writable global address; the store writes
        // exactly `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; st.global.v2.f32 [%g], {{{a}, {b}}}; }}", p = in(reg64) ptr, a = in(reg32) a, b = in(reg32) b, options(nostack))
        };
    }
}

#[cfg(target_arch = "nvptx64")]
unsafe impl Word for F4 {
    #[inline(always)]
    unsafe fn gpu_load_global_nc(ptr: *const Self) -> Self {
        let (a, b, c, d): (f32, f32, f32, f32);
        // SAFETY: the caller guarantees a valid, aligned global address that nothing writes during
        // the launch; the load reads exactly `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; ld.global.nc.v4.f32 {{{a}, {b}, {c}, {d}}}, [%g]; }}", a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, p = in(reg64) ptr, options(pure, readonly, nostack))
        };
        F4([a, b, c, d])
    }
    #[inline(always)]
    unsafe fn gpu_load_global(ptr: *const Self) -> Self {
        let (a, b, c, d): (f32, f32, f32, f32);
        // SAFETY: the caller guarantees a valid, aligned global address; the load reads exactly
        // `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; ld.global.v4.f32 {{{a}, {b}, {c}, {d}}}, [%g]; }}", a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, p = in(reg64) ptr, options(readonly, nostack))
        };
        F4([a, b, c, d])
    }
    #[inline(always)]
    unsafe fn gpu_store_global(ptr: *mut Self, value: Self) {
        let [a, b, c, d] = value.0;
        // SAFETY: the caller guarantees a valid, aligned, writable global address; the store writes
        // exactly `size_of::<Self>()` bytes there.
        unsafe {
            core::arch::asm!("{{ .reg .u64 %g; cvta.to.global.u64 %g, {p}; st.global.v4.f32 [%g], {{{a}, {b}, {c}, {d}}}; }}", p = in(reg64) ptr, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, d = in(reg32) d, options(nostack))
        };
    }
}

#[cfg(not(target_arch = "nvptx64"))]
macro_rules! word_host {
    ($($t:ty),*) => { $(unsafe impl Word for $t {})* };
}
#[cfg(not(target_arch = "nvptx64"))]
word_host!(f32, u32, i32, u64, F2, F4);
