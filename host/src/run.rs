//! The main job (`dfgnn run`): GT and AGNN, forward and backward, under every schedule, on a
//! default graph, each checked against the f64 reference with the project's tolerance rule, and
//! timed.
//!
//! The default graph needs no download: Cora when the Planetoid data is present (`DFGNN_DATA_DIR`,
//! or `../shared/data` beside the checkout), else a generated power-law graph with super nodes.
//! On the emulator everything runs once (at a size that finishes in well under a minute); on the
//! GPU the timings are medians of repeated runs after warm-up.

use dfgnn_graphs::Csr;
use dfgnn_reference::{
    Dims, Pattern, agnn_backward, agnn_forward, allowed_error, gt_backward, gt_forward, magnitude, max_abs_diff,
};

use crate::agnn::{Agnn, AgnnConfig};
use crate::backend::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::graph::DeviceGraph;
use crate::gt::{Gt, GtConfig};
use crate::plan::{PlanOptions, Schedule};

/// The generated default graph: 2,048 nodes, mean in-degree 8, power law with two super nodes of
/// in-degree 600.
pub const DEFAULT_GENERATED_GRAPH: &str = "pl-2K-d8-h2x600";

/// Where the main job's graph came from.
pub fn default_graph() -> Result<(String, Csr)> {
    let candidates = [
        std::env::var_os("DFGNN_DATA_DIR").map(std::path::PathBuf::from),
        Some(std::path::PathBuf::from("../shared/data")),
        Some(dfgnn_graphs::planetoid::data_dir()),
    ];
    for dir in candidates.into_iter().flatten() {
        let cora = dir.join("planetoid").join("cora.npz");
        if cora.exists() {
            let data = dfgnn_graphs::planetoid::load(&cora)?;
            return Ok((format!("Cora ({})", cora.display()), data.graph));
        }
    }
    Ok((
        format!("{DEFAULT_GENERATED_GRAPH} (generated; Cora not found)"),
        dfgnn_graphs::named::generate(DEFAULT_GENERATED_GRAPH)?,
    ))
}

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
}

impl Default for RunOptions {
    fn default() -> Self {
        Self { heads: 4, feat: 32, schedules: Schedule::ALL.to_vec(), beta: 1.0, seed: 1 }
    }
}

/// One line of the main job's table.
#[derive(Clone, Debug)]
pub struct RunRow {
    /// `"GT"` or `"AGNN"`.
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

/// Runs the main job on `graph`; returns the table, or the first failed check.
pub fn run(backend: &Backend, graph: &Csr, options: &RunOptions) -> Result<Vec<RunRow>> {
    let (warmup, repeats) = if backend.kind() == BackendKind::Cuda { (3, 10) } else { (0, 1) };
    let dg = DeviceGraph::new(backend, graph)?;
    let (h, f) = (options.heads, options.feat);
    let dims = Dims { heads: h as usize, feat: f as usize };
    let pattern = Pattern::new(graph.num_dst(), graph.num_src(), graph.offsets(), graph.columns())?;
    let (nd, ns) = (graph.num_dst() * (h * f) as usize, graph.num_src() * (h * f) as usize);
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
        Some((ra, rag, na, nag))
    } else {
        None
    };

    let time = |work: &dyn Fn() -> Result<()>| -> Result<f64> {
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
        if let Some((ra, rag, na, nag)) = &agnn_ref {
            let agnn = Agnn::new(&dg, &AgnnConfig { heads: h, feat: f, plan: plan_options })?;
            let fwd = agnn.forward(&bv, options.beta)?;
            let grads = agnn.backward(&fwd, &bd)?;
            let d_beta =
                [(grads.d_beta as f64 - rag.d_beta).abs(), (nag.d_beta as f64 - rag.d_beta).abs(), rag.d_beta.abs()];
            let checks = [
                (
                    "out",
                    max_abs_diff(&backend.download(fwd.out())?, &ra.out),
                    max_abs_diff(&na.out, &ra.out),
                    magnitude(&ra.out),
                ),
                (
                    "dh",
                    max_abs_diff(&backend.download(&grads.dh)?, &rag.dh),
                    max_abs_diff(&nag.dh, &rag.dh),
                    magnitude(&rag.dh),
                ),
                ("dβ", d_beta[0], d_beta[1], rag.d_beta_magnitude.max(d_beta[2])),
            ];
            let (worst, error_ratio) = checks
                .iter()
                .map(|&(name, e, naive, m)| (name, ratio(e, naive, m)))
                .fold(("", 0.0f64), |a, b| if b.1 > a.1 || b.1.is_nan() { b } else { a });
            let forward_ms = time(&|| agnn.forward(&bv, options.beta).map(drop))?;
            let forward_backward_ms = time(&|| {
                let fwd = agnn.forward(&bv, options.beta)?;
                agnn.backward(&fwd, &bd).map(drop)
            })?;
            rows.push(RunRow {
                model: "AGNN",
                schedule,
                plan: agnn.plan().summary(),
                forward_ms,
                forward_backward_ms,
                error_ratio,
                worst: worst.to_string(),
            });
        }
    }
    Ok(rows)
}

/// `Ok` when every row passed its check, else the worst failure.
pub fn verdict(rows: &[RunRow]) -> Result<()> {
    match rows.iter().find(|r| r.error_ratio.is_nan() || r.error_ratio > 1.0) {
        Some(bad) => Err(Error::CheckFailed {
            what: format!(
                "{} under {}: {} error is {:.2}x the allowed (2x naive f32 + floor)",
                bad.model, bad.schedule, bad.worst, bad.error_ratio
            ),
        }),
        None => Ok(()),
    }
}
