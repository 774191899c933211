//! The GAT kernels: GAT's score ([`LeakyScore`], `LeakyReLU(el_i + er_j)` from per-node scores)
//! in the model-generic passes of [`crate::kernels::attention`], one entry point per variant of
//! [`VARIANTS`] (the table the host planner picks GAT's variants from), the node-score
//! kernels and their backward ([`node`]), and the baselines' edge kernels ([`edge`]).
//!
//! Per edge the passes read one feature row (`h_j`, the value) and one scalar per head (`er_j`);
//! `el_i` is read once per row. The backward's row pass gives `d el`, its column pass `d er` and
//! the aggregation's `dh`; [`node`] carries `d el`, `d er` through the node scores to the features
//! and the attention vectors. [`dropout`] holds the same table compiled with attention dropout,
//! so that these kernels spend nothing on it. [`part`] holds the forwards for training, which
//! also sum each row's positive part, and the row pass that needs no gather after them.

pub mod dropout;
pub mod edge;
pub mod node;
pub mod part;
mod score;

pub use edge::*;
pub use node::*;
pub use score::{LeakyScore, leaky_relu, leaky_score};

use crate::abi::{GatBwdColsParams, GatBwdRowsParams, GatFwdParams, GatGroupParams};
use crate::kernels::attention::variants::{Backward, Variant, variants};
use crate::kernels::attention::{cols, forward, group, rows};
use crate::kernels::common::vector::Vector;
use crate::simt::F4;

/// The backward entries of a GAT variant.
pub type GatBackward = Backward<GatBwdRowsParams, GatBwdColsParams>;

/// One compiled configuration of the fused GAT kernels.
pub type GatVariant = Variant<GatFwdParams, GatGroupParams, GatBwdRowsParams, GatBwdColsParams>;

/// The bodies of both tables: [`VARIANTS`] (no dropout) and [`dropout::VARIANTS`].
#[inline(always)]
fn forward_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GatFwdParams,
) {
    let score = LeakyScore { slope: p.slope };
    forward::forward::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.el, p.er, p.h, &p.dst)
}

#[inline(always)]
fn group_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool>(p: &GatGroupParams) {
    let score = LeakyScore { slope: p.slope };
    group::forward_group::<V, SLOTS, STEP, DROPOUT, _>(&p.group, &score, p.el, p.er, p.h)
}

#[inline(always)]
fn rows_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GatBwdRowsParams,
) {
    let score = LeakyScore { slope: p.slope };
    rows::backward_rows::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.el, p.er, p.h, &p.grads)
}

#[inline(always)]
fn cols_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GatBwdColsParams,
) {
    let score = LeakyScore { slope: p.slope };
    cols::backward_cols::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.el, p.er, p.h, &p.grads)
}

#[inline(always)]
fn fwd<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatFwdParams) {
    forward_body::<V, SLOTS, STEP, false, PACKED>(p)
}

#[inline(always)]
fn grp<V: Vector, const SLOTS: usize, const STEP: usize>(p: &GatGroupParams) {
    group_body::<V, SLOTS, STEP, false>(p)
}

#[inline(always)]
fn bwd_rows<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatBwdRowsParams) {
    rows_body::<V, SLOTS, STEP, false, PACKED>(p)
}

#[inline(always)]
fn bwd_cols<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatBwdColsParams) {
    cols_body::<V, SLOTS, STEP, false, PACKED>(p)
}

variants! {
    model "GAT";
    params (GatFwdParams, GatGroupParams, GatBwdRowsParams, GatBwdColsParams);
    bodies (fwd, grp, bwd_rows, bwd_cols);
    f32, 1, 1: forward 4 (GAT_FWD_W1_S1 gat_fwd_w1_s1, GAT_GROUP_W1_S1 gat_group_w1_s1),
        backward 2 (GAT_BWD_ROWS_W1_S1 gat_bwd_rows_w1_s1, GAT_BWD_COLS_W1_S1 gat_bwd_cols_w1_s1),
        packed (GAT_FWD_PACKED_W1_S1 gat_fwd_packed_w1_s1, GAT_BWD_ROWS_PACKED_W1_S1 gat_bwd_rows_packed_w1_s1,
            GAT_BWD_COLS_PACKED_W1_S1 gat_bwd_cols_packed_w1_s1);
    f32, 1, 2: forward 4 (GAT_FWD_W1_S2 gat_fwd_w1_s2, GAT_GROUP_W1_S2 gat_group_w1_s2),
        backward 2 (GAT_BWD_ROWS_W1_S2 gat_bwd_rows_w1_s2, GAT_BWD_COLS_W1_S2 gat_bwd_cols_w1_s2);
    f32, 1, 4: forward 2 (GAT_FWD_W1_S4 gat_fwd_w1_s4, GAT_GROUP_W1_S4 gat_group_w1_s4),
        backward 2 (GAT_BWD_ROWS_W1_S4 gat_bwd_rows_w1_s4, GAT_BWD_COLS_W1_S4 gat_bwd_cols_w1_s4);
    f32, 1, 8: forward 1 (GAT_FWD_W1_S8 gat_fwd_w1_s8, GAT_GROUP_W1_S8 gat_group_w1_s8);
    F4, 4, 1: forward 4 (GAT_FWD_W4_S1 gat_fwd_w4_s1, GAT_GROUP_W4_S1 gat_group_w4_s1),
        backward 2 (GAT_BWD_ROWS_W4_S1 gat_bwd_rows_w4_s1, GAT_BWD_COLS_W4_S1 gat_bwd_cols_w4_s1),
        packed (GAT_FWD_PACKED_W4_S1 gat_fwd_packed_w4_s1, GAT_BWD_ROWS_PACKED_W4_S1 gat_bwd_rows_packed_w4_s1,
            GAT_BWD_COLS_PACKED_W4_S1 gat_bwd_cols_packed_w4_s1);
    F4, 4, 2: forward 4 (GAT_FWD_W4_S2 gat_fwd_w4_s2, GAT_GROUP_W4_S2 gat_group_w4_s2),
        backward 2 (GAT_BWD_ROWS_W4_S2 gat_bwd_rows_w4_s2, GAT_BWD_COLS_W4_S2 gat_bwd_cols_w4_s2);
    F4, 4, 4: forward 2 (GAT_FWD_W4_S4 gat_fwd_w4_s4, GAT_GROUP_W4_S4 gat_group_w4_s4),
        backward 2 (GAT_BWD_ROWS_W4_S4 gat_bwd_rows_w4_s4, GAT_BWD_COLS_W4_S4 gat_bwd_cols_w4_s4);
    F4, 4, 8: forward 1 (GAT_FWD_W4_S8 gat_fwd_w4_s8, GAT_GROUP_W4_S8 gat_group_w4_s8);
}
