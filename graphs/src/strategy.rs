//! Proptest strategies over valid graphs (feature `proptest`).
//!
//! Both strategies generate their graphs from plain values (sizes, edge lists, seeds) that
//! proptest shrinks, so a failing case shrinks toward few nodes, few edges and small degrees.

use proptest::collection::vec;
use proptest::prelude::*;

use crate::csr::Csr;
use crate::generate::chung_lu::ChungLu;
use crate::generate::inject_hubs;

/// Any valid graph with up to `max_dst` rows, `max_src` sources and `max_edges` edges: square
/// or bipartite, with empty rows, duplicates and self loops as they fall. Shrinks toward fewer
/// nodes and edges.
pub fn csr(max_dst: usize, max_src: usize, max_edges: usize) -> impl Strategy<Value = Csr> {
    (0..=max_dst, 0..=max_src)
        .prop_flat_map(move |(d, s)| {
            let edges = if d == 0 || s == 0 {
                Just(Vec::new()).boxed()
            } else {
                vec((0..d as u32, 0..s as u32), 0..=max_edges).boxed()
            };
            (Just(d), Just(s), edges)
        })
        .prop_map(|(d, s, edges)| {
            Csr::from_edges(d, s, &edges).unwrap_or_else(|e| unreachable!("edges are drawn in range: {e}"))
        })
}

/// A square graph with `1..=max_n` nodes and up to `max_edges` edges.
pub fn square_csr(max_n: usize, max_edges: usize) -> impl Strategy<Value = Csr> {
    (1..=max_n.max(1))
        .prop_flat_map(move |n| vec((0..n as u32, 0..n as u32), 0..=max_edges).prop_map(move |e| (n, e)))
        .prop_map(|(n, edges)| {
            Csr::from_edges(n, n, &edges).unwrap_or_else(|e| unreachable!("edges are drawn in range: {e}"))
        })
}

/// The knobs of [`power_law`], exposed so failures print readable parameters.
#[derive(Clone, Debug)]
pub struct PowerLawCase {
    /// Nodes.
    pub n: usize,
    /// Mean degree of the Chung–Lu base (gamma 2.1, duplicates kept).
    pub mean_degree: f64,
    /// The generator seed.
    pub seed: u64,
    /// Super nodes injected, with their in-degree.
    pub hubs: (usize, usize),
    /// Every `empty_every`-th row is emptied (0 = none).
    pub empty_every: usize,
    /// Extra self loops on these rows (taken modulo n; an emptied row passes its loop to a
    /// neighbour).
    pub self_loops: Vec<u32>,
    /// These rows (modulo n) repeat their first edge.
    pub duplicate_rows: Vec<u32>,
}

impl PowerLawCase {
    /// Builds the graph.
    pub fn build(&self) -> Csr {
        let n = self.n.max(1);
        let base = ChungLu { dedup: false, ..ChungLu::new(n, self.mean_degree, 2.1) }
            .generate(self.seed)
            .and_then(|g| inject_hubs(&g, self.hubs.0.min(n), self.hubs.1, self.seed))
            .unwrap_or_else(|e| unreachable!("power-law parameters are in range: {e}"));
        let emptied = |r: usize| self.empty_every != 0 && r.is_multiple_of(self.empty_every);
        let mut edges: Vec<(u32, u32)> = base.edges().filter(|&(i, _)| !emptied(i as usize)).collect();
        // Extra self loops avoid emptied rows (a neighbouring row is never emptied).
        for &r in &self.self_loops {
            let r = r as usize % n;
            let row = if !emptied(r) {
                Some(r)
            } else if r > 0 {
                Some(r - 1)
            } else {
                (n > 1).then_some(1)
            };
            if let Some(row) = row {
                edges.push((row as u32, row as u32));
            }
        }
        for &r in &self.duplicate_rows {
            let row = r % n as u32;
            if let Some(&(_, j)) = edges.iter().find(|&&(i, _)| i == row) {
                edges.push((row, j));
            }
        }
        Csr::from_edges(n, n, &edges)
            .map(|g| g.sort_rows())
            .unwrap_or_else(|e| unreachable!("edges stay in range: {e}"))
    }
}

/// Power-law graphs of `2..=max_n` nodes with super nodes (up to 3 hubs of in-degree up to
/// `4 max_n`), empty rows, self loops and duplicate edges; rows sorted. Shrinks toward small
/// `n`, low degrees, no hubs and no extras.
pub fn power_law(max_n: usize) -> impl Strategy<Value = Csr> {
    power_law_case(max_n).prop_map(|c| c.build())
}

/// The parameters behind [`power_law`], for tests that want to print or tweak them.
pub fn power_law_case(max_n: usize) -> impl Strategy<Value = PowerLawCase> {
    let max_n = max_n.max(2);
    (
        2..=max_n,
        0.0..8.0f64,
        any::<u64>(),
        (0..=3usize, 0..=4 * max_n),
        prop_oneof![Just(0usize), 2..=7usize],
        vec(any::<u32>(), 0..6),
        vec(any::<u32>(), 0..6),
    )
        .prop_map(|(n, mean_degree, seed, hubs, empty_every, self_loops, duplicate_rows)| PowerLawCase {
            n,
            mean_degree,
            seed,
            hubs,
            empty_every,
            self_loops,
            duplicate_rows,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphStats;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn generated_graphs_respect_their_bounds(g in csr(20, 30, 100)) {
            prop_assert!(g.num_dst() <= 20 && g.num_src() <= 30 && g.nnz() <= 100);
            prop_assert_eq!(Csr::new(g.num_dst(), g.num_src(), g.offsets().to_vec(), g.columns().to_vec()).ok(), Some(g));
        }

        #[test]
        fn power_law_graphs_have_their_features(c in power_law_case(300)) {
            let g = c.build();
            let s = GraphStats::of(&g);
            prop_assert!(g.rows_sorted());
            if c.hubs.0 > 0 && c.hubs.1 > 0 && c.empty_every == 0 {
                prop_assert!(s.in_degree.max as usize >= c.hubs.1);
            }
            if c.empty_every > 0 {
                prop_assert!(s.empty_rows() >= 1);
            }
            if !c.self_loops.is_empty() && c.n > 1 {
                prop_assert!(s.self_loops >= 1);
            }
        }
    }

    #[test]
    fn transpose_of_a_transpose_round_trips() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        runner
            .run(&csr(12, 12, 60), |g| {
                prop_assert_eq!(g.reversed().reversed(), g.sort_rows());
                Ok(())
            })
            .unwrap();
    }
}
