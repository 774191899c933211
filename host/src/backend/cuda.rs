//! The CUDA backend: the primary context of one device, a stream, dfgnn's PTX module, launches.
//!
//! Work goes to the backend's own stream (never the null stream), or, inside
//! [`Backend::within`](super::Backend::within), to the stream the caller lent (PyTorch's current
//! stream), so it runs in the order it is queued on either. The context's per-buffer event
//! tracking (cudarc's multi-stream bookkeeping) is switched off: ordering across the two is the
//! caller's (the Python layer prepares graphs on the backend's stream and waits for it once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError};
use cudarc::nvrtc::Ptx;
use dfgnn_device::abi::LaunchParams;
use dfgnn_device::simt::{KernelRef, LaunchConfig};

use super::{DeviceLimits, Element};
use crate::error::{DriverContext, Error, Result};

/// The generated PTX of every kernel (see `device/README.md`).
pub(crate) const PTX: &str = include_str!("../../../device/ptx/dfgnn_device.ptx");

pub(super) struct CudaBackend {
    ctx: Arc<CudaContext>,
    /// The backend's own stream, for work outside a call scope.
    stream: Arc<CudaStream>,
    /// The owning `Backend`'s id (which call scopes apply to it).
    id: u64,
    module: Arc<CudaModule>,
    /// Loaded functions, the dynamic shared memory each is opted in to, and its thread limit
    /// (read once: it is asked before every launch).
    functions: Mutex<HashMap<&'static str, Loaded>>,
    limits: DeviceLimits,
}

/// Runs `work`, then makes the context that was current on this thread current again.
pub(super) fn keeping_current_context<R>(work: impl FnOnce() -> R) -> R {
    let before = cudarc::driver::result::ctx::get_current().ok().flatten();
    let r = work();
    if let Some(ctx) = before {
        // SAFETY: `ctx` was this thread's current context a moment ago and dfgnn destroys no
        // context (primary contexts stay retained by their `CudaContext`s and by the runtime);
        // an error leaves the thread with the context `work` left, which is no worse.
        let _ = unsafe { cudarc::driver::result::ctx::set_current(ctx) };
    }
    r
}

/// The device address of a buffer.
pub(super) fn device_address<T>(slice: &CudaSlice<T>) -> u64 {
    let (ptr, _sync) = slice.device_ptr(slice.stream());
    ptr
}

/// A loaded kernel: the function, the dynamic shared memory it is opted in to, and its thread
/// limit.
#[derive(Clone)]
struct Loaded {
    function: CudaFunction,
    shared_bytes: u32,
    max_threads: u32,
}

/// Makes the device's default memory pool, which dfgnn's stream-ordered allocations come from,
/// keep what is freed for the next allocation instead of handing it back to the driver at every
/// synchronisation (its release threshold, 0 bytes by default, becomes unlimited).
fn keep_freed_memory(ctx: &CudaContext) -> Result<()> {
    use cudarc::driver::sys::{self, CUmemPool_attribute};
    let Some(pool) = default_pool(ctx)? else { return Ok(()) };
    let mut threshold: u64 = u64::MAX;
    // SAFETY: `pool` is the device's live default pool; the release threshold attribute takes a
    // pointer to a u64, which `threshold` is for the duration of the call.
    unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    }
    .result()
    .during(|| "setting the memory pool's release threshold".to_string())
}

/// Hands the memory the default pool keeps but nothing uses back to the driver, after the
/// device's work (and so its frees) completed: what an allocation that found no room retries after.
fn release_freed_memory(ctx: &CudaContext) -> Result<()> {
    let Some(pool) = default_pool(ctx)? else { return Ok(()) };
    ctx.synchronize().during(|| "waiting for the device before trimming its memory pool".to_string())?;
    // SAFETY: `pool` is the device's live default pool; trimming only releases unused memory.
    unsafe { cudarc::driver::sys::cuMemPoolTrimTo(pool, 0) }.result().during(|| "trimming the memory pool".to_string())
}

/// The device's default memory pool, which stream-ordered allocations come from (`None` when the
/// device has no stream-ordered allocator).
fn default_pool(ctx: &CudaContext) -> Result<Option<cudarc::driver::sys::CUmemoryPool>> {
    if !ctx.has_async_alloc() {
        return Ok(None);
    }
    let mut pool: cudarc::driver::sys::CUmemoryPool = std::ptr::null_mut();
    ctx.bind_to_thread().during(|| "making the device's primary context current".to_string())?;
    // SAFETY: `pool` is a valid out-pointer for the call, and the device handle is the context's.
    unsafe { cudarc::driver::sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) }
        .result()
        .during(|| "reading the device's default memory pool".to_string())?;
    Ok(Some(pool))
}

impl CudaBackend {
    pub fn new(ordinal: usize, id: u64) -> Result<Self> {
        // SAFETY: only probes whether the driver library can be loaded.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoDevice { reason: "the CUDA driver library (libcuda.so) was not found".to_string() });
        }
        let count = CudaContext::device_count()
            .map_err(|e| Error::NoDevice { reason: format!("the CUDA driver reports {e}") })?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::NoDevice { reason: format!("device {ordinal} asked for, {count} present") });
        }
        let ctx = CudaContext::new(ordinal).during(|| format!("creating a context on device {ordinal}"))?;
        // SAFETY: dfgnn orders its work itself (one stream at a time; see the module header), so
        // no cross-stream tracking is needed.
        unsafe { ctx.disable_event_tracking() };
        let (major, minor) = ctx.compute_capability().during(|| "reading the compute capability".to_string())?;
        if major < 8 {
            return Err(Error::Unsupported {
                what: format!("compute capability {major}.{minor}; dfgnn's PTX needs sm_80 or newer"),
            });
        }
        let attr = |a: CUdevice_attribute| -> Result<u32> {
            ctx.attribute(a).map(|v| v as u32).during(|| format!("reading {a:?}"))
        };
        let limits = DeviceLimits {
            name: ctx.name().during(|| "reading the device name".to_string())?,
            compute_capability: (major as u32, minor as u32),
            multiprocessors: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_shared_per_block: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            shared_per_multiprocessor: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            )?,
            l2_bytes: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
            total_memory: ctx.total_mem().during(|| "reading the memory size".to_string())? as u64,
        };
        let stream = ctx.new_stream().during(|| "creating a stream".to_string())?;
        let module = ctx.load_module(Ptx::from_src(PTX)).during(|| "loading dfgnn's PTX module".to_string())?;
        Ok(Self { ctx, stream, id, module, functions: Mutex::default(), limits })
    }

    /// See [`keep_freed_memory`].
    pub fn keep_freed_memory(&self) -> Result<()> {
        keep_freed_memory(&self.ctx)
    }

    /// The stream work goes to now: the call scope's, else the backend's own.
    fn stream(&self) -> Arc<CudaStream> {
        super::scope_stream(self.id).unwrap_or_else(|| self.stream.clone())
    }

    /// The stream work goes to now, as a raw `CUstream`, with the primary context current on
    /// this thread (for cuSPARSE, which queues its kernels on the stream it is given).
    #[cfg(feature = "cusparse")]
    pub fn raw_stream(&self) -> Result<cudarc::driver::sys::CUstream> {
        self.ctx.bind_to_thread().during(|| "making the device's primary context current".to_string())?;
        Ok(self.stream().cu_stream())
    }

    /// `raw` (a `CUstream`) as a stream of this context, which becomes the thread's current one.
    ///
    /// # Safety
    /// `raw` is a live stream of this device's primary context for as long as the result and the
    /// work queued through it live.
    pub unsafe fn borrow_stream(&self, raw: u64) -> Result<Arc<CudaStream>> {
        self.ctx.bind_to_thread().during(|| "making the device's primary context current".to_string())?;
        // SAFETY: forwarded contract; the context is the primary one, which PyTorch's streams
        // belong to.
        Ok(unsafe { self.ctx.wrap_borrowed_stream(raw as cudarc::driver::sys::CUstream) })
    }

    /// Copies `out.len()` elements at device address `src` to the host, then waits for them.
    ///
    /// # Safety
    /// `src` holds `out.len()` live elements of this device.
    pub unsafe fn read_raw<T: Element>(&self, src: u64, out: &mut [T]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let stream = self.stream();
        // SAFETY: forwarded contract; `out` is host memory of the same length, waited for below.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(out, src, stream.cu_stream()) }
            .during(|| format!("downloading {} elements", out.len()))?;
        stream.synchronize().during(|| "waiting for a download".to_string())
    }

    /// Copies `data` to device address `dst`.
    ///
    /// # Safety
    /// `dst` holds `data.len()` live elements of this device that no one else writes.
    pub unsafe fn write_raw<T: Element>(&self, dst: u64, data: &[T]) -> Result<()> {
        // SAFETY: forwarded contract; the driver stages pageable host memory before returning.
        unsafe { cudarc::driver::result::memcpy_htod_async(dst, data, self.stream().cu_stream()) }
            .during(|| format!("uploading {} elements", data.len()))
    }

    /// Zeroes `bytes` bytes at device address `dst`.
    ///
    /// # Safety
    /// As [`CudaBackend::write_raw`], for `bytes` bytes.
    pub unsafe fn zero_raw(&self, dst: u64, bytes: usize) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { cudarc::driver::result::memset_d8_async(dst, 0, bytes, self.stream().cu_stream()) }
            .during(|| format!("zeroing {bytes} bytes"))
    }

    /// Copies `bytes` bytes from device address `src` to `dst`.
    ///
    /// # Safety
    /// Both hold `bytes` live bytes of this device and do not overlap; no one else writes `dst`.
    pub unsafe fn copy_raw(&self, src: u64, dst: u64, bytes: usize) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, self.stream().cu_stream()) }
            .during(|| format!("copying {bytes} bytes on the device"))
    }

    pub fn description(&self) -> String {
        let l = &self.limits;
        format!(
            "CUDA: {} (sm_{}{}, {} SMs, {:.0} GB)",
            l.name,
            l.compute_capability.0,
            l.compute_capability.1,
            l.multiprocessors,
            l.total_memory as f64 / 1e9
        )
    }

    pub fn limits(&self) -> &DeviceLimits {
        &self.limits
    }

    fn out_of_memory(&self, during: String, requested: usize, e: DriverError) -> Error {
        if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let (free, total) = self.ctx.mem_get_info().unwrap_or((0, 0));
            Error::OutOfMemory { during, requested, free, total }
        } else {
            Error::Driver { during, source: e }
        }
    }

    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Option<CudaSlice<T>>> {
        if data.is_empty() {
            return Ok(None);
        }
        let bytes = std::mem::size_of_val(data);
        self.stream()
            .clone_htod(data)
            .map(Some)
            .map_err(|e| self.out_of_memory(format!("uploading {} elements", data.len()), bytes, e))
    }

    pub fn zeros<T: Element>(&self, len: usize) -> Result<Option<CudaSlice<T>>> {
        if len == 0 {
            return Ok(None);
        }
        let bytes = len * std::mem::size_of::<T>();
        self.stream()
            .alloc_zeros(len)
            .map(Some)
            .map_err(|e| self.out_of_memory(format!("allocating {len} elements"), bytes, e))
    }

    pub fn alloc<T: Element>(&self, len: usize) -> Result<Option<CudaSlice<T>>> {
        if len == 0 {
            return Ok(None);
        }
        let bytes = len * std::mem::size_of::<T>();
        // SAFETY: every bit pattern is a valid `Element`; callers overwrite the buffer before
        // reading it (`Backend::alloc`).
        let allocate = || unsafe { self.stream().alloc(len) };
        let out_of_memory = |e: &DriverError| e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        let result = match allocate() {
            // Memory the pool keeps (`keep_freed_memory`) may be in pieces too small for this
            // buffer: give it back and try once more.
            Err(e) if out_of_memory(&e) => {
                release_freed_memory(&self.ctx)?;
                allocate()
            }
            other => other,
        };
        result.map(Some).map_err(|e| self.out_of_memory(format!("allocating {len} elements"), bytes, e))
    }

    pub fn download<T: Element>(&self, slice: Option<&CudaSlice<T>>, len: usize) -> Result<Vec<T>> {
        match slice {
            None => Ok(Vec::new()),
            Some(s) => self.stream().clone_dtoh(s).during(|| format!("downloading {len} elements")),
        }
    }

    pub fn fill_zeros<T: Element>(&self, slice: Option<&mut CudaSlice<T>>) -> Result<()> {
        match slice {
            None => Ok(()),
            Some(s) => self.stream().memset_zeros(s).during(|| "zeroing a buffer".to_string()),
        }
    }

    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().during(|| "reading the free memory".to_string())
    }

    /// The function `name` (loaded on first use), opted in to at least `shared_bytes` of dynamic
    /// shared memory.
    fn function(&self, name: &'static str, shared_bytes: u32) -> Result<Loaded> {
        let mut functions = self.functions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let entry = match functions.entry(name) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let function =
                    self.module.load_function(name).during(|| format!("finding kernel `{name}` in the PTX module"))?;
                let max_threads = function
                    .max_threads_per_block()
                    .map(|t| t as u32)
                    .during(|| format!("reading `{name}`'s thread limit"))?;
                v.insert(Loaded { function, shared_bytes: DeviceLimits::DEFAULT_SHARED_PER_BLOCK, max_threads })
            }
        };
        if shared_bytes > entry.shared_bytes {
            entry
                .function
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared_bytes as i32,
                )
                .during(|| format!("opting `{name}` in to {shared_bytes} bytes of shared memory"))?;
            entry.shared_bytes = shared_bytes;
        }
        Ok(entry.clone())
    }

    /// The most threads per block `name` can launch with (its registers bound it).
    pub fn max_threads_per_block(&self, name: &'static str) -> Result<u32> {
        Ok(self.function(name, 0)?.max_threads)
    }

    /// # Safety
    /// As `Backend::launch`.
    pub unsafe fn launch<P: LaunchParams>(
        &self,
        kernel: &KernelRef<P>,
        config: &LaunchConfig,
        params: &P,
    ) -> Result<()> {
        if config.shared_bytes > self.limits.max_shared_per_block {
            return Err(Error::Unsupported {
                what: format!(
                    "kernel `{}` asks for {} bytes of shared memory per block; the device allows {}",
                    kernel.name, config.shared_bytes, self.limits.max_shared_per_block
                ),
            });
        }
        let function = self.function(kernel.name, config.shared_bytes)?.function;
        let mut args = [params as *const P as *mut std::ffi::c_void];
        let (g, b) = (config.grid, config.block);
        // SAFETY: `params` is the kernel's by-value parameter struct (same layout on both sides,
        // `LaunchParams`); the pointers inside it are valid per the caller's contract; the driver
        // copies the struct before this call returns.
        unsafe {
            cudarc::driver::result::launch_kernel(
                function.cu_function(),
                (g.x, g.y, g.z),
                (b.x, b.y, b.z),
                config.shared_bytes,
                self.stream().cu_stream(),
                &mut args,
            )
        }
        .during(|| format!("launching `{}` with {config:?}", kernel.name))
    }

    pub fn synchronize(&self) -> Result<()> {
        self.stream().synchronize().during(|| "waiting for the device".to_string())
    }

    pub fn synchronize_device(&self) -> Result<()> {
        self.ctx.synchronize().during(|| "waiting for the device".to_string())
    }

    pub fn time<R, E: From<Error>>(&self, work: impl FnOnce() -> Result<R, E>) -> Result<(R, f64), E> {
        let event =
            || self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).during(|| "creating an event".to_string());
        let (start, end) = (event()?, event()?);
        let stream = self.stream();
        start.record(&stream).during(|| "recording an event".to_string())?;
        let r = work()?;
        end.record(&stream).during(|| "recording an event".to_string())?;
        let ms = start.elapsed_ms(&end).during(|| "reading an event timer".to_string())?;
        Ok((r, ms as f64))
    }
}
