//! One API over two backends: the CUDA device and the SIMT emulator.
//!
//! A [`Backend`] owns device memory ([`Buffer`]s), launches kernels of the PTX module (or runs the
//! same kernels on the CPU), and times work. Callers never branch on which backend they hold; they
//! can ask ([`Backend::kind`], [`Backend::description`]) to report which one ran.
//!
//! Both account the bytes of their buffers against a memory budget and refuse an allocation that
//! would pass it with [`Error::OutOfMemory`] before allocating: under
//! the emulator the budget is, by default, the machine's available memory when the backend is
//! made (device memory is host memory there); on the GPU the driver's own limit applies, and a
//! budget set with [`Backend::with_memory_budget`] applies too.
//!
//! [`Backend::within`] runs one call on someone else's terms (PyTorch's): on a stream they own
//! (borrowed through cudarc's `wrap_borrowed_stream`) and with every buffer the call makes carved
//! from a workspace they allocated, so the backend allocates nothing; or, to size that
//! workspace, with nothing run and the bytes counted ([`Workspace::Measure`]).

mod cuda;
mod emulator;

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use dfgnn_device::abi::LaunchParams;
use dfgnn_device::simt::{GSlice, GSliceMut, KernelRef, LaunchConfig, Word};

use crate::error::{Error, Result};

/// A plain element type device buffers hold.
pub trait Element: Word + DeviceRepr + ValidAsZeroBits + Default + fmt::Debug + Send + Sync + 'static {}
impl Element for f32 {}
impl Element for u32 {}
impl Element for i32 {}
impl Element for u64 {}

/// Which machine runs the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// An NVIDIA GPU through the CUDA driver.
    Cuda,
    /// The SIMT emulator on the CPU.
    Emulator,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cuda => "cuda",
            Self::Emulator => "emulator",
        })
    }
}

/// What the scheduler needs to know about the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Device name.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Dynamic shared memory a block may use after the opt-in, in bytes.
    pub max_shared_per_block: u32,
    /// Shared memory per multiprocessor, in bytes.
    pub shared_per_multiprocessor: u32,
    /// L2 cache, in bytes.
    pub l2_bytes: u64,
    /// Device memory, in bytes.
    pub total_memory: u64,
}

impl DeviceLimits {
    /// Shared memory a block gets without the opt-in.
    pub const DEFAULT_SHARED_PER_BLOCK: u32 = 48 * 1024;

    /// The H200's limits, which the emulator reports so plans match the GPU's.
    pub fn h200() -> Self {
        Self {
            name: "NVIDIA H200 (as emulated)".to_string(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            max_shared_per_block: 227 * 1024,
            shared_per_multiprocessor: 228 * 1024,
            l2_bytes: 60 * 1024 * 1024,
            total_memory: 141 * 1_000_000_000,
        }
    }
}

/// What a backend has done so far: the host work a call costs, besides the kernels' time
/// ([`Backend::counts`]; compare two readings around a call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Kernel launches (launches of no blocks are not made, so not counted).
    pub launches: u64,
    /// Buffers made: allocations and uploads.
    pub buffers: u64,
    /// Of those, uploads (host-to-device copies).
    pub uploads: u64,
    /// Downloads (device-to-host copies, each a wait for the work queued before).
    pub downloads: u64,
    /// Device-to-device copies ([`Backend::copy`]).
    pub copies: u64,
}

impl std::ops::Sub for Counts {
    type Output = Counts;
    fn sub(self, earlier: Counts) -> Counts {
        Counts {
            launches: self.launches - earlier.launches,
            buffers: self.buffers - earlier.buffers,
            uploads: self.uploads - earlier.uploads,
            downloads: self.downloads - earlier.downloads,
            copies: self.copies - earlier.copies,
        }
    }
}

/// The running [`Counts`] of one backend.
#[derive(Debug, Default)]
struct Counters {
    launches: AtomicU64,
    buffers: AtomicU64,
    uploads: AtomicU64,
    downloads: AtomicU64,
    copies: AtomicU64,
}

/// Bytes of buffers alive now and at most, on one backend, and the most they may reach.
#[derive(Debug)]
struct MemoryCounter {
    current: AtomicUsize,
    peak: AtomicUsize,
    budget: AtomicUsize,
}

impl MemoryCounter {
    fn new(budget: usize) -> Self {
        Self { current: AtomicUsize::new(0), peak: AtomicUsize::new(0), budget: AtomicUsize::new(budget) }
    }

    /// Counts `bytes` more in use if that stays within the budget; else returns the bytes free.
    fn reserve(&self, bytes: usize) -> std::result::Result<(), usize> {
        let budget = self.budget.load(Ordering::Relaxed);
        let mut current = self.current.load(Ordering::Relaxed);
        loop {
            let Some(now) = current.checked_add(bytes).filter(|&now| now <= budget) else {
                return Err(budget.saturating_sub(current));
            };
            match self.current.compare_exchange_weak(current, now, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    self.peak.fetch_max(now, Ordering::Relaxed);
                    return Ok(());
                }
                Err(seen) => current = seen,
            }
        }
    }

    fn release(&self, bytes: usize) {
        self.current.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// The memory the machine can give now, in bytes (`usize::MAX` where the platform does not say):
/// the emulator's default memory budget.
pub fn available_host_memory() -> usize {
    let Ok(mut system) = sysinfo::System::new() else { return usize::MAX };
    system.refresh_memory();
    match usize::try_from(system.available_memory()) {
        Ok(0) | Err(_) => usize::MAX,
        Ok(bytes) => bytes,
    }
}

enum Inner {
    Cuda(cuda::CudaBackend),
    Emulator(emulator::EmuBackend),
}

/// Where the buffers of a call made under [`Backend::within`] come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workspace {
    /// Allocated on the backend, as outside a scope.
    Own,
    /// Nothing runs: buffers get placeholder addresses, launches, copies and fills are skipped,
    /// downloads read zeros, and the bytes the call would take are counted. Its results are
    /// meaningless; the count sizes a [`Workspace::Borrowed`] for the same call.
    Measure,
    /// Carved, in order, from `len` bytes at `addr` that the caller owns (device memory of this
    /// backend's device on the GPU, host memory under the emulator); a call that needs more fails
    /// with [`Error::OutOfMemory`].
    Borrowed {
        /// The first byte (16-byte aligned).
        addr: u64,
        /// Bytes.
        len: usize,
    },
}

/// Every buffer carved from a workspace starts at a multiple of this many bytes from its start.
pub const WORKSPACE_ALIGN: usize = 256;

/// The bytes a workspace gives a buffer of `bytes` bytes.
fn workspace_share(bytes: usize) -> Option<usize> {
    bytes.checked_next_multiple_of(WORKSPACE_ALIGN)
}

/// The call in progress on this thread ([`Backend::within`]).
struct Scope {
    /// [`Backend::id`] of the backend it applies to.
    backend: u64,
    /// The borrowed stream (CUDA only).
    stream: Option<Arc<cudarc::driver::CudaStream>>,
    workspace: Workspace,
    /// Workspace bytes handed out so far.
    used: usize,
    /// Results the caller has given room for ([`Backend::place`]), not yet taken.
    placed: Vec<Placed>,
}

/// Room for one named result of the call in progress: `len` `f32`s at `addr`, which the caller
/// owns ([`Backend::place`]).
struct Placed {
    op: &'static str,
    what: &'static str,
    addr: u64,
    len: usize,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// The stream of the call in progress on this thread for backend `id`, if it borrowed one.
fn scope_stream(id: u64) -> Option<Arc<cudarc::driver::CudaStream>> {
    SCOPE.with_borrow(|s| s.as_ref().filter(|s| s.backend == id).and_then(|s| s.stream.clone()))
}

/// Ends the scope when dropped (also when the work panics).
struct ScopeGuard;

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        SCOPE.with_borrow_mut(|s| *s = None);
    }
}

/// A machine that runs dfgnn's kernels: the CUDA device or the emulator.
pub struct Backend {
    inner: Inner,
    memory: Arc<MemoryCounter>,
    counters: Counters,
    /// Unique in the process: tells a thread's [`Scope`] which backend it applies to.
    id: u64,
}

/// The next [`Backend::id`].
fn next_backend_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The outcome of [`Backend::auto`]: the backend, and why it is not the GPU when it is not.
pub struct Selection {
    /// The chosen backend.
    pub backend: Backend,
    /// Why the CUDA device was not used, when the emulator was chosen for want of one.
    pub fallback_reason: Option<String>,
}

impl Backend {
    /// The CUDA device `ordinal`, with dfgnn's PTX module loaded (no memory budget but the
    /// driver's own).
    ///
    /// It is the device's primary context (the one the CUDA runtime, and so PyTorch, uses), and
    /// work outside [`Backend::within`] goes to a stream of its own (never the null stream).
    pub fn cuda(ordinal: usize) -> Result<Self> {
        let id = next_backend_id();
        let inner = Inner::Cuda(cuda::CudaBackend::new(ordinal, id)?);
        Ok(Self { inner, memory: Arc::new(MemoryCounter::new(usize::MAX)), counters: Counters::default(), id })
    }

    /// Keeps the memory dfgnn frees on the device for its next allocations, instead of giving it
    /// back to the driver at every synchronisation (the default of CUDA's stream-ordered pool).
    /// Every call allocates its outputs and workspaces, and mapping them afresh each time costs
    /// as much as a light pass; the CLI and the benchmarks opt in. The memory then stays with
    /// the device's default pool, out of reach of other allocators in the process (PyTorch's),
    /// which is why it is not the default. The emulator has nothing to keep.
    pub fn keep_freed_memory(&self) -> Result<()> {
        match &self.inner {
            Inner::Cuda(c) => c.keep_freed_memory(),
            Inner::Emulator(_) => Ok(()),
        }
    }

    /// The SIMT emulator, with the machine's available memory as its memory budget.
    pub fn emulator() -> Self {
        let inner = Inner::Emulator(emulator::EmuBackend::new());
        Self {
            inner,
            memory: Arc::new(MemoryCounter::new(available_host_memory())),
            counters: Counters::default(),
            id: next_backend_id(),
        }
    }

    /// Runs `work` as one call on the caller's terms: its work on `stream` (a `CUstream` of this
    /// device's primary context, given as an integer: PyTorch's `cuda_stream`; `None` keeps the
    /// backend's own; the emulator has none) and its buffers from `workspace`. Returns what
    /// `work` returned and the workspace bytes it took (what [`Workspace::Measure`] counts).
    /// Scopes do not nest; the thread's current context becomes this device's primary context.
    ///
    /// # Safety
    /// `stream` must be a live stream of this device's primary context for the whole call and
    /// as long as work queued on it runs; a [`Workspace::Borrowed`] must satisfy
    /// [`Backend::borrow_external`]'s contract for all its bytes for as long, and buffers carved
    /// from it must not outlive it.
    pub unsafe fn within<R>(
        &self,
        stream: Option<u64>,
        workspace: Workspace,
        work: impl FnOnce() -> Result<R>,
    ) -> Result<(R, usize)> {
        if SCOPE.with_borrow(|s| s.is_some()) {
            return Err(Error::Unsupported { what: "a backend call scope inside another".to_string() });
        }
        if let Workspace::Borrowed { addr, len } = workspace
            && len > 0
            && (addr == 0 || !addr.is_multiple_of(16))
        {
            return Err(Error::Unsupported {
                what: format!("a workspace at address {addr:#x} (it must be non-null and 16-byte aligned)"),
            });
        }
        let stream = match (&self.inner, stream) {
            (_, None) => None,
            // SAFETY: forwarded contract (a live stream of this device's primary context).
            (Inner::Cuda(c), Some(raw)) => Some(unsafe { c.borrow_stream(raw)? }),
            (Inner::Emulator(_), Some(_)) => {
                return Err(Error::Unsupported { what: "a CUDA stream for the emulator".to_string() });
            }
        };
        SCOPE
            .with_borrow_mut(|s| *s = Some(Scope { backend: self.id, stream, workspace, used: 0, placed: Vec::new() }));
        let _guard = ScopeGuard;
        let r = work()?;
        let used = SCOPE.with_borrow(|s| s.as_ref().map_or(0, |s| s.used));
        Ok((r, used))
    }

    /// Names `len` floats at `addr`, which the caller owns, as the room for the result `what` of
    /// `op` in the call in progress on this backend: the op's [`Backend::result`] of that name
    /// then returns them instead of a new buffer, so the result is written there in place, never
    /// copied. Refused outside a call, and as [`Backend::borrow_external`] refuses.
    ///
    /// # Safety
    /// As [`Backend::borrow_external`] (written), for the rest of the call and the work it queues.
    pub(crate) unsafe fn place(&self, op: &'static str, what: &'static str, addr: u64, len: usize) -> Result<()> {
        // SAFETY: forwarded contract; the buffer only checks the address and is dropped at once.
        unsafe { self.borrow_external::<f32>(addr, len)? };
        SCOPE.with_borrow_mut(|s| match s.as_mut().filter(|s| s.backend == self.id) {
            Some(scope) => {
                scope.placed.push(Placed { op, what, addr, len });
                Ok(())
            }
            None => Err(Error::Unsupported { what: format!("placing the result `{what}` outside a call") }),
        })
    }

    /// The buffer for an op's result `what` of `len` floats: the room the call in progress
    /// placed under that name ([`Backend::place`], taken once), or else a new one
    /// ([`Backend::alloc`]). Room of another length is a shape mismatch of the op it was placed
    /// for.
    pub(crate) fn result(&self, what: &'static str, len: usize) -> Result<Buffer<f32>> {
        let placed = SCOPE.with_borrow_mut(|s| {
            let scope = s.as_mut().filter(|s| s.backend == self.id)?;
            let i = scope.placed.iter().position(|p| p.what == what)?;
            Some(scope.placed.swap_remove(i))
        });
        match placed {
            None => self.alloc(len),
            Some(p) if p.len != len => Err(Error::ShapeMismatch { op: p.op, what: p.what, expected: len, got: p.len }),
            // SAFETY: `place`'s caller keeps the room live and unaliased for the call; rooms are
            // placed only by `crate::external`'s calls, which write and drop their results
            // inside the call, so this buffer does not outlive it.
            Some(p) => unsafe { self.borrow_external(p.addr, p.len) },
        }
    }

    /// Whether this thread is in a [`Workspace::Measure`] call on this backend.
    pub(crate) fn measuring(&self) -> bool {
        SCOPE.with_borrow(|s| s.as_ref().is_some_and(|s| s.backend == self.id && s.workspace == Workspace::Measure))
    }

    /// A buffer of `len` elements from the workspace of the call in progress, if it has one.
    fn workspace_buffer<T: Element>(&self, len: usize) -> Result<Option<Buffer<T>>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .and_then(workspace_share)
            .ok_or_else(|| Error::Unsupported { what: format!("a buffer of {len} elements: the size overflows") })?;
        let addr = SCOPE.with_borrow_mut(|s| {
            let Some(scope) = s.as_mut().filter(|s| s.backend == self.id) else { return Ok(None) };
            let offset = scope.used;
            let addr = match scope.workspace {
                Workspace::Own => return Ok(None),
                // Placeholders: non-null, aligned, never dereferenced (nothing runs).
                Workspace::Measure => WORKSPACE_ALIGN as u64 + offset as u64,
                Workspace::Borrowed { addr, len: size } => {
                    if size.saturating_sub(offset) < bytes {
                        return Err(Error::OutOfMemory {
                            during: format!("taking {len} elements from a call's workspace"),
                            requested: bytes,
                            free: size.saturating_sub(offset),
                            total: size,
                        });
                    }
                    addr + offset as u64
                }
            };
            scope.used = offset + bytes;
            Ok(Some(addr))
        })?;
        Ok(addr.map(|addr| Buffer {
            storage: Storage::External { addr, on: self.kind() },
            len,
            bytes: 0,
            memory: self.memory.clone(),
        }))
    }

    /// This backend with at most `bytes` of buffers alive at once: an allocation that would pass
    /// it fails with [`Error::OutOfMemory`] before anything is allocated.
    pub fn with_memory_budget(self, bytes: usize) -> Self {
        self.memory.budget.store(bytes, Ordering::Relaxed);
        self
    }

    /// The most bytes of buffers this backend lets be alive at once (`usize::MAX`: no budget but
    /// the driver's).
    pub fn memory_budget(&self) -> usize {
        self.memory.budget.load(Ordering::Relaxed)
    }

    /// The GPU when one can be used, else the emulator (with the reason). `DFGNN_BACKEND=cuda` or
    /// `=emulator` forces the choice; a forced `cuda` that fails is an error.
    pub fn auto() -> Result<Selection> {
        match std::env::var("DFGNN_BACKEND").ok().as_deref() {
            Some("emulator") => Ok(Selection { backend: Self::emulator(), fallback_reason: None }),
            Some("cuda") => Ok(Selection { backend: Self::cuda(0)?, fallback_reason: None }),
            Some(other) => {
                Err(crate::Error::Unsupported { what: format!("DFGNN_BACKEND={other} (use `cuda` or `emulator`)") })
            }
            None => match Self::cuda(0) {
                Ok(backend) => Ok(Selection { backend, fallback_reason: None }),
                Err(e) => Ok(Selection { backend: Self::emulator(), fallback_reason: Some(e.to_string()) }),
            },
        }
    }

    /// Which machine this is.
    pub fn kind(&self) -> BackendKind {
        match self.inner {
            Inner::Cuda(_) => BackendKind::Cuda,
            Inner::Emulator(_) => BackendKind::Emulator,
        }
    }

    /// A one-line description: device name, capability, size (or "SIMT emulator").
    pub fn description(&self) -> String {
        match &self.inner {
            Inner::Cuda(c) => c.description(),
            Inner::Emulator(_) => {
                "SIMT emulator on the CPU (kernels checked for races, divergence and bounds)".to_string()
            }
        }
    }

    /// The device's limits (the H200's, under the emulator).
    pub fn limits(&self) -> &DeviceLimits {
        match &self.inner {
            Inner::Cuda(c) => c.limits(),
            Inner::Emulator(e) => e.limits(),
        }
    }

    /// Launches and buffers made so far on this backend.
    pub fn counts(&self) -> Counts {
        Counts {
            launches: self.counters.launches.load(Ordering::Relaxed),
            buffers: self.counters.buffers.load(Ordering::Relaxed),
            uploads: self.counters.uploads.load(Ordering::Relaxed),
            downloads: self.counters.downloads.load(Ordering::Relaxed),
            copies: self.counters.copies.load(Ordering::Relaxed),
        }
    }

    /// Copies `data` into a new device buffer.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        self.counters.uploads.fetch_add(1, Ordering::Relaxed);
        if let Some(mut buffer) = self.workspace_buffer(data.len())? {
            self.write_from_host(data, &mut buffer)?;
            return Ok(buffer);
        }
        self.new_buffer(data.len(), "uploading", |bytes| match &self.inner {
            Inner::Cuda(c) => Ok(Storage::Cuda(c.upload(data)?)),
            Inner::Emulator(_) => {
                let mut v =
                    HostVec::filled(data.len(), 0).ok_or_else(|| self.refused(bytes, "uploading", data.len()))?;
                v.as_mut_slice().copy_from_slice(data);
                Ok(Storage::Host(v))
            }
        })
    }

    /// A new device buffer of `len` zeros.
    pub fn zeros<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        if let Some(mut buffer) = self.workspace_buffer(len)? {
            self.fill_zeros(&mut buffer)?;
            return Ok(buffer);
        }
        self.new_buffer(len, "allocating", |bytes| match &self.inner {
            Inner::Cuda(c) => Ok(Storage::Cuda(c.zeros(len)?)),
            Inner::Emulator(_) => {
                HostVec::filled(len, 0).map(Storage::Host).ok_or_else(|| self.refused(bytes, "allocating", len))
            }
        })
    }

    /// A new device buffer of `len` elements whose values are unspecified: for outputs a kernel
    /// overwrites entirely. The emulator fills it with all-ones bytes (NaN for `f32`), so an
    /// element a kernel fails to write shows in tests.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        if let Some(buffer) = self.workspace_buffer(len)? {
            return Ok(buffer);
        }
        self.new_buffer(len, "allocating", |bytes| match &self.inner {
            Inner::Cuda(c) => Ok(Storage::Cuda(c.alloc(len)?)),
            Inner::Emulator(_) => {
                HostVec::filled(len, u128::MAX).map(Storage::Host).ok_or_else(|| self.refused(bytes, "allocating", len))
            }
        })
    }

    /// A buffer of `len` elements made by `make` (given its bytes), counted against the budget
    /// before `make` runs.
    fn new_buffer<T: Element>(
        &self,
        len: usize,
        doing: &str,
        make: impl FnOnce(usize) -> Result<Storage<T>>,
    ) -> Result<Buffer<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| Error::Unsupported {
            what: format!("{doing} {len} elements of {} bytes: the size overflows", std::mem::size_of::<T>()),
        })?;
        self.counters.buffers.fetch_add(1, Ordering::Relaxed);
        if let Err(free) = self.memory.reserve(bytes) {
            return Err(Error::OutOfMemory {
                during: format!("{doing} {len} elements"),
                requested: bytes,
                free,
                total: self.memory_budget(),
            });
        }
        match make(bytes) {
            Ok(storage) => Ok(Buffer { storage, len, bytes, memory: self.memory.clone() }),
            Err(e) => {
                self.memory.release(bytes);
                Err(e)
            }
        }
    }

    /// The error of a host allocation (the emulator's device memory) that the system refused.
    fn refused(&self, bytes: usize, doing: &str, len: usize) -> Error {
        Error::OutOfMemory {
            during: format!("{doing} {len} elements (the system refused the host memory)"),
            requested: bytes,
            free: self.memory_budget().saturating_sub(self.memory_in_use()),
            total: self.memory_budget(),
        }
    }

    /// Fills `buffer` with `value` on the device (no upload): [`Backend::fill_uniform`] over
    /// `[value, value]`, whose elements `value + 0·u` are `value` exactly.
    pub fn fill(&self, buffer: &mut Buffer<f32>, value: f32) -> Result<()> {
        self.fill_uniform(buffer, 0, value, value)
    }

    /// Fills `buffer` with pseudo-random values uniform in `[low, high)` made on the device from
    /// `seed` (element `i` is `dfgnn_device::kernels::util::uniform_at(seed, i, low, high)`).
    pub fn fill_uniform(&self, buffer: &mut Buffer<f32>, seed: u64, low: f32, high: f32) -> Result<()> {
        use dfgnn_device::abi::FillUniformParams;
        use dfgnn_device::kernels::util::FILL_UNIFORM;
        if buffer.is_empty() {
            return Ok(());
        }
        let threads = 256u32;
        let blocks = (buffer.len().div_ceil(threads as usize)).min(65_536) as u32;
        let config = LaunchConfig {
            grid: dfgnn_device::simt::Dim3::x(blocks),
            block: dfgnn_device::simt::Dim3::x(threads),
            shared_bytes: 0,
        };
        let params = FillUniformParams { out: buffer.view_mut(), seed, low, high };
        // SAFETY: the kernel writes each element of the live `buffer` once (grid-stride loop
        // bounded by its length) and reads nothing else.
        unsafe { self.launch(&FILL_UNIFORM, &config, &params) }
    }

    /// Writes `Σ x` into `out` (one element) on the device, without the host reading anything:
    /// per-block partial sums in f64, then one block over them, in an order fixed by `x`'s length
    /// alone (no atomics), so the bits are the same on every run and on both backends
    /// (`dfgnn_device::kernels::util::SUM_PARTIALS`). Takes one `u64` per block (at most 1024)
    /// of scratch; `x` may be empty (the sum is 0).
    pub fn sum_into(&self, x: &Buffer<f32>, out: &mut Buffer<f32>) -> Result<()> {
        use dfgnn_device::abi::{SumFinishParams, SumPartialsParams};
        use dfgnn_device::kernels::util::{SUM_BLOCK, SUM_FINISH, SUM_PARTIALS, SUM_SHARED_BYTES, sum_shape};
        if out.len() != 1 {
            return Err(Error::ShapeMismatch { op: "sum", what: "out", expected: 1, got: out.len() });
        }
        let (blocks, per_block) = sum_shape(x.len());
        let mut partial = self.alloc::<u64>(blocks)?;
        let config = |blocks: usize| LaunchConfig {
            grid: dfgnn_device::simt::Dim3::x(blocks as u32),
            block: dfgnn_device::simt::Dim3::x(SUM_BLOCK),
            shared_bytes: SUM_SHARED_BYTES,
        };
        let params = SumPartialsParams { x: x.view(), partial: partial.view_mut(), per_block };
        // SAFETY: `x` and `partial` are live and distinct; block `b` reads its range of `x`
        // (within its length) and writes `partial[b]`, one per block of the grid.
        unsafe { self.launch(&SUM_PARTIALS, &config(blocks), &params)? };
        let params = SumFinishParams { partial: partial.view(), out: out.view_mut() };
        // SAFETY: `partial` (written above) and `out` are live and distinct; one block reads the
        // partials and writes `out[0]`.
        unsafe { self.launch(&SUM_FINISH, &config(1), &params) }
    }

    /// A buffer over `len` elements of `T` at `addr` that someone else owns (a PyTorch tensor,
    /// say): device memory of this backend's device on the GPU, host memory under the emulator.
    /// Nothing is allocated or counted against the memory budget, and dropping the buffer frees
    /// nothing. Refused (never UB) when `addr` is null with `len > 0`, is not aligned to 16 bytes
    /// (the kernels' vector loads need it), or the byte size overflows. It is read and written
    /// like any other buffer.
    ///
    /// # Safety
    /// `len` elements of `T` at `addr` must stay allocated, and be written by no one else, for as
    /// long as the buffer or any launch that views it lives; any bit pattern must be a valid `T`
    /// there (true of every [`Element`]).
    pub unsafe fn borrow_external<T: Element>(&self, addr: u64, len: usize) -> Result<Buffer<T>> {
        const ALIGN: u64 = 16;
        if len.checked_mul(std::mem::size_of::<T>()).is_none() {
            return Err(Error::Unsupported {
                what: format!("an external buffer of {len} elements: the size overflows"),
            });
        }
        if len > 0 && (addr == 0 || !addr.is_multiple_of(ALIGN)) {
            return Err(Error::Unsupported {
                what: format!("an external buffer at address {addr:#x} (it must be non-null and {ALIGN}-byte aligned)"),
            });
        }
        Ok(Buffer { storage: Storage::External { addr, on: self.kind() }, len, bytes: 0, memory: self.memory.clone() })
    }

    /// Copies a device buffer back to the host (waits for the work queued before).
    pub fn download<T: Element>(&self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        if self.measuring() {
            return Ok(vec![T::default(); buffer.len]);
        }
        self.counters.downloads.fetch_add(1, Ordering::Relaxed);
        match (&self.inner, &buffer.storage) {
            (Inner::Cuda(c), Storage::Cuda(s)) => c.download(s.as_ref(), buffer.len),
            (Inner::Cuda(c), Storage::External { on: BackendKind::Cuda, .. }) => {
                let mut out = vec![T::default(); buffer.len];
                // SAFETY: the buffer views `len` live elements of this device (`borrow_external`).
                unsafe { c.read_raw(buffer.device_addr(), &mut out)? };
                Ok(out)
            }
            (Inner::Emulator(_), _) => Ok(buffer.host_slice()?.to_vec()),
            _ => Err(foreign_buffer()),
        }
    }

    /// Copies `data` into `buffer` (of the same length).
    fn write_from_host<T: Element>(&self, data: &[T], buffer: &mut Buffer<T>) -> Result<()> {
        if self.measuring() || data.is_empty() {
            return Ok(());
        }
        match &self.inner {
            // SAFETY: the buffer views `len` live elements of this device, no one else writes them.
            Inner::Cuda(c) => unsafe { c.write_raw(buffer.device_addr(), data) },
            Inner::Emulator(_) => {
                buffer.host_slice_mut()?.copy_from_slice(data);
                Ok(())
            }
        }
    }

    /// Sets every element of `buffer` to zero.
    pub fn fill_zeros<T: Element>(&self, buffer: &mut Buffer<T>) -> Result<()> {
        if self.measuring() {
            return Ok(());
        }
        match (&self.inner, &mut buffer.storage) {
            (Inner::Cuda(c), Storage::Cuda(s)) => c.fill_zeros(s.as_mut()),
            (Inner::Cuda(c), Storage::External { addr, on: BackendKind::Cuda }) => {
                // SAFETY: the buffer views `len` live elements of this device that no one else
                // writes (`borrow_external`).
                unsafe { c.zero_raw(*addr, buffer.len * std::mem::size_of::<T>()) }
            }
            (Inner::Emulator(_), _) => {
                buffer.host_slice_mut()?.fill(T::default());
                Ok(())
            }
            _ => Err(foreign_buffer()),
        }
    }

    /// Copies `src` into `dst` on the device (`dst` at least as long; the two must not overlap).
    pub fn copy<T: Element>(&self, src: &Buffer<T>, dst: &mut Buffer<T>) -> Result<()> {
        if dst.len < src.len {
            return Err(crate::Error::ShapeMismatch { op: "copy", what: "dst", expected: src.len, got: dst.len });
        }
        if self.measuring() || src.len == 0 {
            return Ok(());
        }
        self.counters.copies.fetch_add(1, Ordering::Relaxed);
        let bytes = src.len * std::mem::size_of::<T>();
        let (s, d) = (src.device_addr(), dst.device_addr());
        // External buffers may alias each other: refuse overlap rather than copy wrongly.
        if s < d + bytes as u64 && d < s + bytes as u64 {
            return Err(Error::Unsupported { what: "copying between overlapping buffers".to_string() });
        }
        match (&self.inner, &src.storage, &dst.storage) {
            (Inner::Cuda(c), from, to) if from.on_device() && to.on_device() => {
                // SAFETY: both view live device memory of at least `src.len` elements (lengths
                // checked above) that do not overlap (checked above); `dst` is written by no one else.
                unsafe { c.copy_raw(s, d, bytes) }
            }
            (Inner::Emulator(_), _, _) => {
                let (s, d) = (src.host_slice()?.as_ptr(), dst.host_slice_mut()?.as_mut_ptr());
                // SAFETY: both are live host buffers of at least `src.len` elements (`dst.len`
                // checked above) that do not overlap (checked above).
                unsafe { std::ptr::copy_nonoverlapping(s, d, src.len) };
                Ok(())
            }
            _ => Err(foreign_buffer()),
        }
    }

    /// Free and total device memory in bytes, as the driver reports them (`None` under the
    /// emulator).
    pub fn device_memory(&self) -> Result<Option<(usize, usize)>> {
        match &self.inner {
            Inner::Cuda(c) => c.memory_info().map(Some),
            Inner::Emulator(_) => Ok(None),
        }
    }

    /// Launches `kernel` with `params` (asynchronously on the GPU, to completion on the emulator).
    ///
    /// # Safety
    /// Every slice in `params` must view a live [`Buffer`] of this backend, within its length;
    /// read-only slices ([`GSlice`]) must not overlap writable ones ([`GSliceMut`]); and the kernel
    /// must be correct for the launch shape (the emulator checks this, the GPU does not). The
    /// kernel must be one of `dfgnn_device`'s (only those are in the PTX module the GPU loads).
    pub unsafe fn launch<P: LaunchParams>(
        &self,
        kernel: &KernelRef<P>,
        config: &LaunchConfig,
        params: &P,
    ) -> Result<()> {
        if self.measuring() {
            return Ok(());
        }
        self.counters.launches.fetch_add(1, Ordering::Relaxed);
        match &self.inner {
            // SAFETY: forwarded contract.
            Inner::Cuda(c) => unsafe { c.launch(kernel, config, params) },
            Inner::Emulator(_) => {
                // SAFETY: forwarded contract; emulator buffers are host memory.
                unsafe { dfgnn_device::simt::emu::launch(kernel, config, params) }.map(|_| ()).map_err(Into::into)
            }
        }
    }

    /// The most threads per block `kernel` can launch with: its register use bounds it on the GPU
    /// (the emulator allows the hardware maximum, 1024).
    pub fn max_threads_per_block<P>(&self, kernel: &KernelRef<P>) -> Result<u32> {
        match &self.inner {
            Inner::Cuda(c) => c.max_threads_per_block(kernel.name),
            Inner::Emulator(_) => Ok(dfgnn_device::simt::emu::MAX_THREADS_PER_BLOCK),
        }
    }

    /// The stream work goes to now (the call scope's, else the backend's own) as a raw
    /// `CUstream`, with the device's primary context made current on this thread, for a library
    /// that queues kernels of its own (cuSPARSE); `None` under the emulator. The stream lives as
    /// long as the backend (or the call scope that lent it).
    #[cfg(feature = "cusparse")]
    pub(crate) fn raw_stream(&self) -> Result<Option<cudarc::driver::sys::CUstream>> {
        match &self.inner {
            Inner::Cuda(c) => c.raw_stream().map(Some),
            Inner::Emulator(_) => Ok(None),
        }
    }

    /// Counts one call of a library routine (a cuSPARSE product, which launches kernels of its
    /// own) among [`Counts::launches`].
    #[cfg(feature = "cusparse")]
    pub(crate) fn count_library_call(&self) {
        self.counters.launches.fetch_add(1, Ordering::Relaxed);
    }

    /// Waits for all work queued on the backend's own stream (or the borrowed one, inside
    /// [`Backend::within`]).
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner {
            Inner::Cuda(c) => c.synchronize(),
            Inner::Emulator(_) => Ok(()),
        }
    }

    /// Waits for all work queued on the device by anyone in this process (every stream of its
    /// context; nothing under the emulator): before freeing memory that other streams' work may
    /// still read.
    pub fn synchronize_device(&self) -> Result<()> {
        match &self.inner {
            Inner::Cuda(c) => c.synchronize_device(),
            Inner::Emulator(_) => Ok(()),
        }
    }

    /// Runs `work`, then gives the calling thread back the CUDA context it had current before (dfgnn
    /// makes its device's primary context current as it works; a caller such as PyTorch keeps its
    /// own idea of the current device). Under the emulator it just runs `work`.
    pub fn keeping_current_context<R>(&self, work: impl FnOnce() -> R) -> R {
        match &self.inner {
            Inner::Cuda(_) => cuda::keeping_current_context(work),
            Inner::Emulator(_) => work(),
        }
    }

    /// Runs `work` and returns how long the device took, in milliseconds: CUDA events around it on
    /// the GPU, the wall clock under the emulator. `work` may fail with any error that a dfgnn
    /// [`Error`] converts into.
    pub fn time<R, E: From<crate::Error>>(&self, work: impl FnOnce() -> Result<R, E>) -> Result<(R, f64), E> {
        match &self.inner {
            Inner::Cuda(c) => c.time(work),
            Inner::Emulator(_) => {
                let start = std::time::Instant::now();
                let r = work()?;
                Ok((r, start.elapsed().as_secs_f64() * 1e3))
            }
        }
    }

    /// Bytes of this backend's buffers alive now.
    pub fn memory_in_use(&self) -> usize {
        self.memory.current.load(Ordering::Relaxed)
    }

    /// The most bytes of this backend's buffers alive at once since it was made (or reset).
    pub fn peak_memory(&self) -> usize {
        self.memory.peak.load(Ordering::Relaxed)
    }

    /// Restarts [`Backend::peak_memory`] from the bytes in use now.
    pub fn reset_peak_memory(&self) {
        self.memory.peak.store(self.memory_in_use(), Ordering::Relaxed);
    }
}

fn foreign_buffer() -> crate::Error {
    crate::Error::Unsupported { what: "a buffer of one backend used with another".to_string() }
}

enum Storage<T: Element> {
    /// `None` for an empty buffer (the driver allocates no zero-byte buffers).
    Cuda(Option<CudaSlice<T>>),
    Host(HostVec<T>),
    /// Memory someone else owns ([`Backend::borrow_external`]), on the backend `on`.
    External {
        addr: u64,
        on: BackendKind,
    },
}

impl<T: Element> Storage<T> {
    /// Whether the storage is CUDA device memory (the backend's own or someone else's).
    fn on_device(&self) -> bool {
        matches!(self, Self::Cuda(_) | Self::External { on: BackendKind::Cuda, .. })
    }
}

/// Host memory standing in for device memory under the emulator: 16-byte aligned, as `F4` views
/// need (the driver's allocations are 256-byte aligned).
struct HostVec<T: Element> {
    words: Vec<u128>,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Element> HostVec<T> {
    /// `len` elements whose 16-byte words are all `word`; `None` when their size overflows or the
    /// system refuses the memory (never an abort).
    fn filled(len: usize, word: u128) -> Option<Self> {
        let words = len.checked_mul(std::mem::size_of::<T>())?.div_ceil(16);
        let mut v = Vec::new();
        v.try_reserve_exact(words).ok()?;
        v.resize(words, word);
        Some(Self { words: v, len, _t: std::marker::PhantomData })
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: `words` holds at least `len` elements' bytes, 16-byte aligned (more than any
        // `Element` needs), and every bit pattern (zeros included) is a valid `Element`.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr() as *const T, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr() as *mut T, self.len) }
    }
}

/// Device memory holding `len` elements of `T`, owned by one [`Backend`].
pub struct Buffer<T: Element> {
    storage: Storage<T>,
    len: usize,
    bytes: usize,
    memory: Arc<MemoryCounter>,
}

impl<T: Element> Buffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements, for a buffer in host memory (the emulator's, or external memory lent to it).
    fn host_slice(&self) -> Result<&[T]> {
        match &self.storage {
            Storage::Host(v) => Ok(v.as_slice()),
            Storage::External { on: BackendKind::Emulator, .. } if self.len == 0 => Ok(&[]),
            Storage::External { addr, on: BackendKind::Emulator } => {
                // SAFETY: `borrow_external`'s contract: `len` live, aligned elements at `addr`.
                Ok(unsafe { std::slice::from_raw_parts(*addr as usize as *const T, self.len) })
            }
            _ => Err(foreign_buffer()),
        }
    }

    /// The elements, writable, for a buffer in host memory.
    fn host_slice_mut(&mut self) -> Result<&mut [T]> {
        match &mut self.storage {
            Storage::Host(v) => Ok(v.as_mut_slice()),
            Storage::External { on: BackendKind::Emulator, .. } if self.len == 0 => Ok(&mut []),
            Storage::External { addr, on: BackendKind::Emulator } => {
                // SAFETY: `borrow_external`'s contract: `len` live, aligned elements at `addr` that
                // no one else writes; `&mut self` makes this the only view through the buffer.
                Ok(unsafe { std::slice::from_raw_parts_mut(*addr as usize as *mut T, self.len) })
            }
            _ => Err(foreign_buffer()),
        }
    }

    /// The address of the first element (0 for an empty device buffer).
    pub(crate) fn device_addr(&self) -> u64 {
        match &self.storage {
            Storage::Cuda(Some(s)) => cuda::device_address(s),
            Storage::Cuda(None) => 0,
            Storage::Host(v) => v.as_slice().as_ptr() as u64,
            Storage::External { addr, .. } => *addr,
        }
    }

    /// A read-only kernel view of the buffer.
    pub fn view(&self) -> GSlice<T> {
        let addr = match &self.storage {
            Storage::Cuda(Some(s)) => cuda::device_address(s),
            Storage::Cuda(None) => return GSlice::empty(),
            Storage::Host(v) => v.as_slice().as_ptr() as u64,
            Storage::External { .. } if self.len == 0 => return GSlice::empty(),
            Storage::External { addr, .. } => *addr,
        };
        // SAFETY: `addr` holds `len` elements of `T` for as long as the buffer lives; launches
        // that use the view promise (in their SAFETY comments) that it outlives them.
        unsafe { GSlice::from_raw_parts(addr, self.len) }
    }

    /// A writable kernel view of the buffer.
    pub fn view_mut(&mut self) -> GSliceMut<T> {
        let addr = match &mut self.storage {
            Storage::Cuda(Some(s)) => cuda::device_address(s),
            Storage::Cuda(None) => return GSliceMut::empty(),
            Storage::Host(v) => v.as_mut_slice().as_mut_ptr() as u64,
            Storage::External { .. } if self.len == 0 => return GSliceMut::empty(),
            Storage::External { addr, .. } => *addr,
        };
        // SAFETY: as for `view`.
        unsafe { GSliceMut::from_raw_parts(addr, self.len) }
    }
}

impl<T: Element> Drop for Buffer<T> {
    fn drop(&mut self) {
        self.memory.release(self.bytes);
    }
}

impl<T: Element> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer").field("len", &self.len).field("elem", &std::any::type_name::<T>()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emulator_refuses_allocations_past_its_budget_before_allocating() {
        let backend = Backend::emulator().with_memory_budget(1000);
        let kept = backend.zeros::<f32>(200).unwrap();
        assert_eq!(backend.memory_in_use(), 800);
        for err in [
            backend.zeros::<f32>(51).unwrap_err(),
            backend.alloc::<u64>(26).unwrap_err(),
            backend.upload(&[0.0f32; 51]).unwrap_err(),
        ] {
            match err {
                Error::OutOfMemory { free: 200, total: 1000, requested, .. } => assert!(requested > 200),
                other => panic!("expected OutOfMemory, got {other}"),
            }
        }
        assert_eq!(backend.memory_in_use(), 800, "a refused allocation counts nothing");
        let rest = backend.upload(&[1.0f32; 50]).unwrap();
        assert_eq!(backend.memory_in_use(), 1000);
        drop((kept, rest));
        assert_eq!(backend.memory_in_use(), 0);
        assert_eq!(backend.zeros::<f32>(250).unwrap().len(), 250, "freed memory is free again");
    }

    #[test]
    fn sizes_that_overflow_or_that_the_system_refuses_are_errors_not_aborts() {
        let backend = Backend::emulator();
        let err = backend.alloc::<u64>(usize::MAX / 4).unwrap_err();
        assert!(matches!(err, Error::Unsupported { ref what } if what.contains("overflows")), "{err}");
        // Within the budget but more than the system can give: refused by the host allocator.
        let err = backend.with_memory_budget(usize::MAX).zeros::<u32>(usize::MAX / 8).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
    }

    #[test]
    fn the_emulator_budget_defaults_to_the_machines_available_memory() {
        let budget = Backend::emulator().memory_budget();
        assert!(budget > 1 << 20 && budget < usize::MAX, "budget {budget}");
    }
}
