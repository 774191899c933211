//! The baselines' GATv2 edge kernels (`unfused`, `edge_parallel`): the scores
//! `s[e, h] = ⟨a[h], LeakyReLU(xl[col(e), h] + xr[row(e), h])⟩` as an `[E, H]` array for the
//! unfused softmax kernels, and in the backward the score gradient `ds` carried to the features
//! and the attention vector: per row `d xr` and the row's term of `d a`, per column (over the
//! CSC, CSR edge ids from the permutation) the scores' part of `d xl`, each a sum over the node's
//! edges in order (no atomics).
//!
//! # Grid mapping
//! [`GATV2_EDGE_SCORES`]: one thread per (edge, head), item `e·H + h`. [`GATV2_EDGE_GRADS`]: one
//! thread per (node, head, feature), item `(n·H + h)·F + f`. Both sweep grid-stride; 1-D grid
//! and block.

use crate::abi::{GatV2EdgeGradsParams, GatV2EdgeScoresParams};
use crate::kernel;
use crate::kernels::gat::leaky_relu;
use crate::simt;

/// Runs `body(item)` for this thread's items of `total`.
#[inline(always)]
fn each_item(total: u64, mut body: impl FnMut(u64)) {
    let stride = simt::grid_dim().x as u64 * simt::block_dim().x as u64;
    let mut item = simt::block_idx().x as u64 * simt::block_dim().x as u64 + simt::thread_idx().x as u64;
    while item < total {
        body(item);
        item += stride;
    }
}

kernel! {
    /// `out[e, h] = Σ_f a[h, f]·LeakyReLU(xl[col(e), h, f] + xr[row(e), h, f])`.
    pub kernel GATV2_EDGE_SCORES = fn gatv2_edge_scores(p: &GatV2EdgeScoresParams) {
        let (heads, feat) = (p.heads as u64, p.feat as usize);
        each_item(p.num_edges * heads, |item| {
            let (e, h) = ((item / heads) as usize, item % heads);
            let (i, j) = (p.coo_rows.load(e) as u64, p.columns.load(e) as u64);
            let (l, r, ah) = (((j * heads + h) as usize) * feat, ((i * heads + h) as usize) * feat, h as usize * feat);
            let mut s = 0.0f32;
            for f in 0..feat {
                s += p.a.load(ah + f) * leaky_relu(p.xl.load(l + f) + p.xr.load(r + f), p.slope);
            }
            p.out.store(item as usize, s);
        });
    }
}

kernel! {
    /// `dx[n, h, f] = base[n, h, f] + Σ_e ds[e, h]·a[h, f]·LeakyReLU'(z)` and, for rows,
    /// `d_a[n, h, f] = Σ_e ds[e, h]·LeakyReLU(z)`, `z = xl[col(e), h, f] + xr[row(e), h, f]`.
    pub kernel GATV2_EDGE_GRADS = fn gatv2_edge_grads(p: &GatV2EdgeGradsParams) {
        let (heads, feat) = (p.heads as u64, p.feat as u64);
        each_item(p.nodes as u64 * heads * feat, |item| {
            let (n, h, f) = (item / (heads * feat), (item / feat) % heads, item % feat);
            let (a, mut dx, mut da) = (p.a.load((h * feat + f) as usize), 0.0f32, 0.0f32);
            for slot in p.offsets.load(n as usize)..p.offsets.load(n as usize + 1) {
                let other = p.neighbours.load(slot as usize) as u64;
                let (e, i, j) = if p.columns != 0 {
                    (p.edge_ids.load(slot as usize) as u64, other, n)
                } else {
                    (slot, n, other)
                };
                let z = p.xl.load(((j * heads + h) * feat + f) as usize) + p.xr.load(((i * heads + h) * feat + f) as usize);
                let ds = p.d_scores.load((e * heads + h) as usize);
                dx += ds * a * if z > 0.0 { 1.0 } else { p.slope };
                da += ds * leaky_relu(z, p.slope);
            }
            let base = if p.base.is_empty() { 0.0 } else { p.base.load(item as usize) };
            p.dx.store(item as usize, base + dx);
            if !p.d_a.is_empty() {
                p.d_a.store(item as usize, da);
            }
        });
    }
}
