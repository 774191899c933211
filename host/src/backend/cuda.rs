//! The CUDA backend: a context on one device, one stream, dfgnn's PTX module, and launches.
//!
//! All work goes to one stream, so it runs in the order it is queued; the context's per-buffer
//! event tracking (for multi-stream use) is switched off.

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
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// Loaded functions, the dynamic shared memory each is opted in to, and its thread limit
    /// (read once: it is asked before every launch).
    functions: Mutex<HashMap<&'static str, Loaded>>,
    limits: DeviceLimits,
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

impl CudaBackend {
    pub fn new(ordinal: usize) -> Result<Self> {
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
        // SAFETY: dfgnn queues all work on one stream, so no cross-stream tracking is needed.
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
        let stream = ctx.default_stream();
        let module = ctx.load_module(Ptx::from_src(PTX)).during(|| "loading dfgnn's PTX module".to_string())?;
        Ok(Self { ctx, stream, module, functions: Mutex::default(), limits })
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
        self.stream
            .clone_htod(data)
            .map(Some)
            .map_err(|e| self.out_of_memory(format!("uploading {} elements", data.len()), bytes, e))
    }

    pub fn zeros<T: Element>(&self, len: usize) -> Result<Option<CudaSlice<T>>> {
        if len == 0 {
            return Ok(None);
        }
        let bytes = len * std::mem::size_of::<T>();
        self.stream
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
        unsafe { self.stream.alloc(len) }
            .map(Some)
            .map_err(|e| self.out_of_memory(format!("allocating {len} elements"), bytes, e))
    }

    pub fn download<T: Element>(&self, slice: Option<&CudaSlice<T>>, len: usize) -> Result<Vec<T>> {
        match slice {
            None => Ok(Vec::new()),
            Some(s) => self.stream.clone_dtoh(s).during(|| format!("downloading {len} elements")),
        }
    }

    pub fn fill_zeros<T: Element>(&self, slice: Option<&mut CudaSlice<T>>) -> Result<()> {
        match slice {
            None => Ok(()),
            Some(s) => self.stream.memset_zeros(s).during(|| "zeroing a buffer".to_string()),
        }
    }

    pub fn copy<T: Element>(&self, src: &CudaSlice<T>, dst: &mut CudaSlice<T>) -> Result<()> {
        self.stream.memcpy_dtod(src, dst).during(|| format!("copying {} elements on the device", src.len()))
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
                self.stream.cu_stream(),
                &mut args,
            )
        }
        .during(|| format!("launching `{}` with {config:?}", kernel.name))
    }

    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().during(|| "waiting for the device".to_string())
    }

    pub fn time<R, E: From<Error>>(&self, work: impl FnOnce() -> Result<R, E>) -> Result<(R, f64), E> {
        let event =
            || self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).during(|| "creating an event".to_string());
        let (start, end) = (event()?, event()?);
        start.record(&self.stream).during(|| "recording an event".to_string())?;
        let r = work()?;
        end.record(&self.stream).during(|| "recording an event".to_string())?;
        let ms = start.elapsed_ms(&end).during(|| "reading an event timer".to_string())?;
        Ok((r, ms as f64))
    }
}
