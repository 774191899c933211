//! The transpose of a [`Csr`]: edges grouped by source node, with the CSR edge id of each slot.

use std::ops::Range;

use crate::csr::{Csr, prefix_sum};
use crate::error::{GraphError, Result};
use crate::limits::{Limits, bytes_of};

/// A graph in compressed sparse column form: column `j` lists the destinations of the out-edges
/// of source node `j`, together with each edge's id in the [`Csr`] it was built from.
///
/// Within a column, slots are ordered by increasing CSR edge id, so the layout is a pure function
/// of the CSR. This is what the column (backward) pass iterates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csc {
    num_dst: usize,
    num_src: usize,
    offsets: Vec<u64>,
    rows: Vec<u32>,
    edge_ids: Vec<u64>,
}

impl Csr {
    /// The transpose within a memory budget: `(num_src + 1) * 8 + nnz * 12` bytes are checked
    /// before anything is allocated.
    ///
    /// # Errors
    /// [`GraphError::OverBudget`].
    pub fn try_transpose(&self, limits: &Limits) -> Result<Csc> {
        limits.check("the transpose", bytes_of(&[(self.num_src() as u64 + 1, 8), (self.nnz() as u64, 12)]))?;
        Ok(self.transpose())
    }

    /// The transpose, by a counting sort over sources: O(E + num_src). It allocates
    /// `(num_src + 1) * 8 + nnz * 12` bytes unchecked; [`Csr::try_transpose`] checks them.
    pub fn transpose(&self) -> Csc {
        let mut counts = vec![0u64; self.num_src() + 1];
        for &j in self.columns() {
            counts[j as usize + 1] += 1;
        }
        prefix_sum(&mut counts);
        let offsets = counts.clone();
        let mut next = counts;
        let mut rows = vec![0u32; self.nnz()];
        let mut edge_ids = vec![0u64; self.nnz()];
        for i in 0..self.num_dst() {
            for e in self.edge_range(i) {
                let slot = &mut next[self.columns()[e] as usize];
                rows[*slot as usize] = i as u32;
                edge_ids[*slot as usize] = e as u64;
                *slot += 1;
            }
        }
        Csc { num_dst: self.num_dst(), num_src: self.num_src(), offsets, rows, edge_ids }
    }
}

impl Csc {
    /// The number of destination nodes (the row range).
    pub fn num_dst(&self) -> usize {
        self.num_dst
    }

    /// The number of source nodes (columns).
    pub fn num_src(&self) -> usize {
        self.num_src
    }

    /// The number of edges.
    pub fn nnz(&self) -> usize {
        self.rows.len()
    }

    /// The column offsets, `num_src + 1` entries from 0 to `nnz`.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The destination row of every CSC slot.
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }

    /// The CSR edge id of every CSC slot.
    pub fn edge_ids(&self) -> &[u64] {
        &self.edge_ids
    }

    /// The CSR edge ids as `u32`, for devices that index edges with 32 bits.
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] when the graph has more than `2^32` edges.
    pub fn edge_ids_u32(&self) -> Result<Vec<u32>> {
        if self.nnz() as u64 > 1 << 32 {
            return Err(GraphError::TooLarge {
                what: "nnz",
                count: self.nnz() as u64,
                limit: 1 << 32,
                reason: "u32 edge ids",
            });
        }
        Ok(self.edge_ids.iter().map(|&e| e as u32).collect())
    }

    /// The slots of column `j`.
    ///
    /// # Panics
    /// If `j >= num_src`, like slice indexing.
    pub fn slot_range(&self, j: usize) -> Range<usize> {
        self.offsets[j] as usize..self.offsets[j + 1] as usize
    }

    /// The destinations of the out-edges of source `j`.
    ///
    /// # Panics
    /// If `j >= num_src`, like slice indexing.
    pub fn column(&self, j: usize) -> &[u32] {
        &self.rows[self.slot_range(j)]
    }

    /// The CSR edge ids of the out-edges of source `j`, increasing.
    ///
    /// # Panics
    /// If `j >= num_src`, like slice indexing.
    pub fn column_edge_ids(&self, j: usize) -> &[u64] {
        &self.edge_ids[self.slot_range(j)]
    }

    /// The out-degree of source `j`.
    ///
    /// # Panics
    /// If `j >= num_src`, like slice indexing.
    pub fn out_degree(&self, j: usize) -> usize {
        (self.offsets[j + 1] - self.offsets[j]) as usize
    }

    /// Takes the transpose apart: `(num_dst, num_src, offsets, rows, edge_ids)`.
    pub fn into_parts(self) -> (usize, usize, Vec<u64>, Vec<u32>, Vec<u64>) {
        (self.num_dst, self.num_src, self.offsets, self.rows, self.edge_ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_groups_by_source_in_edge_id_order() {
        // Edges (dst <- src): 0 <- 2, 0 <- 0, 1 <- 2, 2 <- 2, 2 <- 0; num_src = 4 (source 1 and
        // 3 have no out-edges).
        let g = Csr::from_rows(4, &[vec![2, 0], vec![2], vec![2, 0]]).unwrap();
        let t = g.transpose();
        assert_eq!(t.offsets(), &[0, 2, 2, 5, 5]);
        assert_eq!(t.column(0), &[0, 2]);
        assert_eq!(t.column_edge_ids(0), &[1, 4]);
        assert_eq!(t.column(2), &[0, 1, 2]);
        assert_eq!(t.column_edge_ids(2), &[0, 2, 3]);
        assert_eq!(t.out_degree(1), 0);
        assert_eq!(t.edge_ids_u32().unwrap(), vec![1, 4, 0, 2, 3]);
        // Every slot points back at an edge with the same endpoints.
        for j in 0..t.num_src() {
            for (&i, &e) in t.column(j).iter().zip(t.column_edge_ids(j)) {
                assert_eq!(g.columns()[e as usize] as usize, j);
                assert!(g.edge_range(i as usize).contains(&(e as usize)));
            }
        }
    }
}
