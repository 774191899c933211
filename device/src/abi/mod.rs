//! Launch-parameter structs: the ABI between the host library and the kernels.
//!
//! Each kernel takes one `#[repr(C)]` struct by value. The host library depends on this crate as
//! an rlib and builds the very same types, so the two sides cannot drift; the `const` assertions
//! pin each layout. Every field says its shape and meaning. Pointers are device addresses on the
//! GPU and host addresses under the emulator.

/// A parameter struct a kernel takes by value.
///
/// # Safety
/// Implementors are `#[repr(C)]`, `Copy`, hold only plain data and global slices, and have the
/// same layout on the host and on `nvptx64` (both 64-bit, little-endian).
pub unsafe trait LaunchParams: Copy + Sync + 'static {}

mod agnn;
mod attention;
mod demo;
mod gat;
mod gatv2;
mod gt;
mod lanes;
mod tiles;
mod unfused;
mod util;

pub use agnn::*;
pub use attention::*;
pub use demo::*;
pub use gat::*;
pub use gatv2::*;
pub use gt::*;
pub use lanes::*;
pub use tiles::*;
pub use unfused::*;
pub use util::*;
