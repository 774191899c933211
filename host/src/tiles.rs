//! The dense tiles of GT's forward on the device ([`crate::plan::plan_tiles`] chooses them,
//! `dfgnn_device::kernels::tiles` runs them): the plan's tile list uploaded once, and the launch.

use dfgnn_device::abi::GtTilesParams;
use dfgnn_device::kernels::tiles::{GT_TILES_FWD_W1, GT_TILES_FWD_W4, TILE_SHARED_BYTES, TILE_THREADS};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, LaunchConfig};

use crate::backend::Buffer;
use crate::error::Result;
use crate::graph::DeviceGraph;
use crate::plan::TilePlan;

/// A [`TilePlan`] on the device.
pub(crate) struct DeviceTiles {
    first: Buffer<u32>,
    end: Buffer<u32>,
    src: Buffer<u32>,
    src_count: Buffer<u32>,
    count: usize,
}

/// Where a tile forward reads its inputs and writes its results.
pub(crate) struct TileIo {
    pub(crate) q: GSlice<f32>,
    pub(crate) k: GSlice<f32>,
    pub(crate) v: GSlice<f32>,
    pub(crate) out: GSliceMut<f32>,
    pub(crate) lse: GSliceMut<f32>,
    pub(crate) stats: GSliceMut<f32>,
}

impl DeviceTiles {
    /// Uploads `plan`'s tiles to `graph`'s backend.
    pub(crate) fn upload(graph: &DeviceGraph<'_>, plan: &TilePlan) -> Result<Self> {
        let backend = graph.backend();
        Ok(Self {
            first: backend.upload(&plan.first)?,
            end: backend.upload(&plan.end)?,
            src: backend.upload(&plan.src)?,
            src_count: backend.upload(&plan.src_count)?,
            count: plan.first.len(),
        })
    }

    /// GT's forward over the tiles: `io.out`, `io.lse` and `io.stats` for every row of `graph`
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
            offsets: graph.d_row_offsets.view(),
            columns: graph.d_columns.view(),
            coo_rows: graph.d_coo_rows.view(),
            tile_first: self.first.view(),
            tile_end: self.end.view(),
            tile_src: self.src.view(),
            tile_src_count: self.src_count.view(),
            q: io.q,
            k: io.k,
            v: io.v,
            out: io.out,
            lse: io.lse,
            stats: io.stats,
            heads,
            feat,
            num_tiles: self.count as u32,
            scale_log2,
        };
        // The planner kept tiles × heads within one launch's grid.
        let config = LaunchConfig {
            grid: Dim3::x(self.count as u32 * heads),
            block: Dim3::x(TILE_THREADS),
            shared_bytes: TILE_SHARED_BYTES,
        };
        // 16-byte staging needs every head's features to start on a 16-byte boundary.
        let kernel = if feat.is_multiple_of(4) { &GT_TILES_FWD_W4 } else { &GT_TILES_FWD_W1 };
        // SAFETY: the tiles are this graph's (planned from its CSR: each tile's rows' columns lie
        // in its source range, which the kernel's shared memory holds), q/k/v are `[N, H, F]`
        // views the caller checked, read-only and distinct from the three outputs, which are
        // `[N_dst, H, F]`, `[N_dst, H]` and `[N_dst, H, 2]` and distinct from each other; the
        // 16-byte kernel only for `F % 4 == 0`.
        unsafe { graph.backend().launch(kernel, &config, &params) }
    }
}
