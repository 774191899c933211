//! The validated CSR graph: rows are destination nodes, columns their in-neighbours (sources).

use std::ops::Range;

use crate::error::{GraphError, Result};
use crate::limits::{Limits, bytes_of};

/// The largest number of destination or source nodes: node ids are `u32`, so ids run up to
/// `u32::MAX` and a side can hold at most `2^32` nodes.
pub const MAX_NODES: u64 = 1 << 32;

/// A sparse graph in compressed sparse row form, rows = destination nodes.
///
/// Row `i` lists the in-neighbours `j` of node `i` as `u32` column indices, so edge `e` with
/// `offsets[i] <= e < offsets[i + 1]` is the edge `columns[e] -> i`. Offsets are `u64`, so a
/// graph may hold more than `2^32` edges. `num_dst` and `num_src` may differ (a bipartite block).
/// Duplicate edges, self loops and empty rows are ordinary. The edge id of an edge is its index
/// into [`Csr::columns`].
///
/// Every `Csr` has passed [`Csr::new`]'s checks: `offsets.len() == num_dst + 1`,
/// `offsets[0] == 0`, offsets never decrease, `offsets[num_dst] == nnz`, and every column is
/// below `num_src`; both sides hold at most [`MAX_NODES`] nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csr {
    num_dst: usize,
    num_src: usize,
    offsets: Vec<u64>,
    columns: Vec<u32>,
}

impl Csr {
    /// Checks and wraps CSR arrays.
    ///
    /// # Errors
    /// The [`GraphError`] variant names the first violated rule and where it is violated.
    pub fn new(num_dst: usize, num_src: usize, offsets: Vec<u64>, columns: Vec<u32>) -> Result<Csr> {
        check_side("num_dst", num_dst)?;
        check_side("num_src", num_src)?;
        let expected = num_dst + 1;
        if offsets.len() != expected {
            return Err(GraphError::OffsetsLength { num_dst, expected, found: offsets.len() });
        }
        if offsets[0] != 0 {
            return Err(GraphError::OffsetsStart { found: offsets[0] });
        }
        if let Some(row) = offsets.windows(2).position(|w| w[0] > w[1]) {
            return Err(GraphError::OffsetsDecrease { row, start: offsets[row], end: offsets[row + 1] });
        }
        let nnz = columns.len();
        if offsets[num_dst] != nnz as u64 {
            return Err(GraphError::OffsetsEnd { found: offsets[num_dst], nnz });
        }
        // The fast path only looks at the largest column; the row scan runs only to name the
        // offending edge.
        let too_big = |c: u32| c as u64 >= num_src as u64;
        if columns.iter().copied().max().is_some_and(too_big)
            && let Some(position) = columns.iter().position(|&c| too_big(c))
        {
            let row = offsets.partition_point(|&o| o <= position as u64) - 1;
            return Err(GraphError::ColumnOutOfRange { row, position, column: columns[position], num_src });
        }
        Ok(Csr { num_dst, num_src, offsets, columns })
    }

    /// A graph with no edges.
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] when a side exceeds [`MAX_NODES`].
    pub fn empty(num_dst: usize, num_src: usize) -> Result<Csr> {
        check_side("num_dst", num_dst)?;
        Limits::default().check_items("empty graph offsets", num_dst as u64 + 1, 8)?;
        Csr::new(num_dst, num_src, vec![0; num_dst + 1], Vec::new())
    }

    /// Builds a graph from `(dst, src)` pairs.
    ///
    /// The edges are sorted by destination with a stable counting sort: the sources of a row keep
    /// the order in which they were given, and duplicates are kept. O(E + num_dst).
    ///
    /// # Errors
    /// [`GraphError::EdgeOutOfRange`] names the first pair outside the graph;
    /// [`GraphError::OverBudget`] when the graph does not fit [`Limits::default`].
    pub fn from_edges(num_dst: usize, num_src: usize, edges: &[(u32, u32)]) -> Result<Csr> {
        Csr::from_edge_slices(num_dst, num_src, &[edges], &Limits::default())
    }

    /// [`Csr::from_edges`] within a memory budget.
    ///
    /// # Errors
    /// As [`Csr::from_edges`], with `limits` as the budget.
    pub fn from_edges_with(num_dst: usize, num_src: usize, edges: &[(u32, u32)], limits: &Limits) -> Result<Csr> {
        Csr::from_edge_slices(num_dst, num_src, &[edges], limits)
    }

    /// [`Csr::from_edges`] over the concatenation of several slices, without concatenating them.
    pub(crate) fn from_edge_slices(
        num_dst: usize,
        num_src: usize,
        slices: &[&[(u32, u32)]],
        limits: &Limits,
    ) -> Result<Csr> {
        check_side("num_dst", num_dst)?;
        check_side("num_src", num_src)?;
        let nnz: u64 = slices.iter().map(|s| s.len() as u64).sum();
        limits.check("the graph (offsets, counts and columns)", bytes_of(&[(num_dst as u64 + 1, 16), (nnz, 4)]))?;
        let mut counts = vec![0u64; num_dst + 1];
        let mut index = 0;
        for slice in slices {
            for &(dst, src) in *slice {
                if dst as usize >= num_dst || src as usize >= num_src {
                    return Err(GraphError::EdgeOutOfRange {
                        index,
                        dst: dst as u64,
                        src: src as u64,
                        num_dst,
                        num_src,
                    });
                }
                counts[dst as usize + 1] += 1;
                index += 1;
            }
        }
        prefix_sum(&mut counts);
        let offsets = counts.clone();
        let mut next = counts;
        let mut columns = vec![0u32; index];
        for slice in slices {
            for &(dst, src) in *slice {
                let slot = &mut next[dst as usize];
                columns[*slot as usize] = src;
                *slot += 1;
            }
        }
        Csr::new(num_dst, num_src, offsets, columns)
    }

    /// Builds a graph from one list of sources per destination row.
    ///
    /// # Errors
    /// [`GraphError::ColumnOutOfRange`] for a source not below `num_src`.
    pub fn from_rows<R: AsRef<[u32]>>(num_src: usize, rows: &[R]) -> Result<Csr> {
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0u64);
        let mut columns = Vec::new();
        for row in rows {
            columns.extend_from_slice(row.as_ref());
            offsets.push(columns.len() as u64);
        }
        Csr::new(rows.len(), num_src, offsets, columns)
    }

    /// The number of destination nodes (rows).
    pub fn num_dst(&self) -> usize {
        self.num_dst
    }

    /// The number of source nodes (the column range).
    pub fn num_src(&self) -> usize {
        self.num_src
    }

    /// The number of edges.
    pub fn nnz(&self) -> usize {
        self.columns.len()
    }

    /// Whether `num_dst == num_src`.
    pub fn is_square(&self) -> bool {
        self.num_dst == self.num_src
    }

    /// The row offsets, `num_dst + 1` entries from 0 to `nnz`.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The source of every edge, grouped by destination row.
    pub fn columns(&self) -> &[u32] {
        &self.columns
    }

    /// The edge ids of row `i`.
    ///
    /// # Panics
    /// If `i >= num_dst`, like slice indexing; [`Csr::get_row`] is the checked form.
    pub fn edge_range(&self, i: usize) -> Range<usize> {
        self.offsets[i] as usize..self.offsets[i + 1] as usize
    }

    /// The in-neighbours of row `i`.
    ///
    /// # Panics
    /// If `i >= num_dst`, like slice indexing; [`Csr::get_row`] is the checked form.
    pub fn row(&self, i: usize) -> &[u32] {
        &self.columns[self.edge_range(i)]
    }

    /// The in-neighbours of row `i`, or `None` when `i >= num_dst`.
    pub fn get_row(&self, i: usize) -> Option<&[u32]> {
        (i < self.num_dst).then(|| self.row(i))
    }

    /// The in-degree of row `i`.
    ///
    /// # Panics
    /// If `i >= num_dst`, like slice indexing.
    pub fn degree(&self, i: usize) -> usize {
        (self.offsets[i + 1] - self.offsets[i]) as usize
    }

    /// All edges as `(dst, src)` pairs in edge-id order.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.num_dst).flat_map(move |i| self.row(i).iter().map(move |&j| (i as u32, j)))
    }

    /// The destination row of every edge (the COO row array), in edge-id order.
    pub fn coo_rows(&self) -> Vec<u32> {
        slot_owners(&self.offsets)
    }

    /// The largest number of edges held by a group of `r` consecutive rows, groups aligned at
    /// multiples of `r` (rows `[k r, k r + r)`, the last group possibly shorter).
    ///
    /// This is the shared-memory need of a block that takes `r` rows. `r = 0` gives 0 (no group
    /// holds a row). O(num_dst / r).
    pub fn max_edges_in_row_group(&self, r: usize) -> u64 {
        if r == 0 {
            return 0;
        }
        let mut best = 0;
        let mut start = 0;
        while start < self.num_dst {
            let end = (start + r).min(self.num_dst);
            best = best.max(self.offsets[end] - self.offsets[start]);
            start = end;
        }
        best
    }

    /// Takes the graph apart: `(num_dst, num_src, offsets, columns)`.
    pub fn into_parts(self) -> (usize, usize, Vec<u64>, Vec<u32>) {
        (self.num_dst, self.num_src, self.offsets, self.columns)
    }
}

/// Checks that a side of the graph fits `u32` node ids.
pub(crate) fn check_side(what: &'static str, count: usize) -> Result<()> {
    if count as u64 > MAX_NODES {
        return Err(GraphError::TooLarge { what, count: count as u64, limit: MAX_NODES, reason: "node ids are u32" });
    }
    Ok(())
}

/// Turns per-slot counts (with a leading 0 slot) into exclusive prefix sums in place.
pub(crate) fn prefix_sum(counts: &mut [u64]) {
    let mut acc = 0;
    for c in counts.iter_mut() {
        acc += *c;
        *c = acc;
    }
}

/// For offsets of a compressed layout (a CSR's rows or a CSC's columns, `offsets[0] = 0`,
/// nondecreasing), the row (or column) that owns each slot, in slot order: a CSR's COO rows, a
/// CSC's COO columns. Owners are `u32` ids (fewer than 2^32 rows or columns).
pub fn slot_owners(offsets: &[u64]) -> Vec<u32> {
    let mut owners = Vec::with_capacity(offsets.last().map_or(0, |&n| n as usize));
    for (i, w) in offsets.windows(2).enumerate() {
        owners.resize(owners.len() + (w[1] - w[0]) as usize, i as u32);
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_accepts_a_valid_graph_and_exposes_it() {
        let g = Csr::new(3, 2, vec![0, 2, 2, 3], vec![1, 0, 1]).unwrap();
        assert_eq!((g.num_dst(), g.num_src(), g.nnz()), (3, 2, 3));
        assert_eq!(g.row(0), &[1, 0]);
        assert!(g.row(1).is_empty());
        assert_eq!(g.degree(2), 1);
        assert_eq!(g.get_row(3), None);
        assert!(!g.is_square());
        assert_eq!(g.coo_rows(), vec![0, 0, 2]);
        assert_eq!(g.edges().collect::<Vec<_>>(), vec![(0, 1), (0, 0), (2, 1)]);
    }

    #[test]
    fn new_names_each_violation() {
        let e = Csr::new(2, 2, vec![0, 1], vec![0]).unwrap_err();
        assert!(matches!(e, GraphError::OffsetsLength { expected: 3, found: 2, .. }), "{e}");
        let e = Csr::new(1, 2, vec![1, 1], vec![0]).unwrap_err();
        assert!(matches!(e, GraphError::OffsetsStart { found: 1 }), "{e}");
        let e = Csr::new(3, 2, vec![0, 2, 1, 2], vec![0, 1]).unwrap_err();
        assert!(matches!(e, GraphError::OffsetsDecrease { row: 1, start: 2, end: 1 }), "{e}");
        let e = Csr::new(1, 2, vec![0, 1], vec![0, 1]).unwrap_err();
        assert!(matches!(e, GraphError::OffsetsEnd { found: 1, nnz: 2 }), "{e}");
        let e = Csr::new(3, 2, vec![0, 1, 1, 3], vec![0, 1, 2]).unwrap_err();
        assert!(matches!(e, GraphError::ColumnOutOfRange { row: 2, position: 2, column: 2, num_src: 2 }), "{e}");
        assert!(e.to_string().contains("row 2"), "{e}");
    }

    #[test]
    fn sides_are_limited_to_u32_ids() {
        let e = Csr::from_edges(1, (MAX_NODES + 1) as usize, &[]).unwrap_err();
        assert!(matches!(e, GraphError::TooLarge { what: "num_src", .. }), "{e}");
    }

    #[test]
    fn from_edges_is_a_stable_sort_by_destination() {
        let g = Csr::from_edges(3, 4, &[(2, 3), (0, 2), (2, 1), (0, 2), (2, 0)]).unwrap();
        assert_eq!(g.offsets(), &[0, 2, 2, 5]);
        assert_eq!(g.columns(), &[2, 2, 3, 1, 0]);
        let e = Csr::from_edges(3, 4, &[(0, 0), (3, 0)]).unwrap_err();
        assert!(matches!(e, GraphError::EdgeOutOfRange { index: 1, dst: 3, .. }), "{e}");
    }

    #[test]
    fn from_edges_checks_the_budget_before_allocating() {
        // 4e9 rows would need 64 GB of offsets and counts: refused, nothing allocated.
        let e = Csr::from_edges_with(4_000_000_000, 2, &[(0, 1)], &Limits::max_bytes(1 << 20)).unwrap_err();
        assert!(matches!(e, GraphError::OverBudget { .. }), "{e}");
        assert!(Csr::from_edges_with(3, 2, &[(0, 1)], &Limits::max_bytes(1 << 20)).is_ok());
    }

    #[test]
    fn from_rows_and_empty() {
        let g = Csr::from_rows(3, &[vec![2, 1], vec![], vec![0]]).unwrap();
        assert_eq!(g.offsets(), &[0, 2, 2, 3]);
        let e = Csr::empty(0, 0).unwrap();
        assert_eq!((e.num_dst(), e.nnz(), e.offsets()), (0, 0, &[0u64][..]));
        assert!(Csr::from_rows(1, &[vec![1u32]]).is_err());
    }

    #[test]
    fn max_edges_in_row_group_uses_aligned_groups() {
        // Degrees 1, 3, 3, 1, 2: aligned pairs are (1+3), (3+1), (2); an unaligned pair would
        // see 3 + 3 = 6.
        let g = Csr::from_rows(1, &[vec![0; 1], vec![0; 3], vec![0; 3], vec![0; 1], vec![0; 2]]).unwrap();
        assert_eq!(g.max_edges_in_row_group(1), 3);
        assert_eq!(g.max_edges_in_row_group(2), 4);
        assert_eq!(g.max_edges_in_row_group(3), 7);
        assert_eq!(g.max_edges_in_row_group(100), 10);
        assert_eq!(g.max_edges_in_row_group(0), 0);
    }
}
