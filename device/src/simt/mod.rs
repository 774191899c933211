//! The one seam between the GPU and the SIMT emulator.
//!
//! Kernels use only what this module exports; it alone knows which machine it is compiled for.
//! On `nvptx64` every function is the PTX instruction in the table; on the host it is the
//! emulator's implementation, which also checks the kernel (see [`emu`]).
//!
//! | dfgnn | CUDA / PTX | emulator |
//! |---|---|---|
//! | [`thread_idx`], [`block_idx`], [`block_dim`], [`grid_dim`] | `threadIdx` … (`%tid` …) | the running thread's ids |
//! | [`lane_id`], [`warp_id`] | `%laneid`, linear id / 32 | linear id % / ÷ [`WARP_SIZE`] |
//! | [`sync_threads`] | `__syncthreads` (`bar.sync 0`) | block barrier; reports divergence and deadlock |
//! | [`sync_warp`] | `__syncwarp` (`bar.warp.sync`) | warp barrier over the mask |
//! | [`warp::shfl_xor`], [`warp::shfl_down`], [`warp::shfl_up`], [`warp::shfl_idx`] | `__shfl_*_sync` (`shfl.sync`) | exchange among the mask's lanes; reports a lane that reads an inactive lane |
//! | [`warp::all`], [`warp::any`], [`warp::ballot`] | `__all_sync` … (`vote.sync`) | vote among the mask's lanes |
//! | [`warp::reduce_add_u32`], [`warp::reduce_max_u32`], [`warp::reduce_min_u32`] | `__reduce_*_sync` (`redux.sync`, sm_80) | reduction among the mask's lanes |
//! | [`dynamic_shared`] → [`SharedSlice`] | `extern __shared__` (`%dynamic_smem_size`) | a per-block byte array; bounds, race and uninitialised-read checks |
//! | [`GSlice`], [`GSliceMut`] | global pointers (`ld.global.nc`, `ld.global`, `st.global`) | host pointers, bounds-checked |
//! | [`SharedSlice::copy_async`], [`async_wait_all`] | `cp.async` (sm_80), `cp.async.wait_all` | the global word read at the start, written to shared memory at the wait; a race-checked write from start to wait; unwaited copies at exit reported |
//! | `atomic_add` on [`GSliceMut`] / [`SharedSlice`] | `atomicAdd` (`atom.global/shared.add`) | atomic read-modify-write |
//! | [`fence_device`] | `__threadfence` (`fence.acq_rel.gpu`) | a sequentially consistent fence (one thread runs at a time) |
//! | [`math::exp2`], [`math::log2`], [`math::rcp`], [`math::rsqrt`] | `ex2/lg2/rcp/rsqrt.approx.ftz.f32` | the exact `std` function |
//! | [`math::sqrt`], [`math::fma`] | `sqrt.rn.f32`, `fma.rn.f32` | `f32::sqrt`, `f32::mul_add` (bit-identical) |
//! | [`kernel!`](crate::kernel!) | `extern "ptx-kernel" fn` | a plain `fn(&Params)` the emulator calls per thread |

#[cfg(not(target_arch = "nvptx64"))]
pub mod emu;
#[cfg(target_arch = "nvptx64")]
mod gpu;
mod memory;
mod word;

#[cfg(not(target_arch = "nvptx64"))]
use emu as backend;
#[cfg(target_arch = "nvptx64")]
use gpu as backend;

pub use memory::{GSlice, GSliceMut, SharedMem, SharedSlice, dynamic_shared};
pub use word::{F2, F4, Word};

/// Threads per warp. Kernels use this constant, never a literal 32.
pub const WARP_SIZE: u32 = 32;

/// The mask naming every lane of a warp.
pub const FULL_MASK: u32 = u32::MAX;

/// A 3-component size or index, as CUDA's `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Fastest-varying component.
    pub x: u32,
    /// Middle component.
    pub y: u32,
    /// Slowest-varying component.
    pub z: u32,
}

impl Dim3 {
    /// `(x, y, z)`.
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Self { x, y, z }
    }

    /// `(x, 1, 1)`.
    pub const fn x(x: u32) -> Self {
        Self { x, y: 1, z: 1 }
    }

    /// `x * y * z` (as u64: a grid may hold more than 2^32 threads in all).
    pub const fn volume(&self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

/// The four exchange patterns of `shfl.sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleMode {
    /// Read lane `lane ^ operand` (butterfly).
    Xor,
    /// Read lane `lane + operand`, or keep the own value past the warp's end.
    Down,
    /// Read lane `lane - operand`, or keep the own value before lane 0.
    Up,
    /// Read lane `operand % WARP_SIZE`.
    Idx,
}

/// Index of this thread within its block.
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    backend::thread_idx()
}

/// Index of this block within the grid.
#[inline(always)]
pub fn block_idx() -> Dim3 {
    backend::block_idx()
}

/// Threads per block.
#[inline(always)]
pub fn block_dim() -> Dim3 {
    backend::block_dim()
}

/// Blocks per grid.
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    backend::grid_dim()
}

/// This thread's linear index within its block (`x + y·dx + z·dx·dy`).
#[inline(always)]
pub fn linear_thread_idx() -> u32 {
    let t = thread_idx();
    let d = block_dim();
    t.x + d.x * (t.y + d.y * t.z)
}

/// This thread's lane within its warp.
#[inline(always)]
pub fn lane_id() -> u32 {
    backend::lane_id()
}

/// This thread's warp within its block.
#[inline(always)]
pub fn warp_id() -> u32 {
    linear_thread_idx() / WARP_SIZE
}

/// Block-wide barrier: every thread of the block must reach the same barrier.
#[inline(always)]
#[track_caller]
pub fn sync_threads() {
    backend::sync_threads()
}

/// Warp barrier among the lanes of `mask` (which must include the calling lane).
#[inline(always)]
#[track_caller]
pub fn sync_warp(mask: u32) {
    backend::sync_warp(mask)
}

/// Device-wide memory fence: the calling thread's global writes before it are seen by every
/// thread that sees its writes or atomics after it (release), and its reads after it see what
/// the writers it synchronised with wrote before their fences (acquire).
#[inline(always)]
pub fn fence_device() {
    backend::fence_device()
}

/// Waits until every asynchronous copy the calling thread started
/// ([`SharedSlice::copy_async`]) has landed in shared memory (`cp.async.wait_all`); a barrier
/// after it makes them visible to the block.
#[inline(always)]
pub fn async_wait_all() {
    backend::async_wait_all()
}

/// Asks the PTX assembler not to unroll the innermost loop whose body this call opens
/// (`.pragma "nounroll"` in the loop's header): for loops whose unrolled copies cost more in code
/// size (a kernel's instruction cache) than they save in branches. Nothing on the emulator.
#[inline(always)]
pub fn no_unroll() {
    backend::no_unroll()
}

/// A 32-bit value a warp shuffle can move.
pub trait ShuffleValue: Copy {
    /// The value's bits.
    fn to_bits32(self) -> u32;
    /// The value from its bits.
    fn from_bits32(bits: u32) -> Self;
}

impl ShuffleValue for u32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        bits
    }
}

impl ShuffleValue for i32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        bits as i32
    }
}

impl ShuffleValue for f32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

/// Warp-level exchange, vote and reduction. Every lane named in `mask` must make the same call.
pub mod warp {
    use super::{ShuffleMode, ShuffleValue, backend};

    /// `__shfl_xor_sync`: the value of lane `lane_id ^ lane_mask`.
    #[inline(always)]
    #[track_caller]
    pub fn shfl_xor<T: ShuffleValue>(mask: u32, value: T, lane_mask: u32) -> T {
        T::from_bits32(backend::shuffle(ShuffleMode::Xor, mask, value.to_bits32(), lane_mask))
    }

    /// `__shfl_down_sync`: the value of lane `lane_id + delta` (own value past the end).
    #[inline(always)]
    #[track_caller]
    pub fn shfl_down<T: ShuffleValue>(mask: u32, value: T, delta: u32) -> T {
        T::from_bits32(backend::shuffle(ShuffleMode::Down, mask, value.to_bits32(), delta))
    }

    /// `__shfl_up_sync`: the value of lane `lane_id - delta` (own value below lane `delta`).
    #[inline(always)]
    #[track_caller]
    pub fn shfl_up<T: ShuffleValue>(mask: u32, value: T, delta: u32) -> T {
        T::from_bits32(backend::shuffle(ShuffleMode::Up, mask, value.to_bits32(), delta))
    }

    /// `__shfl_sync`: the value of lane `src_lane`.
    #[inline(always)]
    #[track_caller]
    pub fn shfl_idx<T: ShuffleValue>(mask: u32, value: T, src_lane: u32) -> T {
        T::from_bits32(backend::shuffle(ShuffleMode::Idx, mask, value.to_bits32(), src_lane))
    }

    /// `__ballot_sync`: bit `l` set when lane `l` of `mask` passed `true`.
    #[inline(always)]
    #[track_caller]
    pub fn ballot(mask: u32, predicate: bool) -> u32 {
        backend::vote_ballot(mask, predicate)
    }

    /// `__all_sync`: whether every lane of `mask` passed `true`.
    #[inline(always)]
    #[track_caller]
    pub fn all(mask: u32, predicate: bool) -> bool {
        ballot(mask, predicate) == mask
    }

    /// `__any_sync`: whether some lane of `mask` passed `true`.
    #[inline(always)]
    #[track_caller]
    pub fn any(mask: u32, predicate: bool) -> bool {
        ballot(mask, predicate) != 0
    }

    /// `__reduce_add_sync` (sm_80): the wrapping sum over the lanes of `mask`.
    #[inline(always)]
    #[track_caller]
    pub fn reduce_add_u32(mask: u32, value: u32) -> u32 {
        backend::reduce_add_u32(mask, value)
    }

    /// `__reduce_max_sync` (sm_80): the maximum over the lanes of `mask`.
    #[inline(always)]
    #[track_caller]
    pub fn reduce_max_u32(mask: u32, value: u32) -> u32 {
        backend::reduce_max_u32(mask, value)
    }

    /// `__reduce_min_sync` (sm_80): the minimum over the lanes of `mask`.
    #[inline(always)]
    #[track_caller]
    pub fn reduce_min_u32(mask: u32, value: u32) -> u32 {
        backend::reduce_min_u32(mask, value)
    }
}

/// Fast math. The approximate GPU instructions (`exp2`, `log2`, `rcp`, `rsqrt`, with flush to
/// zero) are exact `std` functions under the emulator; tests allow for the difference.
pub mod math {
    use super::backend;

    /// `2^x` (`ex2.approx.ftz.f32`: max relative error 2^-22 on the GPU).
    #[inline(always)]
    pub fn exp2(x: f32) -> f32 {
        backend::exp2(x)
    }

    /// `log2(x)` (`lg2.approx.ftz.f32`).
    #[inline(always)]
    pub fn log2(x: f32) -> f32 {
        backend::log2(x)
    }

    /// `1/x` (`rcp.approx.ftz.f32`).
    #[inline(always)]
    pub fn rcp(x: f32) -> f32 {
        backend::rcp(x)
    }

    /// `sqrt(x)`, correctly rounded (`sqrt.rn.f32`).
    #[inline(always)]
    pub fn sqrt(x: f32) -> f32 {
        backend::sqrt(x)
    }

    /// `1/sqrt(x)` (`rsqrt.approx.ftz.f32`).
    #[inline(always)]
    pub fn rsqrt(x: f32) -> f32 {
        backend::rsqrt(x)
    }

    /// `a·b + c` with one rounding (`fma.rn.f32`).
    #[inline(always)]
    pub fn fma(a: f32, b: f32, c: f32) -> f32 {
        backend::fma(a, b, c)
    }

    /// `log2(e)`: `exp(x) = exp2(x · LOG2_E)`.
    pub const LOG2_E: f32 = core::f32::consts::LOG2_E;

    /// `ln(2)`: `ln(x) = log2(x) · LN_2`.
    pub const LN_2: f32 = core::f32::consts::LN_2;
}

/// The shape of a launch: grid and block sizes and the dynamic shared memory per block.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks per grid.
    pub grid: Dim3,
    /// Threads per block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
}

/// A kernel as the host sees it: its PTX symbol and, for the emulator, its per-thread body. It
/// exists on both machines so that kernel tables need no `cfg`; on `nvptx64` it is only a name.
pub struct KernelRef<P: 'static> {
    /// The entry's name in the PTX module.
    pub name: &'static str,
    /// What one thread runs.
    #[cfg(not(target_arch = "nvptx64"))]
    pub body: fn(&P),
    /// The parameter type, on the GPU (where there is no body to name it).
    #[cfg(target_arch = "nvptx64")]
    pub params: core::marker::PhantomData<fn(&P)>,
}

impl<P> Clone for KernelRef<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for KernelRef<P> {}

impl<P> PartialEq for KernelRef<P> {
    /// Kernels are equal when their PTX symbols are (the symbol names the body).
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl<P> Eq for KernelRef<P> {}

impl<P> core::fmt::Debug for KernelRef<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KernelRef").field("name", &self.name).finish()
    }
}

/// Defines a kernel once for both machines.
///
/// ```ignore
/// kernel! {
///     /// Doc comment.
///     pub kernel ROW_SOFTMAX = fn csr_row_softmax(p: &RowSoftmaxParams) { /* body */ }
/// }
/// ```
///
/// On `nvptx64` this is the entry `csr_row_softmax` (taking the parameter struct by value); on the
/// host, a function of the same name running one thread's body, and the [`KernelRef`] constant
/// `ROW_SOFTMAX` the host library launches by.
#[macro_export]
macro_rules! kernel {
    (
        $(#[$meta:meta])*
        $vis:vis kernel $konst:ident = fn $name:ident($p:ident: &$params:ty) $body:block
    ) => {
        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        $vis unsafe extern "ptx-kernel" fn $name($p: $params) {
            let $p: &$params = &$p;
            $body
        }

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        $vis fn $name($p: &$params) $body

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = concat!("Launch handle of [`", stringify!($name), "`].")]
        $vis const $konst: $crate::simt::KernelRef<$params> =
            $crate::simt::KernelRef { name: stringify!($name), body: $name };

        #[cfg(target_arch = "nvptx64")]
        #[doc = concat!("The name of the entry `", stringify!($name), "`.")]
        $vis const $konst: $crate::simt::KernelRef<$params> =
            $crate::simt::KernelRef { name: stringify!($name), params: core::marker::PhantomData };
    };
}
