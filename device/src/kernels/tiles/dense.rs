//! The dense tile forward: every (row, source) pair of a tile as two dense products in shared
//! memory, the pairs that are not edges masked out (their share of the products is the price,
//! which the planner weighs by the tiles' fill).
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
//! [`SHARED_BYTES`]: the `TILE_ROWS × (TILE_SOURCES + 4)` counts, then weights (u32, then
//! f32, in place), and one staging region for the query and key chunks, later the value chunk
//! (rows padded by 4 floats, so a warp's 16-byte reads of 16 rows take the fewest wavefronts);
//! two blocks fit on an H200 multiprocessor.
//!
//! # Numerics
//! f32; scores in base-2 units with the row's exact maximum (no rescaling), one `ex2.approx` per
//! pair, sums of at most [`TILE_SOURCES`] terms, the normalisation by `rcp.approx` as in the row
//! passes. No atomics on floats: the same inputs give the same bits.

use super::{
    SCORE_CHUNK, STRIDE, TILE_ROWS, TILE_SOURCES, TILE_THREADS, VALUE_CHUNK, count_pairs, gt_term, restate_maxima,
    stage,
};
use crate::abi::GtTilesParams;
use crate::kernels::common::reduce::{max_over, min_over, sum_over};
use crate::kernels::common::softmax::{log_sum_exp, weight};
use crate::kernels::common::unroll::unroll;
use crate::simt::{self, F2, F4, math};

/// Threads along each side of the block's 16 × 16 grid: a thread's sources are groups of this
/// many, and a block computes the scores of its tile's sources rounded up to a group.
pub const SIDE: usize = 16;
/// Rows per thread.
const ROWS_PER: usize = TILE_ROWS / SIDE;
/// Sources per thread, in two unrolled halves.
const HALF: usize = TILE_SOURCES / SIDE / 2;
/// Floats per row of the counts and weights.
const P_STRIDE: usize = TILE_SOURCES + 4;
/// Bytes of the counts and weights.
const P_BYTES: usize = TILE_ROWS * P_STRIDE * 4;
/// Bytes of the staged query chunk; the key chunk follows it.
const Q_BYTES: usize = TILE_ROWS * STRIDE * 4;
/// Bytes of the staging region: a query and a key chunk (the value chunk takes less).
const STAGE_BYTES: usize = Q_BYTES + TILE_SOURCES * STRIDE * 4;
const _: () = assert!(TILE_SOURCES == 2 * HALF * SIDE && TILE_THREADS as usize == SIDE * SIDE);
/// Dynamic shared memory of a block.
pub const SHARED_BYTES: u32 = (P_BYTES + STAGE_BYTES) as u32;

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
/// [`SHARED_BYTES`] of dynamic shared memory); `WIDE` stages 16 bytes at a time and needs
/// `F % 4 == 0`.
#[inline(always)]
fn gt_tiles_forward<const WIDE: bool>(p: &GtTilesParams) {
    let heads = p.tiles.heads as usize;
    let b = simt::block_idx().x as usize;
    let (tile, h) = (b / heads, b % heads);
    if tile >= p.tiles.count as usize {
        return;
    }
    let t = simt::thread_idx().x as usize;
    let (tx, ty) = (t % SIDE, t / SIDE);
    let r0 = p.tiles.first.load(tile) as usize;
    let rows = p.tiles.end.load(tile) as usize - r0;
    let c0 = p.tiles.src.load(tile) as usize;
    let sources = p.tiles.src_count.load(tile) as usize;
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
    let range = (p.tiles.offsets.load(r0) as usize, p.tiles.offsets.load(r0 + rows) as usize);
    count_pairs((counts, weights4), (p.tiles.coo_rows, p.tiles.columns), range, (r0, c0, P_STRIDE));

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
        m[i] = max_over(m[i], SIDE as u32);
    });
    // Each row's first source of the maximum score, scored again for the backward (none for an
    // empty row).
    let width = p.score_width as usize;
    let mut first = [u32::MAX; ROWS_PER];
    if width != 0 {
        unroll!(ROWS_PER, |i| {
            unroll!(2, |half| {
                unroll!(HALF, |j| {
                    let source = (tx + SIDE * (half * HALF + j)) as u32;
                    if m[i] != f32::NEG_INFINITY && s[i][half][j] == m[i] {
                        first[i] = first[i].min(source);
                    }
                });
            });
            first[i] = min_over(first[i], SIDE as u32);
        });
    }
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
        l[i] = sum_over(l[i], SIDE as u32);
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
                if first[i] == u32::MAX {
                    p.stats.store(2 * at, m[i]);
                }
                p.stats.store(2 * at + 1, inv[i]);
            }
        });
    }

    // 4. The restated maxima (see [`super`]): each row's first source of the maximum scored
    // again, the sources kept in the free staging region.
    if width != 0 {
        let firsts = shared.slice::<u32>(P_BYTES, TILE_ROWS);
        simt::sync_threads();
        if tx == 0 {
            unroll!(ROWS_PER, |i| {
                firsts.store(ty + SIDE * i, first[i]);
            });
        }
        simt::sync_threads();
        let term = |row: usize, source: usize, f| {
            gt_term((p.q, p.k), (r0 + row, c0 + source, h), (heads, feat, width), p.scale_log2, f)
        };
        let store = |row: usize, m| p.stats.store(2 * ((r0 + row) * heads + h), m);
        restate_maxima((rows, feat, width), |row| firsts.load(row), term, store);
    }
}
