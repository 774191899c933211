//! The block barrier (`__syncthreads`): every live thread must reach the same one.
//!
//! A barrier that some threads reach at another site, or that threads reach after others
//! exited, is barrier divergence. The last thread to arrive completes the barrier (a new barrier
//! epoch for the race checker) and queues the others again.

use core::panic::Location;
use std::format;

use super::block::{Block, State, or_fail, tick, with_block};
use super::error::EmuErrorKind;
use super::scheduler::suspend;

#[track_caller]
pub(crate) fn sync_threads() {
    let site = Location::caller();
    if !or_fail(with_block(|b| b.arrive_at_barrier(site))) {
        suspend();
    }
}

impl Block {
    /// The running thread reaches the barrier at `site`; whether it completed the barrier (and
    /// runs on) rather than having to wait for the others.
    fn arrive_at_barrier(&mut self, site: &'static Location<'static>) -> Result<bool, EmuErrorKind> {
        let t = self.current;
        if self.exited > 0 {
            return Err(EmuErrorKind::BarrierDivergence {
                here: format!("reached the barrier at {site}"),
                other: format!("{} threads of the block have exited", self.exited),
            });
        }
        match self.barrier_site {
            Some(other) if other != site => {
                return Err(EmuErrorKind::BarrierDivergence {
                    here: format!("reached the barrier at {site}"),
                    other: format!("{} threads wait at the barrier at {other}", self.barrier_arrived),
                });
            }
            _ => self.barrier_site = Some(site),
        }
        self.barrier_arrived += 1;
        if self.barrier_arrived as usize == self.threads.len() {
            for (u, th) in self.threads.iter_mut().enumerate() {
                if u != t {
                    th.state = State::Ready;
                    self.runnable.push_back(u as u32);
                }
            }
            self.barrier_arrived = 0;
            self.barrier_site = None;
            self.epoch = tick();
            self.stats.barriers += 1;
            return Ok(true);
        }
        self.threads[t].state = State::AtBarrier(site);
        Ok(false)
    }
}
