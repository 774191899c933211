//! The tiles of the models' forwards, of the CSC for GAT's backward column pass, and the closed
//! blocks of GT's backward, on the device ([`crate::plan::plan_tiles`],
//! [`crate::plan::plan_column_tiles`] and [`crate::plan::plan_blocks`] choose them,
//! `dfgnn_device::kernels::tiles` runs them): the plan's lists uploaded once, and the launches.

use dfgnn_device::abi::{
    BlockList, GatTileColsParams, GatTilesParams, GatV2TilesParams, GtBlocksBwdParams, GtTilesParams, TileList,
};
use dfgnn_device::kernels::tiles::TILE_THREADS;
use dfgnn_device::kernels::tiles::blocks::{self, GT_BLOCKS_BWD_W1, GT_BLOCKS_BWD_W4};
use dfgnn_device::kernels::tiles::columns::{
    self, GAT_TILE_COLS_BWD_W1_Q1, GAT_TILE_COLS_BWD_W1_Q2, GAT_TILE_COLS_BWD_W1_Q4, GAT_TILE_COLS_BWD_W4_Q1,
    GAT_TILE_COLS_BWD_W4_Q2, GAT_TILE_COLS_BWD_W4_Q4,
};
use dfgnn_device::kernels::tiles::dense::{GT_TILES_FWD_W1, GT_TILES_FWD_W4};
use dfgnn_device::kernels::tiles::edges::{
    GAT_TILE_EDGES_FWD_W1, GAT_TILE_EDGES_FWD_W4, GATV2_TILE_EDGES_FWD_W1, GATV2_TILE_EDGES_FWD_W4,
    GT_TILE_EDGES_FWD_W1, GT_TILE_EDGES_FWD_W4,
};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, LaunchConfig};

use crate::backend::Buffer;
use crate::error::{Error, Result};
use crate::graph::DeviceGraph;
use crate::plan::{BlockPlan, TileKernel, TilePlan};

/// A [`TilePlan`] on the device, over the CSR or (for the backward's column pass) the CSC.
pub(crate) struct DeviceTiles {
    /// For tiles of the CSC, the column of every CSC slot (the CSR's COO rows serve the CSR's),
    /// and the features per head the column kernel's shared memory was sized for.
    csc_columns: Option<(Buffer<u32>, u32)>,
    /// The backward row pass's load width the forward restates its maxima in (0: none).
    score_width: u32,
    first: Buffer<u32>,
    end: Buffer<u32>,
    src: Buffer<u32>,
    src_count: Buffer<u32>,
    count: usize,
    kernel: TileKernel,
    /// The per-edge kernel's capacities (`TileList::edge_cap`, `source_cap`).
    caps: (u32, u32),
    shared_bytes: u32,
}

/// Where GT's tile forward reads its inputs and writes its results.
pub(crate) struct TileIo {
    pub(crate) q: GSlice<f32>,
    pub(crate) k: GSlice<f32>,
    pub(crate) v: GSlice<f32>,
    pub(crate) out: GSliceMut<f32>,
    pub(crate) lse: GSliceMut<f32>,
    pub(crate) stats: GSliceMut<f32>,
}

/// Where GAT's tile forward reads its inputs and writes its results.
pub(crate) struct GatTileIo {
    pub(crate) el: GSlice<f32>,
    pub(crate) er: GSlice<f32>,
    pub(crate) h: GSlice<f32>,
    pub(crate) out: GSliceMut<f32>,
    pub(crate) lse: GSliceMut<f32>,
    pub(crate) stats: GSliceMut<f32>,
    /// `(o⁺, α⁺)`, or both empty: no positive part saved.
    pub(crate) part: (GSliceMut<f32>, GSliceMut<f32>),
}

/// Where GAT's backward column pass over tiles reads its inputs and writes its results.
pub(crate) struct GatTileColsIo {
    pub(crate) er: GSlice<f32>,
    pub(crate) h: GSlice<f32>,
    pub(crate) record: GSlice<f32>,
    pub(crate) d_out: GSlice<f32>,
    pub(crate) d_er: GSliceMut<f32>,
    pub(crate) dh: GSliceMut<f32>,
}

/// Where GATv2's tile forward reads its inputs and writes its results.
pub(crate) struct GatV2TileIo {
    pub(crate) xr: GSlice<f32>,
    pub(crate) xl: GSlice<f32>,
    pub(crate) a: GSlice<f32>,
    pub(crate) out: GSliceMut<f32>,
    pub(crate) lse: GSliceMut<f32>,
    pub(crate) stats: GSliceMut<f32>,
}

impl DeviceTiles {
    /// Uploads `plan`'s tiles of `graph`'s CSR to its backend, for a forward whose maximum is
    /// restated in the arithmetic of the backward's row pass of loads of `score_width` features
    /// (`GtTilesParams::score_width`; 0 for none, or for GAT).
    pub(crate) fn upload(graph: &DeviceGraph<'_>, plan: &TilePlan, score_width: u32) -> Result<Self> {
        Self::upload_with(graph, plan, (None, score_width))
    }

    /// Uploads `plan`'s tiles of `graph`'s CSC ([`crate::plan::plan_column_tiles`]) to its
    /// backend, with the column of every CSC slot, for GAT's column pass at `feat` features per
    /// head.
    pub(crate) fn upload_columns(graph: &DeviceGraph<'_>, plan: &TilePlan, feat: u32) -> Result<Self> {
        // As many entries as the graph's edges, fewer than 2^32 - 1 ([`DeviceGraph::new`]); the
        // source nodes are `u32` ids of the CSR.
        let columns = graph.backend().upload(&dfgnn_graphs::csr::slot_owners(graph.col_offsets()))?;
        // The planner checked the column kernel's shared memory against the device's limit.
        let shared_bytes = plan.column_shared_bytes(feat) as u32;
        Ok(Self { shared_bytes, ..Self::upload_with(graph, plan, (Some((columns, feat)), 0))? })
    }

    /// Uploads `plan`'s tile list, with the CSC's columns for tiles of the CSC.
    fn upload_with(
        graph: &DeviceGraph<'_>,
        plan: &TilePlan,
        (csc_columns, score_width): (Option<(Buffer<u32>, u32)>, u32),
    ) -> Result<Self> {
        let backend = graph.backend();
        Ok(Self {
            score_width,
            csc_columns,
            first: backend.upload(&plan.first)?,
            end: backend.upload(&plan.end)?,
            src: backend.upload(&plan.src)?,
            src_count: backend.upload(&plan.src_count)?,
            count: plan.first.len(),
            kernel: plan.kernel,
            // The planner checked the shared memory against the device's limit, so both fit.
            caps: (plan.edge_cap() as u32, plan.source_cap()),
            shared_bytes: plan.shared_bytes() as u32,
        })
    }

    /// GT's forward over the tiles, by the plan's kernel: `io.out`, `io.lse` and `io.stats` for every row of `graph`
    /// (the tiles cover them all), `heads` × `feat` features, scores scaled by `scale_log2`.
    pub(crate) fn gt_forward(
        &self,
        graph: &DeviceGraph<'_>,
        heads: u32,
        feat: u32,
        scale_log2: f32,
        io: TileIo,
    ) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let params = GtTilesParams {
            tiles: self.list(graph, heads),
            q: io.q,
            k: io.k,
            v: io.v,
            out: io.out,
            lse: io.lse,
            stats: io.stats,
            score_width: self.score_width,
            feat,
            scale_log2,
        };
        let config = self.config(heads);
        // 16-byte staging needs every head's features to start on a 16-byte boundary.
        let wide = feat.is_multiple_of(4);
        let kernel = match (self.kernel, wide) {
            (TileKernel::Dense, true) => &GT_TILES_FWD_W4,
            (TileKernel::Dense, false) => &GT_TILES_FWD_W1,
            (TileKernel::Edges, true) => &GT_TILE_EDGES_FWD_W4,
            (TileKernel::Edges, false) => &GT_TILE_EDGES_FWD_W1,
        };
        // SAFETY: the tiles are this graph's (planned from its CSR: each tile's rows' columns lie
        // in its source range, and for the per-edge kernel its edges and sources within the
        // capacities the shared memory was sized for), q/k/v are `[N, H, F]`
        // views the caller checked, read-only and distinct from the three outputs, which are
        // `[N_dst, H, F]`, `[N_dst, H]` and `[N_dst, H, 2]` and distinct from each other; the
        // 16-byte kernel only for `F % 4 == 0`.
        unsafe { graph.backend().launch(kernel, &config, &params) }
    }

    /// The tiles and `graph`'s CSR (or CSC) as the kernels read them, over `heads` heads.
    fn list(&self, graph: &DeviceGraph<'_>, heads: u32) -> TileList {
        let (offsets, columns, coo_rows) = match &self.csc_columns {
            None => (&graph.d_row_offsets, &graph.d_columns, &graph.d_coo_rows),
            Some((csc_columns, _)) => (&graph.d_col_offsets, &graph.d_csc_rows, csc_columns),
        };
        TileList {
            offsets: offsets.view(),
            columns: columns.view(),
            coo_rows: coo_rows.view(),
            first: self.first.view(),
            end: self.end.view(),
            src: self.src.view(),
            src_count: self.src_count.view(),
            count: self.count as u32,
            heads,
            edge_cap: self.caps.0,
            source_cap: self.caps.1,
        }
    }

    /// The launch configuration of the plan's kernel over `heads` heads.
    fn config(&self, heads: u32) -> LaunchConfig {
        // The planner kept tiles × heads within one launch's grid.
        LaunchConfig {
            grid: Dim3::x(self.count as u32 * heads),
            block: Dim3::x(TILE_THREADS),
            shared_bytes: self.shared_bytes,
        }
    }

    /// GAT's forward over the tiles (the per-edge kernel; the planner offers GAT no other):
    /// `io.out`, `io.lse`, `io.stats` and, unless empty, the positive part, for every row of
    /// `graph`, `heads` × `feat` features, LeakyReLU slope `slope`.
    pub(crate) fn gat_forward(
        &self,
        graph: &DeviceGraph<'_>,
        (heads, feat): (u32, u32),
        slope: f32,
        io: GatTileIo,
    ) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        if self.kernel != TileKernel::Edges {
            return Err(Error::Unsupported { what: "GAT over dense tiles".to_string() });
        }
        let params = GatTilesParams {
            tiles: self.list(graph, heads),
            el: io.el,
            er: io.er,
            h: io.h,
            out: io.out,
            lse: io.lse,
            stats: io.stats,
            part_out: io.part.0,
            part_weight: io.part.1,
            feat,
            slope,
        };
        let kernel = if feat.is_multiple_of(4) { &GAT_TILE_EDGES_FWD_W4 } else { &GAT_TILE_EDGES_FWD_W1 };
        // SAFETY: the tiles are this graph's (planned from its CSR: each tile's rows' columns lie
        // in its source range, its edges and sources within the capacities the shared memory
        // was sized for); el `[N_dst, H]`, er `[N_src, H]` and h `[N_src, H, F]` are views the
        // caller checked, read-only and distinct from the outputs, which are `[N_dst, H, F]`,
        // `[N_dst, H]`, `[N_dst, H, 2]` and the part's `[N_dst, H, F]` and `[N_dst, H]` (or both
        // empty), distinct from each other; the 16-byte kernel only for `F % 4 == 0`.
        unsafe { graph.backend().launch(kernel, &self.config(heads), &params) }
    }

    /// GATv2's forward over the tiles (the per-edge kernel; the planner offers GATv2 no other):
    /// `io.out`, `io.lse` and `io.stats` for every row of `graph`, `heads` × `feat` features,
    /// LeakyReLU slope `slope`.
    pub(crate) fn gatv2_forward(
        &self,
        graph: &DeviceGraph<'_>,
        (heads, feat): (u32, u32),
        slope: f32,
        io: GatV2TileIo,
    ) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        if self.kernel != TileKernel::Edges {
            return Err(Error::Unsupported { what: "GATv2 over dense tiles".to_string() });
        }
        let params = GatV2TilesParams {
            tiles: self.list(graph, heads),
            xr: io.xr,
            xl: io.xl,
            a: io.a,
            out: io.out,
            lse: io.lse,
            stats: io.stats,
            score_width: self.score_width,
            feat,
            slope,
        };
        let kernel = if feat.is_multiple_of(4) { &GATV2_TILE_EDGES_FWD_W4 } else { &GATV2_TILE_EDGES_FWD_W1 };
        // SAFETY: the tiles are this graph's (planned from its CSR: each tile's rows' columns lie
        // in its source range, its edges and sources within the capacities the shared memory
        // was sized for); xr `[N_dst, H, F]`, xl `[N_src, H, F]` and a `[H, F]` are views the
        // caller checked, read-only and distinct from the outputs, which are `[N_dst, H, F]`,
        // `[N_dst, H]` and `[N_dst, H, 2]`, distinct from each other; the 16-byte kernel only
        // for `F % 4 == 0`.
        unsafe { graph.backend().launch(kernel, &self.config(heads), &params) }
    }

    /// GAT's backward column pass over tiles of the CSC (from [`Self::upload_columns`]):
    /// `io.d_er` and `io.dh` for every source node of `graph` (the tiles cover them all),
    /// `heads` × `feat` features, LeakyReLU slope `slope`.
    pub(crate) fn gat_backward_cols(
        &self,
        graph: &DeviceGraph<'_>,
        (heads, feat): (u32, u32),
        slope: f32,
        io: GatTileColsIo,
    ) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        if self.csc_columns.as_ref().is_none_or(|c| c.1 != feat) || self.kernel != TileKernel::Edges {
            return Err(Error::Unsupported {
                what: format!("GAT's column pass over tiles not of the CSC uploaded for {feat} features"),
            });
        }
        let params = GatTileColsParams {
            tiles: self.list(graph, heads),
            er: io.er,
            h: io.h,
            record: io.record,
            d_out: io.d_out,
            d_er: io.d_er,
            dh: io.dh,
            feat,
            slope,
        };
        let kernel = match (feat.is_multiple_of(4), columns::lane_quads(feat as usize)) {
            (true, 1) => &GAT_TILE_COLS_BWD_W4_Q1,
            (true, 2) => &GAT_TILE_COLS_BWD_W4_Q2,
            (true, _) => &GAT_TILE_COLS_BWD_W4_Q4,
            (false, 1) => &GAT_TILE_COLS_BWD_W1_Q1,
            (false, 2) => &GAT_TILE_COLS_BWD_W1_Q2,
            (false, _) => &GAT_TILE_COLS_BWD_W1_Q4,
        };
        // SAFETY: the tiles are this graph's CSC's (planned from it: each tile's source nodes'
        // in-edges come from rows in its range, its edges and rows within the capacities the
        // shared memory was sized for, at these `feat` features per head, at most the kernel's
        // `MAX_FEAT`, as the planner checked), with the column of every CSC slot; er `[N_src, H]`,
        // h `[N_src, H, F]`, the row record `[N_dst, H, 4]` (16-byte aligned, as every buffer)
        // and d_out `[N_dst, H, F]` are views the caller checked, read-only and distinct from the outputs,
        // d_er `[N_src, H]` and dh `[N_src, H, F]`, distinct from each other; the 16-byte kernel
        // only for `F % 4 == 0`, and the kernel of `lane_quads(F)` quads per lane.
        unsafe { graph.backend().launch(kernel, &self.config(heads), &params) }
    }
}

/// A [`BlockPlan`] on the device: each closed block's first node, then the graph's nodes.
pub(crate) struct DeviceBlocks {
    first: Buffer<u32>,
    count: usize,
}

/// Where GT's backward over closed blocks reads its inputs and writes its results.
pub(crate) struct BlocksIo {
    pub(crate) q: GSlice<f32>,
    pub(crate) k: GSlice<f32>,
    pub(crate) v: GSlice<f32>,
    pub(crate) stats: GSlice<f32>,
    pub(crate) d_out: GSlice<f32>,
    pub(crate) dq: GSliceMut<f32>,
    pub(crate) dk: GSliceMut<f32>,
    pub(crate) dv: GSliceMut<f32>,
}

impl DeviceBlocks {
    /// Uploads `plan`'s closed blocks to `graph`'s backend.
    pub(crate) fn upload(graph: &DeviceGraph<'_>, plan: &BlockPlan) -> Result<Self> {
        Ok(Self { first: graph.backend().upload(&plan.first)?, count: plan.count() })
    }

    /// GT's backward over the closed blocks: `io.dq`, `io.dk` and `io.dv` for every node of
    /// `graph` (the blocks cover them all), `heads` × `feat` features, from the stats of the
    /// forward over dense tiles at the same `scale_log2`, the query and key gradients times
    /// `grad_scale`.
    pub(crate) fn gt_backward(
        &self,
        graph: &DeviceGraph<'_>,
        (heads, feat): (u32, u32),
        (scale_log2, grad_scale): (f32, f32),
        io: BlocksIo,
    ) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let params = GtBlocksBwdParams {
            blocks: BlockList {
                offsets: graph.d_row_offsets.view(),
                columns: graph.d_columns.view(),
                coo_rows: graph.d_coo_rows.view(),
                first: self.first.view(),
                count: self.count as u32,
                heads,
            },
            q: io.q,
            k: io.k,
            v: io.v,
            stats: io.stats,
            d_out: io.d_out,
            dq: io.dq,
            dk: io.dk,
            dv: io.dv,
            feat,
            scale_log2,
            grad_scale,
        };
        // The planner kept blocks × heads within one launch's grid and the shared memory within
        // the device's limit.
        let config = LaunchConfig {
            grid: Dim3::x(self.count as u32 * heads),
            block: Dim3::x(TILE_THREADS),
            shared_bytes: blocks::SHARED_BYTES,
        };
        let kernel = if feat.is_multiple_of(4) { &GT_BLOCKS_BWD_W4 } else { &GT_BLOCKS_BWD_W1 };
        // SAFETY: the blocks are this graph's (planned from its CSR, which is square: each
        // block's rows' columns lie in the block, of at most `BLOCK_NODES` nodes); q, k, v,
        // d_out `[N, H, F]` and stats `[N, H, 2]` are views the caller checked, read-only and
        // distinct from the three outputs, each `[N, H, F]` and distinct from each other; the
        // 16-byte kernel only for `F % 4 == 0`.
        unsafe { graph.backend().launch(kernel, &config, &params) }
    }
}
