//! The block being emulated, and [`with_block`], the one way any code reaches it.
//!
//! The scheduler installs a block with [`enter`]; kernel code (through the `simt` primitives) and
//! the scheduler itself then reach it only through [`with_block`], which states once why handing
//! out a `&mut Block` is sound. A primitive that finds a defect returns it out of its
//! [`with_block`] call and then [`fail`]s, so no access to the block is ever open while a thread
//! records a defect, unwinds or suspends.

use core::cell::Cell;
use core::panic::Location;
use std::boxed::Box;
use std::collections::VecDeque;
use std::vec;
use std::vec::Vec;

use corosensei::Yielder;

use super::LaunchStats;
use super::error::{EmuError, EmuErrorKind};
use super::shadow::Shadow;
use crate::simt::{Dim3, ShuffleMode, WARP_SIZE};

/// A warp-level operation a lane waits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WarpOp {
    Shuffle(ShuffleMode),
    Ballot,
    ReduceAdd,
    ReduceMax,
    ReduceMin,
    Sync,
}

/// One lane's call of a warp operation: what it asked for and where.
#[derive(Clone, Copy)]
pub(super) struct WarpCall {
    pub op: WarpOp,
    pub mask: u32,
    pub value: u32,
    pub operand: u32,
    pub site: &'static Location<'static>,
}

/// Where an emulated thread stands.
#[derive(Clone, Copy)]
pub(super) enum State {
    Ready,
    Running,
    AtBarrier(&'static Location<'static>),
    InWarpOp(WarpCall),
    Exited,
}

pub(super) struct Thread {
    pub idx: Dim3,
    pub state: State,
    /// The result of the warp operation the thread waited in.
    pub result: u32,
    /// The thread's coroutine's yielder, stored when the coroutine starts (see `suspend`).
    pub yielder: *const Yielder<(), ()>,
    /// The asynchronous copies the thread started and has not waited for.
    pub copies: Vec<PendingCopy>,
}

/// An asynchronous copy into shared memory that has not landed: it lands when its thread waits.
pub(super) struct PendingCopy {
    /// Byte offset in the block's dynamic shared memory.
    pub offset: usize,
    /// The bytes to write (the first `bytes` of them).
    pub data: [u8; 16],
    pub bytes: usize,
}

/// Everything about the block being emulated.
pub(super) struct Block {
    pub kernel: &'static str,
    pub block_idx: Dim3,
    pub block_dim: Dim3,
    pub grid_dim: Dim3,
    pub threads: Vec<Thread>,
    /// The thread running now (or last run).
    pub current: usize,
    pub runnable: VecDeque<u32>,
    pub barrier_arrived: u32,
    pub barrier_site: Option<&'static Location<'static>>,
    pub exited: u32,
    pub block_serial: u64,
    pub epoch: u64,
    pub warp_epoch: Vec<u64>,
    /// Per warp: the mask most recently waited on and the lanes waiting with it (a cache of the
    /// threads' states that makes the common case, one operation per warp at a time, O(1)).
    pub warp_pending: Vec<(u32, u32)>,
    /// The block's dynamic shared memory, owned by the scheduler's workspace; reached only through
    /// raw pointers.
    pub shared: *mut u8,
    pub shared_bytes: usize,
    pub shadow: Shadow,
    pub error: Option<EmuError>,
    pub stats: LaunchStats,
}

impl Block {
    /// A block of `block_dim` threads, all ready to run, none started.
    pub fn new(
        kernel: &'static str,
        block_idx: Dim3,
        block_dim: Dim3,
        grid_dim: Dim3,
        shared: *mut u8,
        shared_bytes: usize,
        shadow: Shadow,
    ) -> Self {
        let n = block_dim.volume() as usize;
        let d = block_dim;
        let threads = (0..n as u32)
            .map(|i| Thread {
                idx: Dim3::new(i % d.x, (i / d.x) % d.y, i / (d.x * d.y)),
                state: State::Ready,
                result: 0,
                yielder: core::ptr::null(),
                copies: Vec::new(),
            })
            .collect();
        let warps = n.div_ceil(WARP_SIZE as usize);
        Self {
            kernel,
            block_idx,
            block_dim,
            grid_dim,
            threads,
            current: 0,
            runnable: (0..n as u32).collect(),
            barrier_arrived: 0,
            barrier_site: None,
            exited: 0,
            block_serial: tick(),
            epoch: tick(),
            warp_epoch: vec![0; warps],
            warp_pending: vec![(0, 0); warps],
            shared,
            shared_bytes,
            shadow,
            error: None,
            stats: LaunchStats::default(),
        }
    }

    /// Records the first defect of the block against thread `t`.
    pub fn record(&mut self, t: usize, kind: EmuErrorKind) {
        if self.error.is_none() {
            self.error =
                Some(EmuError { kernel: self.kernel, block: self.block_idx, thread: self.threads[t].idx, kind });
        }
    }

    /// The lanes of `warp` that wait in a warp operation with exactly `mask`.
    pub fn lanes_waiting_with(&self, warp: usize, mask: u32) -> u32 {
        let mut arrived = 0;
        for l in 0..WARP_SIZE as usize {
            if let Some(th) = self.threads.get(warp * WARP_SIZE as usize + l)
                && let State::InWarpOp(c) = th.state
                && c.mask == mask
            {
                arrived |= 1 << l;
            }
        }
        arrived
    }
}

std::thread_local! {
    /// The block [`enter`] installed, while [`with_block`] does not have it out.
    static CURRENT: Cell<*mut Block> = const { Cell::new(core::ptr::null_mut()) };
    /// Source of barrier epochs and block serials: only grows.
    static CLOCK: Cell<u64> = const { Cell::new(0) };
}

/// The next value of this OS thread's clock.
pub(super) fn tick() -> u64 {
    CLOCK.with(|c| {
        let next = c.get() + 1;
        c.set(next);
        next
    })
}

/// Puts a block pointer back into [`CURRENT`] when dropped, on return and on unwinding alike.
struct Restore(*mut Block);

impl Drop for Restore {
    #[inline(always)]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// Runs `f` with `block` installed as the block [`with_block`] reaches.
pub(super) fn enter<R>(block: &mut Block, f: impl FnOnce() -> R) -> R {
    let _restore = Restore(CURRENT.with(|c| c.replace(block)));
    f()
}

/// The one access to the running block: `f` gets it, exclusively, for as long as `f` runs.
///
/// While `f` runs, the block's pointer is out of [`CURRENT`], so a nested call (from `f`, or
/// from code `f` reaches) panics instead of making a second reference.
#[inline(always)]
pub(super) fn with_block<R>(f: impl FnOnce(&mut Block) -> R) -> R {
    let bp = CURRENT.with(|c| c.replace(core::ptr::null_mut()));
    assert!(
        !bp.is_null(),
        "a simt function was called outside an emulated launch (or inside the emulator's own access to its block)"
    );
    let _restore = Restore(bp);
    // SAFETY: the whole aliasing argument of the emulator. `bp` is the `&mut Block` that `enter`
    // installed, and `enter` is still running (it restores the previous pointer before it
    // returns, even when unwinding), so the block is live. Nothing else refers to it while `f`
    // runs: `enter`'s caller lent it out for the whole of `enter`; every other access comes
    // through this function, and the pointer is out of the thread-local `CURRENT` until `f`
    // returns, so no nested access can exist; an emulated thread switches to another only in
    // `suspend` (and is unwound only from there or from `fail`), both outside any `with_block`,
    // so no access spans a switch between coroutines; and `CURRENT` is thread-local, so no other
    // OS thread reaches the block. The shared memory it points to is a separate allocation that
    // no reference covers.
    f(unsafe { &mut *bp })
}

/// The payload an emulated thread unwinds with after recording a defect.
pub(super) struct Abort;

/// Called on the running thread: records the defect and unwinds the thread.
#[cold]
pub(super) fn fail(kind: EmuErrorKind) -> ! {
    with_block(|b| b.record(b.current, kind));
    std::panic::resume_unwind(Box::new(Abort))
}

/// The value of a check made inside [`with_block`], or the running thread [`fail`]s with its
/// defect (after the access has ended).
#[inline(always)]
pub(super) fn or_fail<T>(checked: Result<T, EmuErrorKind>) -> T {
    match checked {
        Ok(v) => v,
        Err(kind) => fail(kind),
    }
}

// ---- ids ----------------------------------------------------------------------------------

pub(crate) fn thread_idx() -> Dim3 {
    with_block(|b| b.threads[b.current].idx)
}

pub(crate) fn block_idx() -> Dim3 {
    with_block(|b| b.block_idx)
}

pub(crate) fn block_dim() -> Dim3 {
    with_block(|b| b.block_dim)
}

pub(crate) fn grid_dim() -> Dim3 {
    with_block(|b| b.grid_dim)
}

pub(crate) fn lane_id() -> u32 {
    with_block(|b| b.current as u32 % WARP_SIZE)
}
