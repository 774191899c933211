//! Parameters of the tile kernels (`kernels::tiles`): the forwards over tiles of the CSR, the
//! backward's column pass over tiles of the CSC, and GT's backward over closed blocks.

use super::LaunchParams;
use crate::simt::{GSlice, GSliceMut};

/// A launch's tiles and the CSR they cut, the first field of every tile kernel's parameters.
/// Block `b` takes tile `b / H` and head `b % H`; a tile is a range of at most `TILE_ROWS`
/// consecutive rows whose columns all lie in a range of at most `TILE_SOURCES` consecutive
/// source nodes (graphs of a batch of small graphs, or a part of one), and the tiles cover every
/// row once, in order. The backward's column pass cuts the CSC the same way: its rows are the
/// source nodes, its columns the destination rows.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TileList {
    /// `[N_dst + 1]` CSR offsets (the CSC's `[N_src + 1]` for the column pass).
    pub offsets: GSlice<u64>,
    /// `[E]` CSR columns (the CSC's rows).
    pub columns: GSlice<u32>,
    /// `[E]` the row of every edge (the CSC's: the column of every CSC slot).
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
    /// The load width (1 or 4) of the backward's row pass, whose arithmetic the stats' maximum is
    /// restated in (see `kernels::tiles::edges::Tile::softmax`), or 0: not restated.
    pub score_width: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtTilesParams {}
const _: () = assert!(core::mem::size_of::<GtTilesParams>() == 240);

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
    /// The load width (1 or 4) of the backward's row pass, whose arithmetic the stats' maximum is
    /// restated in (see `kernels::tiles::edges::Tile::softmax`), or 0: not restated.
    pub score_width: u32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatV2TilesParams {}
const _: () = assert!(core::mem::size_of::<GatV2TilesParams>() == 240);

/// `gat_tile_cols_bwd_w{1,4}_q{1,2,4}`: GAT's backward column pass over the edges of the tiles
/// of the CSC ([`TileList`] over the transpose: a tile's rows are source nodes `j`, its sources
/// the destination rows `i`), as `gat_bwd_cols_*` computes it: `d er` and the aggregation's `dh`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatTileColsParams {
    /// The tiles of the CSC.
    pub tiles: TileList,
    /// `[N_src, H]` source scores `er`.
    pub er: GSlice<f32>,
    /// `[N_src, H, F]` features (aggregated in the forward).
    pub h: GSlice<f32>,
    /// `[N_dst, H, 4]` the row pass's row record: `(m, 1/l, D, el)` per destination row and head
    /// ([`crate::abi::ColumnGrads::record`]).
    pub record: GSlice<f32>,
    /// `[N_dst, H, F]` gradient of the output.
    pub d_out: GSlice<f32>,
    /// `[N_src, H]` gradient of `er`.
    pub d_er: GSliceMut<f32>,
    /// `[N_src, H, F]` the aggregation's gradient of `h`, `Σ_i α_ij·dO_i`.
    pub dh: GSliceMut<f32>,
    /// Features per head `F`.
    pub feat: u32,
    /// The LeakyReLU negative slope.
    pub slope: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GatTileColsParams {}
const _: () = assert!(core::mem::size_of::<GatTileColsParams>() == 232);

/// A launch's closed blocks and the CSR they cut, the first field of
/// [`GtBlocksBwdParams`]. Block `b` takes closed block `b / H` and head `b % H`; a closed block is
/// a range of at most `BLOCK_NODES` consecutive nodes of a square graph whose rows' edges all
/// come from nodes of the range (so its nodes' out-edges all go to rows of the range), and the
/// blocks cover every node once, in order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BlockList {
    /// `[N + 1]` CSR offsets.
    pub offsets: GSlice<u64>,
    /// `[E]` CSR columns.
    pub columns: GSlice<u32>,
    /// `[E]` the row of every edge.
    pub coo_rows: GSlice<u32>,
    /// `[B + 1]` each block's first node, then `N`.
    pub first: GSlice<u32>,
    /// Blocks `B` (the grid is `B·H` blocks).
    pub count: u32,
    /// Heads `H`.
    pub heads: u32,
}
const _: () = assert!(core::mem::size_of::<BlockList>() == 72);

/// `gt_blocks_bwd_w{1,4}`: GT's backward over the closed blocks of [`BlockList`], after the
/// forward over dense tiles (whose scores it repeats bit for bit; its maxima not restated).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GtBlocksBwdParams {
    /// The closed blocks.
    pub blocks: BlockList,
    /// `[N, H, F]` queries.
    pub q: GSlice<f32>,
    /// `[N, H, F]` keys.
    pub k: GSlice<f32>,
    /// `[N, H, F]` values.
    pub v: GSlice<f32>,
    /// `[N, H, 2]` the forward's (max score in base-2 units, 1/sum).
    pub stats: GSlice<f32>,
    /// `[N, H, F]` gradient of the output.
    pub d_out: GSlice<f32>,
    /// `[N, H, F]` gradient of the queries.
    pub dq: GSliceMut<f32>,
    /// `[N, H, F]` gradient of the keys.
    pub dk: GSliceMut<f32>,
    /// `[N, H, F]` gradient of the values.
    pub dv: GSliceMut<f32>,
    /// Features per head `F`.
    pub feat: u32,
    /// The score scale times log2(e).
    pub scale_log2: f32,
    /// The score scale `c` (the factor of the query and key gradients).
    pub grad_scale: f32,
}
// SAFETY: repr(C), plain data and slices.
unsafe impl LaunchParams for GtBlocksBwdParams {}
const _: () = assert!(core::mem::size_of::<GtBlocksBwdParams>() == 216);
