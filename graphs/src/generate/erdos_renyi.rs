//! Erdős–Rényi style uniform random graphs: every edge has a uniform destination and a uniform
//! source.

use super::{PARALLEL_EDGES, Rng, draw_counts, edge_count, rows_from_counts};
use crate::csr::Csr;
use crate::error::Result;

/// `round(n * mean_degree)` edges with independent uniform endpoints (the G(n, m) multigraph:
/// duplicates and self loops are kept as drawn; they are rare). Rows are sorted by source.
/// In-degrees are binomial, close to Poisson(mean_degree). O(E + n).
///
/// # Errors
/// [`crate::GraphError::InvalidParameter`] for a negative or non-finite degree;
/// [`crate::GraphError::TooLarge`] for more than `2^32` nodes.
pub fn erdos_renyi(n: usize, mean_degree: f64, seed: u64) -> Result<Csr> {
    let m = edge_count("erdos_renyi", n, mean_degree)?;
    // Destinations and sources are independent, so drawing all destinations first (only their
    // counts are needed) and then each row's sources gives the same distribution as drawing
    // edge by edge, without storing or sorting the edges.
    erdos_renyi_parallel_from(n, m, seed, PARALLEL_EDGES)
}

/// [`erdos_renyi`] with `m` edges, drawn in parallel from `parallel_from` edges on.
fn erdos_renyi_parallel_from(n: usize, m: u64, seed: u64, parallel_from: u64) -> Result<Csr> {
    let node = |rng: &mut Rng| rng.below(n as u64) as u32;
    let counts = draw_counts(n, m, (seed, 0), parallel_from, node);
    rows_from_counts(n, counts, (seed, 1), parallel_from, node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphStats;

    #[test]
    fn shape_and_determinism() {
        let g = erdos_renyi(1000, 8.0, 5).unwrap();
        assert_eq!((g.num_dst(), g.num_src(), g.nnz()), (1000, 1000, 8000));
        assert!(g.rows_sorted());
        assert_eq!(g, erdos_renyi(1000, 8.0, 5).unwrap());
        assert_ne!(g, erdos_renyi(1000, 8.0, 6).unwrap());
        let s = GraphStats::of(&g);
        // Poisson(8): standard deviation near sqrt(8), max well below 40.
        assert!((s.in_degree.std_dev - 8f64.sqrt()).abs() < 0.4, "{s}");
        assert!(s.in_degree.max < 40, "{s}");
        assert!((s.out_degree.mean - 8.0).abs() < 1e-9);
    }

    #[test]
    fn parallel_draws_are_the_same_on_any_number_of_threads() {
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| erdos_renyi_parallel_from(40_000, 300_000, 9, 0).unwrap())
        };
        let g = on(1);
        assert_eq!(g, on(3));
        assert!(g.rows_sorted());
        assert_eq!(g.nnz(), 300_000);
        // The parallel streams are others than the sequential ones: a different graph, the same law.
        let sequential = erdos_renyi_parallel_from(40_000, 300_000, 9, u64::MAX).unwrap();
        assert_ne!(g, sequential);
        let (s, t) = (GraphStats::of(&g), GraphStats::of(&sequential));
        assert!((s.in_degree.std_dev - t.in_degree.std_dev).abs() < 0.1, "{s}\n{t}");
    }

    #[test]
    fn bad_parameters() {
        assert!(erdos_renyi(10, -1.0, 0).is_err());
        assert!(erdos_renyi(10, f64::NAN, 0).is_err());
        assert_eq!(erdos_renyi(0, 3.0, 0).unwrap().num_dst(), 0);
    }
}
