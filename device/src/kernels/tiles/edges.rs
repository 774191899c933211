//! The per-edge tile forward: the tile's queries, keys and values staged in shared memory as in
//! [`super::dense`], but only the tile's edges scored and aggregated, each from shared memory.
//! It pays per edge, not per pair, so it serves sparser tiles than the dense products do (a
//! batch of molecules, of small graphs of low degree), and a duplicate edge is simply an edge.
//!
//! # Grid mapping
//! Block `b` takes tile `b / H` and head `b % H`, [`TILE_THREADS`] threads.
//! 0. Edge list: the tile's edges are a contiguous range of the CSR; each goes to shared memory
//!    as its row and source within the tile (`row | source << 8`), with each row's first edge.
//! 1. Scores: `s = (c·log2 e·q)·k` over chunks of [`SCORE_CHUNK`] features staged in shared
//!    memory (16-byte asynchronous copies when `F % 4 == 0`, the `_w4` entry, else 4: `_w1`;
//!    all of a thread's in flight at once, [`super::stage_rows_async`]); thread `t`
//!    takes edges `t, t + 256, …`, each score a sequential multiply-add chain over the features
//!    in order, kept in shared memory between chunks.
//! 2. Softmax: a warp per row takes its exact maximum and sum (butterflies over the lanes, which
//!    stride over the row's edges); the weights `2^(s − m)` replace the scores.
//! 3. Aggregation: 8 threads per row, 4 features each of a chunk of [`VALUE_CHUNK`] staged values,
//!    `out = (Σ_e w_e·v_e)·(1/l)` over the row's edges in order, summed in blocks of
//!    [`BLOCK_EDGES`] edges (so a long row of repeated edges does not drift), and GAT's positive
//!    part's `o⁺` and `α⁺` the same way (`α⁺`'s error reaches `d el` times `D`, which may be far
//!    larger than `d el`); then `lse` and the backward's `(m, 1/l)` as the row passes write them.
//!
//! # Shared memory
//! [`shared_bytes`] of the launch's edge and source capacities (the most edges and sources of
//! any of its tiles, at most [`MAX_EDGES`] and `TILE_SOURCES`): the edge list with each edge's
//! score (later its weight) beside its pack in 8 bytes, the rows' first edges and `1/l`, then
//! one staging region for the query and key chunks, later the value chunk. A batch of graphs of
//! about a hundred nodes takes about 50 KB, so four blocks share a multiprocessor. GAT stages
//! only node scores before the value chunk, in [`gat_shared_bytes`]: a query chunk (9 KB) less.

use super::{
    IN_FLIGHT, SCORE_CHUNK, STRIDE, TILE_ROWS, TILE_SOURCES, TILE_THREADS, VALUE_CHUNK, dot_as_vector, gt_term,
    load_vector, restate_maxima, scale_staged, stage_async,
};
use crate::abi::{GatTilesParams, GatV2TilesParams, GtTilesParams, TileList};
use crate::kernels::common::reduce::{min_over, warp_max, warp_sum};
use crate::kernels::common::softmax::{BLOCK_EDGES, Blocked, log_sum_exp, weight};
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::kernels::gat::{leaky_relu, leaky_score};
use crate::simt::{self, F4, GSlice, GSliceMut, SharedSlice, WARP_SIZE, math};

/// Edges of a tile at most (its edge list and scores live in shared memory).
pub const MAX_EDGES: usize = 8192;
/// Threads per row in the aggregation, 4 features each.
const ROW_THREADS: usize = VALUE_CHUNK / 4;
/// Rows the block aggregates at once.
const ROW_GROUPS: usize = TILE_THREADS as usize / ROW_THREADS;
/// Entries of the rows' first edges (`TILE_ROWS + 1`, padded to 16 bytes).
const STARTS: usize = TILE_ROWS + 4;
/// Bits of a packed edge's row: the source sits above them.
const ROW_BITS: u32 = 8;
/// The bit of a packed edge that marks it in GAT's positive part (`el_i + er_j > 0`).
const POSITIVE: u32 = 1 << 31;
const _: () = assert!(TILE_ROWS <= 1 << ROW_BITS && TILE_SOURCES <= 1 << (31 - ROW_BITS));
// [`Tile`]'s 8-byte entries hold the pack in their low half: word `2e` of a little-endian target.
const _: () = assert!(cfg!(target_endian = "little"));
/// Byte offset of the staging region past the edge list and scores of `edge_cap` edges.
pub(super) const fn region(edge_cap: usize) -> usize {
    8 * edge_cap + 4 * STARTS + 4 * TILE_ROWS
}
/// Bytes of the staged query chunk; the key chunk follows it.
const Q_BYTES: usize = TILE_ROWS * STRIDE * 4;

/// Dynamic shared memory of a block whose tiles have at most `edge_cap` edges (a multiple of 4)
/// and `source_cap` sources.
pub const fn shared_bytes(edge_cap: usize, source_cap: usize) -> u32 {
    (region(edge_cap) + Q_BYTES + 4 * STRIDE * source_cap + 4 * SCORE_CHUNK) as u32
}

/// Dynamic shared memory of a block of GAT's kernel ([`GAT_TILE_EDGES_FWD_W4`]) over the same
/// tiles: it stages no query chunk, so its staging region holds only the node scores of the
/// tile's rows and sources, then a value chunk.
pub const fn gat_shared_bytes(edge_cap: usize, source_cap: usize) -> u32 {
    let (scores, values) = (4 * (TILE_ROWS + source_cap), 4 * STRIDE * source_cap);
    (region(edge_cap) + if scores > values { scores } else { values }) as u32
}

crate::kernel! {
    /// GT's forward over the edges of the tiles of [`GtTilesParams`], staging 4 bytes at a time
    /// (any `F`).
    pub kernel GT_TILE_EDGES_FWD_W1 = fn gt_tile_edges_fwd_w1(p: &GtTilesParams) {
        gt_tile_edges_forward::<false>(p)
    }
}

crate::kernel! {
    /// GT's forward over the edges of the tiles of [`GtTilesParams`], staging 16 bytes at a time
    /// (`F % 4 == 0`).
    pub kernel GT_TILE_EDGES_FWD_W4 = fn gt_tile_edges_fwd_w4(p: &GtTilesParams) {
        gt_tile_edges_forward::<true>(p)
    }
}

crate::kernel! {
    /// GAT's forward over the edges of the tiles of [`GatTilesParams`], staging 4 bytes at a time
    /// (any `F`).
    pub kernel GAT_TILE_EDGES_FWD_W1 = fn gat_tile_edges_fwd_w1(p: &GatTilesParams) {
        gat_tile_edges_forward::<false>(p)
    }
}

crate::kernel! {
    /// GAT's forward over the edges of the tiles of [`GatTilesParams`], staging 16 bytes at a time
    /// (`F % 4 == 0`).
    pub kernel GAT_TILE_EDGES_FWD_W4 = fn gat_tile_edges_fwd_w4(p: &GatTilesParams) {
        gat_tile_edges_forward::<true>(p)
    }
}

crate::kernel! {
    /// GATv2's forward over the edges of the tiles of [`GatV2TilesParams`], staging 4 bytes at a
    /// time (any `F`).
    pub kernel GATV2_TILE_EDGES_FWD_W1 = fn gatv2_tile_edges_fwd_w1(p: &GatV2TilesParams) {
        gatv2_tile_edges_forward::<false>(p)
    }
}

crate::kernel! {
    /// GATv2's forward over the edges of the tiles of [`GatV2TilesParams`], staging 16 bytes at a
    /// time (`F % 4 == 0`).
    pub kernel GATV2_TILE_EDGES_FWD_W4 = fn gatv2_tile_edges_fwd_w4(p: &GatV2TilesParams) {
        gatv2_tile_edges_forward::<true>(p)
    }
}

/// The tile of block `b` and its layout in shared memory: the edge list with the scores (later
/// the weights), the rows' first edges and `1/l`, and the staging region past them.
pub(super) struct Tile {
    pub(super) head: usize,
    pub(super) r0: usize,
    pub(super) rows: usize,
    pub(super) c0: usize,
    pub(super) sources: usize,
    pub(super) edges: usize,
    /// The edge list, three views of the same words: edge `e`'s pack (row and source, later
    /// [`Self::aggregate`]'s value index) at word `2e` of `packs`, its score (later its weight)
    /// at word `2e + 1` of `scores`, and both as `entries[e]` (the pack in the low half: a
    /// little-endian target, asserted), so one 8-byte load reads both.
    packs: SharedSlice<u32>,
    scores: SharedSlice<f32>,
    entries: SharedSlice<u64>,
    starts: SharedSlice<u32>,
    inv: SharedSlice<f32>,
    /// Byte offset of the staging region.
    pub(super) region: usize,
}

impl Tile {
    /// Block `b`'s tile and head (`None` past the grid's tiles), its edge list and each row's
    /// first edge written to shared memory (the caller's first barrier ends the writing).
    #[inline(always)]
    pub(super) fn load(list: &TileList) -> Option<Self> {
        let (heads, edge_cap) = (list.heads as usize, list.edge_cap as usize);
        let b = simt::block_idx().x as usize;
        let (tile, head) = (b / heads, b % heads);
        if tile >= list.count as usize {
            return None;
        }
        let t = simt::thread_idx().x as usize;
        let threads = TILE_THREADS as usize;
        let r0 = list.first.load(tile) as usize;
        let rows = list.end.load(tile) as usize - r0;
        let c0 = list.src.load(tile) as usize;
        let sources = list.src_count.load(tile) as usize;
        let shared = simt::dynamic_shared();
        let packs = shared.slice::<u32>(0, 2 * edge_cap);
        let starts = shared.slice::<u32>(8 * edge_cap, STARTS);
        let e0 = list.offsets.load(r0) as usize;
        let edges = list.offsets.load(r0 + rows) as usize - e0;
        let mut r = t;
        while r <= rows {
            starts.store(r, (list.offsets.load(r0 + r) as usize - e0) as u32);
            r += threads;
        }
        let mut base = t;
        while base < edges {
            let mut pairs = [(0u32, 0u32); IN_FLIGHT];
            unroll!(IN_FLIGHT, |u| {
                let i = base + u * threads;
                if i < edges {
                    pairs[u] = (list.coo_rows.load(e0 + i), list.columns.load(e0 + i));
                }
            });
            unroll!(IN_FLIGHT, |u| {
                let i = base + u * threads;
                if i < edges {
                    packs.store(2 * i, (pairs[u].0 - r0 as u32) | ((pairs[u].1 - c0 as u32) << ROW_BITS));
                }
            });
            base += IN_FLIGHT * threads;
        }
        Some(Self {
            head,
            r0,
            rows,
            c0,
            sources,
            edges,
            packs,
            scores: shared.slice::<f32>(0, 2 * edge_cap),
            entries: shared.slice::<u64>(0, edge_cap),
            starts,
            inv: shared.slice::<f32>(8 * edge_cap + 4 * STARTS, TILE_ROWS),
            region: region(edge_cap),
        })
    }

    /// Edge `e`'s row and source within the tile.
    #[inline(always)]
    pub(super) fn edge(&self, e: usize) -> (usize, usize) {
        unpack(self.packs.load(2 * e))
    }

    /// Marks edge `e` as in GAT's positive part (`el_i + er_j > 0`): [`POSITIVE`] in its pack.
    #[inline(always)]
    pub(super) fn mark_positive(&self, e: usize) {
        self.packs.store(2 * e, self.packs.load(2 * e) | POSITIVE);
    }

    /// Edge `e`'s score (or weight).
    #[inline(always)]
    pub(super) fn score(&self, e: usize) -> f32 {
        self.scores.load(2 * e + 1)
    }

    /// Sets edge `e`'s score (or weight).
    #[inline(always)]
    pub(super) fn set_score(&self, e: usize, x: f32) {
        self.scores.store(2 * e + 1, x);
    }

    /// Edge `e`'s pack and score by one 8-byte load.
    #[inline(always)]
    fn entry(&self, e: usize) -> (u32, f32) {
        let x = self.entries.load(e);
        (x as u32, f32::from_bits((x >> 32) as u32))
    }

    /// Edge `e`'s source within the tile, whether [`Self::mark_positive`] marked it, and its
    /// score (or weight), by one load.
    #[inline(always)]
    pub(super) fn source_sign_and_score(&self, e: usize) -> (usize, bool, f32) {
        let (pack, score) = self.entry(e);
        (source_of(pack), pack & POSITIVE != 0, score)
    }

    /// Row `row`'s edges.
    #[inline(always)]
    pub(super) fn row_edges(&self, row: usize) -> core::ops::Range<usize> {
        self.starts.load(row) as usize..self.starts.load(row + 1) as usize
    }

    /// Every edge's score `Σ_f fold(row_f, source_f, a_f)` over the features of head `head`, chunk
    /// by chunk of [`SCORE_CHUNK`] staged in the staging region: the rows' features from `rows.0`
    /// times `rows.1`, the sources' from `sources`, and `a` (`[H, F]`, or empty) times log2(e);
    /// `fold` takes 4 features at a time into the running score, in feature order. Thread `t`
    /// takes edges `t, t + 256, …`, the running scores in shared memory between chunks; the
    /// first barrier ends the edge list, and the last follows the last chunk.
    #[inline(always)]
    pub(super) fn score_chunks<const WIDE: bool>(
        &self,
        rows: (GSlice<f32>, f32),
        sources: GSlice<f32>,
        a: GSlice<f32>,
        (heads, feat): (usize, usize),
        source_cap: usize,
        fold: impl Fn(f32, F4, F4, F4) -> f32,
    ) {
        let shared = simt::dynamic_shared();
        let (qs, qs4) = (
            shared.slice::<f32>(self.region, TILE_ROWS * STRIDE),
            shared.slice::<F4>(self.region, TILE_ROWS * STRIDE / 4),
        );
        let at = self.region + Q_BYTES;
        let (ks, ks4) = (shared.slice::<f32>(at, source_cap * STRIDE), shared.slice::<F4>(at, source_cap * STRIDE / 4));
        let at = at + 4 * STRIDE * source_cap;
        let (as1, as4) = (shared.slice::<f32>(at, SCORE_CHUNK), shared.slice::<F4>(at, SCORE_CHUNK / 4));
        let row_len = heads * feat;
        let t = simt::thread_idx().x as usize;
        let mut f0 = 0;
        while f0 < feat {
            simt::sync_threads();
            let valid = (feat - f0).min(SCORE_CHUNK);
            let col = self.head * feat + f0;
            let at = (row_len, col, valid);
            stage_async::<WIDE, false>((qs, qs4), self.rows, rows.0, (self.r0, self.rows), at);
            stage_async::<WIDE, false>((ks, ks4), self.sources, sources, (self.c0, self.sources), at);
            if !a.is_empty() && t < SCORE_CHUNK {
                as1.store(t, if t < valid { a.load(col + t) * math::LOG2_E } else { 0.0 });
            }
            simt::async_wait_all();
            if rows.1 != 1.0 {
                scale_staged::<WIDE>((qs, qs4), self.rows, rows.1);
            }
            simt::sync_threads();
            let mut e = t;
            while e < self.edges {
                // Past the first chunk, the pack and the running score by one load.
                let (pack, mut acc) = if f0 == 0 { (self.packs.load(2 * e), 0.0) } else { self.entry(e) };
                let (row, source) = unpack(pack);
                unroll!(SCORE_CHUNK / 4, |f4| {
                    let (q, k) = (qs4.load(row * (STRIDE / 4) + f4), ks4.load(source * (STRIDE / 4) + f4));
                    let a4 = if a.is_empty() { F4::default() } else { as4.load(f4) };
                    acc = fold(acc, q, k, a4);
                });
                self.set_score(e, acc);
                e += TILE_THREADS as usize;
            }
            f0 += SCORE_CHUNK;
        }
        simt::sync_threads();
    }

    /// The softmax of every row over its scores (after a barrier that ends their writing), a warp
    /// per row: the weights `2^(s − m)` replace the scores, `1/l` goes to shared memory, and
    /// `lse` and the backward's `(m, 1/l)` to `stats` as the row passes write them; with
    /// `restate`, each row's first source of the maximum score goes to [`Self::firsts`] instead
    /// of `m`, for [`Self::restate`].
    #[inline(always)]
    fn softmax(&self, (lse, stats): (GSliceMut<f32>, GSliceMut<f32>), heads: usize, restate: bool) {
        let t = simt::thread_idx().x as usize;
        let (warp_id, lane) = (t / WARP_SIZE as usize, t % WARP_SIZE as usize);
        // Warp-uniform: every lane of a warp takes the same rows.
        let mut row = warp_id;
        while row < self.rows {
            let edges = self.row_edges(row);
            let mut m = f32::NEG_INFINITY;
            let mut e = edges.start + lane;
            while e < edges.end {
                m = m.max(self.score(e));
                e += WARP_SIZE as usize;
            }
            let m = warp_max(m);
            // The row's first edge of the maximum score, scored again for the backward.
            let mut first = u32::MAX;
            if restate {
                let mut e = edges.start + lane;
                while e < edges.end {
                    if self.score(e) == m {
                        first = first.min(e as u32);
                    }
                    e += WARP_SIZE as usize;
                }
                first = min_over(first, WARP_SIZE);
            }
            let mut l = 0.0f32;
            let mut e = edges.start + lane;
            while e < edges.end {
                let w = weight(self.score(e), m);
                self.set_score(e, w);
                l += w;
                e += WARP_SIZE as usize;
            }
            let l = warp_sum(l);
            let r = if l > 0.0 { math::rcp(l) } else { 0.0 };
            if lane == 0 {
                if restate {
                    let source = if first == u32::MAX {
                        u32::MAX
                    } else {
                        source_of(self.packs.load(2 * first as usize)) as u32
                    };
                    self.firsts().store(row, source);
                }
                self.inv.store(row, r);
                let at = (self.r0 + row) * heads + self.head;
                lse.store(at, log_sum_exp(m, l));
                if first == u32::MAX {
                    // Else [`Self::restate`] writes it.
                    stats.store(2 * at, m);
                }
                stats.store(2 * at + 1, r);
            }
            row += TILE_THREADS as usize / WARP_SIZE as usize;
        }
    }

    /// Each row's first source of the maximum score (tile-local, `u32::MAX` for none), between
    /// [`Self::softmax`] and [`Self::restate`], in the staging region (free between them).
    #[inline(always)]
    fn firsts(&self) -> SharedSlice<u32> {
        simt::dynamic_shared().slice::<u32>(self.region, TILE_ROWS)
    }

    /// After [`Self::softmax`] with `restate`: each row's maximum in `stats` restated
    /// ([`restate_maxima`], see [`super`]) with the model's `term(row, source, f)` of global ids,
    /// for loads of `width` features, the sum times `scale` as the model's score finishes it.
    #[inline(always)]
    fn restate(
        &self,
        (stats, heads): (GSliceMut<f32>, usize),
        (feat, width, scale): (usize, usize, f32),
        term: impl Fn(usize, usize, usize) -> f32,
    ) {
        simt::sync_threads();
        let firsts = self.firsts();
        restate_maxima(
            (self.rows, feat, width),
            |row| firsts.load(row),
            |row, source, f| term(self.r0 + row, self.c0 + source, f),
            |row, m| stats.store(2 * ((self.r0 + row) * heads + self.head), m * scale),
        );
    }

    /// `out_i = (Σ_e w_e·v_e)·(1/l_i)` for every row, from `values` (`[N_src, H, F]`) staged chunk
    /// by chunk of [`VALUE_CHUNK`] features in the staging region (its first barrier ends the
    /// softmax); with `PART`, also the positive part `o⁺_i` over the edges whose packed entry has
    /// [`POSITIVE`] set, and `α⁺_i`, into `part`. After its first barrier each edge's pack becomes
    /// the index of its source's first staged quad (with [`POSITIVE`] kept under `PART`), so the
    /// sums read an edge's weight and value index by one load and decode nothing: nothing reads
    /// the packs after it.
    #[inline(always)]
    fn aggregate<const WIDE: bool, const PART: bool>(
        &self,
        values: GSlice<f32>,
        (heads, feat): (usize, usize),
        out: GSliceMut<f32>,
        part: (GSliceMut<f32>, GSliceMut<f32>),
        source_cap: usize,
    ) {
        let shared = simt::dynamic_shared();
        let (vs, vs4) = (
            shared.slice::<f32>(self.region, source_cap * STRIDE),
            shared.slice::<F4>(self.region, source_cap * STRIDE / 4),
        );
        let row_len = heads * feat;
        let t = simt::thread_idx().x as usize;
        let (group, quad) = (t / ROW_THREADS, t % ROW_THREADS);
        let mut g0 = 0;
        while g0 < feat {
            simt::sync_threads();
            if g0 == 0 {
                let mut e = t;
                while e < self.edges {
                    let pack = self.packs.load(2 * e);
                    let sign = if PART { pack & POSITIVE } else { 0 };
                    self.packs.store(2 * e, (source_of(pack) * (STRIDE / 4)) as u32 | sign);
                    e += TILE_THREADS as usize;
                }
            }
            let valid = (feat - g0).min(VALUE_CHUNK);
            let col = self.head * feat + g0;
            stage_async::<WIDE, false>((vs, vs4), self.sources, values, (self.c0, self.sources), (row_len, col, valid));
            simt::async_wait_all();
            simt::sync_threads();
            let mut row = group;
            while row < self.rows {
                let (mut acc, mut acc_part) = (Blocked::<F4>::zero(), Blocked::<F4>::zero());
                let mut weight_part = Blocked::<f32>::zero();
                // 32-bit edge counters: one compare a step, not a 64-bit pair.
                let (mut e, end) = (self.starts.load(row), self.starts.load(row + 1));
                while e < end {
                    let stop = (e + BLOCK_EDGES as u32).min(end);
                    while e < stop {
                        let (index, w) = self.entry(e as usize);
                        let v = vs4.load(if PART { index & !POSITIVE } else { index } as usize + quad);
                        acc.add_scaled(v, w);
                        if PART && index & POSITIVE != 0 {
                            acc_part.add_scaled(v, w);
                            weight_part.add(w);
                        }
                        e += 1;
                    }
                    acc.fold();
                    if PART {
                        acc_part.fold();
                        weight_part.fold();
                    }
                }
                let inv = self.inv.load(row);
                let base = (self.r0 + row) * row_len + col + 4 * quad;
                store::<WIDE>(out, base, acc.value().scale(inv), valid - (4 * quad).min(valid));
                if PART {
                    store::<WIDE>(part.0, base, acc_part.value().scale(inv), valid - (4 * quad).min(valid));
                    if g0 == 0 && quad == 0 {
                        part.1.store((self.r0 + row) * heads + self.head, weight_part.value() * inv);
                    }
                }
                row += ROW_GROUPS;
            }
            g0 += VALUE_CHUNK;
        }
    }
}

/// `acc + x·y` over 4 features, in order: the dot products' fold for [`Tile::score_chunks`].
#[inline(always)]
pub(super) fn dot4(acc: f32, x: F4, y: F4, _a: F4) -> f32 {
    let mut acc = acc;
    unroll!(4, |c| {
        acc = math::fma(x.0[c], y.0[c], acc);
    });
    acc
}

/// The row and source within its tile of a packed edge.
#[inline(always)]
fn unpack(pack: u32) -> (usize, usize) {
    ((pack & ((1 << ROW_BITS) - 1)) as usize, source_of(pack))
}

/// The source within its tile of a packed edge.
#[inline(always)]
fn source_of(pack: u32) -> usize {
    ((pack & !POSITIVE) >> ROW_BITS) as usize
}

/// Stores the first `valid` elements (all 4 from 4 on) of `x` at `base` of `dst`: one 16-byte
/// store with `WIDE` (`base` a multiple of 4 and `valid` 0 or at least 4), else one per element.
#[inline(always)]
pub(super) fn store<const WIDE: bool>(dst: GSliceMut<f32>, base: usize, x: F4, valid: usize) {
    if WIDE {
        if valid > 0 {
            dst.cast::<F4>().store(base / 4, x);
        }
    } else {
        unroll!(4, |c| {
            if c < valid {
                dst.store(base + c, x.0[c]);
            }
        });
    }
}

/// GT's forward over the edges of the tiles of [`GtTilesParams`] (`block.x = TILE_THREADS`, grid
/// `T·H`, [`shared_bytes`] of `p.tiles`' capacities of dynamic shared memory); `WIDE` stages
/// 16 bytes at a time and needs `F % 4 == 0`.
#[inline(always)]
fn gt_tile_edges_forward<const WIDE: bool>(p: &GtTilesParams) {
    let (heads, feat) = (p.tiles.heads as usize, p.feat as usize);
    let Some(tile) = Tile::load(&p.tiles) else {
        return;
    };
    let source_cap = p.tiles.source_cap as usize;
    let rows = (p.q, p.scale_log2);
    tile.score_chunks::<WIDE>(rows, p.k, GSlice::empty(), (heads, feat), source_cap, dot4);
    let width = p.score_width as usize;
    tile.softmax((p.lse, p.stats), heads, width != 0);
    if width != 0 {
        let term = |i, j, f| gt_term((p.q, p.k), (i, j, tile.head), (heads, feat, width), p.scale_log2, f);
        tile.restate((p.stats, heads), (feat, width, 1.0), term);
    }
    let none = (GSliceMut::empty(), GSliceMut::empty());
    tile.aggregate::<WIDE, false>(p.v, (heads, feat), p.out, none, source_cap);
}

/// GAT's forward over the edges of the tiles of [`GatTilesParams`] (`block.x = TILE_THREADS`,
/// grid `T·H`, [`gat_shared_bytes`] of `p.tiles`' capacities of dynamic shared memory): the
/// scores `LeakyReLU(el_i + er_j)` from the node scores of the tile's rows and sources staged in
/// shared memory, as [`crate::kernels::gat::LeakyScore`] takes them, and with a positive part
/// to save, `o⁺` and `α⁺` beside the output; `WIDE` stages 16 bytes at a time and needs
/// `F % 4 == 0`.
#[inline(always)]
fn gat_tile_edges_forward<const WIDE: bool>(p: &GatTilesParams) {
    let (heads, feat) = (p.tiles.heads as usize, p.feat as usize);
    let Some(tile) = Tile::load(&p.tiles) else {
        return;
    };
    let source_cap = p.tiles.source_cap as usize;
    let shared = simt::dynamic_shared();
    let el = shared.slice::<f32>(tile.region, TILE_ROWS);
    let er = shared.slice::<f32>(tile.region + 4 * TILE_ROWS, source_cap);
    let t = simt::thread_idx().x as usize;
    let threads = TILE_THREADS as usize;
    let mut i = t;
    while i < tile.rows + tile.sources {
        if i < tile.rows {
            el.store(i, p.el.load((tile.r0 + i) * heads + tile.head));
        } else {
            let j = i - tile.rows;
            er.store(j, p.er.load((tile.c0 + j) * heads + tile.head));
        }
        i += threads;
    }
    simt::sync_threads();
    let mut e = t;
    while e < tile.edges {
        let (row, source) = tile.edge(e);
        let x = el.load(row) + er.load(source);
        tile.set_score(e, leaky_score(x, p.slope));
        if x > 0.0 {
            tile.mark_positive(e);
        }
        e += threads;
    }
    simt::sync_threads();
    // GAT's scores are the row passes' arithmetic (a sum of two node scores): nothing to restate.
    tile.softmax((p.lse, p.stats), heads, false);
    if p.part_out.is_empty() {
        let none = (GSliceMut::empty(), GSliceMut::empty());
        tile.aggregate::<WIDE, false>(p.h, (heads, feat), p.out, none, source_cap);
    } else {
        tile.aggregate::<WIDE, true>(p.h, (heads, feat), p.out, (p.part_out, p.part_weight), source_cap);
    }
}

/// GATv2's forward over the edges of the tiles of [`GatV2TilesParams`] (`block.x =
/// TILE_THREADS`, grid `T·H`, [`shared_bytes`] of `p.tiles`' capacities of dynamic shared
/// memory): the scores `⟨a, LeakyReLU(xr_i + xl_j)⟩` over the head's features as
/// [`crate::kernels::gatv2::GatV2Score`] takes them, then the softmax and the aggregation of
/// `xl`; `WIDE` stages 16 bytes at a time and needs `F % 4 == 0`.
#[inline(always)]
fn gatv2_tile_edges_forward<const WIDE: bool>(p: &GatV2TilesParams) {
    let (heads, feat) = (p.tiles.heads as usize, p.feat as usize);
    let Some(tile) = Tile::load(&p.tiles) else {
        return;
    };
    let source_cap = p.tiles.source_cap as usize;
    let slope = p.slope;
    tile.score_chunks::<WIDE>((p.xr, 1.0), p.xl, p.a, (heads, feat), source_cap, |acc, xr, xl, a| {
        let mut acc = acc;
        unroll!(4, |c| {
            let x = xr.0[c] + xl.0[c];
            acc = math::fma(a.0[c], leaky_relu(x, slope), acc);
        });
        acc
    });
    let width = p.score_width as usize;
    tile.softmax((p.lse, p.stats), heads, width != 0);
    if width != 0 {
        // GATv2's row passes: `a·LeakyReLU(xr + xl)` per vector, the sum times log2(e) after.
        let term = |i: usize, j: usize, f: usize| {
            let xr = load_vector(p.xr, (i * heads + tile.head) * feat + f, width);
            let xl = load_vector(p.xl, (j * heads + tile.head) * feat + f, width);
            let a = load_vector(p.a, tile.head * feat + f, width);
            let z = F4(core::array::from_fn(|c| leaky_relu(xr.0[c] + xl.0[c], slope)));
            dot_as_vector(width, a, z)
        };
        tile.restate((p.stats, heads), (feat, width, math::LOG2_E), term);
    }
    let none = (GSliceMut::empty(), GSliceMut::empty());
    tile.aggregate::<WIDE, false>(p.xl, (heads, feat), p.out, none, source_cap);
}
