//! Parameters of the dense-tile forward (`kernels::tiles`).

use super::LaunchParams;
use crate::simt::{GSlice, GSliceMut};

/// `gt_tiles_fwd_w1`, `gt_tiles_fwd_w4`: GT's forward over dense tiles of the graph. Block `b`
/// takes tile `b / H` and head `b % H`; a tile is a range of at most `TILE_ROWS` consecutive rows
/// whose columns all lie in a range of at most `TILE_SOURCES` consecutive source nodes (graphs
/// of a batch of small graphs, or a part of one), and the tiles cover every row once, in order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtTilesParams {
    /// `[N_dst + 1]` CSR offsets.
    pub offsets: GSlice<u64>,
    /// `[E]` CSR columns.
    pub columns: GSlice<u32>,
    /// `[E]` the row of every edge.
    pub coo_rows: GSlice<u32>,
    /// `[T]` each tile's first row.
    pub tile_first: GSlice<u32>,
    /// `[T]` one past each tile's last row.
    pub tile_end: GSlice<u32>,
    /// `[T]` each tile's first source node.
    pub tile_src: GSlice<u32>,
    /// `[T]` each tile's source nodes: its rows' columns lie in `[src, src + count)`.
    pub tile_src_count: GSlice<u32>,
    /// `[N_dst, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N_src, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N_src, H, F]` values.
    pub v: GSlice<f32>,
    /// `[N_dst, H, F]` output.
    pub out: GSliceMut<f32>,
    /// `[N_dst, H]` natural log-sum-exp of each row's scores (−∞ for an empty row).
    pub lse: GSliceMut<f32>,
    /// `[N_dst, H, 2]` (max score in base-2 units, 1/sum) for the backward.
    pub stats: GSliceMut<f32>,
    /// Heads `H`.
    pub heads: u32,
    /// Features per head `F`.
    pub feat: u32,
    /// Tiles `T` (the grid is `T·H` blocks).
    pub num_tiles: u32,
    /// The score scale times log2(e).
    pub scale_log2: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtTilesParams {}
const _: () = assert!(core::mem::size_of::<GtTilesParams>() == 224);
