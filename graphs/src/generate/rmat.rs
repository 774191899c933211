//! R-MAT (recursive matrix) graphs with Graph500 parameters by default.

use super::Rng;
use crate::csr::Csr;
use crate::error::{GraphError, Result};

/// The quadrant probabilities of R-MAT: `a` top-left, `b` top-right (row bit 0, column bit 1),
/// `c` bottom-left, `d` bottom-right; rows are destinations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmatParams {
    /// Probability of the (0, 0) quadrant.
    pub a: f64,
    /// Probability of the (0, 1) quadrant.
    pub b: f64,
    /// Probability of the (1, 0) quadrant.
    pub c: f64,
    /// Probability of the (1, 1) quadrant.
    pub d: f64,
}

/// The Graph500 parameters: a = 0.57, b = c = 0.19, d = 0.05.
pub const GRAPH500: RmatParams = RmatParams { a: 0.57, b: 0.19, c: 0.19, d: 0.05 };

/// An R-MAT graph with [`GRAPH500`] parameters: see [`rmat_with`].
///
/// # Errors
/// As [`rmat_with`].
pub fn rmat(scale: u32, edge_factor: u64, seed: u64) -> Result<Csr> {
    rmat_with(scale, edge_factor, GRAPH500, seed)
}

/// `edge_factor * 2^scale` edges on `2^scale` nodes; each edge descends `scale` levels of the
/// quadrant recursion (32-bit integer thresholds per level, no noise). Node ids are then
/// relabelled by a seeded permutation, as Graph500 does, so hubs are not clustered at id 0.
/// Duplicates and self loops are kept; rows are sorted. O(E * scale).
///
/// # Errors
/// [`GraphError::InvalidParameter`] for `scale > 32`, negative probabilities or ones that do not
/// sum to 1 (within 1e-9); [`GraphError::TooLarge`] for more than 2^34 edges.
pub fn rmat_with(scale: u32, edge_factor: u64, p: RmatParams, seed: u64) -> Result<Csr> {
    if scale > 32 {
        return Err(GraphError::param("rmat", format!("scale must be <= 32, got {scale}")));
    }
    let probs = [p.a, p.b, p.c, p.d];
    if probs.iter().any(|x| !(x.is_finite() && *x >= 0.0)) || ((p.a + p.b + p.c + p.d) - 1.0).abs() > 1e-9 {
        return Err(GraphError::param("rmat", format!("probabilities must be >= 0 and sum to 1, got {p:?}")));
    }
    let n = 1u64 << scale;
    let m = edge_factor.checked_mul(n).filter(|&m| m <= 1 << 34).ok_or(GraphError::TooLarge {
        what: "rmat edges",
        count: edge_factor.saturating_mul(n),
        limit: 1 << 34,
        reason: "generator memory",
    })?;
    super::check_generated(n, m)?;
    let scale32 = |x: f64| (x * 4_294_967_296.0).min(4_294_967_295.0) as u64;
    let (ta, tab, tabc) = (scale32(p.a), scale32(p.a + p.b), scale32(p.a + p.b + p.c));
    let mut rng = Rng::new(seed, 0);
    let mut bits = 0u64;
    let mut left = 0u32;
    let mut draw32 = || {
        if left == 0 {
            bits = rng.next_u64();
            left = 2;
        }
        left -= 1;
        let r = bits & 0xffff_ffff;
        bits >>= 32;
        r
    };
    let mut perm: Vec<u32> = (0..n).map(|v| v as u32).collect();
    Rng::new(seed, 1).shuffle(&mut perm);
    let mut edges = Vec::with_capacity(m as usize);
    for _ in 0..m {
        let (mut row, mut col) = (0u64, 0u64);
        for _ in 0..scale {
            let r = draw32();
            let (rb, cb) = if r < ta {
                (0, 0)
            } else if r < tab {
                (0, 1)
            } else if r < tabc {
                (1, 0)
            } else {
                (1, 1)
            };
            row = (row << 1) | rb;
            col = (col << 1) | cb;
        }
        edges.push((perm[row as usize], perm[col as usize]));
    }
    Ok(Csr::from_edges(n as usize, n as usize, &edges)?.sort_rows())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphStats;

    #[test]
    fn skewed_and_deterministic() {
        let g = rmat(12, 8, 4).unwrap();
        assert_eq!((g.num_dst(), g.nnz()), (4096, 32_768));
        assert!(g.rows_sorted());
        let s = GraphStats::of(&g);
        assert!(s.in_degree.max > 200, "{s}");
        assert!(s.empty_rows() > 500, "{s}");
        assert_eq!(g, rmat(12, 8, 4).unwrap());
        assert_ne!(g, rmat(12, 8, 5).unwrap());
    }

    #[test]
    fn bad_parameters() {
        assert!(rmat(33, 1, 0).is_err());
        let p = RmatParams { a: 0.5, ..GRAPH500 };
        assert!(rmat_with(4, 1, p, 0).is_err());
        assert!(rmat(32, 1 << 40, 0).is_err());
        assert_eq!(rmat(0, 3, 0).unwrap().nnz(), 3);
    }
}
