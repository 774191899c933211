//! Graphs for dfgnn: validated CSR/CSC, statistics, generators, file formats and data loaders.
//!
//! # Brief overview
//!
//! Everything meets in [`Csr`]: rows are **destination** nodes and row `i` lists the
//! in-neighbours `j` of `i` as `u32` column indices, with `u64` row offsets (docs/design.md §1).
//! A `Csr` can only be built through [`Csr::new`]'s checks (or constructors that call it), so
//! every other part of the project may trust its invariants.
//!
//! ```text
//! generate::* / named::generate ─┐
//! format::read_path (npz, mtx,   ├─> Csr ──> transpose() -> Csc (column pass, edge ids)
//!   edge list, gt) / planetoid / │        ├─> GraphStats::of (degrees, hubs, row groups)
//!   moses + smiles               ┘        └─> format::write_path
//! ```
//!
//! - [`csr`], [`csc`], [`transform`]: the graph types and derived graphs (sorted, deduplicated,
//!   symmetric, with self loops, relabelled, block-diagonal batches).
//! - [`stats`]: [`GraphStats`] in one pass.
//! - [`generate`]: seeded, platform-independent generators; [`corner`] names the corner cases and
//!   [`named`] builds benchmark graphs from names like `pl-1M-d16`.
//! - [`format`](mod@format): scipy `.npz`, Matrix Market, SNAP edge lists and graph-tool `.gt`, read and
//!   written, each in its own module, dispatched on the file extension by [`format::read_path`].
//! - [`planetoid`], [`smiles`], [`moses`], [`collection`]: real data sets (Cora/Citeseer, MOSES
//!   molecules, graph-tool's sample networks).
//! - `strategy` (feature `proptest`): proptest strategies over valid graphs.

pub mod collection;
pub mod corner;
pub mod csc;
pub mod csr;
mod error;
pub mod format;
pub mod generate;
mod limits;
pub mod moses;
pub mod named;
pub mod planetoid;
pub mod relabel;
pub mod reorder;
pub mod smiles;
pub mod stats;
#[cfg(feature = "proptest")]
pub mod strategy;
pub mod transform;

pub use csc::Csc;
pub use csr::{Csr, MAX_NODES};
pub use error::{GraphError, Result};
pub use limits::Limits;
pub use relabel::IdMap;
pub use stats::{DegreeSummary, GraphStats};
pub use transform::{Batch, block_diagonal};
