//! Batches of stochastic-block-model graphs shaped like the PATTERN benchmark: about 120 nodes
//! and mean degree about 50 per graph, packed block-diagonally.

use super::Rng;
use crate::csr::Csr;
use crate::error::{GraphError, Result};
use crate::transform::{Batch, block_diagonal};

/// The number of communities per graph.
const COMMUNITIES: u64 = 5;
/// The ratio of intra- to inter-community edge probability (PATTERN's 0.5 / 0.35).
const INTRA_OVER_INTER: f64 = 0.5 / 0.35;

/// `graphs` undirected SBM graphs packed into one block-diagonal graph.
///
/// Graph sizes are uniform in `[nodes - nodes/4, nodes + nodes/4]`; each node joins one of 5
/// communities uniformly; each unordered pair is an edge (both directions) with probability
/// `p_in` inside a community and `p_out = p_in / 1.43` across, chosen so that a graph of `nodes`
/// nodes has expected mean degree `mean_degree`. No self loops or duplicates; rows sorted.
///
/// # Errors
/// [`GraphError::InvalidParameter`] when `nodes < 2` (with graphs) or `mean_degree` is not in
/// `[0, nodes - 1]`; [`GraphError::TooLarge`] when the batch exceeds `2^32` nodes.
pub fn sbm_batch(graphs: usize, nodes: usize, mean_degree: f64, seed: u64) -> Result<Batch> {
    if graphs > 0 && nodes < 2 {
        return Err(GraphError::param("sbm_batch", format!("graphs need >= 2 nodes, got {nodes}")));
    }
    if !(mean_degree.is_finite() && mean_degree >= 0.0 && mean_degree <= (nodes.max(1) - 1) as f64) {
        return Err(GraphError::param(
            "sbm_batch",
            format!("mean degree must be in [0, {}], got {mean_degree}", nodes.max(1) - 1),
        ));
    }
    if graphs as u128 * (nodes + nodes / 4) as u128 > crate::MAX_NODES as u128 {
        return Err(GraphError::TooLarge {
            what: "sbm batch nodes",
            count: (graphs as u64).saturating_mul(nodes as u64),
            limit: crate::MAX_NODES,
            reason: "node ids are u32",
        });
    }
    let most_nodes = graphs as u64 * (nodes + nodes / 4) as u64;
    super::check_generated(most_nodes, (most_nodes as f64 * mean_degree) as u64)?;
    // Same-community pairs have probability 1/5: mean degree = (n - 1) p_out (r/5 + 4/5).
    let share = 1.0 / COMMUNITIES as f64;
    let mut p_out = mean_degree / ((nodes.max(2) - 1) as f64 * (INTRA_OVER_INTER * share + (1.0 - share)));
    let mut p_in = p_out * INTRA_OVER_INTER;
    if p_in > 1.0 {
        // Dense requests: intra pairs all connect and inter pairs make up the rest.
        p_in = 1.0;
        p_out = ((mean_degree / (nodes - 1) as f64 - share) / (1.0 - share)).clamp(0.0, 1.0);
    }
    let mut rng = Rng::new(seed, 0);
    let mut parts = Vec::with_capacity(graphs);
    let mut rows: Vec<Vec<u32>> = Vec::new();
    for _ in 0..graphs {
        let spread = nodes / 4;
        let n = nodes - spread + rng.below(2 * spread as u64 + 1) as usize;
        let community: Vec<u64> = (0..n).map(|_| rng.below(COMMUNITIES)).collect();
        rows.iter_mut().for_each(Vec::clear);
        rows.resize_with(n, Vec::new);
        for i in 0..n {
            for j in i + 1..n {
                let p = if community[i] == community[j] { p_in } else { p_out };
                if rng.bernoulli(p) {
                    rows[i].push(j as u32);
                    rows[j].push(i as u32);
                }
            }
        }
        parts.push(Csr::from_rows(n, &rows[..n])?);
    }
    block_diagonal(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphStats;

    #[test]
    fn pattern_like_batch() {
        let b = sbm_batch(16, 120, 50.0, 2).unwrap();
        assert_eq!(b.num_graphs(), 16);
        let g = &b.graph;
        let s = GraphStats::of(g);
        assert!((s.in_degree.mean - 50.0).abs() < 5.0, "{s}");
        assert_eq!((s.self_loops, s.duplicate_edges, s.unsorted_rows), (0, 0, 0));
        assert_eq!(g.symmetrize().unwrap(), *g, "undirected");
        for k in 0..16 {
            let (lo, hi) = (b.dst_offsets[k] as usize, b.dst_offsets[k + 1] as usize);
            assert!((90..=150).contains(&(hi - lo)));
            for i in lo..hi {
                assert!(g.row(i).iter().all(|&j| (lo..hi).contains(&(j as usize))));
            }
        }
    }

    #[test]
    fn bad_parameters_and_dense_requests() {
        assert!(sbm_batch(1, 1, 0.0, 0).is_err());
        assert!(sbm_batch(1, 10, 10.0, 0).is_err());
        let full = sbm_batch(2, 8, 7.0, 0).unwrap();
        assert!(full.graph.nnz() > 0);
        assert_eq!(sbm_batch(0, 120, 50.0, 0).unwrap().graph.num_dst(), 0);
    }
}
