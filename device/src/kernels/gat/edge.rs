//! The baselines' GAT edge kernels (`unfused`, `edge_parallel`): the scores
//! `s[e, h] = LeakyReLU(el[row(e), h] + er[col(e), h])` as an `[E, H]` array for the unfused
//! softmax kernels, and in the backward the score gradient through the LeakyReLU,
//! `ds·LeakyReLU'`, which the unfused SpMM kernels then sum per row (`d el`) and per column
//! (`d er`).
//!
//! # Grid mapping
//! One thread per (edge, head), item `e·H + h`, sweeping grid-stride. 1-D grid and block.

use crate::abi::GatEdgeScoresParams;
use crate::kernel;
use crate::kernels::gat::leaky_relu;
use crate::simt;

/// Runs `body(item, x)` for this thread's items, with `x = el[row] + er[col]` of the item.
#[inline(always)]
fn each_item(p: &GatEdgeScoresParams, mut body: impl FnMut(usize, f32)) {
    let heads = p.heads as u64;
    let total = p.num_edges * heads;
    let stride = simt::grid_dim().x as u64 * simt::block_dim().x as u64;
    let mut item = simt::block_idx().x as u64 * simt::block_dim().x as u64 + simt::thread_idx().x as u64;
    while item < total {
        let (e, h) = ((item / heads) as usize, item % heads);
        let (i, j) = (p.coo_rows.load(e) as u64, p.columns.load(e) as u64);
        let x = p.el.load((i * heads + h) as usize) + p.er.load((j * heads + h) as usize);
        body(item as usize, x);
        item += stride;
    }
}

kernel! {
    /// `out[e, h] = LeakyReLU(el[row(e), h] + er[col(e), h])`.
    pub kernel GAT_EDGE_SCORES = fn gat_edge_scores(p: &GatEdgeScoresParams) {
        each_item(p, |item, x| p.out.store(item, leaky_relu(x, p.slope)));
    }
}

kernel! {
    /// `out[e, h] = d_scores[e, h]·LeakyReLU'(el[row(e), h] + er[col(e), h])`.
    pub kernel GAT_EDGE_SCORES_BACKWARD = fn gat_edge_scores_backward(p: &GatEdgeScoresParams) {
        each_item(p, |item, x| p.out.store(item, p.d_scores.load(item) * if x > 0.0 { 1.0 } else { p.slope }));
    }
}
