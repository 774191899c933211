//! Node reordering at graph preparation, for locality: a permutation of a square graph's nodes
//! under which rows that share neighbours sit close together, so that the fused passes' gathers
//! of neighbouring rows hit the same cache lines. Two orderings:
//!
//! - [`Ordering::Degree`]: nodes by decreasing in-degree (ties in id order): the hubs, whose
//!   features every pass reads most, first and together;
//! - [`Ordering::Rcm`]: reverse Cuthill–McKee on the undirected pattern (`sprs`'s, with
//!   pseudo-peripheral starting nodes), which keeps each node's neighbours within a narrow band
//!   of ids.
//!
//! A permutation `perm` says node `v` becomes `perm[v]` ([`Csr::permuted`] relabels the graph).
//! The caller applies it to node features with [`apply`] and takes outputs back to the original
//! ids with [`undo`].

use sprs::CsMatI;

use crate::csr::Csr;
use crate::error::{GraphError, Result};

/// A node ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// Decreasing in-degree, ties in id order.
    Degree,
    /// Reverse Cuthill–McKee on the undirected pattern.
    Rcm,
}

impl Ordering {
    /// Every ordering.
    pub const ALL: [Ordering; 2] = [Ordering::Degree, Ordering::Rcm];

    /// The name used by the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Self::Degree => "degree",
            Self::Rcm => "rcm",
        }
    }
}

impl std::str::FromStr for Ordering {
    type Err = GraphError;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|o| o.name() == s).ok_or_else(|| {
            GraphError::param(
                "reorder",
                format!("ordering `{s}` (known: {})", Self::ALL.map(Ordering::name).join(", ")),
            )
        })
    }
}

/// The permutation `ordering` gives `g`'s nodes: node `v` becomes `perm[v]`.
///
/// # Errors
/// [`GraphError::NotSquare`] for a bipartite graph (its two sides have no common order).
pub fn order(g: &Csr, ordering: Ordering) -> Result<Vec<u32>> {
    if !g.is_square() {
        return Err(GraphError::NotSquare { operation: "reorder", num_dst: g.num_dst(), num_src: g.num_src() });
    }
    let n = g.num_dst();
    match ordering {
        Ordering::Degree => {
            let mut by_degree: Vec<u32> = (0..n as u32).collect();
            by_degree.sort_by_key(|&v| std::cmp::Reverse(g.degree(v as usize)));
            Ok(inverse(&by_degree))
        }
        Ordering::Rcm => {
            // The undirected pattern, rows sorted and without duplicates (sprs's structure).
            let sym = g.symmetrize()?;
            let (_, _, offsets, columns) = sym.into_parts();
            let indptr: Vec<usize> = offsets.iter().map(|&o| o as usize).collect();
            let data = vec![1u8; columns.len()];
            let mat = CsMatI::<u8, u32, usize>::try_new((n, n), indptr, columns, data)
                .map_err(|(_, _, _, e)| GraphError::param("reorder", format!("the undirected pattern: {e}")))?;
            let ordering = sprs::linalg::reverse_cuthill_mckee(mat.view());
            // sprs's `perm.vec()[k]` is the node placed at `k`; its inverse is ours.
            Ok(ordering.perm.inv_vec())
        }
    }
}

/// `perm`'s inverse: `inverse(perm)[perm[v]] = v`.
fn inverse(perm: &[u32]) -> Vec<u32> {
    let mut inv = vec![0u32; perm.len()];
    for (v, &p) in perm.iter().enumerate() {
        inv[p as usize] = v as u32;
    }
    inv
}

/// Node features `x` (`width` values per node, in original ids) in the order of `perm`: row `v`
/// moves to row `perm[v]`.
///
/// # Errors
/// [`GraphError::InvalidParameter`] when `x` does not hold `width` values per node of `perm`.
pub fn apply(perm: &[u32], x: &[f32], width: usize) -> Result<Vec<f32>> {
    check_rows("apply", perm, x, width)?;
    let mut out = vec![0.0f32; x.len()];
    for (v, row) in x.chunks_exact(width.max(1)).enumerate().take(perm.len()) {
        let at = perm[v] as usize * width;
        out[at..at + width].copy_from_slice(row);
    }
    Ok(out)
}

/// The inverse of [`apply`]: rows of `y` (in `perm`'s order) back to the original ids.
///
/// # Errors
/// As [`apply`].
pub fn undo(perm: &[u32], y: &[f32], width: usize) -> Result<Vec<f32>> {
    check_rows("undo", perm, y, width)?;
    let mut out = vec![0.0f32; y.len()];
    for (v, &p) in perm.iter().enumerate() {
        let at = p as usize * width;
        out[v * width..(v + 1) * width].copy_from_slice(&y[at..at + width]);
    }
    Ok(out)
}

fn check_rows(context: &'static str, perm: &[u32], x: &[f32], width: usize) -> Result<()> {
    if perm.len().checked_mul(width) != Some(x.len()) {
        return Err(GraphError::param(
            context,
            format!("{} values for {} nodes of {width} values", x.len(), perm.len()),
        ));
    }
    let mut seen = vec![false; perm.len()];
    for &p in perm {
        if p as usize >= perm.len() || std::mem::replace(&mut seen[p as usize], true) {
            return Err(GraphError::param(context, format!("perm holds {p} out of range or twice")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path 0 - 3 - 1 - 4 - 2 given in scrambled ids (edges both ways).
    fn path() -> Csr {
        let edges: Vec<(u32, u32)> =
            [(0, 3), (3, 1), (1, 4), (4, 2)].iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
        Csr::from_edges(5, 5, &edges).unwrap()
    }

    fn is_permutation(p: &[u32]) -> bool {
        let mut s = p.to_vec();
        s.sort_unstable();
        s.iter().enumerate().all(|(i, &v)| i as u32 == v)
    }

    /// The largest |perm[i] - perm[j]| over the edges: the bandwidth after relabelling.
    fn bandwidth(g: &Csr, perm: &[u32]) -> u32 {
        g.edges().map(|(i, j)| perm[i as usize].abs_diff(perm[j as usize])).max().unwrap_or(0)
    }

    #[test]
    fn rcm_narrows_a_scrambled_path_to_bandwidth_one() {
        let g = path();
        let perm = order(&g, Ordering::Rcm).unwrap();
        assert!(is_permutation(&perm));
        // Ids 0..5 in path order 0, 3, 1, 4, 2: bandwidth 3 as given (3 - 0), 1 after RCM.
        assert_eq!(bandwidth(&g, &(0..5).collect::<Vec<_>>()), 3);
        assert_eq!(bandwidth(&g, &perm), 1);
    }

    #[test]
    fn degree_order_puts_hubs_first() {
        // In-degrees 1, 3, 0, 2: order 1, 3, 0, 2, so perm = [2, 0, 3, 1].
        let g = Csr::from_rows(4, &[vec![0], vec![0, 2, 3], vec![], vec![1, 2]]).unwrap();
        assert_eq!(order(&g, Ordering::Degree).unwrap(), vec![2, 0, 3, 1]);
    }

    #[test]
    fn apply_and_undo_round_trip_features() {
        let perm = vec![2u32, 0, 1];
        let x = vec![0.0f32, 0.5, 1.0, 1.5, 2.0, 2.5];
        let moved = apply(&perm, &x, 2).unwrap();
        // Row 0 moves to 2, row 1 to 0, row 2 to 1.
        assert_eq!(moved, vec![1.0, 1.5, 2.0, 2.5, 0.0, 0.5]);
        assert_eq!(undo(&perm, &moved, 2).unwrap(), x);
        assert!(apply(&perm, &x, 3).is_err());
        assert!(apply(&[0, 0, 1], &x, 2).is_err());
    }

    #[test]
    fn bipartite_graphs_are_refused() {
        let g = Csr::from_rows(3, &[vec![0, 2]]).unwrap();
        assert!(matches!(order(&g, Ordering::Rcm), Err(GraphError::NotSquare { .. })));
    }

    #[test]
    fn empty_and_isolated_nodes_are_ordered() {
        let g = Csr::from_rows(4, &[vec![], vec![], vec![], vec![]]).unwrap();
        for o in Ordering::ALL {
            assert!(is_permutation(&order(&g, o).unwrap()), "{o:?}");
        }
        let empty = Csr::empty(0, 0).unwrap();
        assert!(order(&empty, Ordering::Rcm).unwrap().is_empty());
    }
}
