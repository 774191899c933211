//! The fused GT kernels (also AGNN's, which is GT on normalised features): GT's score
//! ([`DotScore`]) in the model-generic passes of [`crate::kernels::attention`], instantiated once
//! per variant of [`VARIANTS`].
//!
//! A variant is a load width (`f32`, or `F4` when `F % 4 == 0`), a number of vectors per lane
//! (`SLOTS`) and edges per step and team (`STEP`): its forward and `row_group` entries always
//! exist; its backward entries (row and column passes) exist up to 4 slots — they hold twice the
//! forward's vectors, and at 8 slots they spill past 255 registers. The host planner reads this
//! table (and nothing else) to know which shapes the fused kernels hold. Steps shrink as `SLOTS`
//! grows, to keep a few vectors of keys and values in flight per lane without spilling; the
//! backward takes 2 edges per step (fewer registers, more warps per SM: on the H200, er-1M-d16
//! 4×64 forward+backward 36.3 ms against 37.7 with 4 and 45.5 with 8).

mod score;

pub use score::DotScore;

use crate::abi::{GtBwdColsParams, GtBwdRowsParams, GtFwdParams, GtGroupParams};
use crate::kernels::attention::{cols, forward, group, rows};
use crate::simt::{F4, KernelRef};

/// The backward entries of a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GtBackward {
    /// Edges per step and team.
    pub step: u32,
    /// The row pass (dq, D).
    pub rows: KernelRef<GtBwdRowsParams>,
    /// The column pass (dk, dv).
    pub cols: KernelRef<GtBwdColsParams>,
}

/// One compiled configuration of the fused GT kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GtVariant {
    /// Features per load: 1 or 4.
    pub width: u32,
    /// Register slots (vectors) per lane.
    pub slots: u32,
    /// Edges per step and team of the forward.
    pub forward_step: u32,
    /// The forward.
    pub forward: KernelRef<GtFwdParams>,
    /// The `row_group` forward.
    pub group: KernelRef<GtGroupParams>,
    /// The backward passes, where they exist.
    pub backward: Option<GtBackward>,
}

/// Declares the variants once: each line generates its entry points and its row of
/// [`VARIANTS`]. A line reads `vector type, width, slots: forward step (forward entry, group
/// entry) [, backward step (row-pass entry, column-pass entry)]`.
macro_rules! variants {
    ($(
        $v:ty, $width:literal, $slots:literal:
        forward $fstep:literal ($fconst:ident $fwd:ident, $gconst:ident $grp:ident)
        $(, backward $bstep:literal ($rconst:ident $rows:ident, $cconst:ident $cols:ident))?;
    )*) => {
        $(
            crate::kernel! {
                #[doc = concat!("GT forward, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                pub kernel $fconst = fn $fwd(p: &GtFwdParams) {
                    let score = DotScore { scale_log2: p.scale_log2, grad_scale: 1.0 };
                    forward::forward::<$v, $slots, $fstep, _>(&p.edges, &score, p.q, p.k, p.v, &p.dst)
                }
            }
            crate::kernel! {
                #[doc = concat!("GT `row_group` forward, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                pub kernel $gconst = fn $grp(p: &GtGroupParams) {
                    let score = DotScore { scale_log2: p.scale_log2, grad_scale: 1.0 };
                    group::forward_group::<$v, $slots, $fstep, _>(&p.group, &score, p.q, p.k, p.v)
                }
            }
            $(
                crate::kernel! {
                    #[doc = concat!("GT backward row pass, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                    pub kernel $rconst = fn $rows(p: &GtBwdRowsParams) {
                        let score = DotScore { scale_log2: p.scale_log2, grad_scale: p.grad_scale };
                        rows::backward_rows::<$v, $slots, $bstep, _>(&p.edges, &score, p.q, p.k, p.v, &p.grads)
                    }
                }
                crate::kernel! {
                    #[doc = concat!("GT backward column pass, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                    pub kernel $cconst = fn $cols(p: &GtBwdColsParams) {
                        let score = DotScore { scale_log2: p.scale_log2, grad_scale: p.grad_scale };
                        cols::backward_cols::<$v, $slots, $bstep, _>(&p.edges, &score, p.q, p.k, p.v, &p.grads)
                    }
                }
            )?
        )*

        /// Every variant, one per (width, slots).
        pub const VARIANTS: &[GtVariant] = &[$(
            GtVariant {
                width: $width,
                slots: $slots,
                forward_step: $fstep,
                forward: $fconst,
                group: $gconst,
                backward: variants!(@backward $($bstep, $rconst, $cconst)?),
            },
        )*];
    };
    (@backward) => { None };
    (@backward $bstep:literal, $rconst:ident, $cconst:ident) => {
        Some(GtBackward { step: $bstep, rows: $rconst, cols: $cconst })
    };
}

variants! {
    f32, 1, 1: forward 4 (GT_FWD_W1_S1 gt_fwd_w1_s1, GT_GROUP_W1_S1 gt_group_w1_s1),
        backward 2 (GT_BWD_ROWS_W1_S1 gt_bwd_rows_w1_s1, GT_BWD_COLS_W1_S1 gt_bwd_cols_w1_s1);
    f32, 1, 2: forward 4 (GT_FWD_W1_S2 gt_fwd_w1_s2, GT_GROUP_W1_S2 gt_group_w1_s2),
        backward 2 (GT_BWD_ROWS_W1_S2 gt_bwd_rows_w1_s2, GT_BWD_COLS_W1_S2 gt_bwd_cols_w1_s2);
    f32, 1, 4: forward 2 (GT_FWD_W1_S4 gt_fwd_w1_s4, GT_GROUP_W1_S4 gt_group_w1_s4),
        backward 2 (GT_BWD_ROWS_W1_S4 gt_bwd_rows_w1_s4, GT_BWD_COLS_W1_S4 gt_bwd_cols_w1_s4);
    f32, 1, 8: forward 1 (GT_FWD_W1_S8 gt_fwd_w1_s8, GT_GROUP_W1_S8 gt_group_w1_s8);
    F4, 4, 1: forward 4 (GT_FWD_W4_S1 gt_fwd_w4_s1, GT_GROUP_W4_S1 gt_group_w4_s1),
        backward 2 (GT_BWD_ROWS_W4_S1 gt_bwd_rows_w4_s1, GT_BWD_COLS_W4_S1 gt_bwd_cols_w4_s1);
    F4, 4, 2: forward 4 (GT_FWD_W4_S2 gt_fwd_w4_s2, GT_GROUP_W4_S2 gt_group_w4_s2),
        backward 2 (GT_BWD_ROWS_W4_S2 gt_bwd_rows_w4_s2, GT_BWD_COLS_W4_S2 gt_bwd_cols_w4_s2);
    F4, 4, 4: forward 2 (GT_FWD_W4_S4 gt_fwd_w4_s4, GT_GROUP_W4_S4 gt_group_w4_s4),
        backward 2 (GT_BWD_ROWS_W4_S4 gt_bwd_rows_w4_s4, GT_BWD_COLS_W4_S4 gt_bwd_cols_w4_s4);
    F4, 4, 8: forward 1 (GT_FWD_W4_S8 gt_fwd_w4_s8, GT_GROUP_W4_S8 gt_group_w4_s8);
}

/// The variant for a load width and slot count, if one was compiled.
pub fn variant(width: u32, slots: u32) -> Option<&'static GtVariant> {
    VARIANTS.iter().find(|v| v.width == width && v.slots == slots)
}
