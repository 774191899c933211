//! The fused GT kernels (AGNN runs the same passes with its own score: [`crate::kernels::agnn`]): GT's score
//! ([`DotScore`]) in the model-generic passes of [`crate::kernels::attention`], instantiated once
//! per variant of [`VARIANTS`] (declared with [`crate::kernels::attention::variants`]).
//!
//! A variant is a load width (`f32`, or `F4` when `F % 4 == 0`), a number of vectors per lane
//! (`SLOTS`) and edges per step and team (`STEP`): its forward and `row_group` entries always
//! exist; its backward entries (row and column passes) exist up to 4 slots — they hold twice the
//! forward's vectors, and at 8 slots they spill past 255 registers. The host planner reads this
//! table (and nothing else) to know which shapes the fused kernels hold. Steps shrink as `SLOTS`
//! grows, to keep a few vectors of keys and values in flight per lane without spilling; the
//! backward takes 2 edges per step (fewer registers, more warps per SM: on the H200, er-1M-d16
//! 4×64 forward+backward 36.3 ms against 37.7 with 4 and 45.5 with 8). [`dropout`] holds the
//! same table compiled with attention dropout (`gt_drop_*`), so that these kernels spend nothing
//! on it.

pub mod dropout;
mod score;

pub use score::DotScore;

use crate::abi::{GtBwdColsParams, GtBwdRowsParams, GtFwdParams, GtGroupParams};
use crate::kernels::attention::variants::{Backward, Variant, variants};
use crate::kernels::attention::{cols, forward, group, rows};
use crate::kernels::common::vector::Vector;
use crate::simt::F4;

/// The backward entries of a GT variant.
pub type GtBackward = Backward<GtBwdRowsParams, GtBwdColsParams>;

/// One compiled configuration of the fused GT kernels.
pub type GtVariant = Variant<GtFwdParams, GtGroupParams, GtBwdRowsParams, GtBwdColsParams>;

/// The bodies of both tables: [`VARIANTS`] (no dropout) and [`dropout::VARIANTS`].
#[inline(always)]
fn forward_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GtFwdParams,
) {
    let score = DotScore { scale_log2: p.scale_log2, grad_scale: 1.0 };
    forward::forward::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.q, p.k, p.v, &p.dst)
}

#[inline(always)]
fn group_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool>(p: &GtGroupParams) {
    let score = DotScore { scale_log2: p.scale_log2, grad_scale: 1.0 };
    group::forward_group::<V, SLOTS, STEP, DROPOUT, _>(&p.group, &score, p.q, p.k, p.v)
}

#[inline(always)]
fn rows_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GtBwdRowsParams,
) {
    let score = DotScore { scale_log2: p.scale_log2, grad_scale: p.grad_scale };
    rows::backward_rows::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.q, p.k, p.v, &p.grads)
}

#[inline(always)]
fn cols_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GtBwdColsParams,
) {
    let score = DotScore { scale_log2: p.scale_log2, grad_scale: p.grad_scale };
    cols::backward_cols::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.q, p.k, p.v, &p.grads)
}

#[inline(always)]
fn fwd<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GtFwdParams) {
    forward_body::<V, SLOTS, STEP, false, PACKED>(p)
}

#[inline(always)]
fn grp<V: Vector, const SLOTS: usize, const STEP: usize>(p: &GtGroupParams) {
    group_body::<V, SLOTS, STEP, false>(p)
}

#[inline(always)]
fn bwd_rows<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GtBwdRowsParams) {
    rows_body::<V, SLOTS, STEP, false, PACKED>(p)
}

#[inline(always)]
fn bwd_cols<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GtBwdColsParams) {
    cols_body::<V, SLOTS, STEP, false, PACKED>(p)
}

variants! {
    model "GT";
    params (GtFwdParams, GtGroupParams, GtBwdRowsParams, GtBwdColsParams);
    bodies (fwd, grp, bwd_rows, bwd_cols);
    f32, 1, 1: forward 4 (GT_FWD_W1_S1 gt_fwd_w1_s1, GT_GROUP_W1_S1 gt_group_w1_s1),
        backward 2 (GT_BWD_ROWS_W1_S1 gt_bwd_rows_w1_s1, GT_BWD_COLS_W1_S1 gt_bwd_cols_w1_s1),
        packed (GT_FWD_PACKED_W1_S1 gt_fwd_packed_w1_s1, GT_BWD_ROWS_PACKED_W1_S1 gt_bwd_rows_packed_w1_s1,
            GT_BWD_COLS_PACKED_W1_S1 gt_bwd_cols_packed_w1_s1);
    f32, 1, 2: forward 4 (GT_FWD_W1_S2 gt_fwd_w1_s2, GT_GROUP_W1_S2 gt_group_w1_s2),
        backward 2 (GT_BWD_ROWS_W1_S2 gt_bwd_rows_w1_s2, GT_BWD_COLS_W1_S2 gt_bwd_cols_w1_s2);
    f32, 1, 4: forward 2 (GT_FWD_W1_S4 gt_fwd_w1_s4, GT_GROUP_W1_S4 gt_group_w1_s4),
        backward 2 (GT_BWD_ROWS_W1_S4 gt_bwd_rows_w1_s4, GT_BWD_COLS_W1_S4 gt_bwd_cols_w1_s4);
    f32, 1, 8: forward 1 (GT_FWD_W1_S8 gt_fwd_w1_s8, GT_GROUP_W1_S8 gt_group_w1_s8);
    F4, 4, 1: forward 2 (GT_FWD_W4_S1 gt_fwd_w4_s1, GT_GROUP_W4_S1 gt_group_w4_s1),
        backward 2 (GT_BWD_ROWS_W4_S1 gt_bwd_rows_w4_s1, GT_BWD_COLS_W4_S1 gt_bwd_cols_w4_s1),
        packed (GT_FWD_PACKED_W4_S1 gt_fwd_packed_w4_s1, GT_BWD_ROWS_PACKED_W4_S1 gt_bwd_rows_packed_w4_s1,
            GT_BWD_COLS_PACKED_W4_S1 gt_bwd_cols_packed_w4_s1);
    F4, 4, 2: forward 4 (GT_FWD_W4_S2 gt_fwd_w4_s2, GT_GROUP_W4_S2 gt_group_w4_s2),
        backward 2 (GT_BWD_ROWS_W4_S2 gt_bwd_rows_w4_s2, GT_BWD_COLS_W4_S2 gt_bwd_cols_w4_s2);
    F4, 4, 4: forward 2 (GT_FWD_W4_S4 gt_fwd_w4_s4, GT_GROUP_W4_S4 gt_group_w4_s4),
        backward 2 (GT_BWD_ROWS_W4_S4 gt_bwd_rows_w4_s4, GT_BWD_COLS_W4_S4 gt_bwd_cols_w4_s4);
    F4, 4, 8: forward 1 (GT_FWD_W4_S8 gt_fwd_w4_s8, GT_GROUP_W4_S8 gt_group_w4_s8);
}
