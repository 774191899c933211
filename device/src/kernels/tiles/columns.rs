//! GAT's backward column pass over tiles of the CSC: for a batch of small graphs, each block
//! takes at most [`super::TILE_ROWS`] source nodes (the CSC's rows) of one graph, with the
//! destination rows their edges reach staged in shared memory, and computes what the column
//! pass ([`crate::kernels::attention::cols`]) computes for them, `d er` and the aggregation's
//! `dh`, from shared memory instead of a gather of `dO_i` per edge.
//!
//! The CSC is cut into tiles as the forward cuts the CSR ([`crate::abi::TileList`] over the
//! transpose), so every in-edge of a tile's source node lies in the tile: each block writes
//! whole columns, with no atomics and no partial sums.
//!
//! GT and AGNN have no such kernel: theirs needs two dot products per edge (the score and
//! `dO_i·v_j`) and two gradients (`dk`, `dv`), so it stages the features of four arrays, and it
//! lost to their column pass on the H200 (docs/results.md, twelfth session). Its scores would
//! also have to repeat the forward's arithmetic bit for bit: `α` is recomputed against the
//! forward's maximum, and at large scores a different summation order shifts it past the
//! tolerance. GAT's score is a sum of two node scalars, the same in both.
//!
//! # Grid mapping
//! Block `b` takes tile `b / H` and head `b % H`, [`TILE_THREADS`] threads, in the steps of
//! [`super::edges`]' tiles:
//! 0. Edge list: the tile's CSC slots, each as its source node and destination row within the
//!    tile.
//! 1. `dO_i·h_j` for every edge, over chunks of staged features (`Tile::score_chunks`).
//! 2. A warp per source node: each in-edge's `α_ij` recomputed from the forward's `(m, 1/l)` of
//!    its row with the forward's arithmetic, `ds_ij = α_ij·(dO_i·h_j − D_i)`, and
//!    `d er_j = Σ_i ds_ij·LeakyReLU'(el_i + er_j)` summed over the lanes (butterflies).
//! 3. `dh_j = Σ_i α_ij·dO_i` over chunks of staged `dO` (`Tile::aggregate_with`).
//!
//! # Shared memory
//! As in the forward ([`super::edges::shared_bytes`] of the launch's capacities); step 2 keeps
//! the rows' `el`, `m`, `1/l`, `D` and the source nodes' `er` in the staging region.
//!
//! # Numerics
//! f32, the α and `ds` of the column pass; `dO_i·h_j` a sequential multiply-add chain in feature
//! order, `dh` summed in blocks as the forward's output. No atomics: the same inputs give the
//! same bits.

use super::edges::{Tile, dot4};
use super::{TILE_ROWS, TILE_THREADS};
use crate::abi::GatTileColsParams;
use crate::kernels::common::reduce::warp_sum;
use crate::simt::{self, GSlice, GSliceMut, WARP_SIZE, math};

crate::kernel! {
    /// GAT's backward column pass over the tiles of the CSC of [`GatTileColsParams`], staging
    /// 4 bytes at a time (any `F`).
    pub kernel GAT_TILE_COLS_BWD_W1 = fn gat_tile_cols_bwd_w1(p: &GatTileColsParams) {
        gat_tile_cols_backward::<false>(p)
    }
}

crate::kernel! {
    /// GAT's backward column pass over the tiles of the CSC of [`GatTileColsParams`], staging
    /// 16 bytes at a time (`F % 4 == 0`).
    pub kernel GAT_TILE_COLS_BWD_W4 = fn gat_tile_cols_bwd_w4(p: &GatTileColsParams) {
        gat_tile_cols_backward::<true>(p)
    }
}

/// GAT's backward column pass over the tiles of the CSC of [`GatTileColsParams`] (`block.x =
/// TILE_THREADS`, grid `T·H`, [`super::edges::shared_bytes`] of `p.tiles`' capacities of
/// dynamic shared memory): `d er_j = Σ_i ds_ij·LeakyReLU'(el_i + er_j)` and
/// `dh_j = Σ_i α_ij·dO_i` for every source node; `WIDE` stages 16 bytes at a time and needs
/// `F % 4 == 0`.
#[inline(always)]
fn gat_tile_cols_backward<const WIDE: bool>(p: &GatTileColsParams) {
    let (heads, feat) = (p.tiles.heads as usize, p.feat as usize);
    let Some(tile) = Tile::load(&p.tiles) else {
        return;
    };
    let source_cap = p.tiles.source_cap as usize;
    // 1. dO_i·h_j: the tile's rows are source nodes (h), its sources destination rows (dO).
    tile.score_chunks::<WIDE>((p.h, 1.0), p.d_out, GSlice::empty(), (heads, feat), source_cap, dot4);

    // 2. The destination rows' scalars and the source nodes' er, staged (score_chunks ended
    // with a barrier, so the region is free).
    let shared = simt::dynamic_shared();
    let [el, m, inv, delta] = [0, 1, 2, 3].map(|k| shared.slice::<f32>(tile.region + 4 * k * source_cap, source_cap));
    let er = shared.slice::<f32>(tile.region + 16 * source_cap, TILE_ROWS);
    let t = simt::thread_idx().x as usize;
    let threads = TILE_THREADS as usize;
    let mut i = t;
    while i < tile.sources + tile.rows {
        if i < tile.sources {
            let at = (tile.c0 + i) * heads + tile.head;
            el.store(i, p.el.load(at));
            m.store(i, p.stats.load(2 * at));
            inv.store(i, p.stats.load(2 * at + 1));
            delta.store(i, p.delta.load(at));
        } else {
            let j = i - tile.sources;
            er.store(j, p.er.load((tile.r0 + j) * heads + tile.head));
        }
        i += threads;
    }
    simt::sync_threads();
    let (warp_id, lane) = (t / WARP_SIZE as usize, t % WARP_SIZE as usize);
    // Warp-uniform: every lane of a warp takes the same source nodes.
    let mut row = warp_id;
    while row < tile.rows {
        let er_j = er.load(row);
        let mut d_er = 0.0f32;
        let edges = tile.row_edges(row);
        let mut e = edges.start + lane;
        while e < edges.end {
            let (_, i) = tile.edge(e);
            let x = el.load(i) + er_j;
            let s = (if x > 0.0 { x } else { p.slope * x }) * math::LOG2_E;
            let alpha = math::exp2(s - m.load(i)) * inv.load(i);
            let ds = alpha * (tile.scores.load(e) - delta.load(i));
            d_er += ds * if x > 0.0 { 1.0 } else { p.slope };
            tile.scores.store(e, alpha);
            e += WARP_SIZE as usize;
        }
        let d_er = warp_sum(d_er);
        if lane == 0 {
            p.d_er.store((tile.r0 + row) * heads + tile.head, d_er);
        }
        row += threads / WARP_SIZE as usize;
    }

    // 3. dh_j = Σ_i α_ij·dO_i (its first barrier ends step 2).
    let none = (GSliceMut::empty(), GSliceMut::empty());
    tile.aggregate_with::<WIDE, false>((tile.scores, |_| 1.0), p.d_out, (heads, feat), p.dh, none, source_cap);
}
