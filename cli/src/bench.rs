//! Timing of the attention kernels on one graph (`dfgnn bench gt`): per schedule and for the
//! scheduler's own plan, forward and forward+backward median times with CUDA events after
//! warm-up, achieved bandwidth against two byte models and against a device copy measured in the
//! same run, and peak device memory. Benchmarks, never tests: nothing here asserts a speed.
//!
//! Byte models: **compulsory** counts every array once (perfect reuse of gathered rows);
//! **gather-worst** counts, per edge, the neighbour's full rows read from memory. The real traffic
//! lies between them.

use dfgnn_graphs::Csr;

use dfgnn::{Backend, Buffer, DeviceGraph, Gt, GtConfig, PlanOptions, Schedule};
use indicatif::ProgressBar;

use crate::error::{CliError, Result};

/// Bytes a pass must move, by the two models.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ByteModel {
    /// Every array touched once.
    pub compulsory: f64,
    /// Every edge re-reads its neighbour's rows.
    pub gather_worst: f64,
}

/// The byte models of the GT forward and backward (f32 features, u32 indices, u64 offsets).
pub fn gt_bytes(num_dst: usize, num_src: usize, nnz: usize, heads: u32, feat: u32) -> (ByteModel, ByteModel) {
    let (nd, ns, e) = (num_dst as f64, num_src as f64, nnz as f64);
    let row = heads as f64 * feat as f64 * 4.0;
    let scalar = heads as f64 * 4.0;
    // Forward: offsets and columns; q read and out written per destination; k and v per source
    // (compulsory) or per edge (gather-worst); lse written.
    let graph = 8.0 * (nd + 1.0) + 4.0 * e;
    let fwd = ByteModel {
        compulsory: graph + nd * (2.0 * row + scalar) + ns * 2.0 * row,
        gather_worst: graph + nd * (2.0 * row + scalar) + e * 2.0 * row,
    };
    // Backward: row pass reads q, o, dO, lse and writes dq, D per destination and gathers k, v
    // per edge; column pass reads k, v and writes dk, dv per source and gathers q, dO, lse, D per
    // edge (compulsory: each once).
    let csc = 8.0 * (ns + 1.0) + 4.0 * e;
    let rows_pass = graph + nd * (4.0 * row + 2.0 * scalar);
    let cols_pass = csc + ns * 4.0 * row;
    let bwd = ByteModel {
        compulsory: rows_pass + cols_pass + ns * 2.0 * row + nd * (2.0 * row + 2.0 * scalar),
        gather_worst: rows_pass + cols_pass + e * (2.0 * row + 2.0 * row + 2.0 * scalar),
    };
    (fwd, bwd)
}

/// Median, fastest and slowest of repeated timings, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// The median.
    pub median_ms: f64,
    /// The fastest run.
    pub min_ms: f64,
    /// The slowest run.
    pub max_ms: f64,
}

impl Timing {
    fn of(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        Self { median_ms: samples[samples.len() / 2], min_ms: samples[0], max_ms: samples[samples.len() - 1] }
    }
}

/// What to time.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Heads.
    pub heads: u32,
    /// Features per head.
    pub feat: u32,
    /// Schedules to time (`Auto` = the scheduler's plan).
    pub schedules: Vec<Schedule>,
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs (the median is reported).
    pub repeats: usize,
    /// Time forward+backward too.
    pub backward: bool,
    /// Input sets to rotate through, so caches cannot hold one set across runs.
    pub input_sets: usize,
    /// Seed of the inputs.
    pub seed: u64,
    /// Other plan overrides, applied to every schedule.
    pub plan: PlanOptions,
}

/// One schedule's timings.
#[derive(Clone, Debug)]
pub struct BenchRow {
    /// The schedule asked for.
    pub requested: Schedule,
    /// The plan, one line.
    pub plan: String,
    /// Forward time.
    pub forward: Timing,
    /// Forward+backward time.
    pub forward_backward: Option<Timing>,
    /// The most bytes of dfgnn buffers alive at once during forward+backward (or forward).
    pub peak_bytes: usize,
    /// Or why the schedule could not run.
    pub error: Option<String>,
}

/// The whole report.
#[derive(Clone, Debug)]
pub struct BenchReport {
    /// Which backend ran.
    pub backend: String,
    /// Nodes, edges.
    pub num_dst: usize,
    /// Source nodes.
    pub num_src: usize,
    /// Edges.
    pub nnz: usize,
    /// The forward and backward byte models.
    pub bytes: (ByteModel, ByteModel),
    /// Device copy bandwidth measured in the same run (bytes read + written per second).
    pub copy_bytes_per_s: f64,
    /// Bytes of q, k, v, out, dO, dq, dk, dv and the prepared graph: the memory target's base.
    pub base_bytes: usize,
    /// One row per schedule.
    pub rows: Vec<BenchRow>,
}

/// Measures device-to-device copy bandwidth with buffers of `bytes`.
pub fn copy_bandwidth(backend: &Backend, bytes: usize, warmup: usize, repeats: usize) -> Result<f64> {
    let n = bytes / 4;
    let src = backend.zeros::<f32>(n)?;
    let mut dst = backend.alloc::<f32>(n)?;
    for _ in 0..warmup {
        backend.copy(&src, &mut dst)?;
    }
    let mut samples = Vec::new();
    for _ in 0..repeats.max(1) {
        let ((), ms) = backend.time(|| backend.copy(&src, &mut dst))?;
        samples.push(ms);
    }
    let t = Timing::of(samples);
    Ok(2.0 * (n * 4) as f64 / (t.median_ms * 1e-3))
}

/// Times GT on `graph` under each schedule of `options`, showing each case on `progress`.
pub fn bench_gt(backend: &Backend, graph: &Csr, options: &BenchOptions, progress: &ProgressBar) -> Result<BenchReport> {
    if options.repeats == 0 {
        return Err(CliError::Usage { what: "bench: at least one timed run (--repeats 1)".to_string() });
    }
    progress.set_length(options.schedules.len() as u64);
    progress.set_message("preparing the graph");
    let dg = DeviceGraph::new(backend, graph)?;
    let (h, f) = (options.heads, options.feat);
    let sets = options.input_sets.max(1);
    let overflow = || CliError::Usage {
        what: format!(
            "bench: {h} heads x {f} features x {sets} input sets on {} nodes: the sizes overflow",
            dg.num_dst()
        ),
    };
    let mul = |a: usize, b: usize| a.checked_mul(b).ok_or_else(overflow);
    let width = mul(h as usize, f as usize)?;
    // Bytes of one input set (q, d_out per destination; k, v per source) and of the outputs.
    let set_bytes = mul(mul(width, 4)?, dg.num_dst().checked_add(dg.num_src()).ok_or_else(overflow)?)?;
    let set_bytes = mul(set_bytes, 2)?;
    progress.set_message("making inputs");
    let make = |nodes: usize, seed: u64| -> Result<Buffer<f32>> {
        let mut b = backend.alloc::<f32>(mul(nodes, width)?)?;
        backend.fill_uniform(&mut b, seed, -1.0, 1.0)?;
        Ok(b)
    };
    let mut inputs = Vec::new();
    for s in 0..sets as u64 {
        let seed = options.seed.wrapping_mul(1_000_003).wrapping_add(s * 4);
        inputs.push((
            make(dg.num_dst(), seed)?,
            make(dg.num_src(), seed + 1)?,
            make(dg.num_src(), seed + 2)?,
            make(dg.num_dst(), seed + 3)?,
        ));
    }
    let copy_bytes = (256usize << 20).min(width.saturating_mul(4 * dg.num_src().max(1))).max(1 << 20);
    progress.set_message("measuring the device copy bandwidth");
    let copy_bytes_per_s = copy_bandwidth(backend, copy_bytes, options.warmup, options.repeats)?;
    // Inputs and outputs of forward and backward (two input sets' worth), and the graph.
    let base_bytes = mul(set_bytes, 2)?.checked_add(dg.device_bytes()).ok_or_else(overflow)?;
    // The other input sets are alive only for the rotation; they are not the schedule's.
    let extra_sets = mul(sets - 1, set_bytes)?;
    let mut rows = Vec::new();
    for &schedule in &options.schedules {
        progress.set_message(format!("timing {schedule}"));
        let config =
            GtConfig { heads: h, feat: f, scale: None, plan: PlanOptions { schedule, ..options.plan.clone() } };
        let gt = match Gt::new(&dg, &config) {
            Ok(gt) => gt,
            Err(e) => {
                rows.push(BenchRow {
                    requested: schedule,
                    plan: String::new(),
                    forward: Timing { median_ms: f64::NAN, min_ms: f64::NAN, max_ms: f64::NAN },
                    forward_backward: None,
                    peak_bytes: 0,
                    error: Some(e.to_string()),
                });
                progress.inc(1);
                continue;
            }
        };
        let plan_line = gt.plan().summary();
        let mut fwd_samples = Vec::new();
        for i in 0..options.warmup + options.repeats {
            let (q, k, v, _) = &inputs[i % sets];
            let (_, ms) = backend.time(|| gt.forward(q, k, v).map(drop))?;
            if i >= options.warmup {
                fwd_samples.push(ms);
            }
        }
        backend.synchronize()?;
        backend.reset_peak_memory();
        let forward_backward = if options.backward {
            let mut samples = Vec::new();
            for i in 0..options.warmup + options.repeats {
                let (q, k, v, d_out) = &inputs[i % sets];
                let (_, ms) = backend.time(|| {
                    let fwd = gt.forward(q, k, v)?;
                    gt.backward(&fwd, d_out).map(drop)
                })?;
                if i >= options.warmup {
                    samples.push(ms);
                }
            }
            Some(Timing::of(samples))
        } else {
            None
        };
        progress.inc(1);
        rows.push(BenchRow {
            requested: schedule,
            plan: plan_line,
            forward: Timing::of(fwd_samples),
            forward_backward,
            peak_bytes: backend.peak_memory().saturating_sub(extra_sets),
            error: None,
        });
    }
    Ok(BenchReport {
        backend: backend.description(),
        num_dst: dg.num_dst(),
        num_src: dg.num_src(),
        nnz: dg.nnz(),
        bytes: gt_bytes(dg.num_dst(), dg.num_src(), dg.nnz(), h, f),
        copy_bytes_per_s,
        base_bytes,
        rows,
    })
}

impl std::fmt::Display for BenchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (fwd, bwd) = self.bytes;
        let tb = |bytes: f64, ms: f64| bytes / (ms * 1e-3) / 1e12;
        writeln!(f, "backend: {}", self.backend)?;
        writeln!(f, "graph: {} x {} nodes, {} edges", self.num_dst, self.num_src, self.nnz)?;
        writeln!(
            f,
            "bytes: forward {:.2} GB compulsory / {:.2} GB gather-worst; backward {:.2} / {:.2} GB",
            fwd.compulsory / 1e9,
            fwd.gather_worst / 1e9,
            bwd.compulsory / 1e9,
            bwd.gather_worst / 1e9
        )?;
        writeln!(f, "device copy bandwidth (same run): {:.2} TB/s (read + write)", self.copy_bytes_per_s / 1e12)?;
        writeln!(
            f,
            "{:<12} {:>10} {:>10} {:>9} {:>9} {:>8} {:>12} {:>9} {:>9}  plan",
            "schedule", "fwd ms", "fwd+bwd", "fwd TB/s", "gw TB/s", "gw/copy", "bwd gw TB/s", "peak GB", "peak/base"
        )?;
        for r in &self.rows {
            if let Some(e) = &r.error {
                writeln!(f, "{:<12} cannot run: {e}", r.requested.name())?;
                continue;
            }
            let fb = r.forward_backward.map_or(f64::NAN, |t| t.median_ms);
            let bwd_ms = fb - r.forward.median_ms;
            writeln!(
                f,
                "{:<12} {:>10.3} {:>10.3} {:>9.2} {:>9.2} {:>8.2} {:>12.2} {:>9.2} {:>9.2}  {}",
                r.requested.name(),
                r.forward.median_ms,
                fb,
                tb(fwd.compulsory, r.forward.median_ms),
                tb(fwd.gather_worst, r.forward.median_ms),
                fwd.gather_worst / (r.forward.median_ms * 1e-3) / self.copy_bytes_per_s,
                tb(bwd.gather_worst, bwd_ms),
                r.peak_bytes as f64 / 1e9,
                r.peak_bytes as f64 / self.base_bytes as f64,
                r.plan
            )?;
        }
        Ok(())
    }
}
