//! Hub injection: turn rows of any graph into super nodes of a given in-degree.

use super::Rng;
use crate::csr::Csr;
use crate::error::{GraphError, Result};

/// Replaces the rows of `count` distinct, uniformly chosen destinations of `base` by `degree`
/// sources drawn uniformly with replacement (sorted): those rows then have in-degree exactly
/// `degree`, and every other row is unchanged. The base may be bipartite.
/// O(E + num_dst + count * degree).
///
/// # Errors
/// [`GraphError::InvalidParameter`] when `count > num_dst`, or `degree > 0` with no sources;
/// [`GraphError::TooLarge`] when `count * degree` exceeds 2^36 edges.
pub fn inject_hubs(base: &Csr, count: usize, degree: usize, seed: u64) -> Result<Csr> {
    if count > base.num_dst() {
        return Err(GraphError::param(
            "inject_hubs",
            format!("{count} hubs asked for a graph with {} rows", base.num_dst()),
        ));
    }
    if degree > 0 && base.num_src() == 0 {
        return Err(GraphError::param("inject_hubs", "hub edges need at least one source node"));
    }
    let added = count.checked_mul(degree).filter(|&a| a as u64 <= 1 << 36);
    let Some(added) = added else {
        return Err(GraphError::TooLarge {
            what: "hub edges",
            count: (count as u64).saturating_mul(degree as u64),
            limit: 1 << 36,
            reason: "generator memory",
        });
    };
    super::check_generated(base.num_dst() as u64, (base.nnz() + added) as u64)?;
    let mut rng = Rng::new(seed, 0);
    let mut rows: Vec<u32> = (0..base.num_dst() as u64).map(|i| i as u32).collect();
    // A partial Fisher-Yates shuffle picks `count` distinct rows.
    for k in 0..count {
        let j = k + rng.below((rows.len() - k) as u64) as usize;
        rows.swap(k, j);
    }
    let mut is_hub = vec![false; base.num_dst()];
    for &r in &rows[..count] {
        is_hub[r as usize] = true;
    }
    let mut offsets = Vec::with_capacity(base.num_dst() + 1);
    offsets.push(0u64);
    let mut columns = Vec::with_capacity(base.nnz() + added);
    for (i, &hub) in is_hub.iter().enumerate() {
        if hub {
            let start = columns.len();
            columns.extend((0..degree).map(|_| rng.below(base.num_src() as u64) as u32));
            columns[start..].sort_unstable();
        } else {
            columns.extend_from_slice(base.row(i));
        }
        offsets.push(columns.len() as u64);
    }
    Csr::new(base.num_dst(), base.num_src(), offsets, columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphStats;
    use crate::generate::erdos_renyi;

    #[test]
    fn hubs_get_the_asked_degree() {
        let base = erdos_renyi(2000, 4.0, 1).unwrap();
        let g = inject_hubs(&base, 3, 5000, 9).unwrap();
        let s = GraphStats::of(&g);
        assert_eq!(s.rows_above(4999), 3);
        assert_eq!(s.in_degree.max, 5000);
        let changed = (0..2000).filter(|&i| g.row(i) != base.row(i)).count();
        assert_eq!(changed, 3);
        assert!(inject_hubs(&base, 2001, 1, 0).is_err());
        assert!(inject_hubs(&base, 2000, usize::MAX, 0).is_err());
        assert_eq!(inject_hubs(&base, 0, 10, 0).unwrap(), base);
        let empty_src = Csr::empty(3, 0).unwrap();
        assert!(inject_hubs(&empty_src, 1, 1, 0).is_err());
    }
}
