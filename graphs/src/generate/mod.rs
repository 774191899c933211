//! Seeded random graph generators, deterministic across platforms.
//!
//! # Determinism
//!
//! Every generator draws from `rng::Rng`, a ChaCha8 stream keyed by the seed whose integer
//! draws (Lemire's exact bounded integers), float draws (53-bit uniforms) and shuffles are
//! written out in this crate rather than taken from `rand`. Floating-point work uses only IEEE
//! basic operations (`+ - * /`, `sqrt`, comparisons) in a fixed order, which every platform
//! computes identically; powers go through `detmath` (series from `+ - * /`) instead of libm. Rows are built by
//! counting sorts and sorted by source, so no step depends on hashing or thread timing.
//! `tests/generators.rs` pins a hash of several generated graphs to catch drift.
//!
//! All generated graphs are square (`num_dst == num_src`) with rows sorted by source.

mod alias;
pub mod chung_lu;
mod detmath;
pub mod erdos_renyi;
pub mod hubs;
pub mod molecule;
pub mod rmat;
mod rng;
pub mod sbm;

pub use chung_lu::chung_lu;
pub use erdos_renyi::erdos_renyi;
pub use hubs::inject_hubs;
pub use molecule::molecule_batch;
pub use rmat::{GRAPH500, RmatParams, rmat, rmat_with};
pub use sbm::sbm_batch;

pub(crate) use rng::Rng;

use crate::csr::{Csr, check_side, prefix_sum};
use crate::error::{GraphError, Result};

/// Builds a square graph of `n` nodes whose row `i` gets `counts[i]` sources from `draw`,
/// sorted within the row.
fn rows_from_counts(n: usize, counts: Vec<u64>, mut draw: impl FnMut() -> u32) -> Result<Csr> {
    let mut offsets = counts;
    offsets.insert(0, 0);
    prefix_sum(&mut offsets);
    let nnz = offsets[n] as usize;
    let mut columns = vec![0u32; nnz];
    for i in 0..n {
        let row = &mut columns[offsets[i] as usize..offsets[i + 1] as usize];
        row.iter_mut().for_each(|c| *c = draw());
        row.sort_unstable();
    }
    Csr::new(n, n, offsets, columns)
}

/// The number of edges `round(n * mean_degree)`, after checking the parameters.
fn edge_count(context: &'static str, n: usize, mean_degree: f64) -> Result<u64> {
    check_side("n", n)?;
    if !(mean_degree.is_finite() && mean_degree >= 0.0) {
        return Err(GraphError::param(context, format!("mean degree must be finite and >= 0, got {mean_degree}")));
    }
    let m = (n as f64 * mean_degree).round();
    if m > (1u64 << 40) as f64 {
        return Err(GraphError::TooLarge {
            what: "generated edges",
            count: m as u64,
            limit: 1 << 40,
            reason: "generator memory",
        });
    }
    check_generated(n as u64, m as u64)?;
    Ok(m as u64)
}

/// Checks a generated graph of `n` nodes and `m` edges against the machine's budget before
/// anything is drawn: per node, counts, offsets and the generators' tables (40 bytes at most);
/// per edge, a column and a drawn pair (12 bytes).
pub(crate) fn check_generated(n: u64, m: u64) -> Result<()> {
    crate::Limits::default().check("the generated graph", crate::limits::bytes_of(&[(n, 40), (m, 12)]))
}
