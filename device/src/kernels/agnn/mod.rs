//! AGNN's own kernels: the per-head L2 normalisation of the features (which also writes the
//! queries `q = β·hn`, β read from device memory, and the inverse norms) and its backward (for
//! the baselines: the fused column pass does it itself, see [`CosineScore`]), and AGNN's fused
//! passes ([`VARIANTS`]).
//!
//! The attention is GT's with `q = β·h/‖h‖`, `k = h/‖h‖`, `v = h` and score scale 1, run by GT's
//! passes with [`CosineScore`], whose key is the value times the source's inverse norm: the
//! passes read `[N, H]` inverse norms as the keys, gather one vector per edge instead of two, and
//! need no stored `hn`. The table has GT's shapes (the host plans AGNN on it); GT's forward over
//! tiles, on a stored `hn`, gives the same scores. The column pass ends each source node with
//! the normalisation's backward (`dh` and dβ's share, from the row pass's `dq`), so `dk` and
//! `dv` are never stored. dβ's per-(node, head) shares are summed by
//! [`crate::kernels::util::SUM_PARTIALS`] and [`crate::kernels::util::SUM_FINISH`].

mod normalize;
mod score;

pub use normalize::*;
pub use score::CosineScore;

use crate::abi::{GtBwdColsParams, GtBwdRowsParams, GtFwdParams, GtGroupParams, NormalizeGrads};
use crate::kernels::attention::variants::variants;
use crate::kernels::attention::{cols, forward, group, rows};
use crate::kernels::common::vector::Vector;
use crate::kernels::gt::DotScore;
use crate::simt::F4;

// The bodies: GT's parameter structs, their `k` the `[N_src, H]` inverse norms.

#[inline(always)]
fn fwd<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GtFwdParams) {
    let score =
        CosineScore { dot: DotScore { scale_log2: p.scale_log2, grad_scale: 1.0 }, normalize: NormalizeGrads::NONE };
    forward::forward::<V, SLOTS, STEP, false, PACKED, _>(&p.edges, &score, p.q, p.k, p.v, &p.dst)
}

#[inline(always)]
fn grp<V: Vector, const SLOTS: usize, const STEP: usize>(p: &GtGroupParams) {
    let score =
        CosineScore { dot: DotScore { scale_log2: p.scale_log2, grad_scale: 1.0 }, normalize: NormalizeGrads::NONE };
    group::forward_group::<V, SLOTS, STEP, false, _>(&p.group, &score, p.q, p.k, p.v)
}

#[inline(always)]
fn bwd_rows<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GtBwdRowsParams) {
    let score = CosineScore {
        dot: DotScore { scale_log2: p.scale_log2, grad_scale: p.grad_scale },
        normalize: NormalizeGrads::NONE,
    };
    rows::backward_rows::<V, SLOTS, STEP, false, PACKED, _>(&p.edges, &score, p.q, p.k, p.v, &p.grads)
}

#[inline(always)]
fn bwd_cols<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GtBwdColsParams) {
    let score =
        CosineScore { dot: DotScore { scale_log2: p.scale_log2, grad_scale: p.grad_scale }, normalize: p.normalize };
    cols::backward_cols::<V, SLOTS, STEP, false, PACKED, _>(&p.edges, &score, p.q, p.k, p.v, &p.grads)
}

variants! {
    model "AGNN";
    params (GtFwdParams, GtGroupParams, GtBwdRowsParams, GtBwdColsParams);
    bodies (fwd, grp, bwd_rows, bwd_cols);
    f32, 1, 1: forward 4 (AGNN_FWD_W1_S1 agnn_fwd_w1_s1, AGNN_GROUP_W1_S1 agnn_group_w1_s1),
        backward 2 (AGNN_BWD_ROWS_W1_S1 agnn_bwd_rows_w1_s1, AGNN_BWD_COLS_W1_S1 agnn_bwd_cols_w1_s1),
        packed (AGNN_FWD_PACKED_W1_S1 agnn_fwd_packed_w1_s1, AGNN_BWD_ROWS_PACKED_W1_S1 agnn_bwd_rows_packed_w1_s1,
            AGNN_BWD_COLS_PACKED_W1_S1 agnn_bwd_cols_packed_w1_s1);
    f32, 1, 2: forward 4 (AGNN_FWD_W1_S2 agnn_fwd_w1_s2, AGNN_GROUP_W1_S2 agnn_group_w1_s2),
        backward 2 (AGNN_BWD_ROWS_W1_S2 agnn_bwd_rows_w1_s2, AGNN_BWD_COLS_W1_S2 agnn_bwd_cols_w1_s2);
    f32, 1, 4: forward 2 (AGNN_FWD_W1_S4 agnn_fwd_w1_s4, AGNN_GROUP_W1_S4 agnn_group_w1_s4),
        backward 2 (AGNN_BWD_ROWS_W1_S4 agnn_bwd_rows_w1_s4, AGNN_BWD_COLS_W1_S4 agnn_bwd_cols_w1_s4);
    f32, 1, 8: forward 1 (AGNN_FWD_W1_S8 agnn_fwd_w1_s8, AGNN_GROUP_W1_S8 agnn_group_w1_s8);
    F4, 4, 1: forward 2 (AGNN_FWD_W4_S1 agnn_fwd_w4_s1, AGNN_GROUP_W4_S1 agnn_group_w4_s1),
        backward 2 (AGNN_BWD_ROWS_W4_S1 agnn_bwd_rows_w4_s1, AGNN_BWD_COLS_W4_S1 agnn_bwd_cols_w4_s1),
        packed (AGNN_FWD_PACKED_W4_S1 agnn_fwd_packed_w4_s1, AGNN_BWD_ROWS_PACKED_W4_S1 agnn_bwd_rows_packed_w4_s1,
            AGNN_BWD_COLS_PACKED_W4_S1 agnn_bwd_cols_packed_w4_s1);
    F4, 4, 2: forward 4 (AGNN_FWD_W4_S2 agnn_fwd_w4_s2, AGNN_GROUP_W4_S2 agnn_group_w4_s2),
        backward 2 (AGNN_BWD_ROWS_W4_S2 agnn_bwd_rows_w4_s2, AGNN_BWD_COLS_W4_S2 agnn_bwd_cols_w4_s2);
    F4, 4, 4: forward 2 (AGNN_FWD_W4_S4 agnn_fwd_w4_s4, AGNN_GROUP_W4_S4 agnn_group_w4_s4),
        backward 2 (AGNN_BWD_ROWS_W4_S4 agnn_bwd_rows_w4_s4, AGNN_BWD_COLS_W4_S4 agnn_bwd_cols_w4_s4);
    F4, 4, 8: forward 1 (AGNN_FWD_W4_S8 agnn_fwd_w4_s8, AGNN_GROUP_W4_S8 agnn_group_w4_s8);
}
