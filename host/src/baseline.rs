//! The baseline schedules, for comparison: `unfused` (SDDMM → edge softmax → SpMM, three
//! kernels with the scores and α `[E, H]` in device memory, as DGL sparse does) and
//! `edge_parallel` (DF-GNN's two-kernel "softmax": SDDMM, then one row kernel for softmax and
//! aggregation). Both share the unfused backward (seven kernels, α and ds in device memory;
//! `dfgnn_device::kernels::unfused` documents the steps). Any H and F.

use dfgnn_device::abi::{
    EdgeSoftmaxBackwardParams, EdgeSoftmaxParams, LaunchParams, SddmmParams, SoftmaxAggregateParams, SpmmParams,
    SpmmTransposedParams,
};
use dfgnn_device::kernels::unfused::{
    EDGE_SOFTMAX, EDGE_SOFTMAX_BACKWARD, SDDMM, SOFTMAX_AGGREGATE, SPMM, SPMM_TRANSPOSED,
};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, KernelRef, LaunchConfig, WARP_SIZE};

use crate::backend::{Backend, Buffer};
use crate::error::Result;
use crate::graph::DeviceGraph;

/// Threads per block of the baseline kernels.
const BLOCK: u32 = 128;

/// Lanes per item of the kernels whose lanes cover features: the smallest power of two covering a
/// head's loads (`F/4` vectors when `F % 4 == 0`, else `F` floats), at most a warp.
pub(crate) fn feature_team_lanes(feat: u32) -> u32 {
    let units = if feat.is_multiple_of(4) { feat / 4 } else { feat };
    units.next_power_of_two().min(WARP_SIZE)
}

/// Lanes per item of the kernels whose lanes cover a row's edges: the smallest power of two
/// covering the mean row length, at most a warp.
pub(crate) fn edge_team_lanes(num_edges: usize, num_rows: usize) -> u32 {
    let mean = num_edges.div_ceil(num_rows.max(1)).max(1) as u32;
    mean.next_power_of_two().min(WARP_SIZE)
}

/// Launches `items` items of `team_lanes` lanes (the kernels sweep grid-stride past the cap).
///
/// # Safety
/// As [`Backend::launch`].
pub(crate) unsafe fn launch_items<P: LaunchParams>(
    backend: &Backend,
    kernel: &KernelRef<P>,
    items: u64,
    team_lanes: u32,
    params: &P,
) -> Result<()> {
    if items == 0 {
        return Ok(());
    }
    let blocks = (items * team_lanes as u64).div_ceil(BLOCK as u64).clamp(1, i32::MAX as u64);
    let config = LaunchConfig { grid: Dim3::x(blocks as u32), block: Dim3::x(BLOCK), shared_bytes: 0 };
    // SAFETY: forwarded contract.
    unsafe { backend.launch(kernel, &config, params) }
}

/// The attention inputs and shape, as views.
pub(crate) struct Inputs {
    pub q: GSlice<f32>,
    pub k: GSlice<f32>,
    pub v: GSlice<f32>,
    pub heads: u32,
    pub feat: u32,
    pub scale: f32,
}

/// `scores[e, h] = scale·a[row(e), h]·b[col(e), h]`.
fn sddmm(
    g: &DeviceGraph<'_>,
    a: GSlice<f32>,
    b: GSlice<f32>,
    heads: u32,
    feat: u32,
    scale: f32,
    scores: &mut Buffer<f32>,
) -> Result<()> {
    let params = SddmmParams {
        a,
        b,
        coo_rows: g.d_coo_rows.view(),
        columns: g.d_columns.view(),
        scores: scores.view_mut(),
        num_edges: g.nnz() as u64,
        heads,
        feat,
        scale,
        team_lanes: feature_team_lanes(feat),
    };
    // SAFETY: `a` is [N_dst, H, F], `b` is [N_src, H, F] (checked by the caller), the graph's
    // arrays are validated, `scores` is [E, H]; inputs are distinct from the output.
    unsafe { launch_items(g.backend(), &SDDMM, g.nnz() as u64 * heads as u64, feature_team_lanes(feat), &params) }
}

/// α (and lse when given) from the scores, per row and head.
pub(crate) fn edge_softmax(
    g: &DeviceGraph<'_>,
    heads: u32,
    scores: &Buffer<f32>,
    alpha: &mut Buffer<f32>,
    lse: GSliceMut<f32>,
) -> Result<()> {
    let team_lanes = edge_team_lanes(g.nnz(), g.num_dst());
    let params = EdgeSoftmaxParams {
        offsets: g.d_row_offsets.view(),
        scores: scores.view(),
        alpha: alpha.view_mut(),
        lse,
        num_rows: g.num_dst() as u32,
        heads,
        team_lanes,
    };
    // SAFETY: scores and alpha are [E, H], lse empty or [N_dst, H]; the offsets are validated.
    unsafe { launch_items(g.backend(), &EDGE_SOFTMAX, g.num_dst() as u64 * heads as u64, team_lanes, &params) }
}

/// `out[i] = c·Σ_e w[e]·x[col(e)]` per row and head.
pub(crate) fn spmm(
    g: &DeviceGraph<'_>,
    heads: u32,
    feat: u32,
    weights: &Buffer<f32>,
    x: GSlice<f32>,
    scale: f32,
    out: &mut Buffer<f32>,
) -> Result<()> {
    let params = SpmmParams {
        offsets: g.d_row_offsets.view(),
        columns: g.d_columns.view(),
        weights: weights.view(),
        x,
        out: out.view_mut(),
        num_rows: g.num_dst() as u32,
        heads,
        feat,
        scale,
        team_lanes: feature_team_lanes(feat),
    };
    // SAFETY: weights [E, H], x [N_src, H, F], out [N_dst, H, F]; distinct input and output.
    unsafe { launch_items(g.backend(), &SPMM, g.num_dst() as u64 * heads as u64, feature_team_lanes(feat), &params) }
}

/// `out[j] = c·Σ_{CSC slots of j} w[edge]·x[row]` per column and head.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spmm_transposed(
    g: &DeviceGraph<'_>,
    heads: u32,
    feat: u32,
    weights: &Buffer<f32>,
    x: GSlice<f32>,
    scale: f32,
    out: &mut Buffer<f32>,
) -> Result<()> {
    let params = SpmmTransposedParams {
        csc_offsets: g.d_col_offsets.view(),
        csc_rows: g.d_csc_rows.view(),
        csc_edge_ids: g.d_csc_edge_ids.view(),
        weights: weights.view(),
        x,
        out: out.view_mut(),
        num_cols: g.num_src() as u32,
        heads,
        feat,
        scale,
        team_lanes: feature_team_lanes(feat),
    };
    // SAFETY: weights [E, H], x [N_dst, H, F], out [N_src, H, F]; the CSC is the validated
    // transpose of the CSR; distinct input and output.
    unsafe {
        launch_items(
            g.backend(),
            &SPMM_TRANSPOSED,
            g.num_src() as u64 * heads as u64,
            feature_team_lanes(feat),
            &params,
        )
    }
}

/// The forward of `unfused` (`edge_parallel = false`) or `edge_parallel`: `(out, lse)`.
pub(crate) fn forward(g: &DeviceGraph<'_>, x: &Inputs, edge_parallel: bool) -> Result<(Buffer<f32>, Buffer<f32>)> {
    let mut scores = g.backend().alloc::<f32>(g.nnz() * x.heads as usize)?;
    sddmm(g, x.q, x.k, x.heads, x.feat, x.scale, &mut scores)?;
    forward_from_scores(g, &scores, x.v, x.heads, x.feat, edge_parallel)
}

/// The rest of a baseline forward from the `[E, H]` natural scores: softmax and aggregation of
/// `v`, `(out, lse)` (any model's scores).
pub(crate) fn forward_from_scores(
    g: &DeviceGraph<'_>,
    scores: &Buffer<f32>,
    v: GSlice<f32>,
    heads: u32,
    feat: u32,
    edge_parallel: bool,
) -> Result<(Buffer<f32>, Buffer<f32>)> {
    let backend = g.backend();
    let eh = g.nnz() * heads as usize;
    let mut out = backend.result("out", g.num_dst() * heads as usize * feat as usize)?;
    let mut lse = backend.result("lse", g.num_dst() * heads as usize)?;
    if edge_parallel {
        let params = SoftmaxAggregateParams {
            offsets: g.d_row_offsets.view(),
            columns: g.d_columns.view(),
            scores: scores.view(),
            v,
            out: out.view_mut(),
            lse: lse.view_mut(),
            num_rows: g.num_dst() as u32,
            heads,
            feat,
            team_lanes: feature_team_lanes(feat),
        };
        // SAFETY: scores [E, H], v [N_src, H, F], out [N_dst, H, F], lse [N_dst, H]; distinct.
        unsafe {
            launch_items(
                backend,
                &SOFTMAX_AGGREGATE,
                g.num_dst() as u64 * heads as u64,
                feature_team_lanes(feat),
                &params,
            )?
        };
    } else {
        let mut alpha = backend.alloc::<f32>(eh)?;
        edge_softmax(g, heads, scores, &mut alpha, lse.view_mut())?;
        spmm(g, heads, feat, &alpha, v, 1.0, &mut out)?;
    }
    Ok((out, lse))
}

/// The softmax's backward from the `[E, H]` natural scores, for any model: `(α, ds)` with
/// `ds = α·(dO·v − Σ_row α·dO·v)`, both `[E, H]`.
pub(crate) fn softmax_backward(
    g: &DeviceGraph<'_>,
    scores: Buffer<f32>,
    v: GSlice<f32>,
    d_out: GSlice<f32>,
    heads: u32,
    feat: u32,
) -> Result<(Buffer<f32>, Buffer<f32>)> {
    let backend = g.backend();
    let eh = g.nnz() * heads as usize;
    let mut scores = scores;
    let mut alpha = backend.alloc::<f32>(eh)?;
    edge_softmax(g, heads, &scores, &mut alpha, GSliceMut::empty())?;
    // dα reuses the scores buffer.
    sddmm(g, d_out, v, heads, feat, 1.0, &mut scores)?;
    let mut ds = backend.alloc::<f32>(eh)?;
    let team_lanes = edge_team_lanes(g.nnz(), g.num_dst());
    let params = EdgeSoftmaxBackwardParams {
        offsets: g.d_row_offsets.view(),
        alpha: alpha.view(),
        d_alpha: scores.view(),
        d_scores: ds.view_mut(),
        num_rows: g.num_dst() as u32,
        heads,
        team_lanes,
    };
    // SAFETY: alpha, dα and ds are [E, H], ds distinct from the inputs; offsets validated.
    unsafe { launch_items(backend, &EDGE_SOFTMAX_BACKWARD, g.num_dst() as u64 * heads as u64, team_lanes, &params)? };
    Ok((alpha, ds))
}

/// The unfused backward: `(dq, dk, dv)`, with the query and key gradients multiplied by
/// `grad_scale` (GT: the score scale).
pub(crate) fn backward(
    g: &DeviceGraph<'_>,
    x: &Inputs,
    d_out: GSlice<f32>,
    grad_scale: f32,
) -> Result<(Buffer<f32>, Buffer<f32>, Buffer<f32>)> {
    let backend = g.backend();
    let (heads, feat) = (x.heads, x.feat);
    let width = heads as usize * feat as usize;
    let mut scores = backend.alloc::<f32>(g.nnz() * heads as usize)?;
    sddmm(g, x.q, x.k, heads, feat, x.scale, &mut scores)?;
    let (alpha, ds) = softmax_backward(g, scores, x.v, d_out, heads, feat)?;
    let mut dq = backend.result("dq", g.num_dst() * width)?;
    let mut dk = backend.result("dk", g.num_src() * width)?;
    let mut dv = backend.result("dv", g.num_src() * width)?;
    spmm(g, heads, feat, &ds, x.k, grad_scale, &mut dq)?;
    spmm_transposed(g, heads, feat, &ds, x.q, grad_scale, &mut dk)?;
    spmm_transposed(g, heads, feat, &alpha, d_out, 1.0, &mut dv)?;
    Ok((dq, dk, dv))
}
