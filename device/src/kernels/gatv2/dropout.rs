//! The GATv2 kernels with attention dropout (`gatv2_drop_*`): the same shapes and bodies as
//! [`super::VARIANTS`], compiled with the passes' `DROPOUT` on, so that each edge's weight is
//! multiplied by its mask factor (`kernels::common::dropout`) in the aggregation and in the
//! backward; the kernels without dropout stay as they were (the mask costs registers).

use super::{cols_body, forward_body, group_body, rows_body};
use crate::abi::{GatV2BwdColsParams, GatV2BwdRowsParams, GatV2FwdParams, GatV2GroupParams};
use crate::kernels::attention::variants::variants;
use crate::kernels::common::vector::Vector;
use crate::simt::F4;

#[inline(always)]
fn fwd<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatV2FwdParams) {
    forward_body::<V, SLOTS, STEP, true, PACKED>(p)
}

#[inline(always)]
fn grp<V: Vector, const SLOTS: usize, const STEP: usize>(p: &GatV2GroupParams) {
    group_body::<V, SLOTS, STEP, true>(p)
}

#[inline(always)]
fn bwd_rows<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatV2BwdRowsParams) {
    rows_body::<V, SLOTS, STEP, true, PACKED>(p)
}

#[inline(always)]
fn bwd_cols<V: Vector, const SLOTS: usize, const STEP: usize, const PACKED: bool>(p: &GatV2BwdColsParams) {
    cols_body::<V, SLOTS, STEP, true, PACKED>(p)
}

variants! {
    model "GATv2 with dropout";
    params (GatV2FwdParams, GatV2GroupParams, GatV2BwdRowsParams, GatV2BwdColsParams);
    bodies (fwd, grp, bwd_rows, bwd_cols);
    f32, 1, 1: forward 4 (GATV2_DROP_FWD_W1_S1 gatv2_drop_fwd_w1_s1, GATV2_DROP_GROUP_W1_S1 gatv2_drop_group_w1_s1),
        backward 2 (GATV2_DROP_BWD_ROWS_W1_S1 gatv2_drop_bwd_rows_w1_s1, GATV2_DROP_BWD_COLS_W1_S1 gatv2_drop_bwd_cols_w1_s1),
        packed (GATV2_DROP_FWD_PACKED_W1_S1 gatv2_drop_fwd_packed_w1_s1, GATV2_DROP_BWD_ROWS_PACKED_W1_S1 gatv2_drop_bwd_rows_packed_w1_s1,
            GATV2_DROP_BWD_COLS_PACKED_W1_S1 gatv2_drop_bwd_cols_packed_w1_s1);
    f32, 1, 2: forward 4 (GATV2_DROP_FWD_W1_S2 gatv2_drop_fwd_w1_s2, GATV2_DROP_GROUP_W1_S2 gatv2_drop_group_w1_s2),
        backward 2 (GATV2_DROP_BWD_ROWS_W1_S2 gatv2_drop_bwd_rows_w1_s2, GATV2_DROP_BWD_COLS_W1_S2 gatv2_drop_bwd_cols_w1_s2);
    f32, 1, 4: forward 2 (GATV2_DROP_FWD_W1_S4 gatv2_drop_fwd_w1_s4, GATV2_DROP_GROUP_W1_S4 gatv2_drop_group_w1_s4),
        backward 2 (GATV2_DROP_BWD_ROWS_W1_S4 gatv2_drop_bwd_rows_w1_s4, GATV2_DROP_BWD_COLS_W1_S4 gatv2_drop_bwd_cols_w1_s4);
    f32, 1, 8: forward 1 (GATV2_DROP_FWD_W1_S8 gatv2_drop_fwd_w1_s8, GATV2_DROP_GROUP_W1_S8 gatv2_drop_group_w1_s8);
    F4, 4, 1: forward 2 (GATV2_DROP_FWD_W4_S1 gatv2_drop_fwd_w4_s1, GATV2_DROP_GROUP_W4_S1 gatv2_drop_group_w4_s1),
        backward 2 (GATV2_DROP_BWD_ROWS_W4_S1 gatv2_drop_bwd_rows_w4_s1, GATV2_DROP_BWD_COLS_W4_S1 gatv2_drop_bwd_cols_w4_s1),
        packed (GATV2_DROP_FWD_PACKED_W4_S1 gatv2_drop_fwd_packed_w4_s1, GATV2_DROP_BWD_ROWS_PACKED_W4_S1 gatv2_drop_bwd_rows_packed_w4_s1,
            GATV2_DROP_BWD_COLS_PACKED_W4_S1 gatv2_drop_bwd_cols_packed_w4_s1);
    F4, 4, 2: forward 4 (GATV2_DROP_FWD_W4_S2 gatv2_drop_fwd_w4_s2, GATV2_DROP_GROUP_W4_S2 gatv2_drop_group_w4_s2),
        backward 2 (GATV2_DROP_BWD_ROWS_W4_S2 gatv2_drop_bwd_rows_w4_s2, GATV2_DROP_BWD_COLS_W4_S2 gatv2_drop_bwd_cols_w4_s2);
    F4, 4, 4: forward 2 (GATV2_DROP_FWD_W4_S4 gatv2_drop_fwd_w4_s4, GATV2_DROP_GROUP_W4_S4 gatv2_drop_group_w4_s4),
        backward 2 (GATV2_DROP_BWD_ROWS_W4_S4 gatv2_drop_bwd_rows_w4_s4, GATV2_DROP_BWD_COLS_W4_S4 gatv2_drop_bwd_cols_w4_s4);
    F4, 4, 8: forward 1 (GATV2_DROP_FWD_W4_S8 gatv2_drop_fwd_w4_s8, GATV2_DROP_GROUP_W4_S8 gatv2_drop_group_w4_s8);
}
