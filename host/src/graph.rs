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
    /// ids in the CSC permutation).
    pub fn new(backend: &'b Backend, graph: &Csr) -> Result<Self> {
        if graph.nnz() >= u32::MAX as usize {
            return Err(Error::Unsupported {
                what: format!("{} edges (the kernels take fewer than 2^32 - 1)", graph.nnz()),
            });
        }
        let csc = graph.transpose();
        let edge_ids = csc.edge_ids_u32()?;
        let stats = GraphStats::of(graph);
        let (row_min_col, row_max_col) = (0..graph.num_dst())
            .map(|r| {
                let row = graph.row(r);
                (row.iter().copied().min().unwrap_or(u32::MAX), row.iter().copied().max().unwrap_or(0))
            })
            .unzip();
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

    /// Device bytes the prepared graph holds.
    pub fn device_bytes(&self) -> usize {
        8 * (self.num_dst + 1) + 8 * (self.num_src + 1) + 4 * 4 * self.nnz
    }
}
