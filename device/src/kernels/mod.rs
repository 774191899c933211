//! The kernels, one family per module; `common` holds the small pieces they share.

pub mod agnn;
pub mod common;
pub mod demo;
pub mod gt;
pub mod unfused;
pub mod util;
