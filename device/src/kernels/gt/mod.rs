//! The fused GT kernels (also AGNN's, which is GT on normalised features): forward, the row and
//! column passes of the backward, and the combine steps of split rows.
//!
//! Each body is generic over the load width (`f32`, or `F4` when `F % 4 == 0`) and the vectors per
//! lane (`SLOTS`); the entries below are its instantiations, named `gt_{pass}_{w1|w4}_s{SLOTS}`.
//! The host picks one per launch from [`FWD`], [`BWD_ROWS`] and [`BWD_COLS`], indexed by
//! [`variant_index`]. Edges per step (`CHUNK`) shrink as `SLOTS` grows, to keep a few vectors of
//! keys and values in flight per lane without spilling; the backward passes take 2 edges per
//! step at 1 or 2 slots (fewer registers, more warps per SM: on the H200, er-1M-d16 4×64
//! forward+backward 36.3 ms against 37.7 with 4 and 45.5 with 8).

mod bwd_cols;
mod bwd_rows;
pub mod combine;
mod fwd;
mod group;

pub use bwd_cols::backward_cols;
pub use bwd_rows::backward_rows;
pub use combine::*;
pub use fwd::forward;
pub use group::forward_group;

use crate::abi::{GtBwdColsParams, GtBwdRowsParams, GtFwdParams, GtGroupParams};
use crate::kernel;
use crate::simt::F4;

/// The vectors-per-lane counts there are kernels for.
pub const SLOT_COUNTS: [u32; 4] = [1, 2, 4, 8];

/// Index into [`FWD`], [`BWD_ROWS`] and [`BWD_COLS`] of the kernel for a load width (1 or 4)
/// and a slot count (one of [`SLOT_COUNTS`]); `None` for any other combination.
pub const fn variant_index(width: u32, slots: u32) -> Option<usize> {
    let w = match width {
        1 => 0,
        4 => 1,
        _ => return None,
    };
    let s = match slots {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        _ => return None,
    };
    Some(w * 4 + s)
}

macro_rules! instantiate {
    ($( $konst:ident, $name:ident, $body:ident, $params:ty, $v:ty, $slots:literal, $chunk:literal; )*) => {
        $(
            kernel! {
                #[doc = concat!("`", stringify!($body), "` with `", stringify!($v), "` loads, ", stringify!($slots), " slots, ", stringify!($chunk), " edges per step.")]
                pub kernel $konst = fn $name(p: &$params) {
                    $body::<$v, $slots, $chunk>(p)
                }
            }
        )*
    };
}

instantiate! {
    GT_FWD_W1_S1, gt_fwd_w1_s1, forward, GtFwdParams, f32, 1, 4;
    GT_FWD_W1_S2, gt_fwd_w1_s2, forward, GtFwdParams, f32, 2, 4;
    GT_FWD_W1_S4, gt_fwd_w1_s4, forward, GtFwdParams, f32, 4, 2;
    GT_FWD_W1_S8, gt_fwd_w1_s8, forward, GtFwdParams, f32, 8, 1;
    GT_FWD_W4_S1, gt_fwd_w4_s1, forward, GtFwdParams, F4, 1, 4;
    GT_FWD_W4_S2, gt_fwd_w4_s2, forward, GtFwdParams, F4, 2, 4;
    GT_FWD_W4_S4, gt_fwd_w4_s4, forward, GtFwdParams, F4, 4, 2;
    GT_FWD_W4_S8, gt_fwd_w4_s8, forward, GtFwdParams, F4, 8, 1;
    GT_GROUP_W1_S1, gt_group_w1_s1, forward_group, GtGroupParams, f32, 1, 4;
    GT_GROUP_W1_S2, gt_group_w1_s2, forward_group, GtGroupParams, f32, 2, 4;
    GT_GROUP_W1_S4, gt_group_w1_s4, forward_group, GtGroupParams, f32, 4, 2;
    GT_GROUP_W1_S8, gt_group_w1_s8, forward_group, GtGroupParams, f32, 8, 1;
    GT_GROUP_W4_S1, gt_group_w4_s1, forward_group, GtGroupParams, F4, 1, 4;
    GT_GROUP_W4_S2, gt_group_w4_s2, forward_group, GtGroupParams, F4, 2, 4;
    GT_GROUP_W4_S4, gt_group_w4_s4, forward_group, GtGroupParams, F4, 4, 2;
    GT_GROUP_W4_S8, gt_group_w4_s8, forward_group, GtGroupParams, F4, 8, 1;
    GT_BWD_ROWS_W1_S1, gt_bwd_rows_w1_s1, backward_rows, GtBwdRowsParams, f32, 1, 2;
    GT_BWD_ROWS_W1_S2, gt_bwd_rows_w1_s2, backward_rows, GtBwdRowsParams, f32, 2, 2;
    GT_BWD_ROWS_W1_S4, gt_bwd_rows_w1_s4, backward_rows, GtBwdRowsParams, f32, 4, 2;
    GT_BWD_ROWS_W4_S1, gt_bwd_rows_w4_s1, backward_rows, GtBwdRowsParams, F4, 1, 2;
    GT_BWD_ROWS_W4_S2, gt_bwd_rows_w4_s2, backward_rows, GtBwdRowsParams, F4, 2, 2;
    GT_BWD_ROWS_W4_S4, gt_bwd_rows_w4_s4, backward_rows, GtBwdRowsParams, F4, 4, 2;
    GT_BWD_COLS_W1_S1, gt_bwd_cols_w1_s1, backward_cols, GtBwdColsParams, f32, 1, 2;
    GT_BWD_COLS_W1_S2, gt_bwd_cols_w1_s2, backward_cols, GtBwdColsParams, f32, 2, 2;
    GT_BWD_COLS_W1_S4, gt_bwd_cols_w1_s4, backward_cols, GtBwdColsParams, f32, 4, 2;
    GT_BWD_COLS_W4_S1, gt_bwd_cols_w4_s1, backward_cols, GtBwdColsParams, F4, 1, 2;
    GT_BWD_COLS_W4_S2, gt_bwd_cols_w4_s2, backward_cols, GtBwdColsParams, F4, 2, 2;
    GT_BWD_COLS_W4_S4, gt_bwd_cols_w4_s4, backward_cols, GtBwdColsParams, F4, 4, 2;
}

/// The forward kernels, by [`variant_index`].
#[cfg(not(target_arch = "nvptx64"))]
pub const FWD: [Option<crate::simt::KernelRef<GtFwdParams>>; 8] = [
    Some(GT_FWD_W1_S1),
    Some(GT_FWD_W1_S2),
    Some(GT_FWD_W1_S4),
    Some(GT_FWD_W1_S8),
    Some(GT_FWD_W4_S1),
    Some(GT_FWD_W4_S2),
    Some(GT_FWD_W4_S4),
    Some(GT_FWD_W4_S8),
];

/// The `row_group` forward kernels, by [`variant_index`].
#[cfg(not(target_arch = "nvptx64"))]
pub const GROUP: [Option<crate::simt::KernelRef<GtGroupParams>>; 8] = [
    Some(GT_GROUP_W1_S1),
    Some(GT_GROUP_W1_S2),
    Some(GT_GROUP_W1_S4),
    Some(GT_GROUP_W1_S8),
    Some(GT_GROUP_W4_S1),
    Some(GT_GROUP_W4_S2),
    Some(GT_GROUP_W4_S4),
    Some(GT_GROUP_W4_S8),
];

/// The row-pass kernels, by [`variant_index`]. There are none with 8 slots: the row and column
/// passes hold twice the forward's vectors, and at 8 slots they spill past 255 registers (such
/// shapes — heads wider than 512 features, or 128 when `F % 4 != 0` — take the unfused backward).
#[cfg(not(target_arch = "nvptx64"))]
pub const BWD_ROWS: [Option<crate::simt::KernelRef<GtBwdRowsParams>>; 8] = [
    Some(GT_BWD_ROWS_W1_S1),
    Some(GT_BWD_ROWS_W1_S2),
    Some(GT_BWD_ROWS_W1_S4),
    None,
    Some(GT_BWD_ROWS_W4_S1),
    Some(GT_BWD_ROWS_W4_S2),
    Some(GT_BWD_ROWS_W4_S4),
    None,
];

/// The column-pass kernels, by [`variant_index`] (none with 8 slots, as [`BWD_ROWS`]).
#[cfg(not(target_arch = "nvptx64"))]
pub const BWD_COLS: [Option<crate::simt::KernelRef<GtBwdColsParams>>; 8] = [
    Some(GT_BWD_COLS_W1_S1),
    Some(GT_BWD_COLS_W1_S2),
    Some(GT_BWD_COLS_W1_S4),
    None,
    Some(GT_BWD_COLS_W4_S1),
    Some(GT_BWD_COLS_W4_S2),
    Some(GT_BWD_COLS_W4_S4),
    None,
];
