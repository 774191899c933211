//! Chung–Lu power-law graphs: both endpoints of every edge are drawn from a power-law weight
//! distribution, so a few nodes become super nodes with huge in-degree.

use super::alias::Alias;
use super::{PARALLEL_EDGES, Rng, detmath, draw_counts, edge_count, rows_from_counts};
use crate::csr::Csr;
use crate::error::{GraphError, Result};

/// The parameters of a Chung–Lu graph.
///
/// Node of weight rank `r` (0 = heaviest) has weight `(r + offset)^(-1 / (gamma - 1))`, which
/// gives a degree distribution with tail exponent `gamma`; ranks are assigned to node ids by a
/// seeded shuffle, so super nodes are spread over the id range. `round(n * mean_degree)` edges
/// are drawn with destination and source independently from the weights (an alias table, O(1)
/// per endpoint, O(E + n) in all), then rows are sorted and, with `dedup`, repeated edges are
/// dropped (the result then has fewer edges than drawn; super-node rows lose the most).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChungLu {
    /// The number of nodes.
    pub n: usize,
    /// The mean degree of the drawn edges (before deduplication).
    pub mean_degree: f64,
    /// The power-law exponent, > 1 (2.1 for the benchmark graph).
    pub gamma: f64,
    /// The rank offset `i0` (>= 1): larger values cap the largest weights.
    pub offset: f64,
    /// Whether to drop repeated edges.
    pub dedup: bool,
}

impl ChungLu {
    /// The rank offset of [`chung_lu`]: with gamma = 2.1, n = 2^20 and mean degree 16 it gives
    /// a largest in-degree near 2 x 10^5 and about 850 rows above 1000.
    pub const DEFAULT_OFFSET: f64 = 1.0;

    /// The parameters with the default offset and deduplication.
    pub fn new(n: usize, mean_degree: f64, gamma: f64) -> ChungLu {
        ChungLu { n, mean_degree, gamma, offset: Self::DEFAULT_OFFSET, dedup: true }
    }

    /// Generates the graph.
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] for `gamma <= 1`, `offset < 1` or a bad degree;
    /// [`GraphError::TooLarge`] for more than `2^32` nodes.
    pub fn generate(&self, seed: u64) -> Result<Csr> {
        self.generate_parallel_from(seed, PARALLEL_EDGES)
    }

    /// [`ChungLu::generate`], drawing in parallel from `parallel_from` edges on.
    fn generate_parallel_from(&self, seed: u64, parallel_from: u64) -> Result<Csr> {
        let n = self.n;
        let m = edge_count("chung_lu", n, self.mean_degree)?;
        if !(self.gamma.is_finite() && self.gamma > 1.0) {
            return Err(GraphError::param("chung_lu", format!("gamma must be > 1, got {}", self.gamma)));
        }
        if !(self.offset.is_finite() && self.offset >= 1.0) {
            return Err(GraphError::param("chung_lu", format!("offset must be >= 1, got {}", self.offset)));
        }
        if n == 0 {
            return Csr::empty(0, 0);
        }
        let exponent = -1.0 / (self.gamma - 1.0);
        let mut ranks: Vec<u32> = (0..n as u64).map(|r| r as u32).collect();
        Rng::new(seed, 2).shuffle(&mut ranks);
        let weights: Vec<f64> = ranks.iter().map(|&r| detmath::powf(r as f64 + self.offset, exponent)).collect();
        let table = Alias::new(&weights);
        let node = |rng: &mut Rng| table.sample(rng);
        let counts = draw_counts(n, m, (seed, 0), parallel_from, node);
        let g = rows_from_counts(n, counts, (seed, 1), parallel_from, node)?;
        Ok(if self.dedup { g.dedup() } else { g })
    }
}

/// A Chung–Lu power-law graph with the default offset and deduplication: see [`ChungLu`].
///
/// # Errors
/// As [`ChungLu::generate`].
pub fn chung_lu(n: usize, mean_degree: f64, gamma: f64, seed: u64) -> Result<Csr> {
    ChungLu::new(n, mean_degree, gamma).generate(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphStats;

    #[test]
    fn super_nodes_emerge() {
        let g = chung_lu(20_000, 10.0, 2.1, 1).unwrap();
        let s = GraphStats::of(&g);
        assert!(g.rows_sorted());
        assert_eq!(s.duplicate_edges, 0);
        assert!(s.in_degree.max > 1000, "{s}");
        assert!(s.in_degree.cv > 3.0, "{s}");
        assert!(s.empty_rows() > 1000, "{s}");
        assert!(g.nnz() < 200_000 && g.nnz() > 120_000, "{}", g.nnz());
        assert_eq!(g, chung_lu(20_000, 10.0, 2.1, 1).unwrap());
    }

    #[test]
    fn parallel_draws_are_the_same_on_any_number_of_threads() {
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| ChungLu::new(30_000, 8.0, 2.1).generate_parallel_from(4, 0).unwrap())
        };
        let g = on(1);
        assert_eq!(g, on(4));
        let s = GraphStats::of(&g);
        assert!(g.rows_sorted() && s.duplicate_edges == 0 && s.in_degree.max > 1000, "{s}");
    }

    #[test]
    fn without_dedup_keeps_every_drawn_edge() {
        let p = ChungLu { dedup: false, ..ChungLu::new(5000, 4.0, 2.5) };
        assert_eq!(p.generate(3).unwrap().nnz(), 20_000);
        assert!(ChungLu { gamma: 1.0, ..p }.generate(0).is_err());
        assert!(ChungLu { offset: 0.5, ..p }.generate(0).is_err());
        assert_eq!(chung_lu(0, 0.0, 2.1, 0).unwrap().nnz(), 0);
    }
}
