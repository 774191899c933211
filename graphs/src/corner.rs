//! Named corner-case graphs, the graph version of odd sequence lengths: every kernel and
//! schedule should be tested on all of them ([`all`]).

use crate::csr::Csr;
use crate::generate::{erdos_renyi, inject_hubs};

/// The degree of the hub of [`star`].
pub const STAR_HUB_DEGREE: usize = 10_000;

fn valid(g: crate::Result<Csr>) -> Csr {
    g.unwrap_or_else(|e| unreachable!("corner-case graphs should be valid: {e}"))
}

/// No nodes, no edges.
pub fn empty() -> Csr {
    valid(Csr::empty(0, 0))
}

/// One node without edges.
pub fn single_node() -> Csr {
    valid(Csr::empty(1, 1))
}

/// One node with a self loop (its softmax is over one score).
pub fn single_self_loop() -> Csr {
    valid(Csr::from_rows(1, &[vec![0]]))
}

/// 64 nodes where every third row is empty (zero in-degree) and the others have 1-5 edges.
pub fn isolated_nodes() -> Csr {
    let rows: Vec<Vec<u32>> = (0..64u32)
        .map(|i| if i % 3 == 0 { Vec::new() } else { (0..1 + i % 5).map(|k| (i * 7 + k * 13) % 64).collect() })
        .collect();
    valid(Csr::from_rows(64, &rows))
}

/// 50 nodes whose only edges are self loops.
pub fn only_self_loops() -> Csr {
    let rows: Vec<Vec<u32>> = (0..50u32).map(|i| vec![i]).collect();
    valid(Csr::from_rows(50, &rows))
}

/// An undirected star: hub 0 with [`STAR_HUB_DEGREE`] leaves, so row 0 and column 0 both hold
/// 10,000 edges and every leaf row holds one.
pub fn star() -> Csr {
    let n = STAR_HUB_DEGREE + 1;
    let mut rows: Vec<Vec<u32>> = vec![vec![0]; n];
    rows[0] = (1..n as u32).collect();
    valid(Csr::from_rows(n, &rows))
}

/// A random graph on 97 nodes (mean degree 6), not a power of two.
pub fn random_97() -> Csr {
    valid(erdos_renyi(97, 6.0, 97))
}

/// A random graph on 1025 nodes (mean degree 12), one past a power of two.
pub fn random_1025() -> Csr {
    valid(erdos_renyi(1025, 12.0, 1025))
}

/// 40 nodes with duplicate edges: every row lists some sources two or three times.
pub fn duplicates() -> Csr {
    let rows: Vec<Vec<u32>> = (0..40u32)
        .map(|i| {
            let a = (i * 11 + 3) % 40;
            let b = (i * 5 + 1) % 40;
            vec![a, b, a, (i + 1) % 40, a, b]
        })
        .collect();
    valid(Csr::from_rows(40, &rows))
}

/// A bipartite block: 30 destinations, 70 sources, some empty rows (a sampled mini-batch).
pub fn bipartite() -> Csr {
    let rows: Vec<Vec<u32>> = (0..30u32).map(|i| (0..(i % 7) * 3).map(|k| (i * 17 + k * 29) % 70).collect()).collect();
    valid(Csr::from_rows(70, &rows))
}

/// A 500-node random graph with two hubs of in-degree 3000 (more in-edges than nodes, so
/// duplicates too).
pub fn hubs() -> Csr {
    valid(erdos_renyi(500, 4.0, 500).and_then(|g| inject_hubs(&g, 2, 3000, 500)))
}

/// Every corner case with its name.
pub fn all() -> Vec<(&'static str, Csr)> {
    vec![
        ("empty", empty()),
        ("single_node", single_node()),
        ("single_self_loop", single_self_loop()),
        ("isolated_nodes", isolated_nodes()),
        ("only_self_loops", only_self_loops()),
        ("star", star()),
        ("random_97", random_97()),
        ("random_1025", random_1025()),
        ("duplicates", duplicates()),
        ("bipartite", bipartite()),
        ("hubs", hubs()),
    ]
}

/// The corner case called `name` (as listed by [`all`]).
pub fn by_name(name: &str) -> Option<Csr> {
    all().into_iter().find(|(n, _)| *n == name).map(|(_, g)| g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphStats;

    #[test]
    fn each_corner_case_has_its_property() {
        assert_eq!(empty().num_dst(), 0);
        assert_eq!((single_node().num_dst(), single_node().nnz()), (1, 0));
        let s = GraphStats::of(&isolated_nodes());
        assert_eq!(s.empty_rows(), 22);
        let s = GraphStats::of(&only_self_loops());
        assert_eq!(s.self_loops as usize, s.nnz);
        let s = GraphStats::of(&star());
        assert_eq!((s.in_degree.max, s.out_degree.max), (10_000, 10_000));
        assert_eq!(random_97().num_dst(), 97);
        assert_eq!(random_1025().num_dst(), 1025);
        assert!(GraphStats::of(&duplicates()).duplicate_edges >= 80);
        assert!(!bipartite().is_square());
        assert!(GraphStats::of(&bipartite()).empty_rows() > 0);
        assert_eq!(GraphStats::of(&hubs()).rows_above(2999), 2);
        let names: Vec<_> = all().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), 11);
        assert!(by_name("star").is_some() && by_name("nope").is_none());
    }
}
