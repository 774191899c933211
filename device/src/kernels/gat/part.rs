//! GAT's forward for training (`gat_part_fwd_*`, `gat_drop_part_fwd_*`): the forwards of
//! [`super::VARIANTS`] and [`super::dropout::VARIANTS`], row for row (same widths, slots and
//! steps), that also sum the **positive part** of each row: `o⁺_i = Σ_{j: el_i + er_j > 0}
//! α_ij·factor_ij·h_j` and `α⁺_i = Σ_{j: el_i + er_j > 0} α_ij` ([`crate::abi::PartOut`]).
//!
//! With them the backward's row pass reads no neighbour: LeakyReLU' is 1 on the positive part and
//! `slope` elsewhere, and `Σ_j ds_ij = 0` over a row (`Σ_j α_ij·dα_ij = dO_i·o_i = D_i` and
//! `Σ_j α_ij = 1`), so
//!
//! ```text
//! d el_i = Σ_j ds_ij·LeakyReLU'_ij = (1 − slope)·Σ_{j positive} α_ij·(dα_ij − D_i)
//!        = (1 − slope)·(dO_i·o⁺_i − D_i·α⁺_i)
//! ```
//!
//! per head ([`GAT_PART_ROWS`]: the grid's warps stride over groups of [`PART_ROWS_PER_WARP`]
//! (node, head) pairs, lanes over the features; the dot products are butterfly warp sums). The forward pays one more `[N, H, F]` output and the
//! registers of a second accumulator; the row pass's gather of every edge's `h_j` goes.

use super::LeakyScore;
use crate::abi::{GatFwdParams, GatPartRowsParams};
use crate::kernel;
use crate::kernels::attention::forward;
use crate::kernels::common::reduce::warp_sum;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{self, F4, KernelRef, WARP_SIZE};

/// A forward with the positive part, in the same row of its table as the variant it mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartForward {
    /// Features per load: 1 or 4.
    pub width: u32,
    /// Register slots (vectors) per lane.
    pub slots: u32,
    /// Edges per step and team.
    pub step: u32,
    /// The forward.
    pub forward: KernelRef<GatFwdParams>,
    /// The packed forward, where the mirrored variant has one.
    pub packed: Option<KernelRef<GatFwdParams>>,
}

#[inline(always)]
fn part_body<V: Vector, const SLOTS: usize, const STEP: usize, const DROPOUT: bool, const PACKED: bool>(
    p: &GatFwdParams,
) {
    let score = LeakyScore { slope: p.slope };
    forward::forward_with_part::<V, SLOTS, STEP, DROPOUT, PACKED, true, _>(
        &p.edges, &score, p.el, p.er, p.h, &p.dst, &p.part,
    )
}

/// Declares one table of part forwards: `vector type, width, slots, step: entry [, packed entry]`.
macro_rules! part_table {
    (
        $table:ident, $dropout:literal, $doc:literal;
        $( $v:ty, $width:literal, $slots:literal, $step:literal: $fconst:ident $fwd:ident
            $(, packed $pconst:ident $pfwd:ident)?; )*
    ) => {
        $(
            $crate::kernel! {
                #[doc = concat!($doc, ", ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                pub kernel $fconst = fn $fwd(p: &GatFwdParams) {
                    part_body::<$v, $slots, $step, $dropout, false>(p)
                }
            }
            $(
                $crate::kernel! {
                    #[doc = concat!($doc, ", packed, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                    pub kernel $pconst = fn $pfwd(p: &GatFwdParams) {
                        part_body::<$v, $slots, $step, $dropout, true>(p)
                    }
                }
            )?
        )*

        #[doc = concat!("Every ", $doc, ", row for row with the forwards it mirrors.")]
        pub const $table: &[PartForward] = &[$(
            PartForward {
                width: $width,
                slots: $slots,
                step: $step,
                forward: $fconst,
                packed: part_table!(@packed $($pconst)?),
            },
        )*];
    };
    (@packed) => { None };
    (@packed $pconst:ident) => { Some($pconst) };
}

part_table! {
    VARIANTS, false, "GAT forward with the positive part";
    f32, 1, 1, 4: GAT_PART_FWD_W1_S1 gat_part_fwd_w1_s1, packed GAT_PART_FWD_PACKED_W1_S1 gat_part_fwd_packed_w1_s1;
    f32, 1, 2, 4: GAT_PART_FWD_W1_S2 gat_part_fwd_w1_s2;
    f32, 1, 4, 2: GAT_PART_FWD_W1_S4 gat_part_fwd_w1_s4;
    f32, 1, 8, 1: GAT_PART_FWD_W1_S8 gat_part_fwd_w1_s8;
    F4, 4, 1, 4: GAT_PART_FWD_W4_S1 gat_part_fwd_w4_s1, packed GAT_PART_FWD_PACKED_W4_S1 gat_part_fwd_packed_w4_s1;
    F4, 4, 2, 4: GAT_PART_FWD_W4_S2 gat_part_fwd_w4_s2;
    F4, 4, 4, 2: GAT_PART_FWD_W4_S4 gat_part_fwd_w4_s4;
    F4, 4, 8, 1: GAT_PART_FWD_W4_S8 gat_part_fwd_w4_s8;
}

/// The same with attention dropout, mirroring [`super::dropout::VARIANTS`].
pub mod dropout {
    use super::{PartForward, part_body};
    use crate::abi::GatFwdParams;
    use crate::simt::F4;

    part_table! {
        VARIANTS, true, "GAT forward with dropout and the positive part";
        f32, 1, 1, 4: GAT_DROP_PART_FWD_W1_S1 gat_drop_part_fwd_w1_s1,
            packed GAT_DROP_PART_FWD_PACKED_W1_S1 gat_drop_part_fwd_packed_w1_s1;
        f32, 1, 2, 4: GAT_DROP_PART_FWD_W1_S2 gat_drop_part_fwd_w1_s2;
        f32, 1, 4, 2: GAT_DROP_PART_FWD_W1_S4 gat_drop_part_fwd_w1_s4;
        f32, 1, 8, 1: GAT_DROP_PART_FWD_W1_S8 gat_drop_part_fwd_w1_s8;
        F4, 4, 1, 4: GAT_DROP_PART_FWD_W4_S1 gat_drop_part_fwd_w4_s1,
            packed GAT_DROP_PART_FWD_PACKED_W4_S1 gat_drop_part_fwd_packed_w4_s1;
        F4, 4, 2, 4: GAT_DROP_PART_FWD_W4_S2 gat_drop_part_fwd_w4_s2;
        F4, 4, 4, 2: GAT_DROP_PART_FWD_W4_S4 gat_drop_part_fwd_w4_s4;
        F4, 4, 8, 1: GAT_DROP_PART_FWD_W4_S8 gat_drop_part_fwd_w4_s8;
    }
}

/// Calls `f` with the first flat index of each group of `per_warp` (node, head) pairs this warp
/// takes: the grid's warps stride over the groups (pair `i` is node `i / H`, head `i % H`), so a
/// grid of a few blocks per multiprocessor covers any node count with warps that live long. H200,
/// GAT forward+backward ms, one warp per group against this: er-1M-d16 4×64 16.70 → 16.37, 1×128
/// 8.56 → 8.40, pl-1M-d16 4×64 13.13 → 12.76 (`docs/runs/2026-12-01d/ab-node-grid.txt`; GAT's node
/// scores were slower so, and keep one warp per group).
#[inline(always)]
fn each_head_group(nodes: u32, heads: u32, per_warp: usize, mut f: impl FnMut(usize)) {
    let warps = (simt::block_dim().x / WARP_SIZE) as u64;
    let stride = simt::grid_dim().x as u64 * warps * per_warp as u64;
    let total = nodes as u64 * heads as u64;
    let mut first = (simt::block_idx().x as u64 * warps + simt::warp_id() as u64) * per_warp as u64;
    while first < total {
        f(first as usize);
        first += stride;
    }
}

/// (node, head) pairs one warp of [`GAT_PART_ROWS`] takes (their loads in flight together).
pub const PART_ROWS_PER_WARP: usize = 4;

kernel! {
    /// The backward's row pass from the positive part: `delta[n, h] = dO·o` and
    /// `d_el[n, h] = (1 − slope)·(dO·o⁺ − delta·α⁺)`.
    pub kernel GAT_PART_ROWS = fn gat_part_rows(p: &GatPartRowsParams) {
        each_head_group(p.nodes, p.heads, PART_ROWS_PER_WARP, |first| part_rows(p, first));
    }
}

/// [`GAT_PART_ROWS`] for the group of pairs from `first`.
#[inline(always)]
fn part_rows(p: &GatPartRowsParams, first: usize) {
    let (total, feat) = (p.nodes as usize * p.heads as usize, p.feat as usize);
    let lane = simt::lane_id() as usize;
    let mut delta = [0.0f32; PART_ROWS_PER_WARP];
    let mut positive = [0.0f32; PART_ROWS_PER_WARP];
    let mut f = lane;
    while f < feat {
        unroll!(PART_ROWS_PER_WARP, |i| {
            let nh = first + i;
            if nh < total {
                let at = nh * feat + f;
                let d_out = p.d_out.load(at);
                delta[i] += d_out * p.out.load(at);
                positive[i] += d_out * p.part_out.load(at);
            }
        });
        f += WARP_SIZE as usize;
    }
    unroll!(PART_ROWS_PER_WARP, |i| {
        let nh = first + i;
        let (delta, positive) = (warp_sum(delta[i]), warp_sum(positive[i]));
        if lane == 0 && nh < total {
            p.delta.store(nh, delta);
            p.d_el.store(nh, (1.0 - p.slope) * (positive - delta * p.part_weight.load(nh)));
        }
    });
}
