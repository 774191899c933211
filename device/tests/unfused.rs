//! The baseline GT schedules (`kernels::unfused`) under the emulator, against `dfgnn-reference`.
//!
//! Every kernel alone and both schedules end to end (forward: out, lse; backward: dq, dk, dv),
//! on small random graphs with an empty row, a self loop, duplicate edges, a super-node row and
//! bipartite blocks, for H ∈ {1, 2, 3, 8} and F ∈ {1, 7, 32, 33, 64, 100, 128, 256}, under the
//! project's tolerance rule (`dfgnn_reference::precision`: error against f64 ≤ 2 × the naive f32
//! run's + a floor, the naive run being the reference in f32). Outputs start as NaN, so an
//! element no kernel writes fails the check. The
//! emulator reports any defect (race, divergence, out-of-bounds access), which fails the test.
//! Results are bit-identical on repeated runs and for any grid size.
//!
//! The launch-shape helpers here ([`feature_team_lanes`], [`edge_team_lanes`], [`shape`]) are what the host
//! crate needs to port.

use dfgnn_device::abi::{
    EdgeSoftmaxBackwardParams, EdgeSoftmaxParams, SddmmParams, SoftmaxAggregateParams, SpmmParams, SpmmTransposedParams,
};
use dfgnn_device::kernels::unfused::{
    EDGE_SOFTMAX, EDGE_SOFTMAX_BACKWARD, SDDMM, SOFTMAX_AGGREGATE, SPMM, SPMM_TRANSPOSED,
};
use dfgnn_device::simt::emu::{self, LaunchConfig};
use dfgnn_device::simt::{Dim3, GSlice, GSliceMut, KernelRef, WARP_SIZE};
use dfgnn_reference::{self as reference, Dims, Pattern, compare, upcast};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------------------------------------
// Host-side launch shapes (to be ported to the host crate).
// ---------------------------------------------------------------------------------------------

/// Threads per block of every launch here.
const BLOCK: u32 = 128;

/// Lanes per item for the kernels whose lanes stride over features (sddmm, spmm,
/// spmm_transposed, softmax_aggregate): the smallest power of two covering the feature units
/// (F/4 16-byte vectors when F % 4 == 0, else F scalars), at most a warp.
fn feature_team_lanes(feat: u32) -> u32 {
    let units = if feat.is_multiple_of(4) { feat / 4 } else { feat };
    units.next_power_of_two().min(WARP_SIZE)
}

/// Lanes per item for the kernels whose lanes stride over a row's edges (edge_softmax,
/// edge_softmax_backward): the smallest power of two covering the average row length, at most a
/// warp.
fn edge_team_lanes(num_edges: usize, num_rows: usize) -> u32 {
    let avg = num_edges.div_ceil(num_rows.max(1)).max(1) as u32;
    avg.next_power_of_two().min(WARP_SIZE)
}

/// The launch for `items` items of `team_lanes` lanes each: 1-D blocks of [`BLOCK`] threads, enough
/// blocks to give every item its own team, capped at `max_blocks` (the kernels sweep the rest
/// grid-stride), never zero blocks.
fn shape(items: u64, team_lanes: u32, max_blocks: u32) -> LaunchConfig {
    let blocks = (items * team_lanes as u64).div_ceil(BLOCK as u64).max(1);
    LaunchConfig { grid: Dim3::x(blocks.min(max_blocks as u64) as u32), block: Dim3::x(BLOCK), shared_bytes: 0 }
}

// ---------------------------------------------------------------------------------------------
// Graphs and inputs.
// ---------------------------------------------------------------------------------------------

/// A graph in every form the kernels take: CSR (rows = destinations), COO rows, and CSC with the
/// CSC-slot → CSR-edge permutation.
struct Graph {
    num_dst: usize,
    num_src: usize,
    offsets: Vec<u64>,
    columns: Vec<u32>,
    coo_rows: Vec<u32>,
    csc_offsets: Vec<u64>,
    csc_rows: Vec<u32>,
    csc_edge_ids: Vec<u32>,
}

impl Graph {
    /// From each destination's list of sources, in order.
    fn from_rows(num_src: usize, rows: &[Vec<u32>]) -> Self {
        let mut offsets = vec![0u64];
        let (mut columns, mut coo_rows) = (Vec::new(), Vec::new());
        for (i, row) in rows.iter().enumerate() {
            columns.extend_from_slice(row);
            coo_rows.extend(std::iter::repeat_n(i as u32, row.len()));
            offsets.push(columns.len() as u64);
        }
        // CSC by a stable counting sort on the column: slots of a column in increasing edge id.
        let mut csc_offsets = vec![0u64; num_src + 1];
        for &j in &columns {
            csc_offsets[j as usize + 1] += 1;
        }
        for j in 0..num_src {
            csc_offsets[j + 1] += csc_offsets[j];
        }
        let mut next = csc_offsets.clone();
        let mut csc_rows = vec![0u32; columns.len()];
        let mut csc_edge_ids = vec![0u32; columns.len()];
        for (e, &j) in columns.iter().enumerate() {
            let slot = next[j as usize] as usize;
            next[j as usize] += 1;
            csc_rows[slot] = coo_rows[e];
            csc_edge_ids[slot] = e as u32;
        }
        Self { num_dst: rows.len(), num_src, offsets, columns, coo_rows, csc_offsets, csc_rows, csc_edge_ids }
    }

    /// A random graph with the corner cases: row 0 empty, row 1 a super node (`super_degree`
    /// edges, duplicates included), row 2 a self loop (on a square graph) and a duplicate edge;
    /// the other rows 0 to `2·avg_degree` random edges. Some source nodes end up with no edge.
    fn random(rng: &mut ChaCha8Rng, num_dst: usize, num_src: usize, avg_degree: usize, super_degree: usize) -> Self {
        assert!(num_dst >= 4 && num_src >= 2);
        let mut rows = vec![Vec::new(); num_dst];
        rows[1] = (0..super_degree).map(|_| rng.random_range(0..num_src as u32)).collect();
        let dup = rng.random_range(0..num_src as u32);
        rows[2] = vec![dup, (2 % num_src) as u32, dup];
        for row in rows.iter_mut().skip(3) {
            let degree = rng.random_range(0..=2 * avg_degree);
            // The last source node is never a neighbour of an ordinary row (an empty column
            // unless the super node picked it).
            *row = (0..degree).map(|_| rng.random_range(0..num_src as u32 - 1)).collect();
        }
        Self::from_rows(num_src, &rows)
    }

    fn num_edges(&self) -> usize {
        self.columns.len()
    }

    fn pattern(&self) -> Pattern<'_> {
        Pattern::new(self.num_dst, self.num_src, &self.offsets, &self.columns).unwrap()
    }
}

/// `n` values uniform in `[-r, r)`.
fn uniform(rng: &mut ChaCha8Rng, n: usize, r: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-r..r)).collect()
}

/// The feature arrays and scale of one GT problem.
struct Inputs {
    dims: Dims,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    d_out: Vec<f32>,
    scale: f32,
}

impl Inputs {
    fn random(rng: &mut ChaCha8Rng, g: &Graph, heads: usize, feat: usize) -> Self {
        let (nd, ns) = (g.num_dst * heads * feat, g.num_src * heads * feat);
        Self {
            dims: Dims { heads, feat },
            q: uniform(rng, nd, 2.0),
            k: uniform(rng, ns, 2.0),
            v: uniform(rng, ns, 1.0),
            d_out: uniform(rng, nd, 1.0),
            scale: reference::default_gt_scale::<f32>(feat),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Launching.
// ---------------------------------------------------------------------------------------------

/// How tests may bend the launches: a forced team width for every kernel, a cap on the grid.
#[derive(Clone, Copy)]
struct Knobs {
    team_lanes: Option<u32>,
    max_blocks: u32,
}

const DEFAULT: Knobs = Knobs { team_lanes: None, max_blocks: u32::MAX };

impl Knobs {
    fn feature_team_lanes(&self, feat: usize) -> u32 {
        self.team_lanes.unwrap_or(feature_team_lanes(feat as u32))
    }
    fn edge_team_lanes(&self, g: &Graph) -> u32 {
        self.team_lanes.unwrap_or(edge_team_lanes(g.num_edges(), g.num_dst))
    }
}

fn run<P: Sync>(kernel: &KernelRef<P>, config: LaunchConfig, params: &P) {
    // SAFETY: every slice in `params` views a live Vec of the caller, untouched during the launch.
    if let Err(e) = unsafe { emu::launch(kernel, &config, params) } {
        panic!("the emulator reported a defect: {e}");
    }
}

/// An output buffer that starts as NaN, so an unwritten element fails every comparison.
fn nans(n: usize) -> Vec<f32> {
    vec![f32::NAN; n]
}

fn sddmm(g: &Graph, dims: Dims, a: &[f32], b: &[f32], scale: f32, kn: Knobs) -> Vec<f32> {
    let mut scores = nans(g.num_edges() * dims.heads);
    let team_lanes = kn.feature_team_lanes(dims.feat);
    let p = SddmmParams {
        a: GSlice::from_host(a),
        b: GSlice::from_host(b),
        coo_rows: GSlice::from_host(&g.coo_rows),
        columns: GSlice::from_host(&g.columns),
        scores: GSliceMut::from_host(&mut scores),
        num_edges: g.num_edges() as u64,
        heads: dims.heads as u32,
        feat: dims.feat as u32,
        scale,
        team_lanes,
    };
    run(&SDDMM, shape((g.num_edges() * dims.heads) as u64, team_lanes, kn.max_blocks), &p);
    scores
}

/// Returns `(alpha, lse)`; `lse` is empty when `with_lse` is false.
fn edge_softmax(g: &Graph, heads: usize, scores: &[f32], with_lse: bool, kn: Knobs) -> (Vec<f32>, Vec<f32>) {
    let mut alpha = nans(scores.len());
    let mut lse = if with_lse { nans(g.num_dst * heads) } else { Vec::new() };
    let team_lanes = kn.edge_team_lanes(g);
    let p = EdgeSoftmaxParams {
        offsets: GSlice::from_host(&g.offsets),
        scores: GSlice::from_host(scores),
        alpha: GSliceMut::from_host(&mut alpha),
        lse: if with_lse { GSliceMut::from_host(&mut lse) } else { GSliceMut::empty() },
        num_rows: g.num_dst as u32,
        heads: heads as u32,
        team_lanes,
    };
    run(&EDGE_SOFTMAX, shape((g.num_dst * heads) as u64, team_lanes, kn.max_blocks), &p);
    (alpha, lse)
}

fn spmm(g: &Graph, dims: Dims, w: &[f32], x: &[f32], scale: f32, kn: Knobs) -> Vec<f32> {
    let mut out = nans(g.num_dst * dims.heads * dims.feat);
    let team_lanes = kn.feature_team_lanes(dims.feat);
    let p = SpmmParams {
        offsets: GSlice::from_host(&g.offsets),
        columns: GSlice::from_host(&g.columns),
        weights: GSlice::from_host(w),
        x: GSlice::from_host(x),
        out: GSliceMut::from_host(&mut out),
        num_rows: g.num_dst as u32,
        heads: dims.heads as u32,
        feat: dims.feat as u32,
        scale,
        team_lanes,
    };
    run(&SPMM, shape((g.num_dst * dims.heads) as u64, team_lanes, kn.max_blocks), &p);
    out
}

fn edge_softmax_backward(g: &Graph, heads: usize, alpha: &[f32], d_alpha: &[f32], kn: Knobs) -> Vec<f32> {
    let mut ds = nans(alpha.len());
    let team_lanes = kn.edge_team_lanes(g);
    let p = EdgeSoftmaxBackwardParams {
        offsets: GSlice::from_host(&g.offsets),
        alpha: GSlice::from_host(alpha),
        d_alpha: GSlice::from_host(d_alpha),
        d_scores: GSliceMut::from_host(&mut ds),
        num_rows: g.num_dst as u32,
        heads: heads as u32,
        team_lanes,
    };
    run(&EDGE_SOFTMAX_BACKWARD, shape((g.num_dst * heads) as u64, team_lanes, kn.max_blocks), &p);
    ds
}

fn spmm_transposed(g: &Graph, dims: Dims, w: &[f32], x: &[f32], scale: f32, kn: Knobs) -> Vec<f32> {
    let mut out = nans(g.num_src * dims.heads * dims.feat);
    let team_lanes = kn.feature_team_lanes(dims.feat);
    let p = SpmmTransposedParams {
        csc_offsets: GSlice::from_host(&g.csc_offsets),
        csc_rows: GSlice::from_host(&g.csc_rows),
        csc_edge_ids: GSlice::from_host(&g.csc_edge_ids),
        weights: GSlice::from_host(w),
        x: GSlice::from_host(x),
        out: GSliceMut::from_host(&mut out),
        num_cols: g.num_src as u32,
        heads: dims.heads as u32,
        feat: dims.feat as u32,
        scale,
        team_lanes,
    };
    run(&SPMM_TRANSPOSED, shape((g.num_src * dims.heads) as u64, team_lanes, kn.max_blocks), &p);
    out
}

/// Returns `(out, lse)`.
fn softmax_aggregate(g: &Graph, dims: Dims, scores: &[f32], v: &[f32], kn: Knobs) -> (Vec<f32>, Vec<f32>) {
    let mut out = nans(g.num_dst * dims.heads * dims.feat);
    let mut lse = nans(g.num_dst * dims.heads);
    let team_lanes = kn.feature_team_lanes(dims.feat);
    let p = SoftmaxAggregateParams {
        offsets: GSlice::from_host(&g.offsets),
        columns: GSlice::from_host(&g.columns),
        scores: GSlice::from_host(scores),
        v: GSlice::from_host(v),
        out: GSliceMut::from_host(&mut out),
        lse: GSliceMut::from_host(&mut lse),
        num_rows: g.num_dst as u32,
        heads: dims.heads as u32,
        feat: dims.feat as u32,
        team_lanes,
    };
    run(&SOFTMAX_AGGREGATE, shape((g.num_dst * dims.heads) as u64, team_lanes, kn.max_blocks), &p);
    (out, lse)
}

/// The `unfused` forward: sddmm → edge_softmax → spmm. Returns `(out, lse)`.
fn unfused_forward(g: &Graph, x: &Inputs, kn: Knobs) -> (Vec<f32>, Vec<f32>) {
    let scores = sddmm(g, x.dims, &x.q, &x.k, x.scale, kn);
    let (alpha, lse) = edge_softmax(g, x.dims.heads, &scores, true, kn);
    (spmm(g, x.dims, &alpha, &x.v, 1.0, kn), lse)
}

/// The `edge_parallel` forward: sddmm → softmax_aggregate. Returns `(out, lse)`.
fn edge_parallel_forward(g: &Graph, x: &Inputs, kn: Knobs) -> (Vec<f32>, Vec<f32>) {
    let scores = sddmm(g, x.dims, &x.q, &x.k, x.scale, kn);
    softmax_aggregate(g, x.dims, &scores, &x.v, kn)
}

/// The backward both schedules share (see `kernels::unfused`): alpha recomputed, then
/// dα, ds, and the row and column passes. Returns `(dq, dk, dv)`.
fn backward(g: &Graph, x: &Inputs, kn: Knobs) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let d = x.dims;
    let scores = sddmm(g, d, &x.q, &x.k, x.scale, kn);
    let (alpha, _) = edge_softmax(g, d.heads, &scores, false, kn);
    let d_alpha = sddmm(g, d, &x.d_out, &x.v, 1.0, kn);
    let ds = edge_softmax_backward(g, d.heads, &alpha, &d_alpha, kn);
    let dq = spmm(g, d, &ds, &x.k, x.scale, kn);
    let dk = spmm_transposed(g, d, &ds, &x.q, x.scale, kn);
    let dv = spmm_transposed(g, d, &alpha, &x.d_out, 1.0, kn);
    (dq, dk, dv)
}

// ---------------------------------------------------------------------------------------------
// Checking.
// ---------------------------------------------------------------------------------------------

/// The tolerance rule for one output array.
#[track_caller]
fn check(what: &str, got: &[f32], naive: &[f32], truth: &[f64]) {
    assert_eq!(got.len(), truth.len(), "{what}: length");
    let check = compare(what, got, naive, truth);
    assert!(check.passed(), "{check}");
}

fn bits(a: &[f32]) -> Vec<u32> {
    a.iter().map(|x| x.to_bits()).collect()
}

/// The reference forward in f64 and the naive one in f32.
fn reference_forward(g: &Graph, x: &Inputs) -> (reference::GtForward<f64>, reference::GtForward<f32>) {
    let p = g.pattern();
    let truth =
        reference::gt_forward(&p, x.dims, &upcast(&x.q), &upcast(&x.k), &upcast(&x.v), f64::from(x.scale)).unwrap();
    let naive = reference::gt_forward(&p, x.dims, &x.q, &x.k, &x.v, x.scale).unwrap();
    (truth, naive)
}

fn check_forward(label: &str, g: &Graph, x: &Inputs, kn: Knobs) {
    let (truth, naive) = reference_forward(g, x);
    let (out, lse) = unfused_forward(g, x, kn);
    check(&format!("{label} unfused out"), &out, &naive.out, &truth.out);
    check(&format!("{label} unfused lse"), &lse, &naive.lse, &truth.lse);
    let (out, lse) = edge_parallel_forward(g, x, kn);
    check(&format!("{label} edge_parallel out"), &out, &naive.out, &truth.out);
    check(&format!("{label} edge_parallel lse"), &lse, &naive.lse, &truth.lse);
}

fn check_backward(label: &str, g: &Graph, x: &Inputs, kn: Knobs) {
    let p = g.pattern();
    let (fwd, fwd32) = reference_forward(g, x);
    let (q, k, v, d_out) = (upcast(&x.q), upcast(&x.k), upcast(&x.v), upcast(&x.d_out));
    let truth = reference::gt_backward(&p, x.dims, &q, &k, &v, f64::from(x.scale), &fwd.out, &fwd.lse, &d_out).unwrap();
    let naive =
        reference::gt_backward(&p, x.dims, &x.q, &x.k, &x.v, x.scale, &fwd32.out, &fwd32.lse, &x.d_out).unwrap();
    let (dq, dk, dv) = backward(g, x, kn);
    check(&format!("{label} dq"), &dq, &naive.dq, &truth.dq);
    check(&format!("{label} dk"), &dk, &naive.dk, &truth.dk);
    check(&format!("{label} dv"), &dv, &naive.dv, &truth.dv);
}

/// Each kernel alone against its reference step.
fn check_kernels(label: &str, rng: &mut ChaCha8Rng, g: &Graph, x: &Inputs, kn: Knobs) {
    let p = g.pattern();
    let d = x.dims;
    let heads = d.heads;
    let (q, k) = (upcast(&x.q), upcast(&x.k));
    let c = f64::from(x.scale);

    // sddmm: scores.
    let got = sddmm(g, d, &x.q, &x.k, x.scale, kn);
    let truth = reference::sddmm_dot(&p, d, &q, &k, c).unwrap();
    let naive = reference::sddmm_dot(&p, d, &x.q, &x.k, x.scale).unwrap();
    check(&format!("{label} sddmm"), &got, &naive, &truth);

    // edge_softmax: alpha and lse of random scores.
    let scores = uniform(rng, g.num_edges() * heads, 4.0);
    let (alpha, lse) = edge_softmax(g, heads, &scores, true, kn);
    let (t_alpha, t_lse) = reference::row_softmax(&p, heads, &upcast(&scores)).unwrap();
    let (n_alpha, n_lse) = reference::row_softmax(&p, heads, &scores).unwrap();
    check(&format!("{label} edge_softmax alpha"), &alpha, &n_alpha, &t_alpha);
    check(&format!("{label} edge_softmax lse"), &lse, &n_lse, &t_lse);
    let (alpha_again, none) = edge_softmax(g, heads, &scores, false, kn);
    assert_eq!(bits(&alpha_again), bits(&alpha), "{label}: alpha without lse");
    assert!(none.is_empty());

    // softmax_aggregate: out and lse of the same scores.
    let (out, lse2) = softmax_aggregate(g, d, &scores, &x.v, kn);
    let t_out = reference::spmm(&p, d, &t_alpha, &upcast(&x.v)).unwrap();
    let n_out = reference::spmm(&p, d, &n_alpha, &x.v).unwrap();
    check(&format!("{label} softmax_aggregate out"), &out, &n_out, &t_out);
    check(&format!("{label} softmax_aggregate lse"), &lse2, &n_lse, &t_lse);

    // spmm: c · Σ w x (the reference's dq of sddmm_backward is exactly that).
    let w = uniform(rng, g.num_edges() * heads, 1.0);
    let zeros_dst = vec![0.0f32; x.q.len()];
    let zeros_src = vec![0.0f32; x.k.len()];
    let got = spmm(g, d, &w, &x.k, x.scale, kn);
    let truth = reference::sddmm_backward(&p, d, &upcast(&zeros_dst), &k, &upcast(&w), c).unwrap();
    let naive = reference::sddmm_backward(&p, d, &zeros_dst, &x.k, &w, x.scale).unwrap();
    check(&format!("{label} spmm"), &got, &naive.dq, &truth.dq);

    // spmm_transposed: c · Σ_column w x (the reference's dk).
    let got = spmm_transposed(g, d, &w, &x.q, x.scale, kn);
    let truth = reference::sddmm_backward(&p, d, &q, &upcast(&zeros_src), &upcast(&w), c).unwrap();
    let naive = reference::sddmm_backward(&p, d, &x.q, &zeros_src, &w, x.scale).unwrap();
    check(&format!("{label} spmm_transposed"), &got, &naive.dk, &truth.dk);

    // edge_softmax_backward: ds from a real softmax and random dα.
    let n_alpha32: Vec<f32> = n_alpha.clone();
    let d_alpha = uniform(rng, g.num_edges() * heads, 1.0);
    let got = edge_softmax_backward(g, heads, &n_alpha32, &d_alpha, kn);
    let truth = reference::row_softmax_backward(&p, heads, &upcast(&n_alpha32), &upcast(&d_alpha)).unwrap();
    let naive = reference::row_softmax_backward(&p, heads, &n_alpha32, &d_alpha).unwrap();
    check(&format!("{label} edge_softmax_backward"), &got, &naive, &truth);
}

// ---------------------------------------------------------------------------------------------
// Tests.
// ---------------------------------------------------------------------------------------------

/// One problem: heads, features, destinations, sources (square when equal), average degree,
/// super-node degree.
struct Case {
    heads: usize,
    feat: usize,
    num_dst: usize,
    num_src: usize,
    avg_degree: usize,
    super_degree: usize,
}

/// Every H and every F at least once, square and bipartite graphs, scalar and vector paths.
const CASES: [Case; 8] = [
    Case { heads: 1, feat: 1, num_dst: 40, num_src: 40, avg_degree: 3, super_degree: 90 },
    Case { heads: 2, feat: 7, num_dst: 24, num_src: 36, avg_degree: 4, super_degree: 70 },
    Case { heads: 3, feat: 32, num_dst: 30, num_src: 30, avg_degree: 3, super_degree: 65 },
    Case { heads: 8, feat: 33, num_dst: 16, num_src: 10, avg_degree: 2, super_degree: 40 },
    Case { heads: 1, feat: 64, num_dst: 36, num_src: 36, avg_degree: 5, super_degree: 80 },
    Case { heads: 2, feat: 100, num_dst: 20, num_src: 28, avg_degree: 3, super_degree: 50 },
    Case { heads: 3, feat: 128, num_dst: 22, num_src: 14, avg_degree: 3, super_degree: 45 },
    Case { heads: 8, feat: 256, num_dst: 12, num_src: 12, avg_degree: 2, super_degree: 36 },
];

fn case_inputs(index: usize) -> (ChaCha8Rng, Graph, Inputs) {
    let c = &CASES[index];
    let mut rng = ChaCha8Rng::seed_from_u64(0xdf6 + index as u64);
    let g = Graph::random(&mut rng, c.num_dst, c.num_src, c.avg_degree, c.super_degree);
    let x = Inputs::random(&mut rng, &g, c.heads, c.feat);
    (rng, g, x)
}

fn label(index: usize) -> String {
    let c = &CASES[index];
    format!("H={} F={} {}x{}", c.heads, c.feat, c.num_dst, c.num_src)
}

#[test]
fn each_kernel_matches_the_reference() {
    for i in 0..CASES.len() {
        let (mut rng, g, x) = case_inputs(i);
        check_kernels(&label(i), &mut rng, &g, &x, DEFAULT);
    }
}

#[test]
fn both_forwards_match_the_reference() {
    for i in 0..CASES.len() {
        let (_, g, x) = case_inputs(i);
        check_forward(&label(i), &g, &x, DEFAULT);
    }
}

#[test]
fn the_backward_matches_the_reference() {
    for i in 0..CASES.len() {
        let (_, g, x) = case_inputs(i);
        check_backward(&label(i), &g, &x, DEFAULT);
    }
}

#[test]
fn any_group_width_is_correct() {
    // Group widths 1 (one lane per item, long serial loops), 4 and 32 (lanes idle past F or past
    // the row), for every kernel, on a scalar-path and a vector-path case.
    for i in [1, 4] {
        for team_lanes in [1, 4, WARP_SIZE] {
            let kn = Knobs { team_lanes: Some(team_lanes), max_blocks: u32::MAX };
            let (mut rng, g, x) = case_inputs(i);
            let l = format!("{} team_lanes={team_lanes}", label(i));
            check_kernels(&l, &mut rng, &g, &x, kn);
            check_forward(&l, &g, &x, kn);
            check_backward(&l, &g, &x, kn);
        }
    }
}

#[test]
fn results_are_bit_identical_across_runs_and_grid_sizes() {
    // Twice with the full grid, then with grids of 1 and 3 blocks (the grid-stride sweeps):
    // every output of both schedules must have the same bits.
    for i in [0, 3, 6] {
        let (_, g, x) = case_inputs(i);
        let all = |kn: Knobs| {
            let (o1, l1) = unfused_forward(&g, &x, kn);
            let (o2, l2) = edge_parallel_forward(&g, &x, kn);
            let (dq, dk, dv) = backward(&g, &x, kn);
            [o1, l1, o2, l2, dq, dk, dv].map(|a| bits(&a))
        };
        let first = all(DEFAULT);
        assert_eq!(all(DEFAULT), first, "{}: a second run differs", label(i));
        for max_blocks in [1, 3] {
            let kn = Knobs { team_lanes: None, max_blocks };
            assert_eq!(all(kn), first, "{}: grid of {max_blocks} blocks differs", label(i));
        }
    }
}

#[test]
fn spmm_is_independent_of_the_group_width() {
    // Each output element is one lane's fma chain in edge order, whatever the team_lanes.
    let (mut rng, g, x) = case_inputs(5);
    let w = uniform(&mut rng, g.num_edges() * x.dims.heads, 1.0);
    let base = spmm(&g, x.dims, &w, &x.v, 0.5, DEFAULT);
    let base_t = spmm_transposed(&g, x.dims, &w, &x.q, 0.5, DEFAULT);
    for team_lanes in [1, 2, 8, 16, 32] {
        let kn = Knobs { team_lanes: Some(team_lanes), max_blocks: u32::MAX };
        assert_eq!(bits(&spmm(&g, x.dims, &w, &x.v, 0.5, kn)), bits(&base));
        assert_eq!(bits(&spmm_transposed(&g, x.dims, &w, &x.q, 0.5, kn)), bits(&base_t));
    }
}

#[test]
fn empty_rows_give_zero_output_and_gradient_and_lse_minus_infinity() {
    // Half the rows empty, and a source node nobody attends to (an empty CSC column).
    let rows: Vec<Vec<u32>> =
        (0..8).map(|i| if i % 2 == 0 { Vec::new() } else { vec![0, 1, 2, (i % 3) as u32] }).collect();
    let g = Graph::from_rows(5, &rows);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let x = Inputs::random(&mut rng, &g, 2, 8);
    let f = x.dims.heads * x.dims.feat;
    for (out, lse) in [unfused_forward(&g, &x, DEFAULT), edge_parallel_forward(&g, &x, DEFAULT)] {
        for i in (0..8).step_by(2) {
            assert!(out[i * f..(i + 1) * f].iter().all(|&o| o.to_bits() == 0), "row {i}");
            assert!(lse[i * 2..i * 2 + 2].iter().all(|&l| l == f32::NEG_INFINITY), "row {i}");
        }
    }
    let (dq, dk, dv) = backward(&g, &x, DEFAULT);
    for i in (0..8).step_by(2) {
        assert!(dq[i * f..(i + 1) * f].iter().all(|&d| d.to_bits() == 0), "dq row {i}");
    }
    // Sources 3 and 4: 4 is no one's neighbour; 3 is nobody's either (i % 3 ≤ 2).
    for j in 3..5 {
        assert!(dk[j * f..(j + 1) * f].iter().all(|&d| d.to_bits() == 0), "dk {j}");
        assert!(dv[j * f..(j + 1) * f].iter().all(|&d| d.to_bits() == 0), "dv {j}");
    }
    check_forward("empty rows", &g, &x, DEFAULT);
    check_backward("empty rows", &g, &x, DEFAULT);
}

#[test]
fn a_graph_without_edges_writes_zeros() {
    let g = Graph::from_rows(3, &[Vec::new(), Vec::new()]);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let x = Inputs::random(&mut rng, &g, 3, 4);
    for (out, lse) in [unfused_forward(&g, &x, DEFAULT), edge_parallel_forward(&g, &x, DEFAULT)] {
        assert!(out.iter().all(|&o| o.to_bits() == 0));
        assert!(lse.iter().all(|&l| l == f32::NEG_INFINITY));
    }
    let (dq, dk, dv) = backward(&g, &x, DEFAULT);
    assert!(dq.iter().chain(&dk).chain(&dv).all(|&d| d.to_bits() == 0));
}

#[test]
fn rows_of_negative_infinity_scores_are_treated_as_empty() {
    // Row 0: all −∞ (alpha 0, lse −∞, out 0, as the reference); row 1: one −∞ among finite scores.
    let g = Graph::from_rows(3, &[vec![0, 1], vec![0, 1, 2]]);
    let heads = 1;
    let dims = Dims { heads, feat: 3 };
    let scores = [f32::NEG_INFINITY, f32::NEG_INFINITY, 0.5, f32::NEG_INFINITY, -1.0];
    let (alpha, lse) = edge_softmax(&g, heads, &scores, true, DEFAULT);
    let (t_alpha, t_lse) = reference::row_softmax(&g.pattern(), heads, &upcast(&scores)).unwrap();
    let (n_alpha, n_lse) = reference::row_softmax(&g.pattern(), heads, &scores).unwrap();
    check("−∞ alpha", &alpha, &n_alpha, &t_alpha);
    check("−∞ lse", &lse, &n_lse, &t_lse);
    let v: Vec<f32> = (0..9).map(|i| i as f32 * 0.25 - 1.0).collect();
    let (out, lse2) = softmax_aggregate(&g, dims, &scores, &v, DEFAULT);
    let t_out = reference::spmm(&g.pattern(), dims, &t_alpha, &upcast(&v)).unwrap();
    let n_out = reference::spmm(&g.pattern(), dims, &n_alpha, &v).unwrap();
    check("−∞ out", &out, &n_out, &t_out);
    check("−∞ lse (aggregate)", &lse2, &n_lse, &t_lse);
}
