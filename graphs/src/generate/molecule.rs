//! Batches of molecule-sized random graphs: about 22 atoms, degree at most 4, a tree skeleton
//! with a few 5- and 6-rings, like the molecules of ogbg-molhiv or MOSES.

use std::collections::VecDeque;

use super::Rng;
use crate::csr::Csr;
use crate::error::{GraphError, Result};
use crate::transform::{Batch, block_diagonal};

/// The largest number of bonds of an atom.
const MAX_DEGREE: usize = 4;

/// `graphs` molecule-like graphs packed into one block-diagonal graph.
///
/// Each graph has `atoms ± atoms/3` atoms (at least 1). Atom `k` bonds to an earlier atom with
/// fewer than 3 bonds (the previous atom with probability 1/2, for chains, else a uniform one),
/// giving a tree; then 1 to 3 ring closures join two atoms at distance 4 or 5 that both have
/// fewer than 3 bonds (5- and 6-rings). Bonds are undirected (both directions), rows sorted,
/// no self loops or duplicates, degree <= 4.
///
/// # Errors
/// [`GraphError::InvalidParameter`] for `atoms == 0` with graphs;
/// [`GraphError::TooLarge`] when the batch exceeds `2^32` nodes.
pub fn molecule_batch(graphs: usize, atoms: usize, seed: u64) -> Result<Batch> {
    if graphs > 0 && atoms == 0 {
        return Err(GraphError::param("molecule_batch", "molecules need at least 1 atom"));
    }
    if graphs as u128 * (atoms + atoms / 3) as u128 > crate::MAX_NODES as u128 {
        return Err(GraphError::TooLarge {
            what: "molecule batch nodes",
            count: (graphs as u64).saturating_mul(atoms as u64),
            limit: crate::MAX_NODES,
            reason: "node ids are u32",
        });
    }
    let most_atoms = graphs as u64 * (atoms + atoms / 3) as u64;
    super::check_generated(most_atoms, most_atoms.saturating_mul(MAX_DEGREE as u64))?;
    let mut rng = Rng::new(seed, 0);
    let parts = (0..graphs).map(|_| molecule(&mut rng, atoms)).collect::<Result<Vec<_>>>()?;
    block_diagonal(&parts)
}

/// One random molecule graph.
fn molecule(rng: &mut Rng, atoms: usize) -> Result<Csr> {
    let spread = atoms / 3;
    let n = (atoms - spread + rng.below(2 * spread as u64 + 1) as usize).max(1);
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut candidates = Vec::with_capacity(n);
    for k in 1..n {
        let prev = k - 1;
        let parent = if adj[prev].len() < 3 && rng.bernoulli(0.5) {
            prev
        } else {
            candidates.clear();
            candidates.extend((0..k).filter(|&j| adj[j].len() < 3));
            if candidates.is_empty() {
                candidates.extend((0..k).filter(|&j| adj[j].len() < MAX_DEGREE));
            }
            candidates[rng.below(candidates.len() as u64) as usize]
        };
        adj[parent].push(k as u32);
        adj[k].push(parent as u32);
    }
    let rings = 1 + rng.below(3);
    let mut dist = vec![usize::MAX; n];
    let mut queue = VecDeque::new();
    for _ in 0..rings {
        let a = rng.below(n as u64) as usize;
        if adj[a].len() >= 3 {
            continue;
        }
        dist.iter_mut().for_each(|d| *d = usize::MAX);
        dist[a] = 0;
        queue.push_back(a);
        while let Some(v) = queue.pop_front() {
            for &w in &adj[v] {
                if dist[w as usize] == usize::MAX {
                    dist[w as usize] = dist[v] + 1;
                    queue.push_back(w as usize);
                }
            }
        }
        candidates.clear();
        candidates.extend((0..n).filter(|&b| matches!(dist[b], 4 | 5) && adj[b].len() < 3));
        if let Some(&b) = candidates.get(rng.below(candidates.len() as u64) as usize) {
            adj[a].push(b as u32);
            adj[b].push(a as u32);
        }
    }
    adj.iter_mut().for_each(|row| row.sort_unstable());
    Csr::from_rows(n, &adj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphStats;

    #[test]
    fn molecules_are_small_sparse_and_ringed() {
        let b = molecule_batch(200, 22, 3).unwrap();
        let g = &b.graph;
        let s = GraphStats::of(g);
        assert!(s.in_degree.max <= 4, "{s}");
        assert_eq!((s.self_loops, s.duplicate_edges), (0, 0));
        assert_eq!(g.symmetrize().unwrap(), *g);
        let mean_atoms = g.num_dst() as f64 / 200.0;
        assert!((mean_atoms - 22.0).abs() < 1.5, "{mean_atoms}");
        // A tree has n - 1 bonds and rings add 1 to 3, so nnz / N (two entries per bond) is near 2.1.
        let bonds_per_atom = g.nnz() as f64 / g.num_dst() as f64;
        assert!((1.95..2.3).contains(&bonds_per_atom), "{bonds_per_atom}");
        assert!(molecule_batch(1, 0, 0).is_err());
        assert_eq!(molecule_batch(3, 1, 0).unwrap().graph.nnz(), 0);
    }
}
