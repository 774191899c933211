//! The block scheduler: one coroutine per thread, run in a fixed order until all exit.
//!
//! A thread runs until it reaches a synchronisation point, where it [`suspend`]s; the thread that
//! completes the barrier or warp operation queues the others again. When no thread is runnable
//! and some have not exited, the block is deadlocked.

use core::cell::RefCell;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::LaunchStats;
use super::block::{Abort, Block, State, Thread, enter, with_block};
use super::error::{EmuError, EmuErrorKind};
use super::shadow::Shadow;
use crate::simt::{Dim3, KernelRef, LaunchConfig, WARP_SIZE};

/// Stack of each emulated thread. Kernels keep little on the stack; 256 KiB leaves room for
/// unoptimised builds. Stacks are mapped once per OS thread and reused.
const THREAD_STACK_BYTES: usize = 256 * 1024;

/// What the emulator keeps per OS thread between launches.
#[derive(Default)]
struct Workspace {
    stacks: Vec<DefaultStack>,
    shared: Vec<u128>,
    shadow: Shadow,
}

std::thread_local! {
    static WORKSPACE: RefCell<Workspace> = RefCell::new(Workspace::default());
}

type ThreadCoroutine<'a> = Coroutine<(), (), (), &'a mut DefaultStack>;

/// Runs every thread of block `block_idx` to its end, or to the block's first defect.
pub(super) fn run_block<P: Sync>(
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
        let mut shadow = core::mem::take(&mut ws.shadow);
        shadow.reserve(shared_bytes);
        let mut block = Block::new(
            kernel.name,
            block_idx,
            config.block,
            config.grid,
            ws.shared.as_mut_ptr() as *mut u8,
            shared_bytes,
            shadow,
        );

        let body = kernel.body;
        let coroutines: Vec<ThreadCoroutine<'_>> = ws.stacks[..n]
            .iter_mut()
            .enumerate()
            .map(|(t, stack)| {
                let f = move |yielder: &Yielder<(), ()>, ()| {
                    with_block(|b| b.threads[t].yielder = yielder);
                    body(params);
                };
                // SAFETY: the coroutine borrows `params` and `stack`, both of which outlive it:
                // every coroutine is dropped (finished, or unwound by the drop) inside `enter`
                // below, before this function returns.
                unsafe { Coroutine::with_stack_unchecked(stack, f) }
            })
            .collect();
        enter(&mut block, || {
            let mut coroutines = coroutines;
            schedule(&mut coroutines);
            // Unwind threads still suspended (after a defect) while the block is still installed.
            drop(coroutines);
        });

        ws.shadow = block.shadow;
        stats.threads += n as u64;
        stats.barriers += block.stats.barriers;
        stats.warp_ops += block.stats.warp_ops;
        match block.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}

fn schedule(coroutines: &mut [ThreadCoroutine<'_>]) {
    let mut next = with_block(Block::start_next);
    while let Some(t) = next {
        let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| coroutines[t].resume(())));
        next = with_block(|b| {
            match outcome {
                Ok(CoroutineResult::Yield(())) => {}
                Ok(CoroutineResult::Return(())) => b.exit(t),
                Err(payload) => {
                    if !payload.is::<Abort>() {
                        b.record(t, EmuErrorKind::Panic { message: panic_message(&*payload) });
                    }
                }
            }
            if b.error.is_some() { None } else { b.start_next() }
        });
    }
    with_block(Block::check_all_exited);
}

/// Suspends the running thread until the scheduler resumes it.
pub(super) fn suspend() {
    let yielder = with_block(|b| b.threads[b.current].yielder);
    // SAFETY: the running thread's own yielder, stored when its coroutine started; the yielder
    // lives on that coroutine's stack, which is the stack running this code.
    unsafe { (*yielder).suspend(()) }
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

impl Block {
    /// Takes the next runnable thread off the queue and marks it running.
    fn start_next(&mut self) -> Option<usize> {
        let t = self.runnable.pop_front()? as usize;
        self.current = t;
        self.threads[t].state = State::Running;
        Some(t)
    }

    /// Thread `t` returned from the kernel: a defect when it left asynchronous copies unwaited, or
    /// when others wait at a barrier or in a warp operation that needs it.
    fn exit(&mut self, t: usize) {
        self.threads[t].state = State::Exited;
        self.exited += 1;
        let copies = self.threads[t].copies.len();
        if copies > 0 {
            self.record(t, EmuErrorKind::AsyncCopyNotWaited { copies });
            return;
        }
        if let Some(site) = self.barrier_site {
            let waiting = self.barrier_arrived;
            self.record(
                t,
                EmuErrorKind::BarrierDivergence {
                    here: "exited".to_string(),
                    other: format!("{waiting} threads wait at the barrier at {site}"),
                },
            );
            return;
        }
        let warp = t / WARP_SIZE as usize;
        let lane = (t % WARP_SIZE as usize) as u32;
        for l in 0..WARP_SIZE as usize {
            let u = warp * WARP_SIZE as usize + l;
            if let Some(Thread { state: State::InWarpOp(c), .. }) = self.threads.get(u)
                && c.mask & (1 << lane) != 0
            {
                let detail = format!("lane {lane} exited while lane {l} waits for it in {:?} at {}", c.op, c.site);
                self.record(t, EmuErrorKind::WarpMisuse { detail });
                return;
            }
        }
    }

    /// No thread is runnable: a deadlock unless every thread has exited (or a defect stopped the
    /// block first).
    fn check_all_exited(&mut self) {
        if self.error.is_none() && self.exited as usize != self.threads.len() {
            let t = self.threads.iter().position(|th| !matches!(th.state, State::Exited)).unwrap_or(0);
            let waiting = self.describe_waiting();
            self.record(t, EmuErrorKind::Deadlock { waiting });
        }
    }

    fn describe_waiting(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (i, th) in self.threads.iter().enumerate() {
            let what = match th.state {
                State::AtBarrier(site) => format!("at the barrier at {site}"),
                State::InWarpOp(c) => format!(
                    "in {:?} with mask {:#010x} at {} (lanes of the mask not there: {:#010x})",
                    c.op,
                    c.mask,
                    c.site,
                    c.mask & !self.lanes_waiting_with(i / WARP_SIZE as usize, c.mask)
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
}
