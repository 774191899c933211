//! Operations that derive a new graph from a [`Csr`]; none of them changes its input.

use crate::csr::{Csr, MAX_NODES};
use crate::error::{GraphError, Result};

/// Several graphs packed into one block-diagonal graph.
///
/// Graph `g` owns destination nodes `dst_offsets[g]..dst_offsets[g + 1]` and source nodes
/// `src_offsets[g]..src_offsets[g + 1]`; no edge crosses two graphs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// The block-diagonal graph.
    pub graph: Csr,
    /// Where each graph's destination nodes start (`len = graphs + 1`).
    pub dst_offsets: Vec<u64>,
    /// Where each graph's source nodes start (`len = graphs + 1`).
    pub src_offsets: Vec<u64>,
}

impl Batch {
    /// The number of graphs in the batch.
    pub fn num_graphs(&self) -> usize {
        self.dst_offsets.len() - 1
    }
}

/// Packs graphs into one block-diagonal graph, in order.
///
/// # Errors
/// [`GraphError::TooLarge`] when the total node count exceeds [`MAX_NODES`].
pub fn block_diagonal(graphs: &[Csr]) -> Result<Batch> {
    let total_dst: u64 = graphs.iter().map(|g| g.num_dst() as u64).sum();
    let total_src: u64 = graphs.iter().map(|g| g.num_src() as u64).sum();
    for (what, count) in [("batch num_dst", total_dst), ("batch num_src", total_src)] {
        if count > MAX_NODES {
            return Err(GraphError::TooLarge { what, count, limit: MAX_NODES, reason: "node ids are u32" });
        }
    }
    let nnz: usize = graphs.iter().map(Csr::nnz).sum();
    let mut offsets = Vec::with_capacity(total_dst as usize + 1);
    offsets.push(0u64);
    let mut columns = Vec::with_capacity(nnz);
    let mut dst_offsets = vec![0u64];
    let mut src_offsets = vec![0u64];
    for g in graphs {
        let base_edge = columns.len() as u64;
        let base_src = *src_offsets.last().unwrap_or(&0) as u32;
        offsets.extend(g.offsets()[1..].iter().map(|&o| o + base_edge));
        columns.extend(g.columns().iter().map(|&c| c + base_src));
        dst_offsets.push(dst_offsets[dst_offsets.len() - 1] + g.num_dst() as u64);
        src_offsets.push(src_offsets[src_offsets.len() - 1] + g.num_src() as u64);
    }
    let graph = Csr::new(total_dst as usize, total_src as usize, offsets, columns)?;
    Ok(Batch { graph, dst_offsets, src_offsets })
}

impl Csr {
    /// The same graph with every row's sources in increasing order (duplicates kept).
    pub fn sort_rows(&self) -> Csr {
        let mut columns = self.columns().to_vec();
        for i in 0..self.num_dst() {
            columns[self.edge_range(i)].sort_unstable();
        }
        self.with_columns(self.offsets().to_vec(), columns)
    }

    /// Whether every row's sources are in non-decreasing order.
    pub fn rows_sorted(&self) -> bool {
        (0..self.num_dst()).all(|i| self.row(i).is_sorted())
    }

    /// The same graph without duplicate edges: each row keeps the first occurrence of every
    /// source, in the order given. O(E + num_src).
    pub fn dedup(&self) -> Csr {
        // `seen[j] == i + 1` marks source j as already present in row i.
        let mut seen = vec![0u64; self.num_src()];
        let mut offsets = Vec::with_capacity(self.num_dst() + 1);
        offsets.push(0u64);
        let mut columns = Vec::with_capacity(self.nnz());
        for i in 0..self.num_dst() {
            let mark = i as u64 + 1;
            for &j in self.row(i) {
                if seen[j as usize] != mark {
                    seen[j as usize] = mark;
                    columns.push(j);
                }
            }
            offsets.push(columns.len() as u64);
        }
        self.with_columns(offsets, columns)
    }

    /// The undirected version: edge `(i, j)` whenever `(i, j)` or `(j, i)` is an edge, each once,
    /// rows sorted.
    ///
    /// # Errors
    /// [`GraphError::NotSquare`] for a bipartite graph.
    pub fn symmetrize(&self) -> Result<Csr> {
        self.require_square("symmetrize")?;
        let t = self.transpose();
        let mut offsets = Vec::with_capacity(self.num_dst() + 1);
        offsets.push(0u64);
        let mut columns = Vec::with_capacity(2 * self.nnz());
        let mut row = Vec::new();
        for i in 0..self.num_dst() {
            row.clear();
            row.extend_from_slice(self.row(i));
            row.extend_from_slice(t.column(i));
            row.sort_unstable();
            row.dedup();
            columns.extend_from_slice(&row);
            offsets.push(columns.len() as u64);
        }
        Ok(self.with_columns(offsets, columns))
    }

    /// The graph with a self loop appended to every row that has none; rows that already hold
    /// one are unchanged.
    ///
    /// # Errors
    /// [`GraphError::NotSquare`] for a bipartite graph.
    pub fn with_self_loops(&self) -> Result<Csr> {
        self.require_square("with_self_loops")?;
        let mut offsets = Vec::with_capacity(self.num_dst() + 1);
        offsets.push(0u64);
        let mut columns = Vec::with_capacity(self.nnz() + self.num_dst());
        for i in 0..self.num_dst() {
            let row = self.row(i);
            columns.extend_from_slice(row);
            if !row.contains(&(i as u32)) {
                columns.push(i as u32);
            }
            offsets.push(columns.len() as u64);
        }
        Ok(self.with_columns(offsets, columns))
    }

    /// The graph without self loops (edges `i -> i`); other edges keep their order.
    pub fn without_self_loops(&self) -> Csr {
        let mut offsets = Vec::with_capacity(self.num_dst() + 1);
        offsets.push(0u64);
        let mut columns = Vec::with_capacity(self.nnz());
        for i in 0..self.num_dst() {
            columns.extend(self.row(i).iter().filter(|&&j| j as usize != i));
            offsets.push(columns.len() as u64);
        }
        self.with_columns(offsets, columns)
    }

    /// The reversed graph (every edge `j -> i` becomes `i -> j`): a `num_src x num_dst` CSR whose
    /// rows list, in increasing edge-id order, the destinations of the original out-edges.
    pub fn reversed(&self) -> Csr {
        let (num_dst, num_src, offsets, rows, _) = self.transpose().into_parts();
        Csr::new(num_src, num_dst, offsets, rows)
            .unwrap_or_else(|e| unreachable!("a transpose should be a valid CSR: {e}"))
    }

    /// Relabels the nodes of a square graph: node `v` becomes `perm[v]`. Row `perm[i]` of the
    /// result holds the relabelled sources of row `i`, in the same order.
    ///
    /// # Errors
    /// [`GraphError::NotSquare`], or [`GraphError::InvalidParameter`] when `perm` is not a
    /// permutation of `0..n`.
    pub fn permuted(&self, perm: &[u32]) -> Result<Csr> {
        self.require_square("permuted")?;
        let n = self.num_dst();
        if perm.len() != n {
            return Err(GraphError::param("permuted", format!("perm has {} entries for {n} nodes", perm.len())));
        }
        let mut inverse = vec![u32::MAX; n];
        for (v, &p) in perm.iter().enumerate() {
            if p as usize >= n || inverse[p as usize] != u32::MAX {
                return Err(GraphError::param("permuted", format!("perm[{v}] = {p} is out of range or repeated")));
            }
            inverse[p as usize] = v as u32;
        }
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u64);
        let mut columns = Vec::with_capacity(self.nnz());
        for &old in &inverse {
            columns.extend(self.row(old as usize).iter().map(|&j| perm[j as usize]));
            offsets.push(columns.len() as u64);
        }
        Ok(self.with_columns(offsets, columns))
    }

    fn require_square(&self, operation: &'static str) -> Result<()> {
        if self.is_square() {
            Ok(())
        } else {
            Err(GraphError::NotSquare { operation, num_dst: self.num_dst(), num_src: self.num_src() })
        }
    }

    /// A graph of the same shape with new arrays that the caller built from this valid graph.
    fn with_columns(&self, offsets: Vec<u64>, columns: Vec<u32>) -> Csr {
        Csr::new(self.num_dst(), self.num_src(), offsets, columns)
            .unwrap_or_else(|e| unreachable!("derived graph should stay valid: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g() -> Csr {
        // 0 <- {2, 0, 2}, 1 <- {}, 2 <- {1, 0}
        Csr::from_rows(3, &[vec![2, 0, 2], vec![], vec![1, 0]]).unwrap()
    }

    #[test]
    fn sort_and_dedup_return_new_graphs() {
        let a = g();
        assert_eq!(a.sort_rows().columns(), &[0, 2, 2, 0, 1]);
        assert!(a.sort_rows().rows_sorted());
        assert!(!a.rows_sorted());
        let d = a.dedup();
        assert_eq!(d.offsets(), &[0, 2, 2, 4]);
        assert_eq!(d.columns(), &[2, 0, 1, 0]);
        assert_eq!(a, g(), "the input is unchanged");
    }

    #[test]
    fn symmetrize_is_the_sorted_union_with_the_reverse() {
        let s = g().symmetrize().unwrap();
        assert_eq!(s.row(0), &[0, 2]);
        assert_eq!(s.row(1), &[2]);
        assert_eq!(s.row(2), &[0, 1]);
        let bip = Csr::from_rows(3, &[vec![0]]).unwrap();
        assert!(matches!(bip.symmetrize(), Err(GraphError::NotSquare { .. })));
    }

    #[test]
    fn self_loop_helpers() {
        let a = g().with_self_loops().unwrap();
        assert_eq!(a.row(0), &[2, 0, 2]);
        assert_eq!(a.row(1), &[1]);
        assert_eq!(a.row(2), &[1, 0, 2]);
        let b = a.without_self_loops();
        assert_eq!(b.columns(), &[2, 2, 1, 0]);
    }

    #[test]
    fn reversed_and_permuted() {
        let r = g().reversed();
        assert_eq!(r.row(0), &[0, 2]);
        assert_eq!(r.row(1), &[2]);
        assert_eq!(r.row(2), &[0, 0]);
        assert_eq!(r.reversed(), g().sort_rows(), "reversing twice sorts the rows");
        let p = g().permuted(&[1, 2, 0]).unwrap();
        assert_eq!(p.row(1), &[0, 1, 0]);
        assert_eq!(p.row(2), &[] as &[u32]);
        assert_eq!(p.row(0), &[2, 1]);
        assert!(g().permuted(&[0, 0, 1]).is_err());
        assert!(g().permuted(&[0, 1]).is_err());
    }

    #[test]
    fn block_diagonal_shifts_ids() {
        let a = Csr::from_rows(2, &[vec![1], vec![0]]).unwrap();
        let b = Csr::from_rows(3, &[vec![2, 0]]).unwrap();
        let batch = block_diagonal(&[a, b]).unwrap();
        assert_eq!(batch.num_graphs(), 2);
        assert_eq!(batch.dst_offsets, vec![0, 2, 3]);
        assert_eq!(batch.src_offsets, vec![0, 2, 5]);
        assert_eq!((batch.graph.num_dst(), batch.graph.num_src()), (3, 5));
        assert_eq!(batch.graph.row(2), &[4, 2]);
        assert_eq!(block_diagonal(&[]).unwrap().graph.num_dst(), 0);
    }
}
