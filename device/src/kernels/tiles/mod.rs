//! GT's (and so AGNN's) forward over **tiles** of the graph: for graphs made of small dense
//! blocks (a batch of small graphs), one block per tile and head stages the tile's queries, keys
//! and values in shared memory once, instead of gathering a key and a value per edge from L2.
//!
//! A tile is at most [`TILE_ROWS`] consecutive rows whose columns all lie in at most
//! [`TILE_SOURCES`] consecutive source nodes. On such a graph the per-edge work of the row passes
//! (a gather with its index arithmetic, a butterfly sum, an online-softmax update per edge and
//! head) is what bounds them, not bytes: the features are read from L2 many times over.
//!
//! Two kernels take the same tiles ([`crate::abi::GtTilesParams`]):
//! - [`dense`]: every (row, source) pair of the tile as two register-tiled dense products, the
//!   pairs that are not edges masked out; pays for the tile's empty pairs, so it wins on
//!   well-filled tiles.
//! - [`edges`]: the tile's edges one by one, each scored and aggregated from shared memory; pays
//!   per edge, so it wins on sparser tiles.
//!
//! Both write `out`, `lse` and the backward's `(m, 1/l)` as the row passes do
//! ([`crate::kernels::attention::forward`]), so the backward is the ordinary one; scores in
//! base-2 units with the row's exact maximum (no rescaling), f32, no atomics on floats: the same
//! inputs give the same bits.
//!
//! The backward recomputes each edge's α as `2^(s − m)·(1/l)` with its own arithmetic, which sums
//! a score's features in another order than the tiles do: at large scores the few ulps between
//! the two put the highest-scoring edge's α measurably off 1/l. So the tiles **restate** `m`:
//! each row's first highest-scoring edge is scored again as the backward's row pass sums it
//! (`restate_maxima`), and that is the row's maximum in the stats.

pub mod blocks;
pub mod columns;
pub mod dense;
pub mod edges;

use crate::kernels::common::reduce::sum_over;
use crate::kernels::common::unroll::unroll;
use crate::simt::{self, F4, GSlice, SharedSlice, WARP_SIZE};

/// Rows of a tile at most.
pub const TILE_ROWS: usize = 64;
/// Source nodes of a tile at most.
pub const TILE_SOURCES: usize = 256;
/// Threads of a block.
pub const TILE_THREADS: u32 = 256;
/// Features per staged chunk of queries and keys.
pub const SCORE_CHUNK: usize = 32;
/// Features per staged chunk of values.
pub const VALUE_CHUNK: usize = 32;
const _: () = assert!(VALUE_CHUNK == SCORE_CHUNK);
/// Floats per staged row of a chunk (padded by 4, so a warp's 16-byte reads of rows 16 bytes
/// apart in banks take the fewest wavefronts).
const STRIDE: usize = SCORE_CHUNK + 4;

/// Loads one thread has in flight at once while counting.
const IN_FLIGHT: usize = 4;

/// Starts copying ([`SharedSlice::copy_async`]) features `[col, col + valid)` of the `count`
/// nodes from `first` on (rows of `row_len` floats in `src`) into the first `rows` rows of `dst`
/// ([`STRIDE`] floats apart), zeros past `count` rows and past `valid` features: a chunk of
/// [`SCORE_CHUNK`] features ([`stage_rows_async`], `ROLLED` as there).
#[inline(always)]
fn stage_async<const WIDE: bool, const ROLLED: bool>(
    dst: (SharedSlice<f32>, SharedSlice<F4>),
    rows: usize,
    src: GSlice<f32>,
    nodes: (usize, usize),
    at: (usize, usize, usize),
) {
    stage_rows_async::<WIDE, ROLLED>(dst, (rows, SCORE_CHUNK, STRIDE), src, nodes, at)
}

/// Starts copying ([`SharedSlice::copy_async`]) features `[col, col + valid)` of the `count`
/// nodes from `first` on (rows of `row_len` floats in `src`) into the first `rows` rows of
/// `width` features of `dst`, `stride` floats apart, zeros past `count` rows and past `valid`
/// features, without the thread waiting: every copy of the thread in flight at once. The words
/// land at the thread's [`simt::async_wait_all`]; then [`scale_staged`] may scale the thread's own
/// words, and a barrier shows them to the block. With `WIDE` (`row_len`, `col`, `valid`, `width`
/// and `stride` multiples of 4) each copy moves 16 bytes, a warp's 128 contiguous bytes of rows;
/// else 4. `ROLLED` keeps the loop from being unrolled ([`simt::no_unroll`]): the closed blocks'
/// backward (255 registers, about 16 k instructions) was 2 % slower with it unrolled on an H100
/// (the cause not profiled; its code size is the suspect), while the tile forwards gain from the
/// unrolled copies.
#[inline(always)]
fn stage_rows_async<const WIDE: bool, const ROLLED: bool>(
    (dst, dst4): (SharedSlice<f32>, SharedSlice<F4>),
    (rows, width, stride): (usize, usize, usize),
    src: GSlice<f32>,
    (first, count): (usize, usize),
    (row_len, col, valid): (usize, usize, usize),
) {
    // Words (16 or 4 bytes) per row, of the destination and of the source.
    let unit = if WIDE { 4 } else { 1 };
    let (words, stride, row_len) = ((width / unit) as u32, stride / unit, row_len / unit);
    // Word `i` of the region (its row `i / words`, word `i % words`) is thread `i % threads`'s,
    // so a thread's words step by `threads`: `threads / words` rows and `threads % words` words
    // (no index arithmetic beyond adds inside the loop; nothing but the row varies when the
    // block covers whole rows, as with a chunk of SCORE_CHUNK features).
    if words == 0 {
        return;
    }
    let threads = TILE_THREADS;
    let (dr, dw) = (threads / words, threads % words);
    let t = simt::thread_idx().x;
    let (mut r, mut w) = (t / words, t % words);
    let (rows, count, valid) = (rows as u32, count as u32, (valid / unit) as u32 + (valid % unit != 0) as u32);
    // The source as 16-byte words, cast (and its alignment checked) once.
    let src4 = if WIDE { Some(src.cast::<F4>()) } else { None };
    // The source word of row `r`'s first word, and the destination's.
    let mut src_row = (first + r as usize) * row_len + col / unit;
    let mut dst_row = r as usize * stride;
    while r < rows {
        if ROLLED {
            simt::no_unroll();
        }
        let ok = r < count && w < valid;
        let (to, from) = (dst_row + w as usize, src_row + w as usize);
        match src4 {
            Some(src4) => dst4.copy_async(to, src4, from, ok),
            None => dst.copy_async(to, src, from, ok),
        }
        r += dr;
        src_row += dr as usize * row_len;
        dst_row += dr as usize * stride;
        w += dw;
        if w >= words {
            w -= words;
            r += 1;
            src_row += row_len;
            dst_row += stride;
        }
    }
}

/// Multiplies by `scale` the words this thread copied with [`stage_async`] into the first `rows`
/// rows of `dst`, after its [`simt::async_wait_all`] and before the barrier that shows them.
#[inline(always)]
fn scale_staged<const WIDE: bool>((dst, dst4): (SharedSlice<f32>, SharedSlice<F4>), rows: usize, scale: f32) {
    let threads = TILE_THREADS as usize;
    let mut i = simt::thread_idx().x as usize;
    if WIDE {
        let quads = SCORE_CHUNK / 4;
        while i < rows * quads {
            let at = (i / quads) * (STRIDE / 4) + i % quads;
            dst4.store(at, F4(dst4.load(at).0.map(|v| v * scale)));
            i += threads;
        }
    } else {
        while i < rows * SCORE_CHUNK {
            let at = (i / SCORE_CHUNK) * STRIDE + i % SCORE_CHUNK;
            dst.store(at, dst.load(at) * scale);
            i += threads;
        }
    }
}

/// Each (row, source) pair's number of edges, in `counts` (rows `stride` words apart, the pair
/// `(r, c)` at `(r − r0)·stride + c − c0`), from the contiguous range `[start, end)` of CSR edges
/// (their rows in `coo_rows`, their sources in `columns`): `counts4`, the same words as quads,
/// zeroed first, then a barrier, then one shared-memory integer atomic per edge (exact, so
/// order-free), [`IN_FLIGHT`] edges' loads in flight per thread. Every thread of the block calls
/// it; the caller's next barrier ends the counting.
#[inline(always)]
fn count_pairs(
    (counts, counts4): (SharedSlice<u32>, SharedSlice<F4>),
    (coo_rows, columns): (GSlice<u32>, GSlice<u32>),
    (start, end): (usize, usize),
    (r0, c0, stride): (usize, usize, usize),
) {
    let threads = TILE_THREADS as usize;
    let t = simt::thread_idx().x as usize;
    let mut i = t;
    while i < counts4.len() {
        counts4.store(i, F4::default());
        i += threads;
    }
    simt::sync_threads();
    let mut e = start + t;
    while e < end {
        let mut pairs = [(0u32, 0u32); IN_FLIGHT];
        unroll!(IN_FLIGHT, |u| {
            if e + u * threads < end {
                pairs[u] = (coo_rows.load(e + u * threads), columns.load(e + u * threads));
            }
        });
        unroll!(IN_FLIGHT, |u| {
            if e + u * threads < end {
                let (row, source) = (pairs[u].0 as usize - r0, pairs[u].1 as usize - c0);
                counts.atomic_add(row * stride + source, 1);
            }
        });
        e += IN_FLIGHT * threads;
    }
}

/// Each row's maximum restated ([`super`]): the score of row `row`'s first highest-scoring
/// source `first(row)` (`u32::MAX`: none, the row keeps its maximum) summed as the row passes sum
/// it ([`crate::kernels::attention::Score::score`] over the lane layout of loads of `width`
/// features, [`crate::abi::LaneMap::slot`]), passed to `store(row, m)`. The row passes spread a
/// head's `F / width` vectors over `L = min(2^⌈log2(F/width)⌉, 32)` lanes, lane `ℓ` adding the
/// terms of vectors `ℓ, ℓ + L, …` in that order from 0, then a butterfly over the `L` lanes
/// ([`crate::kernels::common::lanes::head_sum`]); here each aligned group of `L` threads takes
/// one row, so a block takes `256 / L` rows at once. `term(row, source, f)` is the term of the
/// vector of features `[f, f + width)`, summed as `Vector::dot` sums it ([`dot_as_vector`]).
/// Every thread of the block calls it (`width`, 1 or 4, and `rows` block-uniform).
#[inline(always)]
pub(super) fn restate_maxima(
    (rows, feat, width): (usize, usize, usize),
    first: impl Fn(usize) -> u32,
    term: impl Fn(usize, usize, usize) -> f32,
    store: impl Fn(usize, f32),
) {
    let vectors = feat / width;
    let pow2 = vectors.next_power_of_two();
    let lanes = pow2.min(WARP_SIZE as usize);
    let slots = (pow2 / WARP_SIZE as usize).max(1);
    let t = simt::thread_idx().x as usize;
    let (group, lane) = (t / lanes, t % lanes);
    let groups = TILE_THREADS as usize / lanes;
    let mut base = 0;
    while base < rows {
        let row = base + group;
        let source = if row < rows { first(row) } else { u32::MAX };
        let mut v = 0.0f32;
        if source != u32::MAX {
            let mut slot = 0;
            while slot < slots {
                let vector = slot * lanes + lane;
                v += if vector < vectors { term(row, source as usize, vector * width) } else { 0.0 };
                slot += 1;
            }
        }
        // Every lane takes part in the butterfly; each group sums its own row.
        let m = sum_over(v, lanes as u32);
        if source != u32::MAX && lane == 0 {
            store(row, m);
        }
        base += groups;
    }
}

/// `Vector::dot` of `x` and `y` over `width` (1 or 4) features: `x₀y₀`, or
/// `(x₀y₀ + x₁y₁) + (x₂y₂ + x₃y₃)`.
#[inline(always)]
pub(super) fn dot_as_vector(width: usize, x: F4, y: F4) -> f32 {
    let (a, b) = (x.0, y.0);
    if width == 4 { (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3]) } else { a[0] * b[0] }
}

/// Features `[f, f + width)` of `x` from `at` (`width` 1 or 4; 4 only where `at + f` is a
/// multiple of 4), zero past them.
#[inline(always)]
pub(super) fn load_vector(x: GSlice<f32>, at: usize, width: usize) -> F4 {
    if width == 4 { x.cast::<F4>().load(at / 4) } else { F4([x.load(at), 0.0, 0.0, 0.0]) }
}

/// GT's term of [`restate_maxima`] for row `i`, source `j`, head `head`: the row passes'
/// `(c·log2 e·q_i)·k_j` over one vector, the query scaled feature by feature first.
#[inline(always)]
pub(super) fn gt_term(
    (q, k): (GSlice<f32>, GSlice<f32>),
    (i, j, head): (usize, usize, usize),
    (heads, feat, width): (usize, usize, usize),
    scale_log2: f32,
    f: usize,
) -> f32 {
    let x = load_vector(q, (i * heads + head) * feat + f, width);
    let y = load_vector(k, (j * heads + head) * feat + f, width);
    dot_as_vector(width, F4(x.0.map(|v| scale_log2 * v)), y)
}
