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
//! Block `b` takes tile `b / H` and head `b % H`, [`TILE_THREADS`] threads:
//! 0. Staging: the tile's CSC slots, each as its source node and destination row within the
//!    tile; `dO` of all the head's features of the tile's destination rows (asynchronous copies,
//!    all of a thread's in flight at once, [`super::stage_rows_async`]), their `el`, `m`,
//!    `1/l` and `D` (one load of each row's record from the row pass), and the tile's source
//!    nodes' `er`.
//! 1. A thread per edge: `α_ij = 2^(s − m_i)·(1/l_i)` from the forward's stats with the forward's
//!    arithmetic, into the edge's score slot, and the edge marked where `el_i + er_j > 0`.
//! 2. An aligned group of [`column_lanes`] lanes per source node `j` (a warp takes several), lane
//!    `ℓ` holding the head's feature quads `ℓ, ℓ + L, …` ([`lane_quads`] of them, at most
//!    [`MAX_LANE_QUADS`], so `F ≤` [`MAX_FEAT`]). For each in-edge in CSC order the group loads
//!    `dO_i` once — a group's load is 128 contiguous bytes, the fewest shared-memory wavefronts
//!    and no bank conflicts — and adds `α_ij·dO_i` to `dh_j` and `c_ij·dO_i` to `g_j`, with
//!    `c_ij = α_ij·LeakyReLU'(el_i + er_j)`, and `c_ij·D_i` to a scalar. Since
//!    `d er_j = Σ_i c_ij·(dO_i·h_j − D_i) = h_j·g_j − Σ_i c_ij·D_i`, no edge needs a dot product
//!    of its own: one per source node, a butterfly over its group at the end.
//!
//! The previous design (twelfth session) took `dO_i·h_j` per edge with a thread per edge, then
//! summed `α_ij·dO_i` over chunks of `dO` staged in turn: it read `dO_i` twice per edge and was
//! bound by shared-memory wavefronts, a quarter of them bank conflicts (ncu: 0.585 ms of GAT's
//! batch-1024x120-d50 1×128 backward; this one 0.405).
//!
//! # Shared memory
//! [`shared_bytes`]: the tile's edge list as [`super::edges`] lays it out, then `dO` of
//! `source_cap` rows of `⌈F/4⌉·4` floats, four `source_cap` scalars and [`TILE_ROWS`] `er`. A
//! batch of graphs of about a hundred nodes at `F = 128` takes about 90 KB, two blocks per
//! multiprocessor.
//!
//! # Numerics
//! f32, the α of the column pass; `dh_j`, `g_j` and `Σ c_ij·D_i` summed over the column's edges
//! in CSC order, in blocks ([`Blocked`]) as the forward's output; `h_j·g_j` per lane in feature
//! order, then a butterfly over the group. No atomics: the same inputs give the same bits.

use super::edges::{Tile, dot4, region, store};
use super::{TILE_ROWS, TILE_THREADS, stage_rows_async};
use crate::abi::GatTileColsParams;
use crate::kernels::common::reduce::sum_over;
use crate::kernels::common::softmax::{Blocked, FoldClock};
use crate::kernels::common::unroll::unroll;
use crate::kernels::gat::leaky_score;
use crate::simt::{self, F4, GSlice, WARP_SIZE, math};

/// Feature quads (4 features) each lane of a column's group holds of `dO_i`, `dh_j` and
/// `Σ c_ij·dO_i` at most: the `_q4` kernels'.
pub const MAX_LANE_QUADS: usize = 4;
/// Features per head at most: [`MAX_LANE_QUADS`] quads in each lane of a warp.
pub const MAX_FEAT: usize = 4 * MAX_LANE_QUADS * WARP_SIZE as usize;

/// Quads each lane holds at `feat` features (at most [`MAX_FEAT`]): 1, 2 or 4, the fewest that
/// keep 8 lanes per source node, so that a group's load of a row is 128 contiguous bytes (rows
/// of other groups lie anywhere in the banks: narrower loads conflict), up to 4 (then more
/// lanes). The kernels hold that many quads in registers: fewer registers, more resident warps.
pub const fn lane_quads(feat: usize) -> usize {
    let quads = feat.div_ceil(4);
    if quads <= 8 {
        1
    } else if quads <= 16 {
        2
    } else {
        MAX_LANE_QUADS
    }
}

/// Lanes that take one source node at `feat` features (at most [`MAX_FEAT`]), a power of two:
/// enough that [`lane_quads`] quads each cover the head's features.
pub const fn column_lanes(feat: usize) -> usize {
    let lanes = feat.div_ceil(4).div_ceil(lane_quads(feat)).next_power_of_two();
    if lanes > WARP_SIZE as usize { WARP_SIZE as usize } else { lanes }
}

/// Dynamic shared memory of a block whose tiles have at most `edge_cap` edges (a multiple of 4)
/// and `source_cap` sources (destination rows), at `feat` features per head.
pub const fn shared_bytes(edge_cap: usize, source_cap: usize, feat: usize) -> u64 {
    (region(edge_cap) + 16 * feat.div_ceil(4) * source_cap + 16 * source_cap + 4 * TILE_ROWS) as u64
}

/// The kernels: `_w4` moves 16 bytes at a time (`F % 4 == 0`), `_w1` 4 (any `F`); `_qQ` holds
/// `Q` quads per lane, for the `F` of [`lane_quads`].
macro_rules! column_kernels {
    ($($name:ident = $fn:ident ($wide:literal, $quads:literal);)*) => {$(
        crate::kernel! {
            /// GAT's backward column pass over the tiles of the CSC of [`GatTileColsParams`]
            /// (see [`lane_quads`] for the features it takes).
            pub kernel $name = fn $fn(p: &GatTileColsParams) {
                gat_tile_cols_backward::<$wide, $quads>(p)
            }
        }
    )*};
}

column_kernels! {
    GAT_TILE_COLS_BWD_W1_Q1 = gat_tile_cols_bwd_w1_q1(false, 1);
    GAT_TILE_COLS_BWD_W1_Q2 = gat_tile_cols_bwd_w1_q2(false, 2);
    GAT_TILE_COLS_BWD_W1_Q4 = gat_tile_cols_bwd_w1_q4(false, 4);
    GAT_TILE_COLS_BWD_W4_Q1 = gat_tile_cols_bwd_w4_q1(true, 1);
    GAT_TILE_COLS_BWD_W4_Q2 = gat_tile_cols_bwd_w4_q2(true, 2);
    GAT_TILE_COLS_BWD_W4_Q4 = gat_tile_cols_bwd_w4_q4(true, 4);
}

/// GAT's backward column pass over the tiles of the CSC of [`GatTileColsParams`] (`block.x =
/// TILE_THREADS`, grid `T·H`, [`shared_bytes`] of `p.tiles`' capacities and `F` of dynamic
/// shared memory, `F ≤` [`MAX_FEAT`] and `QUADS =` [`lane_quads`]`(F)`): `d er_j = Σ_i ds_ij·LeakyReLU'(el_i + er_j)` and
/// `dh_j = Σ_i α_ij·dO_i` for every source node; `WIDE` moves 16 bytes at a time and needs
/// `F % 4 == 0`.
#[inline(always)]
fn gat_tile_cols_backward<const WIDE: bool, const QUADS: usize>(p: &GatTileColsParams) {
    let (heads, feat) = (p.tiles.heads as usize, p.feat as usize);
    let Some(tile) = Tile::load(&p.tiles) else {
        return;
    };
    let source_cap = p.tiles.source_cap as usize;
    let quads = feat.div_ceil(4);

    // 0. The tile's sources are destination rows: their dO, el, m, 1/l and D, staged, and the
    // tile's rows' (source nodes') er.
    let shared = simt::dynamic_shared();
    let staged =
        (shared.slice::<f32>(tile.region, 4 * quads * source_cap), shared.slice::<F4>(tile.region, quads * source_cap));
    let at = tile.region + 16 * quads * source_cap;
    let [el, m, inv, delta] = [0, 1, 2, 3].map(|k| shared.slice::<f32>(at + 4 * k * source_cap, source_cap));
    let er = shared.slice::<f32>(at + 16 * source_cap, TILE_ROWS);
    let nodes = (tile.c0, tile.sources);
    let layout = (tile.sources, 4 * quads, 4 * quads);
    stage_rows_async::<WIDE, false>(staged, layout, p.d_out, nodes, (heads * feat, tile.head * feat, feat));
    let t = simt::thread_idx().x as usize;
    let threads = TILE_THREADS as usize;
    let mut i = t;
    while i < tile.sources + tile.rows {
        if i < tile.sources {
            let [max, inv_sum, d, row_score] = p.record.cast::<F4>().load((tile.c0 + i) * heads + tile.head).0;
            el.store(i, row_score);
            m.store(i, max);
            inv.store(i, inv_sum);
            delta.store(i, d);
        } else {
            let j = i - tile.sources;
            er.store(j, p.er.load((tile.r0 + j) * heads + tile.head));
        }
        i += threads;
    }
    simt::async_wait_all();
    simt::sync_threads();

    // 1. Every edge's α_ij from the forward's (m, 1/l) of its row with the forward's arithmetic, a
    // thread per edge, into the scores; the edges with el_i + er_j > 0 marked.
    let mut e = t;
    while e < tile.edges {
        let (row, i) = tile.edge(e);
        let x = el.load(i) + er.load(row);
        tile.set_score(e, math::exp2(leaky_score(x, p.slope) - m.load(i)) * inv.load(i));
        if x > 0.0 {
            tile.mark_positive(e);
        }
        e += threads;
    }
    simt::sync_threads();

    // 2. A group of lanes per source node (the tile's rows).
    let lanes = column_lanes(feat);
    let (group, lane) = (t / lanes, t % lanes);
    let groups = threads / lanes;
    let d_out = staged.1;
    // Block-uniform: every warp loops over the same bases (each group over its own edges, then
    // every lane of the warp takes part in the butterfly).
    let mut base = 0;
    while base < tile.rows {
        let row = base + group;
        let live = row < tile.rows;
        let node = (tile.r0 + row) * heads + tile.head;
        // dh_j = Σ α_ij·dO_i; with c_ij = α_ij·LeakyReLU'(el_i + er_j), d er_j = Σ c_ij·(dO_i·h_j − D_i)
        // = h_j·(Σ c_ij·dO_i) − Σ c_ij·D_i, so no edge needs its own dot product.
        let mut dh = [Blocked::<F4>::zero(); QUADS];
        let mut weighted = [Blocked::<F4>::zero(); QUADS];
        let mut c_delta = Blocked::<f32>::zero();
        if live {
            let mut clock = FoldClock::new(1);
            for e in tile.row_edges(row) {
                let (i, positive, alpha) = tile.source_sign_and_score(e);
                let c = if positive { alpha } else { alpha * p.slope };
                c_delta.add(c * delta.load(i));
                unroll!(QUADS, |u| {
                    let quad = lane + u * lanes;
                    if quad < quads {
                        let d = d_out.load(i * quads + quad);
                        dh[u].add_scaled(d, alpha);
                        weighted[u].add_scaled(d, c);
                    }
                });
                if clock.tick() {
                    c_delta.fold();
                    unroll!(QUADS, |u| {
                        dh[u].fold();
                        weighted[u].fold();
                    });
                }
            }
        }
        let mut partial = 0.0f32;
        unroll!(QUADS, |u| {
            let quad = lane + u * lanes;
            if live && quad < quads {
                let h = load_quad::<WIDE>(p.h, node * feat, quad, feat);
                partial = dot4(partial, weighted[u].value(), h, F4::default());
            }
        });
        let dot = sum_over(partial, lanes as u32);
        if live {
            if lane == 0 {
                p.d_er.store(node, dot - c_delta.value());
            }
            unroll!(QUADS, |u| {
                let quad = lane + u * lanes;
                if quad < quads {
                    store::<WIDE>(p.dh, node * feat + 4 * quad, dh[u].value(), feat - 4 * quad);
                }
            });
        }
        base += groups;
    }
}

/// Features `[4·quad, 4·quad + 4)` of the row of `feat` features at `at` of `x`, zero past
/// `feat`: one 16-byte load with `WIDE` (`at` and `feat` multiples of 4), else one per feature.
#[inline(always)]
fn load_quad<const WIDE: bool>(x: GSlice<f32>, at: usize, quad: usize, feat: usize) -> F4 {
    if WIDE {
        x.cast::<F4>().load(at / 4 + quad)
    } else {
        F4(core::array::from_fn(|c| if 4 * quad + c < feat { x.load(at + 4 * quad + c) } else { 0.0 }))
    }
}
