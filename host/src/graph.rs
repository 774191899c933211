//! A graph prepared once on a backend: CSR (rows = destinations), its transpose (CSC, rows =
//! sources) with the CSC-slot → CSR-edge permutation, the COO row of every edge, and statistics.

use dfgnn_graphs::{Csr, GraphStats};

use crate::backend::{Backend, Buffer};
use crate::error::{Error, Result};

/// A graph on a backend, ready for every attention kernel and schedule.
pub struct DeviceGraph<'b> {
    backend: &'b Backend,
    num_dst: usize,
    num_src: usize,
    nnz: usize,
    stats: GraphStats,
    row_offsets: Vec<u64>,
    col_offsets: Vec<u64>,
    row_min_col: Vec<u32>,
    row_max_col: Vec<u32>,
    col_min_row: Vec<u32>,
    col_max_row: Vec<u32>,
    pub(crate) d_row_offsets: Buffer<u64>,
    pub(crate) d_columns: Buffer<u32>,
    pub(crate) d_coo_rows: Buffer<u32>,
    pub(crate) d_col_offsets: Buffer<u64>,
    pub(crate) d_csc_rows: Buffer<u32>,
    pub(crate) d_csc_edge_ids: Buffer<u32>,
}

impl<'b> DeviceGraph<'b> {
    /// Prepares `graph` on `backend`: computes the transpose and statistics on the CPU and uploads
    /// everything. Graphs of 2^32 edges or more are refused (the kernels index edges with 32-bit
    /// ids in the CSC permutation), and so is a graph whose device arrays would pass the
    /// backend's memory budget ([`Error::OutOfMemory`], before any work).
    pub fn new(backend: &'b Backend, graph: &Csr) -> Result<Self> {
        if graph.nnz() >= u32::MAX as usize {
            return Err(Error::Unsupported {
                what: format!("{} edges (the kernels take fewer than 2^32 - 1)", graph.nnz()),
            });
        }
        let bytes =
            Self::bytes_for(graph.num_dst(), graph.num_src(), graph.nnz()).ok_or_else(|| Error::Unsupported {
                what: format!("a graph of {} x {} nodes: its size overflows", graph.num_dst(), graph.num_src()),
            })?;
        let free = backend.memory_budget().saturating_sub(backend.memory_in_use());
        if bytes > free {
            return Err(Error::OutOfMemory {
                during: format!(
                    "preparing a graph of {} x {} nodes, {} edges",
                    graph.num_dst(),
                    graph.num_src(),
                    graph.nnz()
                ),
                requested: bytes,
                free,
                total: backend.memory_budget(),
            });
        }
        let csc = graph.try_transpose(&dfgnn_graphs::Limits::default())?;
        let edge_ids = csc.edge_ids_u32()?;
        let stats = GraphStats::of(graph);
        // Each row's (column's) least and greatest neighbour, (u32::MAX, 0) when it has none.
        let span =
            |ids: &[u32]| (ids.iter().copied().min().unwrap_or(u32::MAX), ids.iter().copied().max().unwrap_or(0));
        let (row_min_col, row_max_col) = (0..graph.num_dst()).map(|r| span(graph.row(r))).unzip();
        let (col_min_row, col_max_row) = (0..graph.num_src()).map(|c| span(csc.column(c))).unzip();
        Ok(Self {
            backend,
            num_dst: graph.num_dst(),
            num_src: graph.num_src(),
            nnz: graph.nnz(),
            d_row_offsets: backend.upload(graph.offsets())?,
            d_columns: backend.upload(graph.columns())?,
            d_coo_rows: backend.upload(&graph.coo_rows())?,
            d_col_offsets: backend.upload(csc.offsets())?,
            d_csc_rows: backend.upload(csc.rows())?,
            d_csc_edge_ids: backend.upload(&edge_ids)?,
            row_offsets: graph.offsets().to_vec(),
            col_offsets: csc.offsets().to_vec(),
            row_min_col,
            row_max_col,
            col_min_row,
            col_max_row,
            stats,
        })
    }

    /// The backend the graph lives on.
    pub fn backend(&self) -> &'b Backend {
        self.backend
    }

    /// Destination nodes (rows).
    pub fn num_dst(&self) -> usize {
        self.num_dst
    }

    /// Source nodes.
    pub fn num_src(&self) -> usize {
        self.num_src
    }

    /// Edges.
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// The graph's statistics.
    pub fn stats(&self) -> &GraphStats {
        &self.stats
    }

    /// CSR row offsets (host copy, for planning).
    pub fn row_offsets(&self) -> &[u64] {
        &self.row_offsets
    }

    /// CSC column offsets (host copy, for planning).
    pub fn col_offsets(&self) -> &[u64] {
        &self.col_offsets
    }

    /// What the planner needs of the graph.
    pub fn shape(&self) -> crate::plan::GraphShape<'_> {
        crate::plan::GraphShape {
            row_offsets: &self.row_offsets,
            col_offsets: &self.col_offsets,
            row_min_col: &self.row_min_col,
            row_max_col: &self.row_max_col,
        }
    }

    /// What the planner needs of the transpose (the CSC, its rows the source nodes), for the
    /// backward's column pass over tiles ([`crate::plan::plan_column_tiles`]).
    pub fn csc_shape(&self) -> crate::plan::GraphShape<'_> {
        crate::plan::GraphShape {
            row_offsets: &self.col_offsets,
            col_offsets: &self.row_offsets,
            row_min_col: &self.col_min_row,
            row_max_col: &self.col_max_row,
        }
    }

    /// Device bytes the prepared graph holds.
    pub fn device_bytes(&self) -> usize {
        // The buffers exist, so their sizes add up without overflow.
        Self::bytes_for(self.num_dst, self.num_src, self.nnz).unwrap_or(usize::MAX)
    }

    /// Device bytes of a prepared graph of this size (`None` when the size overflows): CSR and CSC
    /// offsets, and four arrays of one `u32` per edge (columns, COO rows, CSC rows, permutation).
    pub fn bytes_for(num_dst: usize, num_src: usize, nnz: usize) -> Option<usize> {
        let offsets = |n: usize| n.checked_add(1)?.checked_mul(8);
        offsets(num_dst)?.checked_add(offsets(num_src)?)?.checked_add(nnz.checked_mul(16)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_past_the_memory_budget_is_refused_before_any_work() {
        let graph = dfgnn_graphs::named::generate("er-1K-d8").unwrap();
        let bytes = DeviceGraph::bytes_for(graph.num_dst(), graph.num_src(), graph.nnz()).unwrap();
        let backend = Backend::emulator().with_memory_budget(bytes - 1);
        match DeviceGraph::new(&backend, &graph) {
            Err(Error::OutOfMemory { during, requested, .. }) => {
                assert!(during.contains("preparing a graph"), "{during}");
                assert_eq!(requested, bytes);
            }
            Err(e) => panic!("expected OutOfMemory, got {e}"),
            Ok(_) => panic!("a graph of {bytes} bytes fit a budget of {}", bytes - 1),
        }
        assert_eq!(backend.memory_in_use(), 0);
        let backend = backend.with_memory_budget(bytes);
        let prepared = DeviceGraph::new(&backend, &graph).unwrap();
        assert_eq!(prepared.device_bytes(), bytes);
        assert_eq!(backend.memory_in_use(), bytes, "the size model is the bytes uploaded");
    }

    #[test]
    fn graph_sizes_that_overflow_are_none() {
        assert_eq!(DeviceGraph::bytes_for(usize::MAX, 0, 0), None);
        assert_eq!(DeviceGraph::bytes_for(0, 0, usize::MAX / 8), None);
        assert_eq!(DeviceGraph::bytes_for(1, 2, 3), Some(16 + 24 + 48));
    }
}
