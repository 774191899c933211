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
//! - shared-memory data races between barriers (write/write, read/write by different threads,
//!   see [`shadow`]) and reads of shared memory no thread of the block wrote;
//! - out-of-bounds global and shared accesses, misaligned vector views;
//! - misused warp operations (masks without the caller, lanes that exited, mismatched calls,
//!   shuffles from lanes outside the mask);
//! - launches the GPU would refuse (more than 1024 threads per block, more shared memory than the
//!   H200's 227 KiB per block).
//!
//! Approximate GPU instructions (`ex2.approx`, `rcp.approx`, …) are exact here.

mod error;
mod shadow;

use core::cell::{Cell, RefCell};
use core::panic::Location;
use std::boxed::Box;
use std::collections::VecDeque;
use std::format;
use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

pub use error::{EmuError, EmuErrorKind};
use shadow::{Accessor, Shadow};

pub use super::LaunchConfig;
use super::memory::Word;
use super::{Dim3, KernelRef, ShuffleMode, WARP_SIZE};

/// Largest block the GPU runs.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Largest dynamic shared memory per block on the H200 (227 KiB, after the opt-in).
pub const MAX_SHARED_BYTES: u32 = 227 * 1024;
/// Largest grid: x below 2^31, y and z below 2^16.
pub const MAX_GRID: Dim3 = Dim3::new(i32::MAX as u32, u16::MAX as u32, u16::MAX as u32);

/// Stack of each emulated thread. Kernels keep little on the stack; 256 KiB leaves room for
/// unoptimised builds. Stacks are mapped once per OS thread and reused.
const THREAD_STACK_BYTES: usize = 256 * 1024;

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
                run_block(kernel, config, params, Dim3::new(x, y, z), &mut stats)?;
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

/// A warp-level operation a lane waits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WarpOp {
    Shuffle(ShuffleMode),
    Ballot,
    ReduceAdd,
    ReduceMax,
    ReduceMin,
    Sync,
}

#[derive(Clone, Copy)]
struct WarpCall {
    op: WarpOp,
    mask: u32,
    value: u32,
    operand: u32,
    site: &'static Location<'static>,
}

#[derive(Clone, Copy)]
enum State {
    Ready,
    Running,
    AtBarrier(&'static Location<'static>),
    InWarpOp(WarpCall),
    Exited,
}

struct Thread {
    idx: Dim3,
    state: State,
    /// The result of the warp operation the thread waited in.
    result: u32,
    yielder: *const Yielder<(), ()>,
}

/// Everything about the block being emulated. Kernel code reaches it through [`CURRENT`]; the
/// scheduler only through the same raw pointer, never holding a reference across a resume.
struct Block {
    kernel: &'static str,
    block_idx: Dim3,
    block_dim: Dim3,
    grid_dim: Dim3,
    threads: Vec<Thread>,
    current: usize,
    runnable: VecDeque<u32>,
    barrier_arrived: u32,
    barrier_site: Option<&'static Location<'static>>,
    exited: u32,
    block_serial: u64,
    epoch: u64,
    warp_epoch: Vec<u64>,
    /// Per warp: the mask most recently waited on and the lanes waiting with it (a cache of the
    /// threads' states that makes the common case, one operation per warp at a time, O(1)).
    warp_pending: Vec<(u32, u32)>,
    shared: *mut u8,
    shared_bytes: usize,
    shadow: *mut Shadow,
    error: Option<EmuError>,
    stats: LaunchStats,
}

/// What the emulator keeps per OS thread between launches.
#[derive(Default)]
struct Workspace {
    stacks: Vec<DefaultStack>,
    shared: Vec<u128>,
    shadow: Shadow,
}

std::thread_local! {
    static CURRENT: Cell<*mut Block> = const { Cell::new(core::ptr::null_mut()) };
    static WORKSPACE: RefCell<Workspace> = RefCell::new(Workspace::default());
    /// Source of barrier epochs and block serials: only grows.
    static CLOCK: Cell<u64> = const { Cell::new(0) };
}

fn tick() -> u64 {
    CLOCK.with(|c| {
        let next = c.get() + 1;
        c.set(next);
        next
    })
}

/// The payload an emulated thread unwinds with after recording a defect.
struct Abort;

fn run_block<P: Sync>(
    kernel: &KernelRef<P>,
    config: &LaunchConfig,
    params: &P,
    block_idx: Dim3,
    stats: &mut LaunchStats,
) -> Result<(), EmuError> {
    WORKSPACE.with(|ws| {
        let mut ws = ws.borrow_mut();
        let ws = &mut *ws;
        let n = config.block.volume() as usize;
        while ws.stacks.len() < n {
            let stack = DefaultStack::new(THREAD_STACK_BYTES).map_err(|e| EmuError {
                kernel: kernel.name,
                block: block_idx,
                thread: Dim3::default(),
                kind: EmuErrorKind::InvalidLaunch { reason: format!("cannot map a thread stack: {e}") },
            })?;
            ws.stacks.push(stack);
        }
        let shared_bytes = config.shared_bytes as usize;
        let words16 = shared_bytes.div_ceil(16);
        if ws.shared.len() < words16 {
            ws.shared.resize(words16, 0);
        }
        // Fresh shared memory holds garbage on the GPU; a recognisable pattern here (reads of it
        // are reported anyway).
        ws.shared[..words16].fill(u128::from_ne_bytes([0xA5; 16]));
        ws.shadow.reserve(shared_bytes);

        let d = config.block;
        let threads = (0..n as u32)
            .map(|i| Thread {
                idx: Dim3::new(i % d.x, (i / d.x) % d.y, i / (d.x * d.y)),
                state: State::Ready,
                result: 0,
                yielder: core::ptr::null(),
            })
            .collect();
        let mut block = Box::new(Block {
            kernel: kernel.name,
            block_idx,
            block_dim: d,
            grid_dim: config.grid,
            threads,
            current: 0,
            runnable: (0..n as u32).collect(),
            barrier_arrived: 0,
            barrier_site: None,
            exited: 0,
            block_serial: tick(),
            epoch: tick(),
            warp_epoch: vec![0; n.div_ceil(WARP_SIZE as usize)],
            warp_pending: vec![(0, 0); n.div_ceil(WARP_SIZE as usize)],
            shared: ws.shared.as_mut_ptr() as *mut u8,
            shared_bytes,
            shadow: &mut ws.shadow,
            error: None,
            stats: LaunchStats::default(),
        });
        let bp: *mut Block = &mut *block;
        let body = kernel.body;
        let mut coroutines: Vec<Coroutine<(), (), (), &mut DefaultStack>> = ws.stacks[..n]
            .iter_mut()
            .enumerate()
            .map(|(t, stack)| {
                let f = move |yielder: &Yielder<(), ()>, ()| {
                    // SAFETY: `bp` outlives every coroutine of the block (they are dropped first).
                    unsafe { (&mut (*bp).threads)[t].yielder = yielder };
                    body(params);
                };
                // SAFETY: the coroutines borrow `params`, `bp` and the stacks, all of which outlive
                // them: every coroutine is dropped (driven to completion or unwound) below, before
                // this function returns.
                unsafe { Coroutine::with_stack_unchecked(stack, f) }
            })
            .collect();

        let previous = CURRENT.with(|c| c.replace(bp));
        schedule(bp, &mut coroutines);
        // Unwind threads still suspended (after a defect) while the block is still current.
        drop(coroutines);
        CURRENT.with(|c| c.set(previous));

        let block = *block;
        stats.threads += n as u64;
        stats.barriers += block.stats.barriers;
        stats.warp_ops += block.stats.warp_ops;
        match block.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}

fn schedule(bp: *mut Block, coroutines: &mut [Coroutine<(), (), (), &mut DefaultStack>]) {
    loop {
        // SAFETY: no reference into the block is held across the resume below.
        let next = unsafe { (*bp).runnable.pop_front() };
        let Some(t) = next else { break };
        let t = t as usize;
        unsafe {
            (*bp).current = t;
            (&mut (*bp).threads)[t].state = State::Running;
        }
        let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| coroutines[t].resume(())));
        match outcome {
            Ok(CoroutineResult::Yield(())) => {}
            Ok(CoroutineResult::Return(())) => thread_exited(bp, t),
            Err(payload) => {
                if !payload.is::<Abort>() {
                    let message = panic_message(&*payload);
                    // SAFETY: the coroutine has finished; nothing else refers to the block.
                    unsafe { record(bp, t, EmuErrorKind::Panic { message }) };
                }
            }
        }
        if unsafe { (*bp).error.is_some() } {
            return;
        }
    }
    // SAFETY: every coroutine is suspended or finished.
    let block = unsafe { &mut *bp };
    if block.exited as usize != block.threads.len() {
        let t = block.threads.iter().position(|th| !matches!(th.state, State::Exited)).unwrap_or(0);
        let waiting = describe_waiting(block);
        let idx = block.threads[t].idx;
        block.error = Some(EmuError {
            kernel: block.kernel,
            block: block.block_idx,
            thread: idx,
            kind: EmuErrorKind::Deadlock { waiting },
        });
    }
}

fn describe_waiting(block: &Block) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, th) in block.threads.iter().enumerate() {
        let what = match th.state {
            State::AtBarrier(site) => format!("at the barrier at {site}"),
            State::InWarpOp(c) => format!(
                "in {:?} with mask {:#010x} at {} (lanes of the mask not there: {:#010x})",
                c.op,
                c.mask,
                c.site,
                c.mask & !arrived_lanes(block, i / WARP_SIZE as usize, c.mask)
            ),
            State::Ready | State::Running | State::Exited => continue,
        };
        // Group consecutive threads doing the same thing.
        match lines.last_mut() {
            Some((_, last_what, count)) if *last_what == what => *count += 1,
            _ => lines.push((i, what, 1usize)),
        }
    }
    lines.into_iter().map(|(first, what, count)| format!("threads {first}..{} {what}", first + count)).collect()
}

fn panic_message(payload: &(dyn core::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Records the first defect of the block against thread `t`.
///
/// # Safety
/// `bp` is the live block and no reference into it is held.
unsafe fn record(bp: *mut Block, t: usize, kind: EmuErrorKind) {
    // SAFETY: guaranteed by the caller.
    let block = unsafe { &mut *bp };
    if block.error.is_none() {
        block.error =
            Some(EmuError { kernel: block.kernel, block: block.block_idx, thread: block.threads[t].idx, kind });
    }
}

/// Called on the running thread: records the defect and unwinds the thread.
#[cold]
fn fail(kind: EmuErrorKind) -> ! {
    let bp = current_block();
    // SAFETY: the running thread is the only code touching the block.
    unsafe {
        let t = (*bp).current;
        record(bp, t, kind);
    }
    std::panic::resume_unwind(Box::new(Abort))
}

fn current_block() -> *mut Block {
    let bp = CURRENT.with(|c| c.get());
    assert!(!bp.is_null(), "a simt function was called outside an emulated launch");
    bp
}

/// The running thread's index in the block and the block.
#[inline]
fn me() -> (*mut Block, usize) {
    let bp = current_block();
    // SAFETY: the block is live while one of its threads runs.
    (bp, unsafe { (*bp).current })
}

/// Suspends the running thread until the scheduler resumes it.
fn suspend(bp: *mut Block, t: usize) {
    // SAFETY: the yielder was stored when the coroutine started and lives as long as it does.
    unsafe {
        let y = (&(*bp).threads)[t].yielder;
        (*y).suspend(());
    }
}

fn thread_exited(bp: *mut Block, t: usize) {
    // SAFETY: called by the scheduler between resumes.
    let block = unsafe { &mut *bp };
    block.threads[t].state = State::Exited;
    block.exited += 1;
    if let Some(site) = block.barrier_site {
        let waiting = block.barrier_arrived;
        unsafe {
            record(
                bp,
                t,
                EmuErrorKind::BarrierDivergence {
                    here: "exited".to_string(),
                    other: format!("{waiting} threads wait at the barrier at {site}"),
                },
            )
        };
        return;
    }
    let warp = t / WARP_SIZE as usize;
    let lane = (t % WARP_SIZE as usize) as u32;
    for l in 0..WARP_SIZE as usize {
        let u = warp * WARP_SIZE as usize + l;
        if let Some(State::InWarpOp(c)) = block.threads.get(u).map(|th| th.state)
            && c.mask & (1 << lane) != 0
        {
            let detail = format!("lane {lane} exited while lane {l} waits for it in {:?} at {}", c.op, c.site);
            // SAFETY: called by the scheduler between resumes; `block` is not used after this.
            unsafe { record(bp, t, EmuErrorKind::WarpMisuse { detail }) };
            return;
        }
    }
}

// ---- ids ----------------------------------------------------------------------------------

pub(crate) fn thread_idx() -> Dim3 {
    let (bp, t) = me();
    // SAFETY: read of the live block by its running thread.
    unsafe { (&(*bp).threads)[t].idx }
}

pub(crate) fn block_idx() -> Dim3 {
    // SAFETY: as above.
    unsafe { (*current_block()).block_idx }
}

pub(crate) fn block_dim() -> Dim3 {
    // SAFETY: as above.
    unsafe { (*current_block()).block_dim }
}

pub(crate) fn grid_dim() -> Dim3 {
    // SAFETY: as above.
    unsafe { (*current_block()).grid_dim }
}

pub(crate) fn lane_id() -> u32 {
    let (_, t) = me();
    t as u32 % WARP_SIZE
}

// ---- barriers -----------------------------------------------------------------------------

#[track_caller]
pub(crate) fn sync_threads() {
    let site = Location::caller();
    let (bp, t) = me();
    {
        // SAFETY: the running thread is the only code touching the block until it suspends.
        let block = unsafe { &mut *bp };
        if block.exited > 0 {
            fail(EmuErrorKind::BarrierDivergence {
                here: format!("reached the barrier at {site}"),
                other: format!("{} threads of the block have exited", block.exited),
            });
        }
        match block.barrier_site {
            Some(other) if other != site => fail(EmuErrorKind::BarrierDivergence {
                here: format!("reached the barrier at {site}"),
                other: format!("{} threads wait at the barrier at {other}", block.barrier_arrived),
            }),
            _ => block.barrier_site = Some(site),
        }
        block.barrier_arrived += 1;
        if block.barrier_arrived as usize == block.threads.len() {
            for (u, th) in block.threads.iter_mut().enumerate() {
                if u != t {
                    th.state = State::Ready;
                    block.runnable.push_back(u as u32);
                }
            }
            block.barrier_arrived = 0;
            block.barrier_site = None;
            block.epoch = tick();
            block.stats.barriers += 1;
            return;
        }
        block.threads[t].state = State::AtBarrier(site);
    }
    suspend(bp, t);
}

// ---- warp operations ----------------------------------------------------------------------

/// The lanes of `warp` that wait in a warp operation with exactly `mask`.
fn arrived_lanes(block: &Block, warp: usize, mask: u32) -> u32 {
    let mut arrived = 0;
    for l in 0..WARP_SIZE as usize {
        if let Some(th) = block.threads.get(warp * WARP_SIZE as usize + l)
            && let State::InWarpOp(c) = th.state
            && c.mask == mask
        {
            arrived |= 1 << l;
        }
    }
    arrived
}

#[track_caller]
fn warp_op(op: WarpOp, mask: u32, value: u32, operand: u32) -> u32 {
    let site = Location::caller();
    let (bp, t) = me();
    {
        // SAFETY: the running thread is the only code touching the block until it suspends.
        let block = unsafe { &mut *bp };
        let warp = t / WARP_SIZE as usize;
        let lane = t as u32 % WARP_SIZE;
        let base = warp * WARP_SIZE as usize;
        let existing = block.threads.len() - base;
        let existing_mask = if existing >= WARP_SIZE as usize { u32::MAX } else { (1u32 << existing) - 1 };
        if mask & (1 << lane) == 0 {
            fail(EmuErrorKind::WarpMisuse {
                detail: format!("{op:?} at {site}: mask {mask:#010x} does not include the calling lane {lane}"),
            });
        }
        if mask & !existing_mask != 0 {
            fail(EmuErrorKind::WarpMisuse {
                detail: format!("{op:?} at {site}: mask {mask:#010x} names lanes past the end of the block"),
            });
        }
        for l in 0..WARP_SIZE {
            if mask & (1 << l) != 0
                && let State::Exited = block.threads[base + l as usize].state
            {
                fail(EmuErrorKind::WarpMisuse {
                    detail: format!("{op:?} at {site}: lane {l} of mask {mask:#010x} has exited"),
                });
            }
        }
        let call = WarpCall { op, mask, value, operand, site };
        block.threads[t].state = State::InWarpOp(call);
        let bit = 1u32 << lane;
        let (pending_mask, pending) = &mut block.warp_pending[warp];
        let arrived = if *pending == 0 || *pending_mask == mask {
            *pending_mask = mask;
            *pending |= bit;
            *pending
        } else {
            // Lanes of this warp wait with another mask too: ask the threads themselves.
            arrived_lanes(block, warp, mask)
        };
        if arrived == mask {
            if block.warp_pending[warp].0 == mask {
                block.warp_pending[warp].1 = 0;
            }
            let result = complete_warp_op(block, t, warp, call);
            block.threads[t].state = State::Running;
            return result;
        }
    }
    suspend(bp, t);
    // SAFETY: resumed by the completing lane, which stored this lane's result.
    unsafe { (&(*bp).threads)[t].result }
}

/// Completes a warp operation all lanes of its mask wait in; returns the caller's result and
/// queues the other lanes.
fn complete_warp_op(block: &mut Block, caller: usize, warp: usize, call: WarpCall) -> u32 {
    let base = warp * WARP_SIZE as usize;
    let mut values = [0u32; WARP_SIZE as usize];
    let mut operands = [0u32; WARP_SIZE as usize];
    let (mut ballot, mut sum, mut max, mut min) = (0u32, 0u32, 0u32, u32::MAX);
    let mut bits = call.mask;
    while bits != 0 {
        let l = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let State::InWarpOp(c) = block.threads[base + l].state else {
            unreachable!("every lane of the mask has arrived")
        };
        if c.op != call.op {
            fail(EmuErrorKind::WarpMisuse {
                detail: format!(
                    "lanes of mask {:#010x} disagree: lane {l} is in {:?} at {}, another in {:?} at {}",
                    call.mask, c.op, c.site, call.op, call.site
                ),
            });
        }
        values[l] = c.value;
        operands[l] = c.operand;
        ballot |= ((c.value != 0) as u32) << l;
        sum = sum.wrapping_add(c.value);
        max = max.max(c.value);
        min = min.min(c.value);
    }
    let mut caller_result = 0;
    let mut bits = call.mask;
    while bits != 0 {
        let l = bits.trailing_zeros();
        bits &= bits - 1;
        let result = match call.op {
            WarpOp::Ballot => ballot,
            WarpOp::ReduceAdd => sum,
            WarpOp::ReduceMax => max,
            WarpOp::ReduceMin => min,
            WarpOp::Sync => 0,
            WarpOp::Shuffle(mode) => {
                let operand = operands[l as usize];
                let src = match mode {
                    ShuffleMode::Xor => Some(l ^ (operand & (WARP_SIZE - 1))),
                    ShuffleMode::Down => l.checked_add(operand).filter(|s| *s < WARP_SIZE),
                    ShuffleMode::Up => l.checked_sub(operand),
                    ShuffleMode::Idx => Some(operand % WARP_SIZE),
                };
                match src {
                    None => values[l as usize],
                    Some(s) if call.mask & (1 << s) != 0 => values[s as usize],
                    Some(s) => fail(EmuErrorKind::WarpMisuse {
                        detail: format!(
                            "shuffle at {}: lane {l} reads lane {s}, which is not in mask {:#010x}",
                            call.site, call.mask
                        ),
                    }),
                }
            }
        };
        let u = base + l as usize;
        if u == caller {
            caller_result = result;
        } else {
            block.threads[u].result = result;
            block.threads[u].state = State::Ready;
            block.runnable.push_back(u as u32);
        }
    }
    block.warp_epoch[warp] += 1;
    block.stats.warp_ops += 1;
    caller_result
}

#[track_caller]
pub(crate) fn sync_warp(mask: u32) {
    warp_op(WarpOp::Sync, mask, 0, 0);
}

#[track_caller]
pub(crate) fn shuffle(mode: ShuffleMode, mask: u32, value: u32, operand: u32) -> u32 {
    warp_op(WarpOp::Shuffle(mode), mask, value, operand)
}

#[track_caller]
pub(crate) fn vote_ballot(mask: u32, predicate: bool) -> u32 {
    warp_op(WarpOp::Ballot, mask, predicate as u32, 0)
}

#[track_caller]
pub(crate) fn reduce_add_u32(mask: u32, value: u32) -> u32 {
    warp_op(WarpOp::ReduceAdd, mask, value, 0)
}

#[track_caller]
pub(crate) fn reduce_max_u32(mask: u32, value: u32) -> u32 {
    warp_op(WarpOp::ReduceMax, mask, value, 0)
}

#[track_caller]
pub(crate) fn reduce_min_u32(mask: u32, value: u32) -> u32 {
    warp_op(WarpOp::ReduceMin, mask, value, 0)
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

// ---- global memory ------------------------------------------------------------------------

#[inline]
fn check_global<T>(ptr: *const T, len: usize, index: usize) {
    if index >= len {
        fail(EmuErrorKind::GlobalOutOfBounds { index, len, base: ptr as u64, elem_bytes: core::mem::size_of::<T>() });
    }
}

pub(crate) fn global_slice_load<T: Word>(ptr: *const T, len: usize, index: usize) -> T {
    check_global(ptr, len, index);
    // SAFETY: in bounds of the slice the launch contract made valid.
    unsafe { ptr.add(index).read() }
}

pub(crate) fn global_slice_load_coherent<T: Word>(ptr: *mut T, len: usize, index: usize) -> T {
    global_slice_load(ptr as *const T, len, index)
}

pub(crate) fn global_slice_store<T: Word>(ptr: *mut T, len: usize, index: usize, value: T) {
    check_global(ptr, len, index);
    // SAFETY: in bounds of the slice the launch contract made valid and writable.
    unsafe { ptr.add(index).write(value) }
}

pub(crate) fn check_alignment(addr: usize, align: usize) {
    if !addr.is_multiple_of(align) {
        fail(EmuErrorKind::Misaligned { address: addr as u64, align });
    }
}

fn atomic_u32<'a>(ptr: *mut u32) -> &'a core::sync::atomic::AtomicU32 {
    // SAFETY: `ptr` is in bounds, aligned (u32 slices are) and valid for the launch.
    unsafe { core::sync::atomic::AtomicU32::from_ptr(ptr) }
}

fn atomic_rmw(cell: &core::sync::atomic::AtomicU32, f: impl Fn(u32) -> u32) -> u32 {
    use core::sync::atomic::Ordering::Relaxed;
    let mut old = cell.load(Relaxed);
    loop {
        match cell.compare_exchange_weak(old, f(old), Relaxed, Relaxed) {
            Ok(v) => return v,
            Err(v) => old = v,
        }
    }
}

pub(crate) fn global_atomic_add_u32(ptr: *mut u32, len: usize, index: usize, value: u32) -> u32 {
    check_global(ptr, len, index);
    atomic_rmw(atomic_u32(ptr.wrapping_add(index)), |v| v.wrapping_add(value))
}

pub(crate) fn global_atomic_max_u32(ptr: *mut u32, len: usize, index: usize, value: u32) -> u32 {
    check_global(ptr, len, index);
    atomic_rmw(atomic_u32(ptr.wrapping_add(index)), |v| v.max(value))
}

pub(crate) fn global_atomic_add_f32(ptr: *mut f32, len: usize, index: usize, value: f32) -> f32 {
    check_global(ptr, len, index);
    let old = atomic_rmw(atomic_u32(ptr.wrapping_add(index) as *mut u32), |v| (f32::from_bits(v) + value).to_bits());
    f32::from_bits(old)
}

// ---- shared memory ------------------------------------------------------------------------

pub(crate) fn dynamic_shared() -> (*mut u8, usize) {
    let bp = current_block();
    // SAFETY: read of the live block by its running thread.
    unsafe { ((*bp).shared, (*bp).shared_bytes) }
}

pub(crate) fn check_shared_region(offset: usize, bytes: usize, align: usize, total: usize) {
    if offset.checked_add(bytes).is_none_or(|end| end > total) {
        fail(EmuErrorKind::SharedOutOfBounds { address: offset, bytes, limit: total });
    }
    if !offset.is_multiple_of(align) {
        fail(EmuErrorKind::Misaligned { address: offset as u64, align });
    }
}

/// Checks a shared access of element `index` of the region at `base` and returns its byte offset
/// in the dynamic shared memory, and who is accessing.
fn shared_access<T>(base: *mut T, len: usize, index: usize) -> (usize, Accessor, *mut Shadow) {
    let (bp, t) = me();
    // SAFETY: read of the live block by its running thread.
    let block = unsafe { &*bp };
    let size = core::mem::size_of::<T>();
    let region = base as usize - block.shared as usize;
    if index >= len {
        fail(EmuErrorKind::SharedOutOfBounds {
            address: region + index.saturating_mul(size),
            bytes: size,
            limit: region + len * size,
        });
    }
    let who = Accessor {
        thread: t as u32,
        warp: t as u32 / WARP_SIZE,
        block_serial: block.block_serial,
        epoch: block.epoch,
        warp_epoch: block.warp_epoch[t / WARP_SIZE as usize],
    };
    (region + index * size, who, block.shadow)
}

fn shadow_result(r: Result<(), EmuErrorKind>) {
    if let Err(kind) = r {
        fail(kind);
    }
}

pub(crate) fn shared_slice_load<T: Word>(base: *mut T, len: usize, index: usize) -> T {
    let (offset, who, shadow) = shared_access(base, len, index);
    // SAFETY: the shadow lives in the workspace for the whole launch; only this thread runs.
    shadow_result(unsafe { (*shadow).read(offset / 4, core::mem::size_of::<T>() / 4, who) });
    // SAFETY: in bounds of the block's shared memory, checked above.
    unsafe { base.add(index).read() }
}

pub(crate) fn shared_slice_store<T: Word>(base: *mut T, len: usize, index: usize, value: T) {
    let (offset, who, shadow) = shared_access(base, len, index);
    // SAFETY: as above.
    shadow_result(unsafe { (*shadow).write(offset / 4, core::mem::size_of::<T>() / 4, who, false) });
    // SAFETY: as above.
    unsafe { base.add(index).write(value) }
}

pub(crate) fn shared_atomic_add_u32(base: *mut u32, len: usize, index: usize, value: u32) -> u32 {
    let (offset, who, shadow) = shared_access(base, len, index);
    // SAFETY: as above.
    shadow_result(unsafe { (*shadow).write(offset / 4, 1, who, true) });
    // SAFETY: as above; only this thread runs, so a plain read-modify-write is atomic.
    unsafe {
        let p = base.add(index);
        let old = p.read();
        p.write(old.wrapping_add(value));
        old
    }
}

pub(crate) fn shared_atomic_add_f32(base: *mut f32, len: usize, index: usize, value: f32) -> f32 {
    let (offset, who, shadow) = shared_access(base, len, index);
    // SAFETY: as above.
    shadow_result(unsafe { (*shadow).write(offset / 4, 1, who, true) });
    // SAFETY: as above.
    unsafe {
        let p = base.add(index);
        let old = p.read();
        p.write(old + value);
        old
    }
}
