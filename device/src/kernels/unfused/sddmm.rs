//! SDDMM with a dot product: one score per (edge, head), edge-parallel over the COO rows.
//!
//! # Grid mapping
//! One item per (edge e, head h), item index `e·H + h` (so consecutive teams write consecutive
//! scores). A team of `p.team_lanes` lanes takes an item; its lanes stride over the `F` features
//! (in [`F4`](crate::simt::F4) units when `F % 4 == 0`), so the team reads the two contiguous
//! feature rows coalesced. Teams sweep the `E·H` items grid-stride. 1-D grid and block,
//! `block.x` a multiple of `WARP_SIZE`. The host's choice: `team_lanes` the smallest power of two
//! ≥ `F / 4` (vector path) or `≥ F` (scalar path), at most 32; `grid.x = ⌈E·H·team / block.x⌉`
//! (fewer blocks are also correct).
//!
//! # Numerics
//! Each lane accumulates its features with `fma` in increasing feature order; the team adds the
//! lanes' partial sums by a butterfly (a fixed tree), then lane 0 multiplies by `scale` once.

use crate::abi::SddmmParams;
use crate::kernel;
use crate::kernels::common::reduce::sum_over;
use crate::kernels::common::vector::Vector;
use crate::kernels::unfused::Teams;
use crate::simt::F4;

kernel! {
    /// `scores[e, h] = scale · a[row(e), h, :] · b[col(e), h, :]` for every edge and head.
    pub kernel SDDMM = fn unfused_sddmm(p: &SddmmParams) {
        if p.feat.is_multiple_of(4) {
            sddmm_body::<F4>(p);
        } else {
            sddmm_body::<f32>(p);
        }
    }
}

/// The kernel for feature unit `V`.
#[inline(always)]
fn sddmm_body<V: Vector>(p: &SddmmParams) {
    let a = p.a.cast::<V>();
    let b = p.b.cast::<V>();
    let heads = p.heads as u64;
    let units = (p.feat / V::WIDTH as u32) as u64;
    let total = p.num_edges * heads;
    let g = Teams::new(p.team_lanes);

    // The sweep's condition is warp-uniform, so every lane reaches the team reduction.
    let mut sweep = g.first;
    while sweep < total {
        let item = sweep + g.sub;
        let valid = item < total;

        // Phase 1: this lane's share of the dot product.
        let mut partial = 0.0f32;
        if valid {
            let e = item / heads;
            let h = item % heads;
            let i = p.coo_rows.load(e as usize) as u64;
            let j = p.columns.load(e as usize) as u64;
            let a_base = (i * heads + h) * units;
            let b_base = (j * heads + h) * units;
            let mut u = g.lane as u64;
            while u < units {
                partial += a.load((a_base + u) as usize).dot(b.load((b_base + u) as usize));
                u += g.lanes as u64;
            }
        }

        // Phase 2: the team's sum (every lane of the warp takes part).
        let dot = sum_over(partial, g.lanes);

        // Phase 3: lane 0 of the team writes the scaled score.
        if valid && g.lane == 0 {
            p.scores.store(item as usize, p.scale * dot);
        }
        sweep += g.stride;
    }
}
