//! The kernels, one family per module; `common` holds the small pieces they share and
//! `attention` the fused passes every attention model runs in.

pub mod agnn;
pub mod attention;
pub mod common;
pub mod demo;
pub mod gat;
pub mod gatv2;
pub mod gt;
pub mod tiles;
pub mod unfused;
pub mod util;
