//! The dense-tile forward: GT's attention over a graph made of small dense blocks (a batch of
//! small graphs), one block per tile and head, as two dense products in shared memory instead of
//! a gather per edge.
//!
//! A tile is at most [`TILE_ROWS`] consecutive rows whose columns all lie in at most
//! [`TILE_SOURCES`] consecutive source nodes. On such a graph the per-edge work of the row passes
//! (a gather, a butterfly sum, an online-softmax update per edge and head) is what bounds them,
//! not bytes: the features are read from L2 many times over. Here each block stages its tile's queries, keys and
//! values once and computes every score of the tile as a dense product, so an edge costs a share
//! of a register-tiled multiply-add loop; the pairs that are not edges are masked out (their
//! share of the product is the price, which the planner weighs by the tiles' fill).
//!
//! # Grid mapping
//! Block `b` takes tile `b / H` and head `b % H`, [`TILE_THREADS`] threads as a 16 × 16 grid:
//! thread `(ty, tx)` holds the scores of rows `ty + 16·i` (`i < 4`) and sources `tx + 16·j`
//! (`j < 16`; the groups of 16 sources past the tile's are skipped, block-uniformly), and in the
//! aggregation the outputs of the same rows for features `2·tx, 2·tx + 1` of each chunk of
//! [`VALUE_CHUNK`].
//! 0. Counts: each (row, source) pair's number of edges (duplicates count, a pair with none is
//!    masked), from the tile's contiguous range of CSR edges (their rows from the COO row array)
//!    by shared-memory integer atomics (exact, so order-free).
//! 1. Scores: `s = (c·log2 e·q)·kᵀ` over chunks of [`SCORE_CHUNK`] features staged in shared
//!    memory (16 bytes a load when `F % 4 == 0`, the `_w4` entry, else 4: `_w1`; each thread's
//!    loads of a chunk in flight together), each score a sequential multiply-add chain over the
//!    features in order.
//! 2. Softmax: the exact row maximum and sum (a row's 16 threads combine theirs by butterfly,
//!    so all hold the same bits); the weights `n·2^(s − m)` go to shared memory over the counts.
//! 3. Aggregation: `out = (Σ_j w_ij·v_j)·(1/l)` over chunks of [`VALUE_CHUNK`] features of the
//!    staged values, each sum in source order; then `lse` and the backward's `(m, 1/l)`, as the
//!    row passes write them ([`crate::kernels::attention::forward`]), so the backward is the
//!    ordinary one.
//!
//! # Shared memory
//! [`TILE_SHARED_BYTES`]: the `TILE_ROWS × (TILE_SOURCES + 4)` counts, then weights (u32, then
//! f32, in place), and one staging region for the query and key chunks, later the value chunk
//! (rows padded by 4 floats, so a warp's 16-byte reads of 16 rows take the fewest wavefronts);
//! two blocks fit on an H200 multiprocessor.
//!
//! # Numerics
//! f32; scores in base-2 units with the row's exact maximum (no rescaling), one `ex2.approx` per
//! pair, sums of at most [`TILE_SOURCES`] terms, the normalisation by `rcp.approx` as in the row
//! passes. No atomics on floats: the same inputs give the same bits.

use crate::abi::GtTilesParams;
use crate::kernels::common::softmax::{log_sum_exp, weight};
use crate::kernels::common::unroll::unroll;
use crate::simt::{self, F2, F4, FULL_MASK, GSlice, SharedSlice, math, warp};

/// Rows of a tile at most.
pub const TILE_ROWS: usize = 64;
/// Source nodes of a tile at most.
pub const TILE_SOURCES: usize = 256;
/// Threads of a block: a 16 × 16 grid over the tile's scores.
pub const TILE_THREADS: u32 = 256;
/// Threads along each side of the grid: a thread's sources are groups of this many, and a
/// block computes the scores of its tile's sources rounded up to a group.
pub const TILE_SIDE: usize = 16;
/// [`TILE_SIDE`], short.
const SIDE: usize = TILE_SIDE;
/// Rows per thread.
const ROWS_PER: usize = TILE_ROWS / SIDE;
/// Sources per thread, in two unrolled halves.
const HALF: usize = TILE_SOURCES / SIDE / 2;
/// Features per staged chunk of queries and keys.
pub const SCORE_CHUNK: usize = 32;
/// Features per staged chunk of values.
pub const VALUE_CHUNK: usize = 32;
/// Floats per row of the counts and weights.
const P_STRIDE: usize = TILE_SOURCES + 4;
/// Floats per staged row of a chunk.
const STRIDE: usize = SCORE_CHUNK + 4;
/// Bytes of the counts and weights.
const P_BYTES: usize = TILE_ROWS * P_STRIDE * 4;
/// Bytes of the staged query chunk; the key chunk follows it.
const Q_BYTES: usize = TILE_ROWS * STRIDE * 4;
/// Bytes of the staging region: a query and a key chunk (the value chunk takes less).
const STAGE_BYTES: usize = Q_BYTES + TILE_SOURCES * STRIDE * 4;
const _: () = assert!(VALUE_CHUNK == SCORE_CHUNK && TILE_SOURCES == 2 * HALF * SIDE);
/// Dynamic shared memory of a block.
pub const TILE_SHARED_BYTES: u32 = (P_BYTES + STAGE_BYTES) as u32;

/// Loads one thread has in flight at once while staging or counting.
const IN_FLIGHT: usize = 4;

/// Copies features `[col, col + valid)` of the `count` nodes from `first` on (rows of `row_len`
/// floats in `src`), times `scale`, into the first `rows` rows of `dst` ([`STRIDE`] floats
/// apart), zero past `count` rows and past `valid` features. With `WIDE` (`row_len`, `col` and
/// `valid` multiples of 4) each thread moves 16 bytes at a time, a warp reading 4 rows' 128 bytes;
/// else 4 bytes, a warp reading one row's. Each thread has [`IN_FLIGHT`] loads in flight before it
/// stores.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn stage<const WIDE: bool>(
    (dst, dst4): (SharedSlice<f32>, SharedSlice<F4>),
    rows: usize,
    src: GSlice<f32>,
    (first, count): (usize, usize),
    row_len: usize,
    col: usize,
    valid: usize,
    scale: f32,
) {
    let threads = TILE_THREADS as usize;
    if WIDE {
        const QUADS: usize = SCORE_CHUNK / 4;
        let src4 = src.cast::<F4>();
        let total = rows * QUADS;
        let mut base = simt::thread_idx().x as usize;
        while base < total {
            let mut x = [F4::default(); IN_FLIGHT];
            unroll!(IN_FLIGHT, |u| {
                let i = base + u * threads;
                let (r, q) = (i / QUADS, i % QUADS);
                if i < total && r < count && 4 * q < valid {
                    x[u] = src4.load(((first + r) * row_len + col) / 4 + q);
                }
            });
            unroll!(IN_FLIGHT, |u| {
                let i = base + u * threads;
                if i < total {
                    dst4.store((i / QUADS) * (STRIDE / 4) + i % QUADS, F4(x[u].0.map(|v| v * scale)));
                }
            });
            base += IN_FLIGHT * threads;
        }
    } else {
        let total = rows * SCORE_CHUNK;
        let mut base = simt::thread_idx().x as usize;
        while base < total {
            let mut x = [0.0f32; IN_FLIGHT];
            unroll!(IN_FLIGHT, |u| {
                let i = base + u * threads;
                let (r, f) = (i / SCORE_CHUNK, i % SCORE_CHUNK);
                if i < total && r < count && f < valid {
                    x[u] = src.load((first + r) * row_len + col + f);
                }
            });
            unroll!(IN_FLIGHT, |u| {
                let i = base + u * threads;
                if i < total {
                    dst.store((i / SCORE_CHUNK) * STRIDE + i % SCORE_CHUNK, x[u] * scale);
                }
            });
            base += IN_FLIGHT * threads;
        }
    }
}

/// The maximum of `x` over the 16 threads of a row (lanes that differ in their low four bits).
#[inline(always)]
fn row_max(x: f32) -> f32 {
    let mut x = x;
    let mut offset = 1;
    while offset < SIDE as u32 {
        x = x.max(warp::shfl_xor(FULL_MASK, x, offset));
        offset *= 2;
    }
    x
}

/// The sum of `x` over the 16 threads of a row, the same bits in each (each step adds the same
/// two values in either lane).
#[inline(always)]
fn row_sum(x: f32) -> f32 {
    let mut x = x;
    let mut offset = 1;
    while offset < SIDE as u32 {
        x += warp::shfl_xor(FULL_MASK, x, offset);
        offset *= 2;
    }
    x
}

crate::kernel! {
    /// GT's forward over the tiles of [`GtTilesParams`], staging 4 bytes at a time (any `F`).
    pub kernel GT_TILES_FWD_W1 = fn gt_tiles_fwd_w1(p: &GtTilesParams) {
        gt_tiles_forward::<false>(p)
    }
}

crate::kernel! {
    /// GT's forward over the tiles of [`GtTilesParams`], staging 16 bytes at a time (`F % 4 == 0`).
    pub kernel GT_TILES_FWD_W4 = fn gt_tiles_fwd_w4(p: &GtTilesParams) {
        gt_tiles_forward::<true>(p)
    }
}

/// GT's forward over the tiles of [`GtTilesParams`] (`block.x = TILE_THREADS`, grid `T·H`,
/// [`TILE_SHARED_BYTES`] of dynamic shared memory); `WIDE` stages 16 bytes at a time and needs
/// `F % 4 == 0`.
#[inline(always)]
fn gt_tiles_forward<const WIDE: bool>(p: &GtTilesParams) {
    let heads = p.heads as usize;
    let b = simt::block_idx().x as usize;
    let (tile, h) = (b / heads, b % heads);
    if tile >= p.num_tiles as usize {
        return;
    }
    let t = simt::thread_idx().x as usize;
    let (tx, ty) = (t % SIDE, t / SIDE);
    let r0 = p.tile_first.load(tile) as usize;
    let rows = p.tile_end.load(tile) as usize - r0;
    let c0 = p.tile_src.load(tile) as usize;
    let sources = p.tile_src_count.load(tile) as usize;
    // Sources rounded up to a thread's group of 16: what the loops and staging cover.
    let covered = sources.div_ceil(SIDE) * SIDE;
    let feat = p.feat as usize;
    let row_len = heads * feat;
    let shared = simt::dynamic_shared();
    let counts = shared.slice::<u32>(0, TILE_ROWS * P_STRIDE);
    let weights = shared.slice::<f32>(0, TILE_ROWS * P_STRIDE);
    let weights4 = shared.slice::<F4>(0, TILE_ROWS * P_STRIDE / 4);
    let (qs, ks) = (
        shared.slice::<f32>(P_BYTES, TILE_ROWS * STRIDE),
        shared.slice::<f32>(P_BYTES + Q_BYTES, TILE_SOURCES * STRIDE),
    );
    let (qs4, ks4) = (
        shared.slice::<F4>(P_BYTES, TILE_ROWS * STRIDE / 4),
        shared.slice::<F4>(P_BYTES + Q_BYTES, TILE_SOURCES * STRIDE / 4),
    );
    let (vs, vs2, vs4) = (
        shared.slice::<f32>(P_BYTES, TILE_SOURCES * STRIDE),
        shared.slice::<F2>(P_BYTES, TILE_SOURCES * STRIDE / 2),
        shared.slice::<F4>(P_BYTES, TILE_SOURCES * STRIDE / 4),
    );

    // 0. Each pair's edge count: the tile's edges are a contiguous range of the CSR.
    let threads = TILE_THREADS as usize;
    let mut i = t;
    while i < TILE_ROWS * P_STRIDE / 4 {
        weights4.store(i, F4::default());
        i += threads;
    }
    simt::sync_threads();
    let end = p.offsets.load(r0 + rows) as usize;
    let mut e = p.offsets.load(r0) as usize + t;
    while e < end {
        let mut pairs = [(0u32, 0u32); IN_FLIGHT];
        unroll!(IN_FLIGHT, |u| {
            if e + u * threads < end {
                pairs[u] = (p.coo_rows.load(e + u * threads), p.columns.load(e + u * threads));
            }
        });
        unroll!(IN_FLIGHT, |u| {
            if e + u * threads < end {
                let (row, source) = (pairs[u].0 as usize - r0, pairs[u].1 as usize - c0);
                counts.atomic_add(row * P_STRIDE + source, 1);
            }
        });
        e += IN_FLIGHT * threads;
    }

    // 1. Scores, chunk by chunk of features (the first barrier also ends the counting).
    let mut s = [[[0.0f32; HALF]; 2]; ROWS_PER];
    let mut f0 = 0;
    while f0 < feat {
        simt::sync_threads();
        let valid = (feat - f0).min(SCORE_CHUNK);
        stage::<WIDE>((qs, qs4), TILE_ROWS, p.q, (r0, rows), row_len, h * feat + f0, valid, p.scale_log2);
        stage::<WIDE>((ks, ks4), covered, p.k, (c0, sources), row_len, h * feat + f0, valid, 1.0);
        simt::sync_threads();
        let mut f4 = 0;
        while f4 < SCORE_CHUNK / 4 {
            let mut qv = [F4::default(); ROWS_PER];
            unroll!(ROWS_PER, |i| {
                qv[i] = qs4.load((ty + SIDE * i) * (STRIDE / 4) + f4);
            });
            unroll!(2, |half| {
                unroll!(HALF, |j| {
                    let group = half * HALF + j;
                    if group * SIDE < sources {
                        let kv = ks4.load((tx + SIDE * group) * (STRIDE / 4) + f4);
                        unroll!(ROWS_PER, |i| {
                            let mut acc = s[i][half][j];
                            unroll!(4, |c| {
                                acc = math::fma(qv[i].0[c], kv.0[c], acc);
                            });
                            s[i][half][j] = acc;
                        });
                    }
                });
            });
            f4 += 1;
        }
        f0 += SCORE_CHUNK;
    }

    // 2. Softmax over each row's pairs with edges; the weights replace the counts.
    let pair = |i: usize, group: usize| (ty + SIDE * i) * P_STRIDE + tx + SIDE * group;
    let mut m = [f32::NEG_INFINITY; ROWS_PER];
    unroll!(ROWS_PER, |i| {
        unroll!(2, |half| {
            unroll!(HALF, |j| {
                if counts.load(pair(i, half * HALF + j)) == 0 {
                    s[i][half][j] = f32::NEG_INFINITY;
                }
                m[i] = m[i].max(s[i][half][j]);
            });
        });
        m[i] = row_max(m[i]);
    });
    let mut l = [0.0f32; ROWS_PER];
    unroll!(ROWS_PER, |i| {
        unroll!(2, |half| {
            unroll!(HALF, |j| {
                let at = pair(i, half * HALF + j);
                let w = weight(s[i][half][j], m[i]) * counts.load(at) as f32;
                weights.store(at, w);
                l[i] += w;
            });
        });
        l[i] = row_sum(l[i]);
    });
    let inv: [f32; ROWS_PER] = core::array::from_fn(|i| if l[i] > 0.0 { math::rcp(l[i]) } else { 0.0 });

    // 3. Aggregation, chunk by chunk of features.
    let mut g0 = 0;
    while g0 < feat {
        simt::sync_threads();
        let valid = (feat - g0).min(VALUE_CHUNK);
        stage::<WIDE>((vs, vs4), covered, p.v, (c0, sources), row_len, h * feat + g0, valid, 1.0);
        simt::sync_threads();
        let mut acc = [F2::default(); ROWS_PER];
        let mut j4 = 0;
        while j4 < sources.div_ceil(4) {
            let mut w = [F4::default(); ROWS_PER];
            unroll!(ROWS_PER, |i| {
                w[i] = weights4.load((ty + SIDE * i) * (P_STRIDE / 4) + j4);
            });
            unroll!(4, |c| {
                let value = vs2.load((4 * j4 + c) * (STRIDE / 2) + tx);
                unroll!(ROWS_PER, |i| {
                    unroll!(2, |k| {
                        acc[i].0[k] = math::fma(value.0[k], w[i].0[c], acc[i].0[k]);
                    });
                });
            });
            j4 += 1;
        }
        unroll!(ROWS_PER, |i| {
            let row = ty + SIDE * i;
            if row < rows {
                let base = (r0 + row) * row_len + h * feat + g0 + 2 * tx;
                unroll!(2, |k| {
                    if 2 * tx + k < valid {
                        p.out.store(base + k, acc[i].0[k] * inv[i]);
                    }
                });
            }
        });
        g0 += VALUE_CHUNK;
    }
    if tx == 0 {
        unroll!(ROWS_PER, |i| {
            let row = ty + SIDE * i;
            if row < rows {
                let at = (r0 + row) * heads + h;
                p.lse.store(at, log_sum_exp(m[i], l[i]));
                p.stats.store(2 * at, m[i]);
                p.stats.store(2 * at + 1, inv[i]);
            }
        });
    }
}
