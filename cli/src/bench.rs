//! Timing of the attention kernels on one graph (`dfgnn bench gt|agnn|gat|gatv2`): per
//! schedule and for the scheduler's own plan, forward and forward+backward median times with CUDA events after
//! warm-up, achieved bandwidth against two byte models and against a device copy measured in the
//! same run, and peak device memory. Benchmarks, never tests: nothing here asserts a speed.
//!
//! Byte models: **compulsory** counts every array once (perfect reuse of gathered rows);
//! **gather-worst** counts, per edge, the neighbour's full rows read from memory. The real traffic
//! lies between them. GT gathers two feature rows per edge (k, v); GAT one (h) plus one scalar per
//! head (er) in the forward; GATv2 one (xl, its key and value); AGNN one (h, its value, the keys
//! made from it) plus one scalar per head (the inverse norm), and the normalisation.
//!
//! A model joins every benchmark (this one, `dfgnn bench suite`, the criterion benches) through
//! [`Model`] (one entry of [`Model::ALL`], its byte model, its inputs) and an implementation of
//! [`Timed`].
//!
//! Besides dfgnn's schedules, a benchmark can time [`Variant::Cusparse`], GT through cuSPARSE's
//! SDDMM and SpMM ([`dfgnn::CusparseGt`], CUDA only): before it is timed its output (and, with
//! the backward, its gradients) is compared with the plan's on the same inputs
//! ([`cross_check`]), and a path that disagrees is reported, not timed.

use dfgnn_graphs::Csr;

use dfgnn::{
    Agnn, AgnnConfig, Backend, Buffer, CusparseGt, DeviceGraph, Gat, GatConfig, GatV2, GatV2Config, Gt, GtConfig,
    PlanOptions, Schedule,
};
use indicatif::ProgressBar;

use crate::error::{CliError, Result};

/// Bytes a pass must move, by the two models.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
    // source; on a square graph h is h_dst, read once for both.
    let node_scores =
        if num_dst == num_src { ns * (row + 2.0 * scalar) } else { nd * (row + scalar) + ns * (row + scalar) };
    // The fused pass: offsets and columns; el read, out, lse and the two stats written per
    // destination; h and er per source (compulsory) or per edge (gather-worst).
    let rows = graph + nd * (row + 4.0 * scalar);
    let fwd = ByteModel {
        compulsory: node_scores + rows + ns * (row + scalar),
        gather_worst: node_scores + rows + e * (row + scalar),
    };
    // Backward, after the training forward, which also wrote the positive part (o⁺, α⁺) per
    // destination. Row pass: out, d_out, o⁺ and α⁺ read, D and d el written per destination; no
    // gather. Column pass: h and er read, d er and dh written per source; d_out, el, the two
    // stats and D gathered. Then the node backward, one pass per feature array: dh += d er·a_src
    // in place with da_src's partials from h (h, dh and d er read, dh written); on a square graph
    // h is h_dst, and the same pass adds d el·a_dst and makes da_dst's partials (d el read beside
    // them), else a second pass over h_dst (h_dst and d el read, dh_dst written).
    let csc = 8.0 * (ns + 1.0) + 4.0 * e;
    let rows_pass = nd * (row + scalar) + nd * (3.0 * row + 3.0 * scalar);
    let cols_pass = csc + ns * (2.0 * row + 2.0 * scalar);
    let node_kernels = if num_dst == num_src {
        ns * (3.0 * row + 2.0 * scalar)
    } else {
        ns * (3.0 * row + scalar) + nd * (2.0 * row + scalar)
    };
    let gather_dst = row + 4.0 * scalar;
    let bwd = ByteModel {
        compulsory: rows_pass + cols_pass + node_kernels + nd * gather_dst,
        gather_worst: rows_pass + cols_pass + node_kernels + e * gather_dst,
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
    // d a written per destination; xl gathered. Column pass: xl read, d xl (the sum of its two
    // parts) written per source; xr, d_out, the two stats and D gathered. Then d a = the sum of
    // the rows' terms (read once).
    let csc = 8.0 * (ns + 1.0) + 4.0 * e;
    let rows_pass = graph + nd * (5.0 * row + 3.0 * scalar);
    let cols_pass = csc + ns * 2.0 * row;
    let after = nd * row;
    let gather_dst = 2.0 * row + 3.0 * scalar;
    let bwd = ByteModel {
        compulsory: rows_pass + cols_pass + after + ns * row + nd * gather_dst,
        gather_worst: rows_pass + cols_pass + after + e * (row + gather_dst),
    };
    (fwd, bwd)
}

/// The byte models of AGNN on the fused row kernels (f32, u32 indices, u64 offsets). Forward: the
/// normalisation reads `h` and writes the queries `β·hn`, the norms and their inverses per node;
/// the attention reads the queries and writes out and lse per destination, and reads `h` and the
/// inverse norms (its keys are made from them) per source (compulsory) or per edge
/// (gather-worst). Backward: the normalisation again for `hn` (`h` read, `hn` and the norms
/// written), GT's backward on `hn`, and the normalisation's backward (`hn`, the norms, `dq`,
/// `dk`, `dv` read, `dh` and the shares of dβ written, the shares read again by their sum), all
/// per node. (On tiles and the baselines the forward stores `hn` and runs GT's: two rows more
/// written per node, one gathered per edge.)
pub fn agnn_bytes(nodes: usize, nnz: usize, heads: u32, feat: u32) -> (ByteModel, ByteModel) {
    let (_, gt_bwd) = gt_bytes(nodes, nodes, nnz, heads, feat);
    let (n, e) = (nodes as f64, nnz as f64);
    let row = heads as f64 * feat as f64 * 4.0;
    let scalar = heads as f64 * 4.0;
    let graph = 8.0 * (n + 1.0) + 4.0 * e;
    let normalize = n * (2.0 * row + 2.0 * scalar);
    let rows = graph + normalize + n * (2.0 * row + scalar);
    let fwd = ByteModel { compulsory: rows + n * (row + scalar), gather_worst: rows + e * (row + scalar) };
    let add =
        |m: ByteModel, bytes: f64| ByteModel { compulsory: m.compulsory + bytes, gather_worst: m.gather_worst + bytes };
    (fwd, add(gt_bwd, n * (2.0 * row + scalar) + n * (5.0 * row + 3.0 * scalar)))
}

/// Median, fastest and slowest of repeated timings, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timing {
    /// The median.
    pub median_ms: f64,
    /// The fastest run.
    pub min_ms: f64,
    /// The slowest run.
    pub max_ms: f64,
}

impl Timing {
    /// The summary of `samples` (at least one).
    pub fn of(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        Self { median_ms: samples[samples.len() / 2], min_ms: samples[0], max_ms: samples[samples.len() - 1] }
    }
}

/// What a benchmark times: one of dfgnn's schedules (`auto`: the scheduler's plan), or the
/// cuSPARSE path (GT only, on a CUDA device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// A dfgnn schedule.
    Schedule(Schedule),
    /// GT through cuSPARSE's SDDMM and SpMM around dfgnn's edge softmax ([`dfgnn::CusparseGt`]).
    Cusparse,
}

impl Variant {
    /// Every variant: the schedules (`auto` first), then `cusparse`.
    pub const ALL: [Variant; 7] = [
        Variant::Schedule(Schedule::Auto),
        Variant::Schedule(Schedule::RowGroup),
        Variant::Schedule(Schedule::RowTiled),
        Variant::Schedule(Schedule::RowSplit),
        Variant::Schedule(Schedule::EdgeParallel),
        Variant::Schedule(Schedule::Unfused),
        Variant::Cusparse,
    ];

    /// The name in the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Schedule(s) => s.name(),
            Self::Cusparse => "cusparse",
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Variant {
    type Err = CliError;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|v| v.name() == s).ok_or_else(|| CliError::Usage {
            what: format!("schedule `{s}` (known: {})", Self::ALL.map(Variant::name).join(", ")),
        })
    }
}

/// The most a checked path's results may differ from the plan's, relative to the plan's largest
/// magnitude (at least 1): the peers' check (`benches/peers.py --tolerance`). A cross-check
/// that the path computes the same function, not the accuracy test (that is the GPU test under
/// `dfgnn_reference::precision`, `host/tests/cusparse.rs`).
pub const CROSS_CHECK_TOLERANCE: f64 = 1e-3;

/// What to time.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Heads.
    pub heads: u32,
    /// Features per head.
    pub feat: u32,
    /// Schedules (`auto` = the scheduler's plan) and baselines to time.
    pub variants: Vec<Variant>,
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs (the median is reported).
    pub repeats: usize,
    /// Fewer timed runs (at least [`MIN_REPEATS`]) when `repeats` would take longer than this
    /// many milliseconds, judged by the last warm-up call; `None`: always `repeats`.
    pub case_budget_ms: Option<f64>,
    /// Time forward+backward too.
    pub backward: bool,
    /// Input sets to rotate through, so caches cannot hold one set across runs.
    pub input_sets: usize,
    /// Seed of the inputs.
    pub seed: u64,
    /// Other plan overrides, applied to every schedule.
    pub plan: PlanOptions,
    /// Attention dropout's probability, 0 for none: GT, GAT and GATv2 time their forwards and
    /// backwards with the mask (the schedules without dropout, and AGNN, are refused).
    pub dropout: f32,
}

/// One variant's timings.
#[derive(Clone, Debug)]
pub struct BenchRow {
    /// The schedule or baseline asked for.
    pub requested: Variant,
    /// The plan, one line.
    pub plan: String,
    /// Why the planner chose it, one line per decision.
    pub reasons: Vec<String>,
    /// Forward time.
    pub forward: Timing,
    /// Timed forward calls.
    pub forward_repeats: usize,
    /// The most bytes of dfgnn buffers alive at once during the forward.
    pub forward_peak_bytes: usize,
    /// Forward+backward time.
    pub forward_backward: Option<Timing>,
    /// Timed forward+backward calls.
    pub forward_backward_repeats: usize,
    /// The most bytes of dfgnn buffers alive at once during forward+backward (or forward).
    pub peak_bytes: usize,
    /// Kernel launches of one forward call and of one forward+backward call (0 when not run).
    pub launches: (u64, u64),
    /// Or why the schedule could not run.
    pub error: Option<String>,
    /// For a path checked against the plan before timing, the largest relative difference of its
    /// results ([`cross_check`]).
    pub check_relative_error: Option<f64>,
}

impl BenchRow {
    /// The row of a schedule that could not run, and why.
    fn refused(requested: Variant, why: String) -> Self {
        let nan = Timing { median_ms: f64::NAN, min_ms: f64::NAN, max_ms: f64::NAN };
        Self {
            requested,
            plan: String::new(),
            reasons: Vec::new(),
            forward: nan,
            forward_repeats: 0,
            forward_peak_bytes: 0,
            forward_backward: None,
            forward_backward_repeats: 0,
            peak_bytes: 0,
            launches: (0, 0),
            error: Some(why),
            check_relative_error: None,
        }
    }
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
    let (t, _) = time_calls(backend, warmup, repeats, None, 1, |_| backend.copy(&src, &mut dst))?;
    Ok(2.0 * (n * 4) as f64 / (t.median_ms * 1e-3))
}

/// Which attention model to time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// GT: `q`, `k`, `v`.
    Gt,
    /// AGNN: `h` (square graphs only), β = 1.
    Agnn,
    /// GAT: `h`, `h_dst` (a second array, as on a bipartite graph), `a_dst`, `a_src`, the
    /// default slope.
    Gat,
    /// GATv2: `xl`, `xr`, `a`, the default slope.
    GatV2,
}

impl Model {
    /// Every model, in the order reports list them.
    pub const ALL: [Model; 4] = [Model::Gt, Model::Agnn, Model::Gat, Model::GatV2];

    /// The name in the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Gt => "gt",
            Self::Agnn => "agnn",
            Self::Gat => "gat",
            Self::GatV2 => "gatv2",
        }
    }

    /// The forward and backward byte models.
    pub fn bytes(self, num_dst: usize, num_src: usize, nnz: usize, heads: u32, feat: u32) -> (ByteModel, ByteModel) {
        match self {
            Self::Gt => gt_bytes(num_dst, num_src, nnz, heads, feat),
            Self::Agnn => agnn_bytes(num_dst, nnz, heads, feat),
            Self::Gat => gat_bytes(num_dst, num_src, nnz, heads, feat),
            Self::GatV2 => gatv2_bytes(num_dst, num_src, nnz, heads, feat),
        }
    }

    /// Rows of `[H, F]` one input set holds: `(per destination, per source, single)` (the output
    /// gradient included).
    fn input_rows(self) -> (usize, usize, usize) {
        match self {
            // q, d_out; k, v.
            Self::Gt => (2, 2, 0),
            // d_out; h.
            Self::Agnn => (1, 1, 0),
            // h_dst, d_out; h; a_dst, a_src.
            Self::Gat => (2, 1, 2),
            // xr, d_out; xl; a.
            Self::GatV2 => (2, 1, 1),
        }
    }

    /// The model on `dg` as `variant` asks (the cuSPARSE path is GT's only), with `options`'
    /// heads, features, attention dropout and other plan overrides (applied to a schedule).
    pub fn timed<'g>(
        self,
        dg: &'g DeviceGraph<'_>,
        options: &BenchOptions,
        variant: Variant,
    ) -> dfgnn::Result<Box<dyn Timed + 'g>> {
        let (heads, feat, plan, dropout) = (options.heads, options.feat, &options.plan, options.dropout);
        match (variant, self) {
            (Variant::Schedule(schedule), _) => {
                self.plan(dg, heads, feat, PlanOptions { schedule, ..plan.clone() }, dropout)
            }
            (Variant::Cusparse, _) if dropout != 0.0 => {
                Err(dfgnn::Error::Unsupported { what: "attention dropout on the cuSPARSE path".to_string() })
            }
            (Variant::Cusparse, Self::Gt) => Ok(Box::new(CusparseGt::new(dg, &GtConfig::new(heads, feat))?)),
            (Variant::Cusparse, _) => {
                Err(dfgnn::Error::Unsupported { what: format!("the cuSPARSE path for {self} (it is GT's only)") })
            }
        }
    }

    /// Plans the model on `dg` for `plan`, with attention dropout of probability `dropout` (0:
    /// none; a fixed seed).
    pub fn plan<'g>(
        self,
        dg: &'g DeviceGraph<'_>,
        heads: u32,
        feat: u32,
        plan: PlanOptions,
        dropout: f32,
    ) -> dfgnn::Result<Box<dyn Timed + 'g>> {
        const SEED: u64 = 1;
        if dropout != 0.0 && matches!(plan.schedule, Schedule::Unfused | Schedule::EdgeParallel) {
            return Err(dfgnn::Error::Unsupported {
                what: format!(
                    "attention dropout on the {} schedule (it runs in the fused kernels only)",
                    plan.schedule
                ),
            });
        }
        Ok(match self {
            Self::Gt => {
                let mut gt = Gt::new(dg, &GtConfig { heads, feat, scale: None, plan })?;
                gt.set_dropout(dropout, SEED)?;
                Box::new(gt)
            }
            Self::Agnn if dropout != 0.0 => {
                return Err(dfgnn::Error::Unsupported { what: "attention dropout for AGNN".to_string() });
            }
            Self::Agnn => Box::new(Agnn::new(dg, &AgnnConfig { heads, feat, plan })?),
            Self::Gat => {
                let mut gat = GatTimed::new(dg, &GatConfig { plan, ..GatConfig::new(heads, feat) })?;
                gat.inference.set_dropout(dropout, SEED)?;
                gat.training.set_dropout(dropout, SEED)?;
                Box::new(gat)
            }
            Self::GatV2 => {
                let mut gatv2 = GatV2::new(dg, &GatV2Config { plan, ..GatV2Config::new(heads, feat) })?;
                gatv2.set_dropout(dropout, SEED)?;
                Box::new(gatv2)
            }
        })
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Model {
    type Err = CliError;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| CliError::Usage {
            what: format!("model `{s}` (known: {})", Self::ALL.map(Model::name).join(", ")),
        })
    }
}

/// One set of inputs: rows per destination, two per source, the attention vectors and the output
/// gradient. GT reads `(dst, src, src2)` as `(q, k, v)`; AGNN reads `src` as `h`; GAT reads
/// `src` as `h`, `dst` as `h_dst` and `vectors` as `(a_dst, a_src)`; GATv2 reads `src` as `xl`,
/// `dst` as `xr` and `vectors.0` as `a`; AGNN reads `beta` (β = 1, on the device as the
/// kernels read it). Arrays a model does not read are empty.
pub struct InputSet {
    dst: Buffer<f32>,
    src: Buffer<f32>,
    src2: Buffer<f32>,
    vectors: (Buffer<f32>, Buffer<f32>),
    beta: Buffer<f32>,
    d_out: Buffer<f32>,
}

/// One model planned for one schedule (or a baseline), ready to time.
pub trait Timed {
    /// What runs, one line (the plan's summary).
    fn summary(&self) -> String;
    /// Why, one line per decision (the planner's reasons).
    fn reasons(&self) -> Vec<String>;
    /// For a path checked before it is timed (a baseline), [`cross_check`]'s result on `set`;
    /// `None` for dfgnn's own schedules (their accuracy tests are the test suites').
    fn cross_check(&self, _dg: &DeviceGraph<'_>, _set: &InputSet, _backward: bool) -> Option<Result<f64>> {
        None
    }
    /// The forward on `set`.
    fn forward(&self, set: &InputSet) -> dfgnn::Result<()>;
    /// The forward and the backward on `set`.
    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()>;
}

impl Timed for Gt<'_, '_> {
    fn summary(&self) -> String {
        Gt::plan(self).summary()
    }

    fn reasons(&self) -> Vec<String> {
        Gt::plan(self).reasons.clone()
    }

    fn forward(&self, set: &InputSet) -> dfgnn::Result<()> {
        Gt::forward(self, &set.dst, &set.src, &set.src2).map(drop)
    }

    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let fwd = Gt::forward(self, &set.dst, &set.src, &set.src2)?;
        self.backward(&fwd, &set.d_out).map(drop)
    }
}

impl Timed for Agnn<'_, '_> {
    fn summary(&self) -> String {
        Agnn::plan(self).summary()
    }

    fn reasons(&self) -> Vec<String> {
        Agnn::plan(self).reasons.clone()
    }

    fn forward(&self, set: &InputSet) -> dfgnn::Result<()> {
        self.forward_device_beta(&set.src, &set.beta).map(drop)
    }

    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let fwd = self.forward_device_beta(&set.src, &set.beta)?;
        self.backward(&fwd, &set.d_out).map(drop)
    }
}

/// GAT as timed: the forward alone as for inference (no positive part saved), the forward and
/// backward as for training (the forward saves it, the backward's row pass reads it): one plan,
/// made twice.
struct GatTimed<'g, 'b> {
    inference: Gat<'g, 'b>,
    training: Gat<'g, 'b>,
}

impl<'g, 'b> GatTimed<'g, 'b> {
    fn new(dg: &'g DeviceGraph<'b>, config: &GatConfig) -> dfgnn::Result<Self> {
        let mut inference = Gat::new(dg, config)?;
        inference.set_saves_part(false);
        Ok(Self { inference, training: Gat::new(dg, config)? })
    }
}

impl Timed for GatTimed<'_, '_> {
    fn summary(&self) -> String {
        self.training.plan().summary()
    }

    fn reasons(&self) -> Vec<String> {
        self.training.plan().reasons.clone()
    }

    fn forward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let gat = &self.inference;
        gat.forward(&set.src, gat_destinations(gat, set), &set.vectors.0, &set.vectors.1).map(drop)
    }

    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let gat = &self.training;
        let fwd = gat.forward(&set.src, gat_destinations(gat, set), &set.vectors.0, &set.vectors.1)?;
        gat.backward(&fwd, &set.d_out).map(drop)
    }
}

/// GAT's destination features: on a square graph the sources' own, as in a GAT layer (one
/// projection `h = W·x` gives both node scores, read once); a bipartite graph's destinations have
/// their own.
fn gat_destinations<'s>(gat: &Gat<'_, '_>, set: &'s InputSet) -> &'s Buffer<f32> {
    let g = gat.graph();
    if g.num_dst() == g.num_src() { &set.src } else { &set.dst }
}

impl Timed for GatV2<'_, '_> {
    fn summary(&self) -> String {
        GatV2::plan(self).summary()
    }

    fn reasons(&self) -> Vec<String> {
        GatV2::plan(self).reasons.clone()
    }

    fn forward(&self, set: &InputSet) -> dfgnn::Result<()> {
        GatV2::forward(self, &set.src, &set.dst, &set.vectors.0).map(drop)
    }

    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let fwd = GatV2::forward(self, &set.src, &set.dst, &set.vectors.0)?;
        self.backward(&fwd, &set.d_out).map(drop)
    }
}

impl Timed for CusparseGt<'_, '_> {
    fn summary(&self) -> String {
        CusparseGt::summary(self)
    }

    fn reasons(&self) -> Vec<String> {
        Vec::new()
    }

    fn cross_check(&self, dg: &DeviceGraph<'_>, set: &InputSet, backward: bool) -> Option<Result<f64>> {
        Some(cross_check(dg, self, set, backward))
    }

    fn forward(&self, set: &InputSet) -> dfgnn::Result<()> {
        CusparseGt::forward(self, &set.dst, &set.src, &set.src2).map(drop)
    }

    fn forward_backward(&self, set: &InputSet) -> dfgnn::Result<()> {
        let fwd = CusparseGt::forward(self, &set.dst, &set.src, &set.src2)?;
        self.backward(&fwd, &set.d_out).map(drop)
    }
}

/// The cuSPARSE path's results on `set` against the plan's (GT with the default plan, on the same
/// inputs): the largest over `out` (and, with `backward`, `dq`, `dk`, `dv`) of
/// `max|path − plan| / max(1, max|plan|)`.
pub fn cross_check(dg: &DeviceGraph<'_>, path: &CusparseGt<'_, '_>, set: &InputSet, backward: bool) -> Result<f64> {
    let backend = dg.backend();
    let (heads, feat) = path.shape();
    let plan = Gt::new(dg, &GtConfig::new(heads, feat))?;
    let (fwd, theirs) = (plan.forward(&set.dst, &set.src, &set.src2)?, path.forward(&set.dst, &set.src, &set.src2)?);
    let mut pairs = vec![(backend.download(&fwd.out)?, backend.download(&theirs.out)?)];
    if backward {
        let (ours, other) = (plan.backward(&fwd, &set.d_out)?, path.backward(&theirs, &set.d_out)?);
        for (a, b) in [(&ours.dq, &other.dq), (&ours.dk, &other.dk), (&ours.dv, &other.dv)] {
            pairs.push((backend.download(a)?, backend.download(b)?));
        }
    }
    Ok(pairs.iter().map(|(ours, other)| relative_difference(other, ours)).fold(0.0, f64::max))
}

/// `max|a − b| / max(1, max|b|)`; infinite when a value is not finite or the lengths differ.
fn relative_difference(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let scale = b.iter().fold(1.0f64, |m, &x| m.max(f64::from(x).abs()));
    let worst = a.iter().zip(b).fold(0.0f64, |m, (&x, &y)| {
        let d = (f64::from(x) - f64::from(y)).abs();
        if d.is_nan() { f64::INFINITY } else { m.max(d) }
    });
    worst / scale
}

/// The input sets of one benchmark case, made on the device, with their sizes.
pub struct Inputs {
    /// The sets, used in rotation.
    pub sets: Vec<InputSet>,
    /// Bytes of one set.
    pub set_bytes: usize,
}

impl Inputs {
    /// `count` sets of `model`'s inputs for `heads` × `feat` on `dg`, uniform in [-1, 1) from
    /// `seed`; sizes checked before anything is allocated.
    pub fn new(model: Model, dg: &DeviceGraph<'_>, heads: u32, feat: u32, count: usize, seed: u64) -> Result<Self> {
        let backend = dg.backend();
        let overflow = || CliError::Usage {
            what: format!(
                "bench: {heads} heads x {feat} features x {count} input sets on {} nodes: the sizes overflow",
                dg.num_dst()
            ),
        };
        let mul = |a: usize, b: usize| a.checked_mul(b).ok_or_else(overflow);
        let width = mul(heads as usize, feat as usize)?;
        let (per_dst, per_src, single) = model.input_rows();
        let rows = mul(dg.num_dst(), per_dst)?
            .checked_add(mul(dg.num_src(), per_src)?)
            .and_then(|r| r.checked_add(single))
            .ok_or_else(overflow)?;
        let set_bytes = mul(mul(width, 4)?, rows)?;
        let make = |wanted: bool, nodes: usize, seed: u64| -> Result<Buffer<f32>> {
            if !wanted {
                return Ok(backend.alloc::<f32>(0)?);
            }
            let mut b = backend.alloc::<f32>(mul(nodes, width)?)?;
            backend.fill_uniform(&mut b, seed, -1.0, 1.0)?;
            Ok(b)
        };
        let (nd, ns) = (dg.num_dst(), dg.num_src());
        let mut sets = Vec::with_capacity(count);
        for s in 0..count.max(1) as u64 {
            let seed = seed.wrapping_mul(1_000_003).wrapping_add(s * 6);
            sets.push(InputSet {
                dst: make(per_dst == 2, nd, seed)?,
                src: make(true, ns, seed + 1)?,
                src2: make(per_src == 2, ns, seed + 2)?,
                vectors: (make(single >= 1, 1, seed + 4)?, make(single == 2, 1, seed + 5)?),
                beta: if model == Model::Agnn { backend.upload(&[1.0f32])? } else { backend.alloc::<f32>(0)? },
                d_out: make(true, nd, seed + 3)?,
            });
        }
        Ok(Self { sets, set_bytes })
    }
}

/// The fewest timed runs a case budget leaves.
pub const MIN_REPEATS: usize = 3;

/// Runs `work` `warmup` times untimed, then `repeats` times timed with the backend's clock (CUDA
/// events on the GPU), rotating through `sets` input sets; the median of the timed runs and how
/// many there were. With a `budget_ms`, the timed runs are cut (to no fewer than
/// [`MIN_REPEATS`]) so that they take about that long, judged by the last warm-up call.
pub fn time_calls(
    backend: &Backend,
    warmup: usize,
    repeats: usize,
    budget_ms: Option<f64>,
    sets: usize,
    mut work: impl FnMut(usize) -> dfgnn::Result<()>,
) -> Result<(Timing, usize)> {
    let sets = sets.max(1);
    let mut last = f64::NAN;
    for i in 0..warmup {
        last = backend.time(|| work(i % sets))?.1;
    }
    let repeats = match budget_ms {
        Some(budget) if last > 0.0 => repeats.min(((budget / last) as usize).max(MIN_REPEATS)),
        _ => repeats,
    }
    .max(1);
    let mut samples = Vec::with_capacity(repeats);
    for i in warmup..warmup + repeats {
        samples.push(backend.time(|| work(i % sets))?.1);
    }
    Ok((Timing::of(samples), repeats))
}

/// Times `model` on `graph` under each schedule of `options`, showing each case on `progress`.
pub fn bench(
    backend: &Backend,
    graph: &Csr,
    model: Model,
    options: &BenchOptions,
    progress: &ProgressBar,
) -> Result<BenchReport> {
    progress.set_message("preparing the graph");
    let dg = DeviceGraph::new(backend, graph)?;
    progress.set_length(options.variants.len() as u64);
    let copy_bytes_per_s = copy_bandwidth_for(&dg, options)?;
    bench_prepared(&dg, model, options, copy_bytes_per_s, progress)
}

/// The copy bandwidth for a graph's benchmark: buffers as large as one feature array of its
/// sources (between 1 MiB and 256 MiB), timed as `options` say.
pub fn copy_bandwidth_for(dg: &DeviceGraph<'_>, options: &BenchOptions) -> Result<f64> {
    if options.repeats == 0 {
        return Err(CliError::Usage { what: "bench: at least one timed run (--repeats 1)".to_string() });
    }
    let width = (options.heads as usize).saturating_mul(options.feat as usize);
    let copy_bytes = (256usize << 20).min(width.saturating_mul(4 * dg.num_src().max(1))).max(1 << 20);
    copy_bandwidth(dg.backend(), copy_bytes, options.warmup, options.repeats)
}

/// Times one planned model: the forward, then (when asked) forward+backward, each with the peak
/// device memory of its calls (less the `extra_sets` bytes of the other input sets).
fn measure(
    backend: &Backend,
    timed: &dyn Timed,
    inputs: &Inputs,
    options: &BenchOptions,
    extra_sets: usize,
) -> Result<BenchRow> {
    let (budget, sets) = (options.case_budget_ms, inputs.sets.len());
    backend.synchronize()?;
    backend.reset_peak_memory();
    let before = backend.counts();
    timed.forward(&inputs.sets[0])?;
    let forward_launches = (backend.counts() - before).launches;
    let (forward, forward_repeats) =
        time_calls(backend, options.warmup, options.repeats, budget, sets, |i| timed.forward(&inputs.sets[i]))?;
    backend.synchronize()?;
    let forward_peak_bytes = backend.peak_memory().saturating_sub(extra_sets);
    backend.reset_peak_memory();
    let mut backward_launches = 0;
    let (forward_backward, forward_backward_repeats, peak_bytes) = if options.backward {
        let before = backend.counts();
        timed.forward_backward(&inputs.sets[0])?;
        backward_launches = (backend.counts() - before).launches;
        let (t, n) = time_calls(backend, options.warmup, options.repeats, budget, sets, |i| {
            timed.forward_backward(&inputs.sets[i])
        })?;
        backend.synchronize()?;
        (Some(t), n, backend.peak_memory().saturating_sub(extra_sets))
    } else {
        (None, 0, forward_peak_bytes)
    };
    Ok(BenchRow {
        requested: Variant::Schedule(Schedule::Auto),
        plan: timed.summary(),
        reasons: timed.reasons(),
        forward,
        forward_repeats,
        forward_peak_bytes,
        forward_backward,
        forward_backward_repeats,
        peak_bytes,
        launches: (forward_launches, backward_launches),
        error: None,
        check_relative_error: None,
    })
}

/// Times `model` on the prepared `dg` under each schedule of `options` (one step of `progress`
/// each), with `copy_bytes_per_s` the copy bandwidth of the same run.
pub fn bench_prepared(
    dg: &DeviceGraph<'_>,
    model: Model,
    options: &BenchOptions,
    copy_bytes_per_s: f64,
    progress: &ProgressBar,
) -> Result<BenchReport> {
    if options.repeats == 0 {
        return Err(CliError::Usage { what: "bench: at least one timed run (--repeats 1)".to_string() });
    }
    let backend = dg.backend();
    let (h, f) = (options.heads, options.feat);
    let sets = options.input_sets.max(1);
    progress.set_message(format!("making {model} inputs"));
    let inputs = Inputs::new(model, dg, h, f, sets, options.seed)?;
    let too_big = || CliError::Usage { what: format!("bench: {h} heads x {f} features: the sizes overflow") };
    // Inputs and outputs of forward and backward, and the graph: the outputs are as large as the
    // inputs (GT: out, dq, dk, dv; AGNN: out, dh; GAT: out, dh_dst, dh, da_dst, da_src).
    let base_bytes =
        inputs.set_bytes.checked_mul(2).and_then(|b| b.checked_add(dg.device_bytes())).ok_or_else(too_big)?;
    // The other input sets are alive only for the rotation; they are not the schedule's.
    let extra_sets = (sets - 1).checked_mul(inputs.set_bytes).ok_or_else(too_big)?;
    let mut rows = Vec::new();
    for &variant in &options.variants {
        progress.set_message(format!("timing {model} {h}x{f} {variant}"));
        let timed = match model.timed(dg, options, variant) {
            Ok(timed) => timed,
            Err(e) => {
                rows.push(BenchRow::refused(variant, e.to_string()));
                progress.inc(1);
                continue;
            }
        };
        let measured = match timed.cross_check(dg, &inputs.sets[0], options.backward) {
            Some(Ok(error)) if error > CROSS_CHECK_TOLERANCE => Ok(BenchRow {
                check_relative_error: Some(error),
                ..BenchRow::refused(
                    variant,
                    format!(
                        "its results differ from the plan's by {error:.3e} (relative), past the cross-check's \
                         {CROSS_CHECK_TOLERANCE:e}"
                    ),
                )
            }),
            Some(Err(e)) => Err(e),
            Some(Ok(error)) => measure(backend, timed.as_ref(), &inputs, options, extra_sets)
                .map(|row| BenchRow { check_relative_error: Some(error), ..row }),
            None => measure(backend, timed.as_ref(), &inputs, options, extra_sets),
        };
        progress.inc(1);
        rows.push(match measured {
            Ok(row) => BenchRow { requested: variant, ..row },
            // Running out of device memory is this case's end, not the benchmark's: the backend
            // refuses before allocating, so nothing is left in a bad state.
            Err(CliError::Library(e @ dfgnn::Error::OutOfMemory { .. })) => BenchRow::refused(variant, e.to_string()),
            // So is a cuSPARSE call that fails (a shape its routines refuse): the baseline's
            // record says why, the benchmark goes on.
            Err(CliError::Library(e @ dfgnn::Error::Cusparse { .. })) => BenchRow::refused(variant, e.to_string()),
            Err(e) => return Err(e),
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
        for r in &self.rows {
            if let Some(error) = r.check_relative_error {
                writeln!(
                    f,
                    "{}: checked against the plan before timing: largest relative difference {error:.3e} (at most \
                     {CROSS_CHECK_TOLERANCE:e})",
                    r.requested.name()
                )?;
            }
        }
        Ok(())
    }
}
