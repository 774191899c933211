//! Timing of the attention kernels on one graph (`dfgnn bench gt|gat|gatv2`): per
//! schedule and for the scheduler's own plan, forward and forward+backward median times with CUDA events after
//! warm-up, achieved bandwidth against two byte models and against a device copy measured in the
//! same run, and peak device memory. Benchmarks, never tests: nothing here asserts a speed.
//!
//! Byte models: **compulsory** counts every array once (perfect reuse of gathered rows);
//! **gather-worst** counts, per edge, the neighbour's full rows read from memory. The real traffic
//! lies between them. GT gathers two feature rows per edge (k, v); GAT one (h) plus one scalar per
//! head (er) in the forward; GATv2 one (xl, its key and value).

use dfgnn_graphs::Csr;

use dfgnn::{Backend, Buffer, DeviceGraph, Gat, GatConfig, GatV2, GatV2Config, Gt, GtConfig, PlanOptions, Schedule};
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

/// The byte models of the GAT forward and backward with its node-score kernels (f32 features and
/// scores, u32 indices, u64 offsets; the `[H, F]` attention vectors and the partials of their
/// gradients are left out, being tiny).
pub fn gat_bytes(num_dst: usize, num_src: usize, nnz: usize, heads: u32, feat: u32) -> (ByteModel, ByteModel) {
    let (nd, ns, e) = (num_dst as f64, num_src as f64, nnz as f64);
    let row = heads as f64 * feat as f64 * 4.0;
    let scalar = heads as f64 * 4.0;
    let graph = 8.0 * (nd + 1.0) + 4.0 * e;
    // The node scores: h_dst read and el written per destination, h read and er written per
    // source.
    let node_scores = nd * (row + scalar) + ns * (row + scalar);
    // The fused pass: offsets and columns; el read, out, lse and the two stats written per
    // destination; h and er per source (compulsory) or per edge (gather-worst).
    let rows = graph + nd * (row + 4.0 * scalar);
    let fwd = ByteModel {
        compulsory: node_scores + rows + ns * (row + scalar),
        gather_worst: node_scores + rows + e * (row + scalar),
    };
    // Backward. Row pass: out, d_out, el and the two stats read, D and d el written per
    // destination; h and er gathered. Column pass: h and er read, d er and dh written per source;
    // d_out, el, the two stats and D gathered. Then the node kernels: dh += d er·a_src (d er, dh
    // read, dh written), dh_dst = d el·a_dst (d el read, dh_dst written), and the vector
    // gradients (d er with h, d el with h_dst).
    let csc = 8.0 * (ns + 1.0) + 4.0 * e;
    let rows_pass = graph + nd * (2.0 * row + 5.0 * scalar);
    let cols_pass = csc + ns * (2.0 * row + 2.0 * scalar);
    let node_kernels = ns * (2.0 * row + scalar) + nd * (row + scalar) + ns * (row + scalar) + nd * (row + scalar);
    let (gather_src, gather_dst) = (row + scalar, row + 4.0 * scalar);
    let bwd = ByteModel {
        compulsory: rows_pass + cols_pass + node_kernels + ns * gather_src + nd * gather_dst,
        gather_worst: rows_pass + cols_pass + node_kernels + e * (gather_src + gather_dst),
    };
    (fwd, bwd)
}

/// The byte models of the GATv2 forward and backward (f32 features, u32 indices, u64 offsets;
/// the `[H, F]` attention vector and the partials of its gradient left out, being tiny).
pub fn gatv2_bytes(num_dst: usize, num_src: usize, nnz: usize, heads: u32, feat: u32) -> (ByteModel, ByteModel) {
    let (nd, ns, e) = (num_dst as f64, num_src as f64, nnz as f64);
    let row = heads as f64 * feat as f64 * 4.0;
    let scalar = heads as f64 * 4.0;
    let graph = 8.0 * (nd + 1.0) + 4.0 * e;
    // Forward: offsets and columns; xr read, out, lse and the two stats written per destination;
    // xl (key and value) per source (compulsory) or per edge (gather-worst).
    let rows = graph + nd * (2.0 * row + 3.0 * scalar);
    let fwd = ByteModel { compulsory: rows + ns * row, gather_worst: rows + e * row };
    // Backward. Row pass: xr, out, d_out and the two stats read, D, d xr and the rows' terms of
    // d a written per destination; xl gathered. Column pass: xl read, the two parts of d xl
    // written per source; xr, d_out, the two stats and D gathered. Then d xl = the sum of its
    // parts (two read, one written) and d a = the sum of the rows' terms (read once).
    let csc = 8.0 * (ns + 1.0) + 4.0 * e;
    let rows_pass = graph + nd * (5.0 * row + 3.0 * scalar);
    let cols_pass = csc + ns * 3.0 * row;
    let after = ns * 3.0 * row + nd * row;
    let gather_dst = 2.0 * row + 3.0 * scalar;
    let bwd = ByteModel {
        compulsory: rows_pass + cols_pass + after + ns * row + nd * gather_dst,
        gather_worst: rows_pass + cols_pass + after + e * (row + gather_dst),
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
    /// Kernel launches of one forward call and of one forward+backward call (0 when not run).
    pub launches: (u64, u64),
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
    /// Bytes of the inputs, d_out, the outputs and gradients, and the prepared graph: the memory
    /// target's base.
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

/// Which attention model to time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// GT: `q`, `k`, `v`.
    Gt,
    /// GAT: `h`, `h_dst` (a second array, as on a bipartite graph), `a_dst`, `a_src`, the
    /// default slope.
    Gat,
    /// GATv2: `xl`, `xr`, `a`, the default slope.
    GatV2,
}

impl Model {
    /// The name in the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Gt => "gt",
            Self::Gat => "gat",
            Self::GatV2 => "gatv2",
        }
    }

    /// The forward and backward byte models.
    pub fn bytes(self, num_dst: usize, num_src: usize, nnz: usize, heads: u32, feat: u32) -> (ByteModel, ByteModel) {
        match self {
            Self::Gt => gt_bytes(num_dst, num_src, nnz, heads, feat),
            Self::Gat => gat_bytes(num_dst, num_src, nnz, heads, feat),
            Self::GatV2 => gatv2_bytes(num_dst, num_src, nnz, heads, feat),
        }
    }
}

/// One set of inputs: rows per destination, two per source, the attention vectors and the output
/// gradient. GT reads `(dst, src, src2)` as `(q, k, v)`; GAT reads `src` as `h`, `dst` as `h_dst`
/// and `vectors` as `(a_dst, a_src)`; GATv2 reads `src` as `xl`, `dst` as `xr` and `vectors.0` as
/// `a`.
struct InputSet {
    dst: Buffer<f32>,
    src: Buffer<f32>,
    src2: Buffer<f32>,
    vectors: (Buffer<f32>, Buffer<f32>),
    d_out: Buffer<f32>,
}

/// One model planned for one schedule, ready to time.
trait Timed {
    /// The plan, one line.
    fn plan_line(&self) -> String;
    /// The forward on `set`.
    fn forward(&self, set: &InputSet) -> dfgnn::Result<()>;
    /// The forward and the backward on `set`.
    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()>;
}

impl Timed for Gt<'_, '_> {
    fn plan_line(&self) -> String {
        self.plan().summary()
    }

    fn forward(&self, set: &InputSet) -> dfgnn::Result<()> {
        Gt::forward(self, &set.dst, &set.src, &set.src2).map(drop)
    }

    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let fwd = Gt::forward(self, &set.dst, &set.src, &set.src2)?;
        self.backward(&fwd, &set.d_out).map(drop)
    }
}

impl Timed for Gat<'_, '_> {
    fn plan_line(&self) -> String {
        self.plan().summary()
    }

    fn forward(&self, set: &InputSet) -> dfgnn::Result<()> {
        Gat::forward(self, &set.src, &set.dst, &set.vectors.0, &set.vectors.1).map(drop)
    }

    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let fwd = Gat::forward(self, &set.src, &set.dst, &set.vectors.0, &set.vectors.1)?;
        self.backward(&fwd, &set.d_out).map(drop)
    }
}

impl Timed for GatV2<'_, '_> {
    fn plan_line(&self) -> String {
        self.plan().summary()
    }

    fn forward(&self, set: &InputSet) -> dfgnn::Result<()> {
        GatV2::forward(self, &set.src, &set.dst, &set.vectors.0).map(drop)
    }

    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let fwd = GatV2::forward(self, &set.src, &set.dst, &set.vectors.0)?;
        self.backward(&fwd, &set.d_out).map(drop)
    }
}

/// Plans `model` on `dg` for `plan`.
fn plan_model<'g>(
    model: Model,
    dg: &'g DeviceGraph<'_>,
    heads: u32,
    feat: u32,
    plan: PlanOptions,
) -> dfgnn::Result<Box<dyn Timed + 'g>> {
    Ok(match model {
        Model::Gt => Box::new(Gt::new(dg, &GtConfig { heads, feat, scale: None, plan })?),
        Model::Gat => Box::new(Gat::new(dg, &GatConfig { plan, ..GatConfig::new(heads, feat) })?),
        Model::GatV2 => Box::new(GatV2::new(dg, &GatV2Config { plan, ..GatV2Config::new(heads, feat) })?),
    })
}

/// Times `model` on `graph` under each schedule of `options`, showing each case on `progress`.
pub fn bench(
    backend: &Backend,
    graph: &Csr,
    model: Model,
    options: &BenchOptions,
    progress: &ProgressBar,
) -> Result<BenchReport> {
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
    // Rows of one input set: GT's q, d_out per destination and k, v per source; GAT's h_dst,
    // d_out per destination, h per source and the two [H, F] vectors; GATv2's the same with one
    // vector.
    let set_rows = match model {
        Model::Gt => mul(dg.num_dst().checked_add(dg.num_src()).ok_or_else(overflow)?, 2)?,
        Model::Gat => {
            mul(dg.num_dst(), 2)?.checked_add(dg.num_src()).and_then(|n| n.checked_add(2)).ok_or_else(overflow)?
        }
        Model::GatV2 => {
            mul(dg.num_dst(), 2)?.checked_add(dg.num_src()).and_then(|n| n.checked_add(1)).ok_or_else(overflow)?
        }
    };
    let set_bytes = mul(mul(width, 4)?, set_rows)?;
    progress.set_message("making inputs");
    let make = |nodes: usize, seed: u64| -> Result<Buffer<f32>> {
        let mut b = backend.alloc::<f32>(mul(nodes, width)?)?;
        backend.fill_uniform(&mut b, seed, -1.0, 1.0)?;
        Ok(b)
    };
    let empty = || -> Result<Buffer<f32>> { Ok(backend.alloc::<f32>(0)?) };
    let mut inputs = Vec::new();
    for s in 0..sets as u64 {
        let seed = options.seed.wrapping_mul(1_000_003).wrapping_add(s * 6);
        inputs.push(match model {
            Model::Gt => InputSet {
                dst: make(dg.num_dst(), seed)?,
                src: make(dg.num_src(), seed + 1)?,
                src2: make(dg.num_src(), seed + 2)?,
                vectors: (empty()?, empty()?),
                d_out: make(dg.num_dst(), seed + 3)?,
            },
            Model::Gat => InputSet {
                dst: make(dg.num_dst(), seed)?,
                src: make(dg.num_src(), seed + 1)?,
                src2: empty()?,
                vectors: (make(1, seed + 4)?, make(1, seed + 5)?),
                d_out: make(dg.num_dst(), seed + 3)?,
            },
            Model::GatV2 => InputSet {
                dst: make(dg.num_dst(), seed)?,
                src: make(dg.num_src(), seed + 1)?,
                src2: empty()?,
                vectors: (make(1, seed + 4)?, empty()?),
                d_out: make(dg.num_dst(), seed + 3)?,
            },
        });
    }
    let copy_bytes = (256usize << 20).min(width.saturating_mul(4 * dg.num_src().max(1))).max(1 << 20);
    progress.set_message("measuring the device copy bandwidth");
    let copy_bytes_per_s = copy_bandwidth(backend, copy_bytes, options.warmup, options.repeats)?;
    // Inputs and outputs of forward and backward, and the graph: the outputs are as large as the
    // inputs (GT: out, dq, dk, dv; GAT: out, dh_dst, dh, da_dst, da_src; GATv2: out, dxr, dxl, da).
    let base_bytes = mul(set_bytes, 2)?.checked_add(dg.device_bytes()).ok_or_else(overflow)?;
    // The other input sets are alive only for the rotation; they are not the schedule's.
    let extra_sets = mul(sets - 1, set_bytes)?;
    let mut rows = Vec::new();
    for &schedule in &options.schedules {
        progress.set_message(format!("timing {} {schedule}", model.name()));
        let timed = match plan_model(model, &dg, h, f, PlanOptions { schedule, ..options.plan.clone() }) {
            Ok(timed) => timed,
            Err(e) => {
                rows.push(BenchRow {
                    requested: schedule,
                    plan: String::new(),
                    forward: Timing { median_ms: f64::NAN, min_ms: f64::NAN, max_ms: f64::NAN },
                    forward_backward: None,
                    peak_bytes: 0,
                    launches: (0, 0),
                    error: Some(e.to_string()),
                });
                progress.inc(1);
                continue;
            }
        };
        let mut fwd_samples = Vec::new();
        let mut launches = (0, 0);
        for i in 0..options.warmup + options.repeats {
            let before = backend.counts();
            let (_, ms) = backend.time(|| timed.forward(&inputs[i % sets]))?;
            launches.0 = (backend.counts() - before).launches;
            if i >= options.warmup {
                fwd_samples.push(ms);
            }
        }
        backend.synchronize()?;
        backend.reset_peak_memory();
        let forward_backward = if options.backward {
            let mut samples = Vec::new();
            for i in 0..options.warmup + options.repeats {
                let before = backend.counts();
                let (_, ms) = backend.time(|| timed.forward_backward(&inputs[i % sets]))?;
                launches.1 = (backend.counts() - before).launches;
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
            plan: timed.plan_line(),
            forward: Timing::of(fwd_samples),
            forward_backward,
            peak_bytes: backend.peak_memory().saturating_sub(extra_sets),
            launches,
            error: None,
        });
    }
    Ok(BenchReport {
        backend: backend.description(),
        num_dst: dg.num_dst(),
        num_src: dg.num_src(),
        nnz: dg.nnz(),
        bytes: model.bytes(dg.num_dst(), dg.num_src(), dg.nnz(), h, f),
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
            "{:<12} {:>10} {:>10} {:>9} {:>9} {:>8} {:>12} {:>9} {:>9} {:>8}  plan",
            "schedule",
            "fwd ms",
            "fwd+bwd",
            "fwd TB/s",
            "gw TB/s",
            "gw/copy",
            "bwd gw TB/s",
            "peak GB",
            "peak/base",
            "launches"
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
                "{:<12} {:>10.3} {:>10.3} {:>9.2} {:>9.2} {:>8.2} {:>12.2} {:>9.2} {:>9.2} {:>8}  {}",
                r.requested.name(),
                r.forward.median_ms,
                fb,
                tb(fwd.compulsory, r.forward.median_ms),
                tb(fwd.gather_worst, r.forward.median_ms),
                fwd.gather_worst / (r.forward.median_ms * 1e-3) / self.copy_bytes_per_s,
                tb(bwd.gather_worst, bwd_ms),
                r.peak_bytes as f64 / 1e9,
                r.peak_bytes as f64 / self.base_bytes as f64,
                format!("{}/{}", r.launches.0, r.launches.1),
                r.plan
            )?;
        }
        Ok(())
    }
}
