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
//! per head ([`GAT_PART_ROWS`], `_w4` with 16-byte loads: the rows of
//! [`crate::kernels::common::node_rows`], a group of lanes per (node, head) pair; each dot
//! product a butterfly over the group). The forward pays one more `[N, H, F]` output and the
//! registers of a second accumulator; the row pass's gather of every edge's `h_j` goes.

use super::LeakyScore;
use crate::abi::{GatFwdParams, GatPartRowsParams};
use crate::kernel;
use crate::kernels::attention::forward;
use crate::kernels::common::node_rows::{GAT_LANES, LaneRows, NodeLanes, ROWS_IN_FLIGHT, dot_vector, load_vector};
use crate::kernels::common::reduce::sum_over;
use crate::kernels::common::unroll::unroll;
use crate::kernels::common::vector::Vector;
use crate::simt::{F2, F4, KernelRef};

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

kernel! {
    /// The backward's row pass from the positive part: `delta[n, h] = dO·o` and
    /// `d_el[n, h] = (1 − slope)·(dO·o⁺ − delta·α⁺)`; loads of one feature (any `F`).
    pub kernel GAT_PART_ROWS = fn gat_part_rows(p: &GatPartRowsParams) {
        part_rows::<false>(p)
    }
}

kernel! {
    /// [`GAT_PART_ROWS`] with loads of four features (`F % 4 == 0`).
    pub kernel GAT_PART_ROWS_W4 = fn gat_part_rows_w4(p: &GatPartRowsParams) {
        part_rows::<true>(p)
    }
}

/// [`GAT_PART_ROWS`] over the rows of [`NodeLanes::new`] (at most [`GAT_LANES`] lanes a row) for
/// `F` (whose width the host matched with `WIDE`): each lane's terms in feature order
/// ([`dot_vector`]), a butterfly over the row's group.
#[inline(always)]
fn part_rows<const WIDE: bool>(p: &GatPartRowsParams) {
    const U: usize = ROWS_IN_FLIGHT;
    let feat = p.feat as usize;
    let layout = NodeLanes::new(feat, GAT_LANES);
    let total = p.nodes as usize * p.heads as usize;
    let Some(LaneRows { rows, valid, member }) = LaneRows::of_warp(layout, total) else { return };
    let width = if WIDE { 4 } else { 1 };
    let vectors = feat / width;
    let base: [usize; U] = core::array::from_fn(|u| rows[u] * feat);
    let mut delta = [0.0f32; U];
    let mut positive = [0.0f32; U];
    let mut v = member;
    while v < vectors {
        let mut loads = [(F4::default(), F4::default(), F4::default()); U];
        unroll!(U, |u| {
            if valid[u] {
                let at = base[u] + v * width;
                loads[u] = (
                    load_vector::<WIDE>(p.d_out, at),
                    load_vector::<WIDE>(p.out, at),
                    load_vector::<WIDE>(p.part_out, at),
                );
            }
        });
        unroll!(U, |u| {
            let (d_out, out, part_out) = loads[u];
            delta[u] += dot_vector::<WIDE>(d_out, out);
            positive[u] += dot_vector::<WIDE>(d_out, part_out);
        });
        v += layout.lanes;
    }
    unroll!(U, |u| {
        let (delta, positive) = (sum_over(delta[u], layout.lanes as u32), sum_over(positive[u], layout.lanes as u32));
        if member == 0 && valid[u] {
            let (ml, el) = (p.stats.cast::<F2>().load(rows[u]), p.el.load(rows[u]));
            p.record.cast::<F4>().store(rows[u], F4([ml.0[0], ml.0[1], delta, el]));
            p.d_el.store(rows[u], (1.0 - p.slope) * (positive - delta * p.part_weight.load(rows[u])));
        }
    });
}
