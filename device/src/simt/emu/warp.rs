//! Warp operations: shuffles, votes, reductions and the warp barrier.
//!
//! Each lane of the mask calls in and waits; the last to arrive checks that all made the same
//! call, computes every lane's result and queues the others again (a new warp epoch for the race
//! checker). A mask without the caller or naming lanes that exited or do not exist, lanes that
//! disagree on the operation, and a shuffle from a lane outside the mask are defects.

use core::panic::Location;
use std::format;

use super::block::{Block, State, WarpCall, WarpOp, or_fail, with_block};
use super::error::EmuErrorKind;
use super::scheduler::suspend;
use crate::simt::{ShuffleMode, WARP_SIZE};

#[track_caller]
fn warp_op(op: WarpOp, mask: u32, value: u32, operand: u32) -> u32 {
    let call = WarpCall { op, mask, value, operand, site: Location::caller() };
    if let Some(result) = or_fail(with_block(|b| b.arrive_at_warp_op(call))) {
        return result;
    }
    suspend();
    // Resumed by the completing lane, which stored this lane's result.
    with_block(|b| b.threads[b.current].result)
}

impl Block {
    /// The running thread calls in to `call`; its result when it completed the operation (and
    /// runs on), `None` when it has to wait for the other lanes.
    fn arrive_at_warp_op(&mut self, call: WarpCall) -> Result<Option<u32>, EmuErrorKind> {
        let WarpCall { op, mask, site, .. } = call;
        let t = self.current;
        let warp = t / WARP_SIZE as usize;
        let lane = t as u32 % WARP_SIZE;
        let base = warp * WARP_SIZE as usize;
        let existing = self.threads.len() - base;
        let existing_mask = if existing >= WARP_SIZE as usize { u32::MAX } else { (1u32 << existing) - 1 };
        if mask & (1 << lane) == 0 {
            return Err(EmuErrorKind::WarpMisuse {
                detail: format!("{op:?} at {site}: mask {mask:#010x} does not include the calling lane {lane}"),
            });
        }
        if mask & !existing_mask != 0 {
            return Err(EmuErrorKind::WarpMisuse {
                detail: format!("{op:?} at {site}: mask {mask:#010x} names lanes past the end of the block"),
            });
        }
        // No lane of the mask can have exited while no thread of the block has.
        if self.exited > 0 {
            for l in 0..WARP_SIZE {
                if mask & (1 << l) != 0
                    && let State::Exited = self.threads[base + l as usize].state
                {
                    return Err(EmuErrorKind::WarpMisuse {
                        detail: format!("{op:?} at {site}: lane {l} of mask {mask:#010x} has exited"),
                    });
                }
            }
        }
        self.threads[t].state = State::InWarpOp(call);
        let bit = 1u32 << lane;
        let (pending_mask, pending) = &mut self.warp_pending[warp];
        let arrived = if *pending == 0 || *pending_mask == mask {
            *pending_mask = mask;
            *pending |= bit;
            *pending
        } else {
            // Lanes of this warp wait with another mask too: ask the threads themselves.
            self.lanes_waiting_with(warp, mask)
        };
        if arrived != mask {
            return Ok(None);
        }
        if self.warp_pending[warp].0 == mask {
            self.warp_pending[warp].1 = 0;
        }
        let result = self.complete_warp_op(t, warp, call)?;
        self.threads[t].state = State::Running;
        Ok(Some(result))
    }

    /// Completes a warp operation all lanes of its mask wait in; returns the caller's result and
    /// queues the other lanes.
    fn complete_warp_op(&mut self, caller: usize, warp: usize, call: WarpCall) -> Result<u32, EmuErrorKind> {
        let base = warp * WARP_SIZE as usize;
        let mut values = [0u32; WARP_SIZE as usize];
        let mut operands = [0u32; WARP_SIZE as usize];
        let (mut ballot, mut sum, mut max, mut min) = (0u32, 0u32, 0u32, u32::MAX);
        let mut bits = call.mask;
        while bits != 0 {
            let l = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let State::InWarpOp(c) = self.threads[base + l].state else {
                unreachable!("every lane of the mask has arrived")
            };
            if c.op != call.op {
                return Err(EmuErrorKind::WarpMisuse {
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
                        Some(s) => {
                            return Err(EmuErrorKind::WarpMisuse {
                                detail: format!(
                                    "shuffle at {}: lane {l} reads lane {s}, which is not in mask {:#010x}",
                                    call.site, call.mask
                                ),
                            });
                        }
                    }
                }
            };
            let u = base + l as usize;
            if u == caller {
                caller_result = result;
            } else {
                self.threads[u].result = result;
                self.threads[u].state = State::Ready;
                self.runnable.push_back(u as u32);
            }
        }
        self.warp_epoch[warp] += 1;
        self.stats.warp_ops += 1;
        Ok(caller_result)
    }
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
