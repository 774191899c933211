//! dfgnn: fused attention GNN kernels on NVIDIA GPUs, with a CPU SIMT emulator.
//!
//! | layer | module | what |
//! |---|---|---|
//! | backend | [`backend`] | a CUDA device or the emulator: buffers, launches, timing |
//! | graph | [`graph`] | a graph prepared once on a backend |
//! | ops | [`gt`], [`agnn`], [`gat`], [`gatv2`] | fused attention forward and backward, planned by [`plan`] |
//! | interop | [`external`] | the ops on memory someone else owns (PyTorch tensors) |
//! | baseline | `cusparse` (feature `cusparse`) | GT through cuSPARSE's SDDMM and SpMM, for comparison |
//!
//! | on the CPU | on the device |
//! |---|---|
//! | `Vec<T>` | [`Buffer<T>`] |
//! | a kernel call | `dfgnn_device` kernel + `abi` parameter struct, launched by [`Backend`] |

pub mod agnn;
pub mod backend;
mod baseline;
#[cfg(feature = "cusparse")]
pub mod cusparse;
mod error;
pub mod external;
mod fused;
pub mod gat;
pub mod gatv2;
pub mod graph;
pub mod gt;
pub mod plan;
mod tiles;

pub use agnn::{Agnn, AgnnConfig, AgnnForward, AgnnGrads};
pub use backend::{Backend, BackendKind, Buffer, Counts, DeviceLimits, Element, Selection, Workspace};
#[cfg(feature = "cusparse")]
pub use cusparse::{CusparseForward, CusparseGt};
pub use error::{Error, Result};
pub use gat::{DEFAULT_GAT_SLOPE, Gat, GatConfig, GatForward, GatGrads, GatPrecomputedGrads};
pub use gatv2::{DEFAULT_GATV2_SLOPE, GatV2, GatV2Config, GatV2Forward, GatV2Grads};
pub use graph::DeviceGraph;
pub use gt::{Gt, GtConfig, GtForward, GtGrads};
pub use plan::{Plan, PlanOptions, Schedule, TileChoice};

/// README.md, whose "Using the library" example `cargo test` compiles and runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeExample;
