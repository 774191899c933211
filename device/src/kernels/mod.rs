//! The kernels, one family per module; `common` holds the small pieces they share.

pub mod common;
pub mod demo;
