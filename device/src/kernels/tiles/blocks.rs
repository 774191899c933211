//! GT's backward over **closed blocks**: ranges of at most [`BLOCK_NODES`] consecutive nodes of a
//! square graph whose edges all stay inside (every edge of a block's rows comes from a node of the
//! block, so every edge of its nodes as sources goes to a row of the block: the graphs of a batch
//! of small graphs, several small ones to a block). One block of threads per closed block and
//! head computes its rows' `dq` and its nodes' `dk` and `dv` whole, from the block's queries,
//! keys, values and output gradients staged in shared memory, as dense products over every
//! (row, source) pair of the block, the pairs that are not edges masked out: the score and
//! `dO·v` of each pair once, where the row and column passes each recompute them per edge from
//! features gathered from L2.
//!
//! # Grid mapping
//! Block `b` takes closed block `b / H` and head `b % H`, [`TILE_THREADS`] threads as a 16 × 16
//! grid; a block of `n` nodes computes `⌈n/16⌉` groups of 16 rows and of 16 sources in the pair
//! products and `⌈n/32⌉` pairs of nodes per thread in the gradients (one copy of each loop per
//! count, chosen per block, so no loop tests a group).
//! 0. Counts: each pair's number of edges (duplicates count), from the block's contiguous range
//!    of CSR edges by shared-memory integer atomics (exact, so order-free).
//! 1. Scores: thread `(ty, tx)` holds rows `ty + 16·i` and sources `tx + 16·j` (`i, j < 10`), each
//!    score `(c·log2 e·q)·kᵀ` a sequential multiply-add chain over the features in order, staged
//!    as the dense tile forward stages them ([`super::dense`]): **the same bits**, so the
//!    forward's saved maximum is exactly the highest of these scores (the plan runs this backward
//!    only after that forward, with its maxima not restated). Then each pair's weight
//!    `α = n·2^(s − m)·(1/l)` from the forward's `(m, 1/l)`, over the counts.
//! 2. Chunk by chunk of [`SCORE_CHUNK`] features of `dO` and `v`: `dP = dO·vᵀ` accumulated as the
//!    scores are, and the chunk's `dv_u = Σ_i α_iu·dO_i`, thread `(ty, tx)` taking nodes
//!    `32·c + 2·ty + k` (`k < 2`) and features `2·tx, 2·tx + 1`. Then `D_i = Σ_j α_ij·dP_ij`
//!    (a row's 16 threads by butterfly) and `ds_ij = α_ij·(dP_ij − D_i)`, over the weights.
//! 3. Chunk by chunk of features of `k` and `q`, with step 2's thread layout:
//!    `dq_u = c·Σ_j ds_uj·k_j` and `dk_u = c·Σ_i ds_iu·q_i`.
//!
//! Every sum over nodes runs in node order.
//!
//! # Shared memory
//! [`SHARED_BYTES`]: one `BLOCK_NODES × (BLOCK_NODES + 4)` matrix of floats (the counts as u32,
//! then the weights, then the score gradients, each replacing the last in place) and two buffers
//! of two staged chunks of `BLOCK_NODES` rows; one block per multiprocessor. The chunks are
//! copied asynchronously (`cp.async`), each step's pair of chunks into one buffer while the
//! block computes on the other's.
//!
//! # Numerics
//! f32; sums of at most [`BLOCK_NODES`] terms, a pair with no edge adding an exact zero. No
//! atomics on floats: the same inputs give the same bits.

use super::{SCORE_CHUNK, STRIDE, TILE_THREADS, count_pairs, scale_staged, stage_async};
use crate::abi::GtBlocksBwdParams;
use crate::kernels::common::reduce::sum_over;
use crate::kernels::common::softmax::weight;
use crate::kernels::common::unroll::{by_count, unroll};
use crate::simt::{self, F2, F4, GSlice, SharedSlice, math};

/// Nodes of a closed block at most.
pub const BLOCK_NODES: usize = 160;
/// Threads along each side of the block's 16 × 16 grid.
const SIDE: usize = 16;
/// Rows (and groups of sources) per thread in the pair products, nodes per thread in the
/// gradients.
const PER: usize = BLOCK_NODES / SIDE;
/// Floats per row of the matrix.
const M_STRIDE: usize = BLOCK_NODES + 4;
/// Bytes of the matrix.
const M_BYTES: usize = BLOCK_NODES * M_STRIDE * 4;
/// Bytes of one staged chunk.
const CHUNK_BYTES: usize = BLOCK_NODES * STRIDE * 4;
const _: () = assert!(TILE_THREADS as usize == SIDE * SIDE && 2 * SIDE == SCORE_CHUNK && PER.is_multiple_of(2));
/// Dynamic shared memory of a block: the matrix and two buffers of two chunks.
pub const SHARED_BYTES: u32 = (M_BYTES + 4 * CHUNK_BYTES) as u32;

crate::kernel! {
    /// GT's backward over the closed blocks of [`GtBlocksBwdParams`], staging 4 bytes at a time
    /// (any `F`).
    pub kernel GT_BLOCKS_BWD_W1 = fn gt_blocks_bwd_w1(p: &GtBlocksBwdParams) {
        gt_blocks_backward::<false>(p)
    }
}

crate::kernel! {
    /// GT's backward over the closed blocks of [`GtBlocksBwdParams`], staging 16 bytes at a time
    /// (`F % 4 == 0`).
    pub kernel GT_BLOCKS_BWD_W4 = fn gt_blocks_bwd_w4(p: &GtBlocksBwdParams) {
        gt_blocks_backward::<true>(p)
    }
}

/// `per!(|i| { body })`: runs `body` with `i = 0, 1, …, PER − 1` written out as straight-line
/// code, as [`unroll!`] does for at most 8 (and with literal indices, which keep the emulator's
/// build fast: computed ones made it take many minutes).
macro_rules! per {
    (|$i:ident| $body:block) => {{
        const { assert!(PER == 10, "per! writes out 10 iterations") };
        per!(@each $i, $body, 0 1 2 3 4 5 6 7 8 9)
    }};
    (@each $i:ident, $body:block, $($k:literal)*) => {{
        $(
            {
                let $i: usize = $k;
                $body
            }
        )*
    }};
}

/// A staged chunk of `BLOCK_NODES` rows of [`STRIDE`] floats, as floats, pairs and quads.
#[derive(Clone, Copy)]
struct Chunk {
    f1: SharedSlice<f32>,
    f2: SharedSlice<F2>,
    f4: SharedSlice<F4>,
}

impl Chunk {
    /// The `index`-th chunk after the matrix.
    #[inline(always)]
    fn at(shared: &simt::SharedMem, index: usize) -> Self {
        let at = M_BYTES + index * CHUNK_BYTES;
        let floats = BLOCK_NODES * STRIDE;
        Self { f1: shared.slice(at, floats), f2: shared.slice(at, floats / 2), f4: shared.slice(at, floats / 4) }
    }
}

/// Where a block's features are: the block's nodes `(first, n)`, the rows it stages (`n`
/// rounded up to a group of 16) and the head's features `(row_len, col, feat)` in `[N, H, F]`.
#[derive(Clone, Copy)]
struct Block {
    first: usize,
    n: usize,
    rows: usize,
    row_len: usize,
    col: usize,
}

impl Block {
    /// Starts copying features `[f0, f0 + valid)` of the block's nodes of `src` into `dst` (zero
    /// past them; [`stage_async`]).
    #[inline(always)]
    fn stage<const WIDE: bool>(&self, dst: Chunk, src: GSlice<f32>, (f0, valid): (usize, usize)) {
        stage_async::<WIDE, true>(
            (dst.f1, dst.f4),
            self.rows,
            src,
            (self.first, self.n),
            (self.row_len, self.col + f0, valid),
        );
    }
}

/// Adds `a_r·b_c` over a staged chunk of features to `acc` for every pair of thread `(ty, tx)`
/// (rows `ty + 16·i`, sources `tx + 16·j` of the block's `G` groups of 16), each a sequential
/// multiply-add chain over the features in order.
#[inline(always)]
fn pair_products<const G: usize>(acc: &mut [[f32; PER]; PER], (sa, sb): (Chunk, Chunk), (ty, tx): (usize, usize)) {
    let mut f4 = 0;
    while f4 < SCORE_CHUNK / 4 {
        let mut av = [F4::default(); PER];
        per!(|i| {
            if i < G {
                av[i] = sa.f4.load((ty + SIDE * i) * (STRIDE / 4) + f4);
            }
        });
        per!(|j| {
            if j < G {
                let bv = sb.f4.load((tx + SIDE * j) * (STRIDE / 4) + f4);
                per!(|i| {
                    if i < G {
                        let mut x = acc[i][j];
                        unroll!(4, |c| {
                            x = math::fma(av[i].0[c], bv.0[c], x);
                        });
                        acc[i][j] = x;
                    }
                });
            }
        });
        f4 += 1;
    }
}

/// Thread `ty`'s `i`-th node in the gradients: the pairs `32·c + 2·ty + k` (`i = 2·c + k`), so
/// that `P` pairs per thread cover the block's nodes rounded up to 32.
#[inline(always)]
fn grad_node(i: usize, ty: usize) -> usize {
    2 * SIDE * (i / 2) + 2 * ty + i % 2
}

/// Thread `(ty, tx)`'s sums `Σ_r m_ru·x_r` over the block's `n` nodes `r`, for its nodes
/// `u = grad_node(i, ty)` (`i < 2·P`) and the features `2·tx, 2·tx + 1` of the staged chunk `x`:
/// a column of the matrix `m` against the chunk, in node order.
#[inline(always)]
fn column_sums<const P: usize>(m: SharedSlice<F2>, x: Chunk, n: usize, (ty, tx): (usize, usize)) -> [F2; PER] {
    let mut acc = [F2::default(); PER];
    let mut r = 0;
    while r < n {
        let xv = x.f2.load(r * (STRIDE / 2) + tx);
        let at = r * (M_STRIDE / 2) + ty;
        unroll!(PER / 2, |c| {
            if c < P {
                let w = m.load(at + SIDE * c);
                unroll!(2, |k| {
                    unroll!(2, |f| {
                        acc[2 * c + k].0[f] = math::fma(w.0[k], xv.0[f], acc[2 * c + k].0[f]);
                    });
                });
            }
        });
        r += 1;
    }
    acc
}

/// Thread `(ty, tx)`'s sums `Σ_j m_uj·x_j` over the block's nodes `j` (in quads up to `quads`),
/// for its nodes `u = grad_node(i, ty)` (`i < 2·P`) and the features `2·tx, 2·tx + 1` of the
/// staged chunk `x`: a row of the matrix `m` against the chunk, in node order. A quad of the row
/// a load: per 4 nodes, 4 loads of `x` and `2·P` of `m` for `16·P` multiply-adds.
#[inline(always)]
fn row_sums<const P: usize>(m: SharedSlice<F4>, x: Chunk, quads: usize, (ty, tx): (usize, usize)) -> [F2; PER] {
    let mut acc = [F2::default(); PER];
    let mut j4 = 0;
    while j4 < quads {
        let xv: [F2; 4] = core::array::from_fn(|c| x.f2.load((4 * j4 + c) * (STRIDE / 2) + tx));
        per!(|i| {
            if i < 2 * P {
                let w = m.load(grad_node(i, ty) * (M_STRIDE / 4) + j4);
                unroll!(4, |c| {
                    unroll!(2, |f| {
                        acc[i].0[f] = math::fma(w.0[c], xv[c].0[f], acc[i].0[f]);
                    });
                });
            }
        });
        j4 += 1;
    }
    acc
}

/// GT's backward over the closed blocks of [`GtBlocksBwdParams`] (`block.x = TILE_THREADS`, grid
/// `B·H`, [`SHARED_BYTES`] of dynamic shared memory); `WIDE` stages 16 bytes at a time and needs
/// `F % 4 == 0`.
#[inline(always)]
fn gt_blocks_backward<const WIDE: bool>(p: &GtBlocksBwdParams) {
    let heads = p.blocks.heads as usize;
    let b = simt::block_idx().x as usize;
    let (block, h) = (b / heads, b % heads);
    if block >= p.blocks.count as usize {
        return;
    }
    let t = simt::thread_idx().x as usize;
    let (tx, ty) = (t % SIDE, t / SIDE);
    let first = p.blocks.first.load(block) as usize;
    let n = p.blocks.first.load(block + 1) as usize - first;
    // Groups of 16 nodes in the pair products, pairs of nodes per thread in the gradients.
    let (groups, pairs) = (n.div_ceil(SIDE), n.div_ceil(2 * SIDE));
    let feat = p.feat as usize;
    let nodes = Block { first, n, rows: groups * SIDE, row_len: heads * feat, col: h * feat };
    let shared = simt::dynamic_shared();
    let counts = shared.slice::<u32>(0, BLOCK_NODES * M_STRIDE);
    let matrix = shared.slice::<f32>(0, BLOCK_NODES * M_STRIDE);
    let matrix2 = shared.slice::<F2>(0, BLOCK_NODES * M_STRIDE / 2);
    let matrix4 = shared.slice::<F4>(0, BLOCK_NODES * M_STRIDE / 4);
    // Step `step`'s chunks: the scores' (`q`, `k`), then `dP`'s (`dO`, `v`), then the
    // gradients' (`k`, `q`), each over every chunk of features, in buffers taken in turn.
    let chunks = feat.div_ceil(SCORE_CHUNK);
    let steps = 3 * chunks;
    let buffer = |step: usize| (Chunk::at(&shared, 2 * (step % 2)), Chunk::at(&shared, 2 * (step % 2) + 1));
    let features = |step: usize| {
        let f0 = (step % chunks) * SCORE_CHUNK;
        (f0, (feat - f0).min(SCORE_CHUNK))
    };
    let issue = |step: usize| {
        let (sa, sb) = buffer(step);
        let (a, b) = match step / chunks {
            0 => (p.q, p.k),
            1 => (p.d_out, p.v),
            _ => (p.k, p.q),
        };
        nodes.stage::<WIDE>(sa, a, features(step));
        nodes.stage::<WIDE>(sb, b, features(step));
    };
    // Step `step`'s chunks landed (the queries scaled as the dense tile forward stages them) and
    // shown to the block, and the next step's started into the other buffer (every thread is
    // done with it: this barrier follows its last use).
    let arrive = |step: usize| {
        simt::async_wait_all();
        if step < chunks {
            let sa = buffer(step).0;
            scale_staged::<WIDE>((sa.f1, sa.f4), nodes.rows, p.scale_log2);
        }
        simt::sync_threads();
        if step + 1 < steps {
            issue(step + 1);
        }
    };
    let pair = |i: usize, j: usize| (ty + SIDE * i) * M_STRIDE + tx + SIDE * j;
    // Thread `(ty, tx)`'s result for node `grad_node(i, ty)`, features `2·tx + f` of the chunk
    // from `f0`.
    let store = |out: simt::GSliceMut<f32>, (f0, valid): (usize, usize), sums: [F2; PER], factor: f32| {
        per!(|i| {
            let node = grad_node(i, ty);
            if node < n {
                let base = (first + node) * nodes.row_len + nodes.col + f0 + 2 * tx;
                unroll!(2, |f| {
                    if 2 * tx + f < valid {
                        out.store(base + f, sums[i].0[f] * factor);
                    }
                });
            }
        });
    };

    // 0. Each pair's edge count: the block's edges are a contiguous range of the CSR (the first
    // chunks on their way meanwhile).
    if steps > 0 {
        issue(0);
    }
    let range = (p.blocks.offsets.load(first) as usize, p.blocks.offsets.load(first + n) as usize);
    count_pairs((counts, matrix4), (p.blocks.coo_rows, p.blocks.columns), range, (first, first, M_STRIDE));

    // 1. Scores as the dense tile forward computes them, then the weights over the counts (the
    // first barrier also ends the counting).
    let mut acc = [[0.0f32; PER]; PER];
    let mut step = 0;
    while step < chunks {
        arrive(step);
        by_count!(groups, [1 2 3 4 5 6 7 8 9], 10, pair_products, (&mut acc, buffer(step), (ty, tx)));
        step += 1;
    }
    per!(|i| {
        let row = ty + SIDE * i;
        if i < groups {
            let (mut m, mut inv) = (0.0f32, 0.0f32);
            if row < n {
                let at = (first + row) * heads + h;
                (m, inv) = (p.stats.load(2 * at), p.stats.load(2 * at + 1));
            }
            per!(|j| {
                if j < groups {
                    let at = pair(i, j);
                    let count = counts.load(at);
                    let a = if count == 0 { 0.0 } else { weight(acc[i][j], m) * count as f32 * inv };
                    matrix.store(at, a);
                }
            });
        }
    });

    // 2. dP = dO·vᵀ and dv, chunk by chunk; then D and the score gradients.
    let mut acc = [[0.0f32; PER]; PER];
    while step < 2 * chunks {
        arrive(step);
        let (sa, sb) = buffer(step);
        by_count!(groups, [1 2 3 4 5 6 7 8 9], 10, pair_products, (&mut acc, (sa, sb), (ty, tx)));
        let sums = by_count!(pairs, [1 2 3 4], 5, column_sums, (matrix2, sa, n, (ty, tx)));
        store(p.dv, features(step), sums, 1.0);
        step += 1;
    }
    // Every thread's weights read before any is replaced.
    simt::sync_threads();
    per!(|i| {
        if i < groups {
            let mut d = 0.0f32;
            per!(|j| {
                if j < groups {
                    d = math::fma(matrix.load(pair(i, j)), acc[i][j], d);
                }
            });
            let d = sum_over(d, SIDE as u32);
            per!(|j| {
                if j < groups {
                    let at = pair(i, j);
                    matrix.store(at, matrix.load(at) * (acc[i][j] - d));
                }
            });
        }
    });

    // 3. dq and dk, chunk by chunk.
    let (quads, grad_scale) = (n.div_ceil(4), p.grad_scale);
    while step < steps {
        arrive(step);
        let (sa, sb) = buffer(step);
        let sums = by_count!(pairs, [1 2 3 4], 5, row_sums, (matrix4, sa, quads, (ty, tx)));
        store(p.dq, features(step), sums, grad_scale);
        let sums = by_count!(pairs, [1 2 3 4], 5, column_sums, (matrix2, sb, n, (ty, tx)));
        store(p.dk, features(step), sums, grad_scale);
        step += 1;
    }
}
