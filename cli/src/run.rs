//! The main job (`dfgnn run`): GT, AGNN and GAT, forward and backward, under every schedule, on a
//! default graph (see [`crate::data::default_graph`]), each checked against the f64 reference
//! with the project's tolerance rule, and timed.
//!
//! On the emulator everything runs once (at a size that finishes in well under a minute); on the
//! GPU the timings are medians of repeated runs after warm-up. Before allocating anything, the job
//! checks what it will need against the memory it may use ([`MemoryNeed`]); while it runs, the
//! progress bar it is given names each step, and each row is handed over as soon as it is measured.

use dfgnn::{
    Agnn, AgnnConfig, Backend, BackendKind, DeviceGraph, Gat, GatConfig, GatV2, GatV2Config, Gt, GtConfig, PlanOptions,
    Schedule,
};
use dfgnn_graphs::Csr;
use dfgnn_reference::{
    Dims, Pattern, agnn_backward, agnn_forward, allowed_error, compare_at_scale, gat_backward, gat_forward,
    gatv2_backward, gatv2_forward, gt_backward, gt_forward, l2_normalize, magnitude, max_abs_diff,
};
use indicatif::ProgressBar;

use crate::error::{CliError, Result};

/// What the main job runs.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Heads.
    pub heads: u32,
    /// Features per head.
    pub feat: u32,
    /// Schedules to run (`Auto` first is the scheduler's own choice).
    pub schedules: Vec<Schedule>,
    /// AGNN's temperature.
    pub beta: f32,
    /// Seed of the inputs.
    pub seed: u64,
    /// The most memory the job may use on the host (and, under the emulator, whose device memory
    /// is host memory, for both together), in bytes.
    pub max_memory: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            heads: 4,
            feat: 32,
            schedules: Schedule::ALL.to_vec(),
            beta: 1.0,
            seed: 1,
            max_memory: dfgnn::backend::available_host_memory(),
        }
    }
}

/// What the main job allocates, in bytes: an estimate from the sizes alone that errs high (each
/// term counts every array of its kind alive at once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Inputs, the f64 and f32 references and downloaded results, on the host.
    pub host: usize,
    /// Inputs, outputs, gradients, the attention state and the prepared graph, on the device.
    pub device: usize,
}

impl MemoryNeed {
    /// The need of the main job on `graph` with `heads` × `feat`; an error when a size overflows.
    pub fn of(graph: &Csr, heads: u32, feat: u32) -> Result<Self> {
        let overflow = || CliError::Usage {
            what: format!(
                "{heads} heads x {feat} features on {} x {} nodes: the sizes overflow",
                graph.num_dst(),
                graph.num_src()
            ),
        };
        let mul = |a: usize, b: usize| a.checked_mul(b).ok_or_else(overflow);
        let add = |a: usize, b: usize| a.checked_add(b).ok_or_else(overflow);
        let width = mul(heads as usize, feat as usize)?;
        // Feature elements of all nodes (destinations and sources), and scores of all edges.
        let features = mul(add(graph.num_dst(), graph.num_src())?, width)?;
        let scores = mul(add(graph.nnz(), add(graph.num_dst(), graph.num_src())?)?, heads as usize)?;
        // Host: f32 inputs (4 B) and up to four f64 copies alive at once (32 B); f64 and f32
        // references of GT and AGNN (2 x (8 + 4) x 4 arrays = 96 B), of GAT (out, dh, dh_dst:
        // 36 B) and of GATv2 (out, dxl, dxr: 36 B); downloads (4 B); the reference's per-edge
        // scores, probabilities and their gradients in f64 and f32 (96 B).
        let host = add(mul(features, 4 + 32 + 96 + 36 + 36 + 4)?, mul(scores, 96)?)?;
        // Device: four f32 inputs, four outputs and gradients, AGNN's normalised copy and its
        // gradient, scratch (4 B x 12), GAT's output and two gradients while GT's are alive
        // (4 B x 3), GATv2's output, gradients and backward scratch beside them (4 B x 6);
        // per-row statistics and per-edge work lists (32 B).
        let graph_bytes = DeviceGraph::bytes_for(graph.num_dst(), graph.num_src(), graph.nnz()).ok_or_else(overflow)?;
        let device = add(add(mul(features, 84)?, mul(scores, 32)?)?, graph_bytes)?;
        Ok(Self { host, device })
    }
}

/// One line of the main job's table.
#[derive(Clone, Debug)]
pub struct RunRow {
    /// `"GT"`, `"AGNN"`, `"GAT"` or `"GATv2"`.
    pub model: &'static str,
    /// The schedule asked for.
    pub schedule: Schedule,
    /// The plan, one line.
    pub plan: String,
    /// Median forward time (ms).
    pub forward_ms: f64,
    /// Median forward+backward time (ms).
    pub forward_backward_ms: f64,
    /// Largest error of any output or gradient over its allowed error (≤ 1 passes).
    pub error_ratio: f64,
    /// The worst quantity.
    pub worst: String,
}

/// The error over what the project's tolerance rule (`dfgnn_reference::precision`) allows.
fn ratio(err: f64, naive: f64, magnitude: f64) -> f64 {
    err / allowed_error(naive, magnitude)
}

fn random(n: usize, seed: u64) -> Vec<f32> {
    (0..n as u64).map(|i| dfgnn_device::kernels::util::uniform_at(seed, i, -1.0, 1.0)).collect()
}

fn up(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&a| a as f64).collect()
}

/// What [`run`] checks before it allocates anything: the graph has edges, and the job's memory
/// need ([`MemoryNeed`]) fits `options.max_memory`.
///
/// # Errors
/// [`CliError::Usage`] for a graph without edges (there is nothing to check) or sizes that
/// overflow, [`CliError::HostMemory`] when the job would need more than `options.max_memory`.
pub fn preflight(backend: &Backend, graph: &Csr, options: &RunOptions) -> Result<()> {
    let (h, f) = (options.heads, options.feat);
    if graph.nnz() == 0 {
        return Err(CliError::Usage {
            what: format!(
                "the graph ({} x {} nodes) has no edges: every attention output would be zero, so the main job \
                 has nothing to check",
                graph.num_dst(),
                graph.num_src()
            ),
        });
    }
    let need = MemoryNeed::of(graph, h, f)?;
    let on_host =
        if backend.kind() == BackendKind::Emulator { need.host.saturating_add(need.device) } else { need.host };
    if on_host > options.max_memory {
        return Err(CliError::HostMemory {
            during: format!("the main job with {h} heads x {f} features on {} nodes", graph.num_dst()),
            requested: on_host,
            limit: options.max_memory,
        });
    }
    Ok(())
}

/// Runs the main job on `graph`, handing each row to `on_row` as soon as it is measured and
/// showing each step on `progress`; returns the table, or the first error (the rows handed over
/// before it stay valid).
///
/// # Errors
/// Those of [`preflight`], and the library's (out of device memory among them).
pub fn run(
    backend: &Backend,
    graph: &Csr,
    options: &RunOptions,
    progress: &ProgressBar,
    on_row: &mut dyn FnMut(&RunRow),
) -> Result<Vec<RunRow>> {
    preflight(backend, graph, options)?;
    let (h, f) = (options.heads, options.feat);
    let (warmup, repeats) = if backend.kind() == BackendKind::Cuda { (3, 10) } else { (0, 1) };
    progress.set_length((options.schedules.len() * if graph.num_dst() == graph.num_src() { 4 } else { 3 }) as u64);
    progress.set_message("preparing the graph");
    let dg = DeviceGraph::new(backend, graph)?;
    let dims = Dims { heads: h as usize, feat: f as usize };
    let pattern = Pattern::new(graph.num_dst(), graph.num_src(), graph.offsets(), graph.columns())?;
    // MemoryNeed::of checked these products.
    let (nd, ns) = (graph.num_dst() * (h as usize * f as usize), graph.num_src() * (h as usize * f as usize));
    progress.set_message("making inputs and the f64 and f32 references");
    let (q, k, v, d_out) = (
        random(nd, options.seed),
        random(ns, options.seed + 1),
        random(ns, options.seed + 2),
        random(nd, options.seed + 3),
    );
    let (bq, bk, bv, bd) = (backend.upload(&q)?, backend.upload(&k)?, backend.upload(&v)?, backend.upload(&d_out)?);
    let scale = 1.0 / (f as f32).sqrt();
    // The references: f64 (ground truth) and f32 (the naive baseline of the tolerance rule).
    let r = gt_forward(&pattern, dims, &up(&q), &up(&k), &up(&v), scale as f64)?;
    let rg = gt_backward(&pattern, dims, &up(&q), &up(&k), &up(&v), scale as f64, &r.out, &r.lse, &up(&d_out))?;
    let n = gt_forward(&pattern, dims, &q, &k, &v, scale)?;
    let ng = gt_backward(&pattern, dims, &q, &k, &v, scale, &n.out, &n.lse, &d_out)?;
    let agnn_ok = graph.num_dst() == graph.num_src();
    let agnn_ref = if agnn_ok {
        let ra = agnn_forward(&pattern, dims, &up(&v), options.beta as f64)?;
        let rag = agnn_backward(&pattern, dims, &up(&v), options.beta as f64, &ra.out, &ra.lse, &up(&d_out))?;
        let na = agnn_forward(&pattern, dims, &v, options.beta)?;
        let nag = agnn_backward(&pattern, dims, &v, options.beta, &na.out, &na.lse, &d_out)?;
        // dh is judged at the scale of its input (see `compare_at_scale`).
        let norm = l2_normalize(graph.num_dst(), dims, &up(&v))?.norm;
        Some((ra, rag, na, nag, norm))
    } else {
        None
    };
    // GAT: h = v, h_dst = q, and attention vectors of [H, F] (scaled so scores spread over both
    // sides of the LeakyReLU).
    let slope = dfgnn::DEFAULT_GAT_SLOPE;
    let hf = h as usize * f as usize;
    let a_scale = 4.0 / (f as f32).sqrt();
    let (a_dst, a_src): (Vec<f32>, Vec<f32>) = (
        random(hf, options.seed + 4).iter().map(|x| x * a_scale).collect(),
        random(hf, options.seed + 5).iter().map(|x| x * a_scale).collect(),
    );
    let (ba_dst, ba_src) = (backend.upload(&a_dst)?, backend.upload(&a_src)?);
    let s64 = slope as f64;
    let rt = gat_forward(&pattern, dims, &up(&v), &up(&q), &up(&a_dst), &up(&a_src), s64)?;
    let rtg =
        gat_backward(&pattern, dims, &up(&v), &up(&q), &up(&a_dst), &up(&a_src), s64, &rt.out, &rt.lse, &up(&d_out))?;
    let nt = gat_forward(&pattern, dims, &v, &q, &a_dst, &a_src, slope)?;
    let ntg = gat_backward(&pattern, dims, &v, &q, &a_dst, &a_src, slope, &nt.out, &nt.lse, &d_out)?;
    // GATv2: xl = v, xr = q, a = GAT's a_dst.
    let rv = gatv2_forward(&pattern, dims, &up(&v), &up(&q), &up(&a_dst), s64)?;
    let rvg = gatv2_backward(&pattern, dims, &up(&v), &up(&q), &up(&a_dst), s64, &rv.out, &rv.lse, &up(&d_out))?;
    let nv = gatv2_forward(&pattern, dims, &v, &q, &a_dst, slope)?;
    let nvg = gatv2_backward(&pattern, dims, &v, &q, &a_dst, slope, &nv.out, &nv.lse, &d_out)?;

    let time = |work: &dyn Fn() -> dfgnn::Result<()>| -> Result<f64> {
        let mut samples = Vec::new();
        for i in 0..warmup + repeats {
            let ((), ms) = backend.time(work)?;
            if i >= warmup {
                samples.push(ms);
            }
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[samples.len() / 2])
    };

    let mut rows = Vec::new();
    for &schedule in &options.schedules {
        let plan_options = PlanOptions { schedule, ..Default::default() };
        // GT.
        progress.set_message(format!("GT under {schedule}"));
        let gt = Gt::new(&dg, &GtConfig { heads: h, feat: f, scale: Some(scale), plan: plan_options.clone() })?;
        let fwd = gt.forward(&bq, &bk, &bv)?;
        let grads = gt.backward(&fwd, &bd)?;
        let checks = [
            (
                "out",
                max_abs_diff(&backend.download(&fwd.out)?, &r.out),
                max_abs_diff(&n.out, &r.out),
                magnitude(&r.out),
            ),
            (
                "dq",
                max_abs_diff(&backend.download(&grads.dq)?, &rg.dq),
                max_abs_diff(&ng.dq, &rg.dq),
                magnitude(&rg.dq),
            ),
            (
                "dk",
                max_abs_diff(&backend.download(&grads.dk)?, &rg.dk),
                max_abs_diff(&ng.dk, &rg.dk),
                magnitude(&rg.dk),
            ),
            (
                "dv",
                max_abs_diff(&backend.download(&grads.dv)?, &rg.dv),
                max_abs_diff(&ng.dv, &rg.dv),
                magnitude(&rg.dv),
            ),
        ];
        let (worst, error_ratio) = checks
            .iter()
            .map(|&(name, e, naive, m)| (name, ratio(e, naive, m)))
            .fold(("", 0.0f64), |a, b| if b.1 > a.1 || b.1.is_nan() { b } else { a });
        let forward_ms = time(&|| gt.forward(&bq, &bk, &bv).map(drop))?;
        let forward_backward_ms = time(&|| {
            let fwd = gt.forward(&bq, &bk, &bv)?;
            gt.backward(&fwd, &bd).map(drop)
        })?;
        progress.inc(1);
        rows.push(RunRow {
            model: "GT",
            schedule,
            plan: gt.plan().summary(),
            forward_ms,
            forward_backward_ms,
            error_ratio,
            worst: worst.to_string(),
        });

        // AGNN (square graphs).
        on_row(&rows[rows.len() - 1]);
        if let Some((ra, rag, na, nag, norm)) = &agnn_ref {
            progress.set_message(format!("AGNN under {schedule}"));
            let agnn = Agnn::new(&dg, &AgnnConfig { heads: h, feat: f, plan: plan_options })?;
            // The host β is checked (finite) and uploaded here; the timed calls read it on the device.
            let fwd = agnn.forward(&bv, options.beta)?;
            let grads = agnn.backward(&fwd, &bd)?;
            let got_d_beta = backend.download(&grads.d_beta)?[0] as f64;
            let d_beta = [(got_d_beta - rag.d_beta).abs(), (nag.d_beta as f64 - rag.d_beta).abs(), rag.d_beta.abs()];
            let checks = [
                (
                    "out",
                    max_abs_diff(&backend.download(fwd.out())?, &ra.out),
                    max_abs_diff(&na.out, &ra.out),
                    magnitude(&ra.out),
                ),
                {
                    let dh = compare_at_scale("dh", &backend.download(&grads.dh)?, &nag.dh, &rag.dh, norm);
                    ("dh", dh.error, dh.naive, dh.magnitude)
                },
                ("dβ", d_beta[0], d_beta[1], rag.d_beta_magnitude.max(d_beta[2])),
            ];
            let (worst, error_ratio) = checks
                .iter()
                .map(|&(name, e, naive, m)| (name, ratio(e, naive, m)))
                .fold(("", 0.0f64), |a, b| if b.1 > a.1 || b.1.is_nan() { b } else { a });
            let beta = backend.upload(&[options.beta])?;
            let forward_ms = time(&|| agnn.forward_device_beta(&bv, &beta).map(drop))?;
            let forward_backward_ms = time(&|| {
                let fwd = agnn.forward_device_beta(&bv, &beta)?;
                agnn.backward(&fwd, &bd).map(drop)
            })?;
            progress.inc(1);
            rows.push(RunRow {
                model: "AGNN",
                schedule,
                plan: agnn.plan().summary(),
                forward_ms,
                forward_backward_ms,
                error_ratio,
                worst: worst.to_string(),
            });
            on_row(&rows[rows.len() - 1]);
        }

        // GAT.
        progress.set_message(format!("GAT under {schedule}"));
        let gat = Gat::new(
            &dg,
            &GatConfig { heads: h, feat: f, slope, plan: PlanOptions { schedule, ..Default::default() } },
        )?;
        // h (v) and h_dst (q) are two arrays, so dh_dst comes back on its own.
        let fwd = gat.forward(&bv, &bq, &ba_dst, &ba_src)?;
        let grads = gat.backward(&fwd, &bd)?;
        let dh_dst = grads.dh_dst.as_ref().ok_or_else(|| CliError::CheckFailed {
            what: "GAT folded dh_dst into dh though h_dst was its own array".to_string(),
        })?;
        let checks = [
            ("out", backend.download(&fwd.out)?, &nt.out, &rt.out),
            ("dh", backend.download(&grads.dh)?, &ntg.dh, &rtg.dh),
            ("dh_dst", backend.download(dh_dst)?, &ntg.dh_dst, &rtg.dh_dst),
            ("da_dst", backend.download(&grads.da_dst)?, &ntg.da_dst, &rtg.da_dst),
            ("da_src", backend.download(&grads.da_src)?, &ntg.da_src, &rtg.da_src),
        ];
        let (worst, error_ratio) = checks
            .iter()
            .map(|(name, fused, naive, reference)| {
                (*name, ratio(max_abs_diff(fused, reference), max_abs_diff(naive, reference), magnitude(reference)))
            })
            .fold(("", 0.0f64), |a, b| if b.1 > a.1 || b.1.is_nan() { b } else { a });
        let forward_ms = time(&|| gat.forward(&bv, &bq, &ba_dst, &ba_src).map(drop))?;
        let forward_backward_ms = time(&|| {
            let fwd = gat.forward(&bv, &bq, &ba_dst, &ba_src)?;
            gat.backward(&fwd, &bd).map(drop)
        })?;
        progress.inc(1);
        rows.push(RunRow {
            model: "GAT",
            schedule,
            plan: gat.plan().summary(),
            forward_ms,
            forward_backward_ms,
            error_ratio,
            worst: worst.to_string(),
        });
        on_row(&rows[rows.len() - 1]);

        // GATv2.
        progress.set_message(format!("GATv2 under {schedule}"));
        let gatv2 = GatV2::new(
            &dg,
            &GatV2Config { heads: h, feat: f, slope, plan: PlanOptions { schedule, ..Default::default() } },
        )?;
        let fwd = gatv2.forward(&bv, &bq, &ba_dst)?;
        let grads = gatv2.backward(&fwd, &bd)?;
        let checks = [
            ("out", backend.download(&fwd.out)?, &nv.out, &rv.out),
            ("dxl", backend.download(&grads.dxl)?, &nvg.dxl, &rvg.dxl),
            ("dxr", backend.download(&grads.dxr)?, &nvg.dxr, &rvg.dxr),
            ("da", backend.download(&grads.da)?, &nvg.da, &rvg.da),
        ];
        let (worst, error_ratio) = checks
            .iter()
            .map(|(name, fused, naive, reference)| {
                (*name, ratio(max_abs_diff(fused, reference), max_abs_diff(naive, reference), magnitude(reference)))
            })
            .fold(("", 0.0f64), |a, b| if b.1 > a.1 || b.1.is_nan() { b } else { a });
        let forward_ms = time(&|| gatv2.forward(&bv, &bq, &ba_dst).map(drop))?;
        let forward_backward_ms = time(&|| {
            let fwd = gatv2.forward(&bv, &bq, &ba_dst)?;
            gatv2.backward(&fwd, &bd).map(drop)
        })?;
        progress.inc(1);
        rows.push(RunRow {
            model: "GATv2",
            schedule,
            plan: gatv2.plan().summary(),
            forward_ms,
            forward_backward_ms,
            error_ratio,
            worst: worst.to_string(),
        });
        on_row(&rows[rows.len() - 1]);
    }
    Ok(rows)
}

/// `Ok` when every row passed its check, else the worst failure.
pub fn verdict(rows: &[RunRow]) -> Result<()> {
    match rows.iter().find(|r| r.error_ratio.is_nan() || r.error_ratio > 1.0) {
        Some(bad) => Err(CliError::CheckFailed {
            what: format!(
                "{} under {}: {} error is {:.2}x the allowed (2x naive f32 + floor)",
                bad.model, bad.schedule, bad.worst, bad.error_ratio
            ),
        }),
        None => Ok(()),
    }
}
