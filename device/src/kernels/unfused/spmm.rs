//! SpMM over CSR rows (the row pass) and over CSC columns (the column pass, gather-style): the
//! `unfused` schedule's aggregation and the backward's dq, dk and dv.
//!
//! # Grid mapping
//! One item per (output node n, head h), item index `n·H + h`. A team of `p.team_lanes` lanes takes
//! an item; its lanes stride over the `F` features (in [`F4`] units when `F % 4 == 0`) and each
//! lane walks all of the node's edges for its features, so each edge's feature row is read
//! coalesced by the team. Teams sweep the `N·H` items grid-stride. 1-D grid and block,
//! `block.x` a multiple of `WARP_SIZE`. The host's choice: `team_lanes` the smallest power of two
//! ≥ `F / 4` (vector path) or `≥ F` (scalar path), at most 32; `grid.x = ⌈N·H·team / block.x⌉`
//! (fewer blocks are also correct).
//!
//! # Numerics
//! Each output element is one lane's `fma` chain over the node's edges in slot order (CSR edge
//! order for rows; increasing edge id within a CSC column), multiplied by `scale` at the end.
//! No atomics; empty rows and columns write 0.

use crate::abi::{SpmmParams, SpmmTransposedParams};
use crate::kernel;
use crate::kernels::common::vector::Vector;
use crate::kernels::unfused::Teams;
use crate::simt::{F4, GSlice, GSliceMut};

kernel! {
    /// `out[i, h, :] = scale · Σ_{e in row i} weights[e, h] · x[columns[e], h, :]`.
    pub kernel SPMM = fn unfused_spmm(p: &SpmmParams) {
        let s = Aggregate {
            offsets: p.offsets,
            nodes: p.columns,
            edge_ids: None,
            weights: p.weights,
            num_out: p.num_rows,
            heads: p.heads,
            feat: p.feat,
            scale: p.scale,
            team_lanes: p.team_lanes,
        };
        if p.feat.is_multiple_of(4) {
            aggregate::<F4>(&s, p.x.cast(), p.out.cast());
        } else {
            aggregate::<f32>(&s, p.x, p.out);
        }
    }
}

kernel! {
    /// `out[j, h, :] = scale · Σ_{slots k of column j} weights[csc_edge_ids[k], h] · x[csc_rows[k], h, :]`.
    pub kernel SPMM_TRANSPOSED = fn unfused_spmm_transposed(p: &SpmmTransposedParams) {
        let s = Aggregate {
            offsets: p.csc_offsets,
            nodes: p.csc_rows,
            edge_ids: Some(p.csc_edge_ids),
            weights: p.weights,
            num_out: p.num_cols,
            heads: p.heads,
            feat: p.feat,
            scale: p.scale,
            team_lanes: p.team_lanes,
        };
        if p.feat.is_multiple_of(4) {
            aggregate::<F4>(&s, p.x.cast(), p.out.cast());
        } else {
            aggregate::<f32>(&s, p.x, p.out);
        }
    }
}

/// One SpMM over a compressed pattern: slot `k` of output node `n` (`offsets[n]..offsets[n+1]`)
/// names the other node `nodes[k]` and the edge `edge_ids[k]` (or `k` itself without them).
struct Aggregate {
    offsets: GSlice<u64>,
    nodes: GSlice<u32>,
    edge_ids: Option<GSlice<u32>>,
    weights: GSlice<f32>,
    num_out: u32,
    heads: u32,
    feat: u32,
    scale: f32,
    team_lanes: u32,
}

/// The kernel body for feature unit `V`: `x` `[·, H, F]` and `out` `[num_out, H, F]` in units.
#[inline(always)]
fn aggregate<V: Vector>(s: &Aggregate, x: GSlice<V>, out: GSliceMut<V>) {
    let heads = s.heads as u64;
    let units = (s.feat / V::WIDTH as u32) as u64;
    let total = s.num_out as u64 * heads;
    let g = Teams::new(s.team_lanes);

    let mut sweep = g.first;
    while sweep < total {
        let item = sweep + g.sub;
        if item < total {
            // Phase 1: the item's slots and head.
            let n = (item / heads) as usize;
            let h = item % heads;
            let start = s.offsets.load(n);
            let end = s.offsets.load(n + 1);

            // Phase 2: per feature unit of this lane, the weighted sum over the slots.
            let mut u = g.lane as u64;
            while u < units {
                let mut acc = V::zero();
                let mut k = start;
                while k < end {
                    let e = match s.edge_ids {
                        Some(ids) => ids.load(k as usize) as u64,
                        None => k,
                    };
                    let w = s.weights.load((e * heads + h) as usize);
                    let other = s.nodes.load(k as usize) as u64;
                    acc = x.load(((other * heads + h) * units + u) as usize).mul_add(w, acc);
                    k += 1;
                }

                // Phase 3: the scaled result.
                out.store((item * units + u) as usize, acc.scale(s.scale));
                u += g.lanes as u64;
            }
        }
        sweep += g.stride;
    }
}
