//! What the emulator reports: a kernel defect (or an invalid launch), located precisely.

use std::fmt;
use std::string::String;
use std::vec::Vec;

use crate::simt::Dim3;

/// A defect found while emulating a launch, with where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct EmuError {
    /// The kernel's name.
    pub kernel: &'static str,
    /// The block that hit the defect.
    pub block: Dim3,
    /// The thread that hit the defect (within `block`).
    pub thread: Dim3,
    /// What went wrong.
    pub kind: EmuErrorKind,
}

/// The kinds of defect the emulator finds.
#[derive(Clone, Debug, PartialEq)]
pub enum EmuErrorKind {
    /// The launch itself is invalid on the GPU (block too large, too much shared memory, …).
    InvalidLaunch {
        /// Why.
        reason: String,
    },
    /// Threads of one block wait at different barriers, or some wait at a barrier that others
    /// can no longer reach because they exited.
    BarrierDivergence {
        /// The barrier the reporting thread reached (or `exited`).
        here: String,
        /// What the other threads were doing.
        other: String,
    },
    /// No thread can make progress: every live thread waits for something that cannot happen.
    Deadlock {
        /// One line per waiting group of threads.
        waiting: Vec<String>,
    },
    /// Two threads accessed one shared-memory word without a barrier between them, and at least
    /// one access was a write.
    SharedRace {
        /// `"write/write"`, `"read/write"` or `"write/read"` (earlier access first).
        accesses: &'static str,
        /// Byte offset in the block's dynamic shared memory.
        address: usize,
        /// The thread of the earlier access (linear index within the block; `None` when several).
        other_thread: Option<u32>,
    },
    /// A thread exited with asynchronous copies into shared memory it never waited for.
    AsyncCopyNotWaited {
        /// Copies still in flight.
        copies: usize,
    },
    /// A shared-memory word was read before any thread of the block wrote it.
    SharedUninitialized {
        /// Byte offset in the block's dynamic shared memory.
        address: usize,
    },
    /// A shared-memory access outside its region or outside the launch's dynamic shared memory.
    SharedOutOfBounds {
        /// Byte offset of the access (or of the region) in the dynamic shared memory.
        address: usize,
        /// Bytes accessed.
        bytes: usize,
        /// Bytes available (region or launch).
        limit: usize,
    },
    /// A global access past the end of its slice.
    GlobalOutOfBounds {
        /// Element index.
        index: usize,
        /// Slice length in elements.
        len: usize,
        /// Address of the slice's first element.
        base: u64,
        /// Element size in bytes.
        elem_bytes: usize,
    },
    /// An address not aligned for the access width.
    Misaligned {
        /// The address.
        address: u64,
        /// The required alignment.
        align: usize,
    },
    /// A warp-level operation used wrongly: a mask without the calling lane or with lanes that
    /// do not exist or have exited, lanes of one mask calling different operations, or a shuffle
    /// reading a lane outside the mask.
    WarpMisuse {
        /// Details.
        detail: String,
    },
    /// The kernel panicked (in Rust terms), e.g. a local array index out of range.
    Panic {
        /// The panic message.
        message: String,
    },
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.block;
        let t = self.thread;
        write!(
            f,
            "kernel `{}`, block ({}, {}, {}), thread ({}, {}, {}): {}",
            self.kernel, b.x, b.y, b.z, t.x, t.y, t.z, self.kind
        )
    }
}

impl fmt::Display for EmuErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidLaunch { reason } => write!(f, "invalid launch: {reason}"),
            Self::BarrierDivergence { here, other } => {
                write!(f, "barrier divergence: this thread {here}, while {other}")
            }
            Self::Deadlock { waiting } => write!(f, "deadlock: {}", waiting.join("; ")),
            Self::SharedRace { accesses, address, other_thread } => {
                write!(f, "shared-memory race ({accesses}) at shared byte offset {address:#x}")?;
                match other_thread {
                    Some(o) => write!(f, " with thread {o} (linear index)"),
                    None => write!(f, " with several threads"),
                }
            }
            Self::AsyncCopyNotWaited { copies } => {
                write!(f, "the thread exited with {copies} asynchronous copies into shared memory not waited for")
            }
            Self::SharedUninitialized { address } => write!(
                f,
                "read of uninitialised shared memory at byte offset {address:#x} (no thread of the block wrote it)"
            ),
            Self::SharedOutOfBounds { address, bytes, limit } => write!(
                f,
                "shared-memory access out of bounds: {bytes} bytes at offset {address:#x}, limit {limit} bytes"
            ),
            Self::GlobalOutOfBounds { index, len, base, elem_bytes } => write!(
                f,
                "global access out of bounds: index {index} of a {len}-element slice at {base:#x} (address {:#x})",
                base.wrapping_add((*index as u64).wrapping_mul(*elem_bytes as u64))
            ),
            Self::Misaligned { address, align } => {
                write!(f, "address {address:#x} is not aligned to {align} bytes")
            }
            Self::WarpMisuse { detail } => write!(f, "warp operation misuse: {detail}"),
            Self::Panic { message } => write!(f, "kernel panicked: {message}"),
        }
    }
}

impl std::error::Error for EmuError {}
