//! The GATv2 kernels: GATv2's score ([`GatV2Score`], `⟨a, LeakyReLU(xl_j + xr_i)⟩` over a head's
//! features) in the model-generic passes of [`crate::kernels::attention`], one entry point per
//! variant of [`VARIANTS`] (the table the host planner picks GATv2's variants from), and the baselines'
//! edge kernels ([`edge`]).
//!
//! The row operand is `xr_i`, the key and the value are both `xl_j` (PyG's `GATv2Conv`: the
//! message is the source's transformed features). The backward's row pass gives `d xr` and each
//! row's term of `d a` (summed by the host over rows in a fixed order), its column pass `d xl`:
//! the sum of its parts through the scores and through the aggregation, added in the pass
//! (`ScoreGradient::key_into_value`), so one array. [`dropout`] holds the same
//! table compiled with attention dropout, so that these kernels spend nothing on it.

pub mod dropout;
pub mod edge;
mod score;

pub use edge::*;
pub use score::GatV2Score;

use crate::abi::{GatV2BwdColsParams, GatV2BwdRowsParams, GatV2FwdParams, GatV2GroupParams};
use crate::kernels::attention::variants::{Backward, Variant, variants};
use crate::kernels::attention::{cols, forward, group, rows};
use crate::kernels::common::vector::Vector;
use crate::simt::F4;

/// The backward entries of a GATv2 variant.
pub type GatV2Backward = Backward<GatV2BwdRowsParams, GatV2BwdColsParams>;

/// One compiled configuration of the fused GATv2 kernels.
pub type GatV2Variant = Variant<GatV2FwdParams, GatV2GroupParams, GatV2BwdRowsParams, GatV2BwdColsParams>;

/// The bodies of both tables: [`VARIANTS`] (no dropout) and [`dropout::VARIANTS`].
#[inline(always)]
fn forward_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GatV2FwdParams,
) {
    let score = GatV2Score::<V, SLOTS>::holding(p.slope, p.a);
    forward::forward::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.xr, p.xl, p.xl, &p.dst)
}

#[inline(always)]
fn group_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool>(p: &GatV2GroupParams) {
    let score = GatV2Score::<V, SLOTS>::new(p.slope, p.a);
    group::forward_group::<V, SLOTS, STEP, DROPOUT, _>(&p.group, &score, p.xr, p.xl, p.xl)
}

#[inline(always)]
fn rows_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GatV2BwdRowsParams,
) {
    let score = GatV2Score::<V, SLOTS> { d_a: p.d_a, partial_d_a: p.partial_d_a, ..GatV2Score::new(p.slope, p.a) };
    rows::backward_rows::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.xr, p.xl, p.xl, &p.grads)
}

#[inline(always)]
fn cols_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GatV2BwdColsParams,
) {
    let score = GatV2Score::<V, SLOTS>::new(p.slope, p.a);
    cols::backward_cols::<V, SLOTS, STEP, DROPOUT, PACKED, _>(&p.edges, &score, p.xr, p.xl, p.xl, &p.grads)
}

#[inline(always)]
fn fwd<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatV2FwdParams) {
    forward_body::<V, SLOTS, STEP, false, PACKED>(p)
}

#[inline(always)]
fn grp<V: Vector, const SLOTS: usize, const STEP: usize>(p: &GatV2GroupParams) {
    group_body::<V, SLOTS, STEP, false>(p)
}

#[inline(always)]
fn bwd_rows<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatV2BwdRowsParams) {
    rows_body::<V, SLOTS, STEP, false, PACKED>(p)
}

#[inline(always)]
fn bwd_cols<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatV2BwdColsParams) {
    cols_body::<V, SLOTS, STEP, false, PACKED>(p)
}

variants! {
    model "GATv2";
    params (GatV2FwdParams, GatV2GroupParams, GatV2BwdRowsParams, GatV2BwdColsParams);
    bodies (fwd, grp, bwd_rows, bwd_cols);
    f32, 1, 1: forward 4 (GATV2_FWD_W1_S1 gatv2_fwd_w1_s1, GATV2_GROUP_W1_S1 gatv2_group_w1_s1),
        backward 2 (GATV2_BWD_ROWS_W1_S1 gatv2_bwd_rows_w1_s1, GATV2_BWD_COLS_W1_S1 gatv2_bwd_cols_w1_s1),
        packed (GATV2_FWD_PACKED_W1_S1 gatv2_fwd_packed_w1_s1, GATV2_BWD_ROWS_PACKED_W1_S1 gatv2_bwd_rows_packed_w1_s1,
            GATV2_BWD_COLS_PACKED_W1_S1 gatv2_bwd_cols_packed_w1_s1);
    f32, 1, 2: forward 4 (GATV2_FWD_W1_S2 gatv2_fwd_w1_s2, GATV2_GROUP_W1_S2 gatv2_group_w1_s2),
        backward 2 (GATV2_BWD_ROWS_W1_S2 gatv2_bwd_rows_w1_s2, GATV2_BWD_COLS_W1_S2 gatv2_bwd_cols_w1_s2);
    f32, 1, 4: forward 2 (GATV2_FWD_W1_S4 gatv2_fwd_w1_s4, GATV2_GROUP_W1_S4 gatv2_group_w1_s4),
        backward 2 (GATV2_BWD_ROWS_W1_S4 gatv2_bwd_rows_w1_s4, GATV2_BWD_COLS_W1_S4 gatv2_bwd_cols_w1_s4);
    f32, 1, 8: forward 1 (GATV2_FWD_W1_S8 gatv2_fwd_w1_s8, GATV2_GROUP_W1_S8 gatv2_group_w1_s8);
    F4, 4, 1: forward 2 (GATV2_FWD_W4_S1 gatv2_fwd_w4_s1, GATV2_GROUP_W4_S1 gatv2_group_w4_s1),
        backward 2 (GATV2_BWD_ROWS_W4_S1 gatv2_bwd_rows_w4_s1, GATV2_BWD_COLS_W4_S1 gatv2_bwd_cols_w4_s1),
        packed (GATV2_FWD_PACKED_W4_S1 gatv2_fwd_packed_w4_s1, GATV2_BWD_ROWS_PACKED_W4_S1 gatv2_bwd_rows_packed_w4_s1,
            GATV2_BWD_COLS_PACKED_W4_S1 gatv2_bwd_cols_packed_w4_s1);
    F4, 4, 2: forward 4 (GATV2_FWD_W4_S2 gatv2_fwd_w4_s2, GATV2_GROUP_W4_S2 gatv2_group_w4_s2),
        backward 2 (GATV2_BWD_ROWS_W4_S2 gatv2_bwd_rows_w4_s2, GATV2_BWD_COLS_W4_S2 gatv2_bwd_cols_w4_s2);
    F4, 4, 4: forward 2 (GATV2_FWD_W4_S4 gatv2_fwd_w4_s4, GATV2_GROUP_W4_S4 gatv2_group_w4_s4),
        backward 2 (GATV2_BWD_ROWS_W4_S4 gatv2_bwd_rows_w4_s4, GATV2_BWD_COLS_W4_S4 gatv2_bwd_cols_w4_s4);
    F4, 4, 8: forward 1 (GATV2_FWD_W4_S8 gatv2_fwd_w4_s8, GATV2_GROUP_W4_S8 gatv2_group_w4_s8);
}
