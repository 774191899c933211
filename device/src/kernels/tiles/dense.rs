//! The dense tile forward: every (row, source) pair of a tile as two dense products in shared
//! memory, the pairs that are not edges masked out (their share of the products is the price,
//! which the planner weighs by the tiles' fill).
//!
//! # Grid mapping
//! Block `b` takes tile `b / H` and head `b % H`, [`TILE_THREADS`] threads as a 16 × 16 grid:
//! thread `(ty, tx)` holds the scores of rows `ty + 16·i` (`i < 4`) and sources `tx + 16·j`
//! (`j < 16`; the groups of 16 sources past the tile's are skipped: one copy of the score
//! products per count of groups). In the aggregation thread `t` takes rows `t / 8 % 16 + 16·i`
//! (`i < 4`), features `4·(t % 8)…4·(t % 8) + 3` of each chunk of [`VALUE_CHUNK`], and the first
//! (`t < 128`) or second half of the tile's quads of sources: 16 multiply-adds per shared load.
//! 0. Counts: each (row, source) pair's number of edges (duplicates count, a pair with none is
//!    masked), from the tile's contiguous range of CSR edges (their rows from the COO row array)
//!    by shared-memory integer atomics (exact, so order-free).
//! 1. Scores: `s = (c·log2 e·q)·kᵀ` over chunks of [`SCORE_CHUNK`] features staged in shared
//!    memory (16-byte copies when `F % 4 == 0`, the `_w4` entry, else 4: `_w1`; the queries
//!    scaled in place once landed), each score a sequential multiply-add chain over the features
//!    in order.
//! 2. Softmax: the exact row maximum and sum (a row's 16 threads combine theirs by butterfly,
//!    so all hold the same bits); the weights `n·2^(s − m)` go to shared memory over the counts,
//!    and each row's `1/l` to the last float of its row's padding. Its loops run group by group
//!    of 16 sources, one test of the (block-wide) group count each.
//! 3. Aggregation: `out = (Σ_j w_ij·v_j)·(1/l)` over chunks of [`VALUE_CHUNK`] features of the
//!    staged values: each half of the sources summed in source order, the second half's sums
//!    passed through the buffer's free query region and added to the first's; then `lse` and
//!    the backward's `(m, 1/l)`, as the row passes write them
//!    ([`crate::kernels::attention::forward`]), so the backward is the ordinary one.
//!
//! # Shared memory
//! [`Layout`], sized by the launch's widest tile ([`crate::abi::TileList::source_cap`], rounded
//! up to a group of [`SIDE`]): the `TILE_ROWS × (sources + 4)` counts, then weights (u32, then
//! f32, in place), and staging buffers, each a query and a key chunk, or a value chunk (rows
//! padded by 4 floats, so a warp's 16-byte reads of 16 rows take the fewest wavefronts). The
//! chunks are copied asynchronously (`cp.async`), the next one while the block computes on the
//! current one, in two buffers where two blocks still fit a multiprocessor (tiles of up to
//! [`DOUBLE_SOURCES`] sources), else in one, copied between the chunks' products.
//!
//! # Numerics
//! f32; scores in base-2 units with the row's exact maximum (no rescaling), one `ex2.approx` per
//! pair, sums of at most [`TILE_SOURCES`] terms, the normalisation by `rcp.approx` as in the row
//! passes. No atomics on floats: the same inputs give the same bits.

use super::{
    SCORE_CHUNK, STRIDE, TILE_ROWS, TILE_SOURCES, TILE_THREADS, VALUE_CHUNK, count_pairs, gt_term, restate_maxima,
    scale_staged, stage_async,
};
use crate::abi::GtTilesParams;
use crate::kernels::common::reduce::{max_over, min_over, sum_over};
use crate::kernels::common::softmax::{log_sum_exp, weight};
use crate::kernels::common::unroll::{by_count, unroll};
use crate::simt::{self, F4, SharedSlice, math};

/// Threads along each side of the block's 16 × 16 grid: a thread's sources are groups of this
/// many, and a block computes the scores of its tile's sources rounded up to a group.
pub const SIDE: usize = 16;
/// Rows per thread.
const ROWS_PER: usize = TILE_ROWS / SIDE;
/// Quads of features of a value chunk: the aggregation's threads take one each, for 16 rows
/// apart by 16, over half the tile's sources.
const AGG_QUADS: usize = VALUE_CHUNK / 4;
/// Sources per thread, in two unrolled halves.
const HALF: usize = TILE_SOURCES / SIDE / 2;
/// Bytes of dynamic shared memory a block may take for two blocks to fit one H100 or H200
/// multiprocessor (228 KiB, of which each block's runtime reserves 1 KiB).
const TWO_PER_SM: usize = 228 * 1024 / 2 - 1024;
/// The widest tiles (sources) that still get two staging buffers with two blocks per
/// multiprocessor.
pub const DOUBLE_SOURCES: usize = 176;
const _: () = assert!(
    TILE_SOURCES == 2 * HALF * SIDE
        && TILE_THREADS as usize == SIDE * SIDE
        && TILE_THREADS as usize == 2 * SIDE * AGG_QUADS
        && Layout::new(DOUBLE_SOURCES as u32).buffers == 2
        && Layout::new(DOUBLE_SOURCES as u32 + 1).buffers == 1
        && Layout::new(TILE_SOURCES as u32).bytes() <= 227 * 1024
);

/// The shared memory of a launch whose tiles have at most `source_cap` sources.
#[derive(Clone, Copy)]
pub struct Layout {
    /// Sources the counts, weights and staged keys and values cover: the cap rounded up to a
    /// group of [`SIDE`].
    sources: usize,
    /// Floats per row of the counts and weights.
    p_stride: usize,
    /// Bytes of the counts and weights; the staging buffers follow them.
    p_bytes: usize,
    /// Bytes of one staging buffer: a query chunk, then a key chunk (or a value chunk alone).
    buffer_bytes: usize,
    /// Staging buffers, 2 or 1.
    buffers: usize,
}

impl Layout {
    /// The layout for tiles of at most `source_cap` (≤ [`TILE_SOURCES`]) sources.
    #[inline(always)]
    pub const fn new(source_cap: u32) -> Self {
        let sources = (source_cap as usize).div_ceil(SIDE) * SIDE;
        let p_stride = sources + 4;
        let p_bytes = TILE_ROWS * p_stride * 4;
        let buffer_bytes = (TILE_ROWS + sources) * STRIDE * 4;
        let buffers = if p_bytes + 2 * buffer_bytes <= TWO_PER_SM { 2 } else { 1 };
        Self { sources, p_stride, p_bytes, buffer_bytes, buffers }
    }

    /// Byte offset of the staging buffer of chunk `step` (the buffers taken in turn).
    #[inline(always)]
    const fn buffer_at(&self, step: usize) -> usize {
        self.p_bytes + (step % self.buffers) * self.buffer_bytes
    }

    /// Dynamic shared memory of a block.
    #[inline(always)]
    pub const fn bytes(&self) -> u32 {
        (self.p_bytes + self.buffers * self.buffer_bytes) as u32
    }
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

/// Adds one staged chunk's products to thread `(ty, tx)`'s scores `s` of its rows `ty + 16·i` and
/// its sources `tx + 16·j` of the tile's `G` groups of 16 (`j < G`), from the staged query and key
/// chunks `(qs4, ks4)`: each score a sequential multiply-add chain over the features in order.
#[inline(always)]
fn score_chunk<const G: usize>(
    s: &mut [[[f32; HALF]; 2]; ROWS_PER],
    (qs4, ks4): (SharedSlice<F4>, SharedSlice<F4>),
    (ty, tx): (usize, usize),
) {
    let mut f4 = 0;
    while f4 < SCORE_CHUNK / 4 {
        let mut qv = [F4::default(); ROWS_PER];
        unroll!(ROWS_PER, |i| {
            qv[i] = qs4.load((ty + SIDE * i) * (STRIDE / 4) + f4);
        });
        unroll!(2, |half| {
            unroll!(HALF, |j| {
                let group = half * HALF + j;
                if group < G {
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
}

/// GT's forward over the tiles of [`GtTilesParams`] (`block.x = TILE_THREADS`, grid `T·H`,
/// [`Layout::bytes`] of dynamic shared memory for the tiles' `source_cap`); `WIDE` stages 16
/// bytes at a time and needs `F % 4 == 0`.
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
    let layout = Layout::new(p.tiles.source_cap);
    let p_stride = layout.p_stride;
    let shared = simt::dynamic_shared();
    let counts = shared.slice::<u32>(0, TILE_ROWS * p_stride);
    let weights = shared.slice::<f32>(0, TILE_ROWS * p_stride);
    let weights4 = shared.slice::<F4>(0, TILE_ROWS * p_stride / 4);
    // Chunk `step`'s staged query chunk and key chunk.
    let staged = |step: usize| {
        let at = layout.buffer_at(step);
        let k_at = at + TILE_ROWS * STRIDE * 4;
        let (q_floats, k_floats) = (TILE_ROWS * STRIDE, layout.sources * STRIDE);
        (
            (shared.slice::<f32>(at, q_floats), shared.slice::<F4>(at, q_floats / 4)),
            (shared.slice::<f32>(k_at, k_floats), shared.slice::<F4>(k_at, k_floats / 4)),
        )
    };
    // Chunk `step` (the scores' chunks of queries and keys, then the values' chunks) started into
    // its buffer.
    let chunks = feat.div_ceil(SCORE_CHUNK);
    // Chunk `step`'s staged value chunk (at its buffer's start).
    let values = |step: usize| {
        let (at, floats) = (layout.buffer_at(step), layout.sources * STRIDE);
        (shared.slice::<f32>(at, floats), shared.slice::<F4>(at, floats / 4))
    };
    let issue = |step: usize| {
        let (q_staged, k_staged) = staged(step);
        let f0 = (step % chunks) * SCORE_CHUNK;
        let at = (row_len, h * feat + f0, (feat - f0).min(SCORE_CHUNK));
        if step < chunks {
            stage_async::<WIDE, false>(q_staged, TILE_ROWS, p.q, (r0, rows), at);
            stage_async::<WIDE, false>(k_staged, covered, p.k, (c0, sources), at);
        } else {
            let (vs, vs4) = values(step);
            stage_async::<WIDE, false>((vs, vs4), covered, p.v, (c0, sources), at);
        }
    };
    // Chunk `step` landed and shown to the block; the next one started (into the other buffer, or
    // into the only one once every thread is done with it: `done`).
    let arrive = |step: usize| {
        simt::async_wait_all();
        if step < chunks {
            scale_staged::<WIDE>(staged(step).0, TILE_ROWS, p.scale_log2);
        }
        simt::sync_threads();
        if layout.buffers == 2 && step + 1 < 2 * chunks {
            issue(step + 1);
        }
    };
    let done = |step: usize| {
        if layout.buffers == 1 && step + 1 < 2 * chunks {
            simt::sync_threads();
            issue(step + 1);
        }
    };

    // 0. Each pair's edge count: the tile's edges are a contiguous range of the CSR (the first
    // chunk on its way meanwhile).
    if chunks > 0 {
        issue(0);
    }
    let range = (p.tiles.offsets.load(r0) as usize, p.tiles.offsets.load(r0 + rows) as usize);
    count_pairs((counts, weights4), (p.tiles.coo_rows, p.tiles.columns), range, (r0, c0, p_stride));

    // 1. Scores, chunk by chunk of features (the first barrier also ends the counting).
    let mut s = [[[0.0f32; HALF]; 2]; ROWS_PER];
    let mut step = 0;
    while step < chunks {
        arrive(step);
        let (q_staged, k_staged) = staged(step);
        let groups = sources.div_ceil(SIDE);
        let staged4 = (q_staged.1, k_staged.1);
        by_count!(groups, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15], 16, score_chunk, (&mut s, staged4, (ty, tx)));
        done(step);
        step += 1;
    }

    // 2. Softmax over each row's pairs with edges (in the groups of 16 sources in use); the
    // weights replace the counts. Each loop runs group by group, one test of the group a time
    // (the same for the whole block), so no test is kept per pair.
    let pair = |i: usize, group: usize| (ty + SIDE * i) * p_stride + tx + SIDE * group;
    let groups = sources.div_ceil(SIDE);
    let mut m = [f32::NEG_INFINITY; ROWS_PER];
    unroll!(2, |half| {
        unroll!(HALF, |j| {
            if half * HALF + j < groups {
                unroll!(ROWS_PER, |i| {
                    if counts.load(pair(i, half * HALF + j)) == 0 {
                        s[i][half][j] = f32::NEG_INFINITY;
                    }
                    m[i] = m[i].max(s[i][half][j]);
                });
            }
        });
    });
    unroll!(ROWS_PER, |i| {
        m[i] = max_over(m[i], SIDE as u32);
    });
    // Each row's first source of the maximum score, scored again for the backward (none for an
    // empty row).
    let width = p.score_width as usize;
    let mut first = [u32::MAX; ROWS_PER];
    if width != 0 {
        unroll!(2, |half| {
            unroll!(HALF, |j| {
                if half * HALF + j < groups {
                    let source = (tx + SIDE * (half * HALF + j)) as u32;
                    unroll!(ROWS_PER, |i| {
                        if m[i] != f32::NEG_INFINITY && s[i][half][j] == m[i] {
                            first[i] = first[i].min(source);
                        }
                    });
                }
            });
        });
        unroll!(ROWS_PER, |i| {
            first[i] = min_over(first[i], SIDE as u32);
        });
    }
    let mut l = [0.0f32; ROWS_PER];
    unroll!(2, |half| {
        unroll!(HALF, |j| {
            if half * HALF + j < groups {
                unroll!(ROWS_PER, |i| {
                    let at = pair(i, half * HALF + j);
                    let w = weight(s[i][half][j], m[i]) * counts.load(at) as f32;
                    weights.store(at, w);
                    l[i] += w;
                });
            }
        });
    });
    unroll!(ROWS_PER, |i| {
        l[i] = sum_over(l[i], SIDE as u32);
    });
    let inv: [f32; ROWS_PER] = core::array::from_fn(|i| if l[i] > 0.0 { math::rcp(l[i]) } else { 0.0 });
    // Each row's 1/l for the aggregation's threads, in the last float of its row's padding.
    let inv_at = |row: usize| row * p_stride + p_stride - 1;
    if tx == 0 {
        unroll!(ROWS_PER, |i| {
            weights.store(inv_at(ty + SIDE * i), inv[i]);
        });
    }

    // 3. Aggregation, chunk by chunk of features: thread `(part, ag, fq)` sums rows `ag + 16·i`
    // (`i < 4`), features `4·fq…4·fq + 3` of the chunk, over the `part`th half of the tile's
    // quads of sources; the second half's sums meet the first's in the buffer's free query region.
    let (fq, ag, part) = (t % AGG_QUADS, t / AGG_QUADS % SIDE, t / (AGG_QUADS * SIDE));
    let quads = sources.div_ceil(4);
    let half = quads.div_ceil(2);
    let (j_from, j_to) = if part == 0 { (0, half) } else { (half, quads) };
    while step < 2 * chunks {
        arrive(step);
        let g0 = (step - chunks) * VALUE_CHUNK;
        let valid = (feat - g0).min(VALUE_CHUNK);
        let vs4 = values(step).1;
        let mut acc = [F4::default(); ROWS_PER];
        // The sources' quad `j4` added to `acc`, in source order.
        let quad = |acc: &mut [F4; ROWS_PER], j4: usize| {
            let mut w = [F4::default(); ROWS_PER];
            unroll!(ROWS_PER, |i| {
                w[i] = weights4.load((ag + SIDE * i) * (p_stride / 4) + j4);
            });
            unroll!(4, |c| {
                let value = vs4.load((4 * j4 + c) * (STRIDE / 4) + fq);
                unroll!(ROWS_PER, |i| {
                    unroll!(4, |k| {
                        acc[i].0[k] = math::fma(value.0[k], w[i].0[c], acc[i].0[k]);
                    });
                });
            });
        };
        let mut j4 = j_from;
        while j4 + 2 <= j_to {
            quad(&mut acc, j4);
            quad(&mut acc, j4 + 1);
            j4 += 2;
        }
        if j4 < j_to {
            quad(&mut acc, j4);
        }
        // The second half's sums, in the free region after the staged values.
        let partial = shared.slice::<F4>(layout.buffer_at(step) + layout.sources * STRIDE * 4, TILE_ROWS * STRIDE / 4);
        let at = |i: usize| (ag + SIDE * i) * (STRIDE / 4) + fq;
        if part == 1 {
            unroll!(ROWS_PER, |i| {
                partial.store(at(i), acc[i]);
            });
        }
        simt::sync_threads();
        if part == 0 {
            unroll!(ROWS_PER, |i| {
                let row = ag + SIDE * i;
                if row < rows {
                    let (other, inv) = (partial.load(at(i)), weights.load(inv_at(row)));
                    let o = F4(core::array::from_fn(|k| (acc[i].0[k] + other.0[k]) * inv));
                    let base = (r0 + row) * row_len + h * feat + g0 + 4 * fq;
                    if WIDE && 4 * fq < valid {
                        p.out.cast::<F4>().store(base / 4, o);
                    } else if !WIDE {
                        unroll!(4, |k| {
                            if 4 * fq + k < valid {
                                p.out.store(base + k, o.0[k]);
                            }
                        });
                    }
                }
            });
        }
        done(step);
        step += 1;
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
        let firsts = shared.slice::<u32>(layout.p_bytes, TILE_ROWS);
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
