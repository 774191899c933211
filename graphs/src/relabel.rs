//! Sparse ids: compacting the node ids a graph's edges use to `0..k`, keeping the mapping so
//! nothing the input gave is lost, and the rule that calls a file's ids too sparse to keep.

use std::io::{self, Write};
use std::path::Path;

use crate::csr::Csr;
use crate::error::{GraphError, Result};
use crate::limits::{Limits, bytes_of};

/// Without relabelling, a side may hold at most this many nodes per edge ...
const NODES_PER_EDGE: u64 = 16;
/// ... plus this many (so small graphs with isolated nodes always load as they are).
const NODE_SLACK: u64 = 1 << 20;

/// The original ids of a relabelled graph: new node `k` was `dst[k]` as a destination and
/// `src()[k]` as a source. Ids keep their order (the mapping is increasing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdMap {
    /// The original id of each destination node.
    pub dst: Vec<u64>,
    /// The original id of each source node; `None` when the graph is square and both sides share
    /// [`IdMap::dst`].
    pub src: Option<Vec<u64>>,
}

impl IdMap {
    /// The original ids of the source nodes.
    pub fn src(&self) -> &[u64] {
        self.src.as_deref().unwrap_or(&self.dst)
    }

    /// Writes the mapping as text: a comment line, then `new original` per node; a bipartite
    /// map writes the destination block, a `# src` line, then the source block.
    ///
    /// # Errors
    /// Any I/O error of the writer.
    pub fn write_to<W: Write>(&self, writer: W) -> io::Result<()> {
        let mut w = io::BufWriter::new(writer);
        let shared = if self.src.is_none() { "one map for both sides" } else { "destinations, then # src" };
        writeln!(w, "# dfgnn id map: <new id> <original id>; {shared}")?;
        let pairs = |ids: &[u64]| ids.iter().enumerate().map(|(k, &v)| (k as u64, v)).collect::<Vec<_>>();
        crate::format::text::write_pairs(&mut w, pairs(&self.dst).into_iter())?;
        if let Some(src) = &self.src {
            writeln!(w, "# src")?;
            crate::format::text::write_pairs(&mut w, pairs(src).into_iter())?;
        }
        w.flush()
    }

    /// Writes the mapping to a file (see [`IdMap::write_to`]).
    ///
    /// # Errors
    /// [`GraphError::Io`] naming the file.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let name = path.as_ref().display().to_string();
        let file = std::fs::File::create(path.as_ref()).map_err(|e| GraphError::io(&name, e))?;
        self.write_to(file).map_err(|e| GraphError::io(&name, e))
    }
}

/// Fails when a side of `num_dst x num_src` nodes is far above what `nnz` edges can use.
pub(crate) fn check_dense(file: &str, num_dst: u64, num_src: u64, nnz: u64) -> Result<()> {
    let most = nnz.saturating_mul(NODES_PER_EDGE).saturating_add(NODE_SLACK);
    for (side, nodes) in [("destination", num_dst), ("source", num_src)] {
        if nodes > most {
            return Err(GraphError::SparseIds { file: file.to_string(), side, nodes, nnz });
        }
    }
    Ok(())
}

/// The sorted distinct values of `ids`, as a lookup table.
fn table(ids: impl Iterator<Item = u32>, count: usize) -> Vec<u32> {
    let mut t: Vec<u32> = Vec::with_capacity(count);
    t.extend(ids);
    t.sort_unstable();
    t.dedup();
    t
}

/// The new id of `v` in a table that holds it.
fn lookup(table: &[u32], v: u32) -> u32 {
    table.partition_point(|&x| x < v) as u32
}

/// Compacts the ids of `(dst, src)` edges in place: a square graph maps both sides through one
/// table (so it stays square), a bipartite one each side through its own. Returns the new side
/// sizes and the mapping.
///
/// # Errors
/// [`GraphError::OverBudget`] when the tables do not fit the budget.
pub(crate) fn compact(parts: &mut [Vec<(u32, u32)>], square: bool, limits: &Limits) -> Result<(usize, usize, IdMap)> {
    let nnz: u64 = parts.iter().map(|p| p.len() as u64).sum();
    limits.check("relabelling tables", bytes_of(&[(nnz, 8), (nnz, 8)]))?;
    let edges = || parts.iter().flat_map(|p| p.iter().copied());
    let widen = |t: &[u32]| t.iter().map(|&v| v as u64).collect::<Vec<u64>>();
    if square {
        let t = table(edges().flat_map(|(d, s)| [d, s]), 2 * nnz as usize);
        parts.iter_mut().flatten().for_each(|e| *e = (lookup(&t, e.0), lookup(&t, e.1)));
        Ok((t.len(), t.len(), IdMap { dst: widen(&t), src: None }))
    } else {
        let td = table(edges().map(|(d, _)| d), nnz as usize);
        let ts = table(edges().map(|(_, s)| s), nnz as usize);
        parts.iter_mut().flatten().for_each(|e| *e = (lookup(&td, e.0), lookup(&ts, e.1)));
        Ok((td.len(), ts.len(), IdMap { dst: widen(&td), src: Some(widen(&ts)) }))
    }
}

/// A graph with its node ids compacted to the ones its edges use (see [`IdMap`]); edge order
/// and rows' source order are kept.
///
/// # Errors
/// [`GraphError::OverBudget`] when the tables or the new graph do not fit the budget.
pub fn relabel(g: &Csr, limits: &Limits) -> Result<(Csr, IdMap)> {
    limits.check("relabelling edges", bytes_of(&[(g.nnz() as u64, 8)]))?;
    let mut parts = vec![g.edges().collect::<Vec<_>>()];
    let (num_dst, num_src, ids) = compact(&mut parts, g.is_square(), limits)?;
    Ok((Csr::from_edge_slices(num_dst, num_src, &[&parts[0]], limits)?, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacts_square_and_bipartite_graphs() {
        let g = Csr::from_edges(10, 10, &[(9, 3), (3, 9), (9, 9)]).unwrap();
        let (r, ids) = relabel(&g, &Limits::default()).unwrap();
        assert_eq!((r.num_dst(), r.num_src()), (2, 2));
        assert_eq!(ids, IdMap { dst: vec![3, 9], src: None });
        assert_eq!(r.edges().collect::<Vec<_>>(), vec![(0, 1), (1, 0), (1, 1)]);
        let b = Csr::from_edges(5, 100, &[(4, 99), (0, 50)]).unwrap();
        let (rb, ids) = relabel(&b, &Limits::default()).unwrap();
        assert_eq!((rb.num_dst(), rb.num_src()), (2, 2));
        assert_eq!((ids.dst.as_slice(), ids.src()), (&[0u64, 4][..], &[50u64, 99][..]));
        let mut text = Vec::new();
        ids.write_to(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap().lines().skip(1).collect::<Vec<_>>(),
            ["0 0", "1 4", "# src", "0 50", "1 99"]
        );
    }

    #[test]
    fn sparse_sides_are_named() {
        assert!(check_dense("f", 1 << 20, 5, 0).is_ok());
        let e = check_dense("f", 5, 4_000_000_001, 2).unwrap_err();
        assert!(matches!(e, GraphError::SparseIds { side: "source", nnz: 2, .. }), "{e}");
        assert!(e.to_string().contains("--relabel"), "{e}");
    }
}
