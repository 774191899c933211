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

pub mod dense;
pub mod edges;

use crate::kernels::common::unroll::unroll;
use crate::simt::{self, F4, GSlice, SharedSlice};

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
