//! The shared-memory race and initialisation checker.
//!
//! Every 4-byte word of a block's dynamic shared memory has a shadow record: the last write
//! (thread, barrier epoch, warp epoch, atomic or not) and a summary of the reads since. Two
//! accesses by different threads conflict when at least one writes (two atomics never conflict)
//! and nothing orders them: no block barrier between them (a different barrier epoch), and no warp
//! operation between them when both threads belong to one warp (a lower warp epoch).
//!
//! Epochs only grow, for the whole life of the OS thread, so records left by earlier blocks are
//! simply stale and the shadow is never cleared between blocks.

use std::vec::Vec;

use super::error::EmuErrorKind;

/// Reader or warp slot standing for "more than one".
const SEVERAL: u32 = u32::MAX;

#[derive(Clone, Copy, Default)]
struct WordShadow {
    /// Block serial of the last write: a word not written by this block is uninitialised.
    write_block: u64,
    write_epoch: u64,
    write_warp_epoch: u64,
    read_epoch: u64,
    /// The largest warp epoch among this epoch's reads.
    read_warp_epoch: u64,
    write_thread: u32,
    write_warp: u32,
    read_thread: u32,
    read_warp: u32,
    write_atomic: bool,
}

/// Who is accessing, and where in the order of synchronisation the access stands.
#[derive(Clone, Copy)]
pub(crate) struct Accessor {
    pub thread: u32,
    pub warp: u32,
    pub block_serial: u64,
    pub epoch: u64,
    pub warp_epoch: u64,
}

/// The shadow of one block's shared memory (reused, never cleared, across blocks).
#[derive(Default)]
pub(crate) struct Shadow {
    words: Vec<WordShadow>,
}

impl Shadow {
    /// Makes room for `bytes` of shared memory.
    pub fn reserve(&mut self, bytes: usize) {
        let words = bytes.div_ceil(4);
        if self.words.len() < words {
            self.words.resize(words, WordShadow::default());
        }
    }

    /// Records a plain read of the 4-byte words `[first, first + count)`.
    pub fn read(&mut self, first: usize, count: usize, who: Accessor) -> Result<(), EmuErrorKind> {
        for w in first..first + count {
            let rec = &mut self.words[w];
            if rec.write_block != who.block_serial {
                return Err(EmuErrorKind::SharedUninitialized { address: w * 4 });
            }
            if rec.write_epoch == who.epoch && !ordered(rec.write_thread, rec.write_warp, rec.write_warp_epoch, who) {
                return Err(race("write/read", w, Some(rec.write_thread)));
            }
            if rec.read_epoch != who.epoch {
                rec.read_epoch = who.epoch;
                rec.read_thread = who.thread;
                rec.read_warp = who.warp;
                rec.read_warp_epoch = who.warp_epoch;
            } else {
                if rec.read_thread != who.thread {
                    rec.read_thread = SEVERAL;
                }
                if rec.read_warp != who.warp {
                    rec.read_warp = SEVERAL;
                }
                rec.read_warp_epoch = rec.read_warp_epoch.max(who.warp_epoch);
            }
        }
        Ok(())
    }

    /// Records a write (plain or atomic) of the words `[first, first + count)`.
    pub fn write(&mut self, first: usize, count: usize, who: Accessor, atomic: bool) -> Result<(), EmuErrorKind> {
        for w in first..first + count {
            let rec = &mut self.words[w];
            if atomic && rec.write_block != who.block_serial {
                return Err(EmuErrorKind::SharedUninitialized { address: w * 4 });
            }
            if rec.write_epoch == who.epoch
                && rec.write_block == who.block_serial
                && !(atomic && rec.write_atomic)
                && !ordered(rec.write_thread, rec.write_warp, rec.write_warp_epoch, who)
            {
                return Err(race("write/write", w, Some(rec.write_thread)));
            }
            if rec.read_epoch == who.epoch {
                let same_thread = rec.read_thread == who.thread;
                let warp_ordered = rec.read_warp == who.warp && rec.read_warp_epoch < who.warp_epoch;
                if !same_thread && !warp_ordered {
                    let other = (rec.read_thread != SEVERAL).then_some(rec.read_thread);
                    return Err(race("read/write", w, other));
                }
            }
            rec.write_block = who.block_serial;
            rec.write_epoch = who.epoch;
            rec.write_warp_epoch = who.warp_epoch;
            rec.write_thread = who.thread;
            rec.write_warp = who.warp;
            rec.write_atomic = atomic;
        }
        Ok(())
    }
}

/// Whether an earlier access by (`thread`, `warp` at `warp_epoch`) in the same barrier epoch is
/// ordered before an access by `who`.
fn ordered(thread: u32, warp: u32, warp_epoch: u64, who: Accessor) -> bool {
    thread == who.thread || (warp == who.warp && warp_epoch < who.warp_epoch)
}

fn race(accesses: &'static str, word: usize, other_thread: Option<u32>) -> EmuErrorKind {
    EmuErrorKind::SharedRace { accesses, address: word * 4, other_thread }
}
