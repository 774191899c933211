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

use rayon::prelude::*;

use crate::csr::{Csr, check_side, prefix_sum};
use crate::error::{GraphError, Result};

/// Edges from which the generators draw in parallel (rayon). Below it every draw comes from one
/// stream in order (the graphs of docs/results.md are made so); from it on, each block of 2^22
/// node draws (`BLOCK_DRAWS`) and each block of 2^14 rows (`BLOCK_ROWS`) has a stream of its own,
/// and the blocks' counts are summed as integers, so a seed gives the same graph whatever the
/// number of threads.
pub const PARALLEL_EDGES: u64 = 1 << 28;
/// Node draws per block of the parallel counts.
const BLOCK_DRAWS: u64 = 1 << 22;
/// Rows per block of the parallel row draws.
const BLOCK_ROWS: usize = 1 << 14;

/// The stream of block `block` of the sequential stream `stream` (sequential streams are small
/// numbers; block streams have the top bit set).
fn block_stream(stream: u64, block: u64) -> u64 {
    (1 << 63) | (stream << 40) | block
}

/// How many of `m` node draws (`draw`, from the streams of `stream`) land on each of `n` nodes;
/// in parallel blocks from `parallel_from` draws on.
fn draw_counts(
    n: usize,
    m: u64,
    (seed, stream): (u64, u64),
    parallel_from: u64,
    draw: impl Fn(&mut Rng) -> u32 + Sync,
) -> Vec<u64> {
    let count_block = |mut counts: Vec<u64>, rng: &mut Rng, draws: u64| {
        for _ in 0..draws {
            counts[draw(rng) as usize] += 1;
        }
        counts
    };
    if m < parallel_from {
        return count_block(vec![0u64; n], &mut Rng::new(seed, stream), m);
    }
    (0..m.div_ceil(BLOCK_DRAWS))
        .into_par_iter()
        .fold(
            || vec![0u64; n],
            |counts, b| {
                count_block(counts, &mut Rng::new(seed, block_stream(stream, b)), BLOCK_DRAWS.min(m - b * BLOCK_DRAWS))
            },
        )
        .reduce(
            || vec![0u64; n],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

/// Builds a square graph of `n` nodes whose row `i` gets `counts[i]` sources from `draw` (from
/// the streams of `stream`), sorted within the row; in parallel blocks of rows from
/// `parallel_from` edges on.
fn rows_from_counts(
    n: usize,
    counts: Vec<u64>,
    (seed, stream): (u64, u64),
    parallel_from: u64,
    draw: impl Fn(&mut Rng) -> u32 + Sync,
) -> Result<Csr> {
    let mut offsets = counts;
    offsets.insert(0, 0);
    prefix_sum(&mut offsets);
    let nnz = offsets[n] as usize;
    let mut columns = vec![0u32; nnz];
    // Rows `rows` of `columns`, which holds the edges from row `rows.start` on.
    let fill = |rows: std::ops::Range<usize>, columns: &mut [u32], rng: &mut Rng| {
        let base = offsets[rows.start] as usize;
        for i in rows {
            let row = &mut columns[offsets[i] as usize - base..offsets[i + 1] as usize - base];
            row.iter_mut().for_each(|c| *c = draw(rng));
            row.sort_unstable();
        }
    };
    if (nnz as u64) < parallel_from {
        fill(0..n, &mut columns, &mut Rng::new(seed, stream));
    } else {
        let mut blocks = Vec::with_capacity(n.div_ceil(BLOCK_ROWS));
        let mut rest = columns.as_mut_slice();
        for (b, start) in (0..n).step_by(BLOCK_ROWS).enumerate() {
            let end = (start + BLOCK_ROWS).min(n);
            let (block, tail) = std::mem::take(&mut rest).split_at_mut((offsets[end] - offsets[start]) as usize);
            blocks.push((b as u64, start..end, block));
            rest = tail;
        }
        blocks
            .into_par_iter()
            .for_each(|(b, rows, block)| fill(rows, block, &mut Rng::new(seed, block_stream(stream, b))));
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
