//! Parameters of the tile forwards (`kernels::tiles`).

use super::LaunchParams;
use crate::simt::{GSlice, GSliceMut};

/// A launch's tiles and the CSR they cut, the first field of every tile kernel's parameters.
/// Block `b` takes tile `b / H` and head `b % H`; a tile is a range of at most `TILE_ROWS`
/// consecutive rows whose columns all lie in a range of at most `TILE_SOURCES` consecutive
/// source nodes (graphs of a batch of small graphs, or a part of one), and the tiles cover every
/// row once, in order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TileList {
    /// `[N_dst + 1]` CSR offsets.
    pub offsets: GSlice<u64>,
    /// `[E]` CSR columns.
    pub columns: GSlice<u32>,
    /// `[E]` the row of every edge.
    pub coo_rows: GSlice<u32>,
    /// `[T]` each tile's first row.
    pub first: GSlice<u32>,
    /// `[T]` one past each tile's last row.
    pub end: GSlice<u32>,
    /// `[T]` each tile's first source node.
    pub src: GSlice<u32>,
    /// `[T]` each tile's source nodes: its rows' columns lie in `[src, src + count)`.
    pub src_count: GSlice<u32>,
    /// Tiles `T` (the grid is `T·H` blocks).
    pub count: u32,
    /// Heads `H`.
    pub heads: u32,
    /// The most edges of any tile, a multiple of 4 (the per-edge kernel's shared memory).
    pub edge_cap: u32,
    /// The most sources of any tile (the per-edge kernel's shared memory).
    pub source_cap: u32,
}
const _: () = assert!(core::mem::size_of::<TileList>() == 128);

/// `gt_tiles_fwd_w{1,4}` (dense) and `gt_tile_edges_fwd_w{1,4}` (per edge): GT's forward over
/// the tiles of [`TileList`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtTilesParams {
    /// The tiles.
    pub tiles: TileList,
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
    /// Features per head `F`.
    pub feat: u32,
    /// The score scale times log2(e).
    pub scale_log2: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtTilesParams {}
const _: () = assert!(core::mem::size_of::<GtTilesParams>() == 232);

/// `gat_tile_edges_fwd_w{1,4}`: GAT's forward over the edges of the tiles of [`TileList`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatTilesParams {
    /// The tiles.
    pub tiles: TileList,
    /// `[N_dst, H]` destination scores `el`.
    pub el: GSlice<f32>,
    /// `[N_src, H]` source scores `er`.
    pub er: GSlice<f32>,
    /// `[N_src, H, F]` features (aggregated).
    pub h: GSlice<f32>,
    /// `[N_dst, H, F]` output.
    pub out: GSliceMut<f32>,
    /// `[N_dst, H]` natural log-sum-exp of each row's scores (−∞ for an empty row).
    pub lse: GSliceMut<f32>,
    /// `[N_dst, H, 2]` (max score in base-2 units, 1/sum) for the backward.
    pub stats: GSliceMut<f32>,
    /// `[N_dst, H, F]` the positive part of the output `o⁺`, or empty: none saved.
    pub part_out: GSliceMut<f32>,
    /// `[N_dst, H]` the positive part's share of the attention weights `α⁺` (with `part_out`).
    pub part_weight: GSliceMut<f32>,
    /// Features per head `F`.
    pub feat: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatTilesParams {}
const _: () = assert!(core::mem::size_of::<GatTilesParams>() == 264);

/// `gatv2_tile_edges_fwd_w{1,4}`: GATv2's forward over the edges of the tiles of [`TileList`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatV2TilesParams {
    /// The tiles.
    pub tiles: TileList,
    /// `[N_dst, H, F]` destination features `xr`.
    pub xr: GSlice<f32>,
    /// `[N_src, H, F]` source features `xl` (scored and aggregated).
    pub xl: GSlice<f32>,
    /// `[H, F]` the attention vector `a`.
    pub a: GSlice<f32>,
    /// `[N_dst, H, F]` output.
    pub out: GSliceMut<f32>,
    /// `[N_dst, H]` natural log-sum-exp of each row's scores (−∞ for an empty row).
    pub lse: GSliceMut<f32>,
    /// `[N_dst, H, 2]` (max score in base-2 units, 1/sum) for the backward.
    pub stats: GSliceMut<f32>,
    /// Features per head `F`.
    pub feat: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatV2TilesParams {}
const _: () = assert!(core::mem::size_of::<GatV2TilesParams>() == 232);
