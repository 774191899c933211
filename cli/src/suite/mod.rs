//! The benchmark suite (`dfgnn bench suite`): graphs × models × shapes × variants (the plan, each
//! forced schedule, `unfused`, and the cuSPARSE path) × {forward, forward+backward}, timed with the protocol of [`crate::bench`] (CUDA events,
//! warm-up, the median of repeats, input sets in rotation), written as JSON (one [`Record`] per
//! case), and turned into a Markdown report ([`report`]), SVG plots ([`plots`]) and
//! docs/results.md's generated block ([`results`]).
//!
//! Peers (PyG, torch.sparse, turbo-gnn: `benches/peers.py`) write records of the same schema into
//! a JSON file of their own; `dfgnn bench report` joins every file it is given, so each row of the
//! report shows the ratio to every system measured in the same run.
//!
//! A model joins the suite through [`Model::ALL`]; a graph through [`DEFAULT_GRAPHS`] (or
//! `--graphs`).

pub mod plots;
pub mod report;
pub mod results;

use std::path::{Path, PathBuf};

use dfgnn::{Backend, DeviceGraph};
use dfgnn_graphs::{Csr, GraphError, GraphStats};
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::bench::{BenchOptions, ByteModel, Model, Timing, Variant, bench_prepared, copy_bandwidth_for};
use crate::data::{LoadOptions, load_graph};
use crate::error::{CliError, Result};

/// The version of the JSON schema: a reader refuses other versions.
pub const SCHEMA: u32 = 1;

/// The suite's graphs by default: the generated 1M cases of docs/results.md, a molecule batch,
/// and the tuning set of real graphs (graph-tool's networks from `DFGNN_GRAPH_TOOL_DIR`, Cora and
/// Citeseer from the data directory's `planetoid/`). A real graph whose file is missing is
/// skipped with a line saying so (and listed in the JSON's `skipped`).
pub const DEFAULT_GRAPHS: [&str; 13] = [
    "er-1M-d16",
    "pl-1M-d16",
    "batch-1024x120-d50",
    "mol-16384",
    "gt-email-Enron",
    "gt-as-22july06",
    "gt-pgp-strong-2009",
    "gt-cond-mat-2005",
    "gt-astro-ph",
    "gt-hep-th",
    "gt-power",
    "cora",
    "citeseer",
];

/// The feature shapes (heads × features per head) by default: the issues' cases, 128 floats per node
/// (1×128) and 256 (4×64, 8×32).
pub const DEFAULT_SHAPES: [(u32, u32); 3] = [(1, 128), (4, 64), (8, 32)];

/// The two passes a case times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pass {
    /// The forward alone.
    Forward,
    /// The forward, then the backward.
    ForwardBackward,
}

impl Pass {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Forward => "forward",
            Self::ForwardBackward => "forward+backward",
        }
    }
}

/// What a graph looks like, for a record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphRecord {
    /// The name the suite was given.
    pub name: String,
    /// Destination nodes (rows).
    pub num_dst: usize,
    /// Source nodes.
    pub num_src: usize,
    /// Edges.
    pub nnz: usize,
    /// Mean in-degree.
    pub in_degree_mean: f64,
    /// Largest in-degree.
    pub in_degree_max: u64,
    /// Coefficient of variation of the in-degrees.
    pub in_degree_cv: f64,
    /// Largest out-degree.
    pub out_degree_max: u64,
    /// Rows without edges.
    pub empty_rows: usize,
    /// Self loops.
    pub self_loops: u64,
    /// Repeated edges.
    pub duplicate_edges: u64,
}

impl GraphRecord {
    /// A graph named `name` with statistics `s`.
    pub fn of(name: &str, s: &GraphStats) -> Self {
        Self {
            name: name.to_string(),
            num_dst: s.num_dst,
            num_src: s.num_src,
            nnz: s.nnz,
            in_degree_mean: s.in_degree.mean,
            in_degree_max: s.in_degree.max,
            in_degree_cv: s.in_degree.cv,
            out_degree_max: s.out_degree.max,
            empty_rows: s.empty_rows(),
            self_loops: s.self_loops,
            duplicate_edges: s.duplicate_edges,
        }
    }
}

/// One timed case: a system (dfgnn or a peer) running one model on one graph and shape, one pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// `dfgnn`, or the peer (`pyg`, `torch_sparse`, `turbo_gnn`, ...).
    pub system: String,
    /// The model.
    pub model: Model,
    /// What ran: a dfgnn schedule (`auto` = the plan), or the peer's layer or pipeline.
    pub variant: String,
    /// The graph.
    pub graph: GraphRecord,
    /// Heads.
    pub heads: u32,
    /// Features per head.
    pub feat: u32,
    /// Forward, or forward+backward.
    pub pass: Pass,
    /// The times (absent when the case could not run).
    pub time: Option<Timing>,
    /// Timed calls behind the median.
    pub repeats: usize,
    /// The pass's bytes by the two byte models (dfgnn's models; absent for a peer that has none).
    pub bytes: Option<ByteModel>,
    /// The device copy bandwidth measured in the same run (bytes read + written per second).
    pub copy_bytes_per_s: Option<f64>,
    /// The achieved bandwidth by both byte models, and the gather-worst one over the copy rate
    /// (derived from `bytes`, `time` and `copy_bytes_per_s`; absent where one of them is).
    #[serde(default)]
    pub bandwidth: Option<Bandwidth>,
    /// The most device memory the case held at once.
    pub peak_bytes: Option<usize>,
    /// Bytes of the inputs, outputs, gradients and prepared graph.
    pub base_bytes: Option<usize>,
    /// The plan, one line (dfgnn).
    pub plan: String,
    /// Why the planner chose it (dfgnn).
    pub reasons: Vec<String>,
    /// Why the case could not run.
    pub error: Option<String>,
    /// For a path compared with a reference before timing (a peer, or dfgnn's cuSPARSE path
    /// against the plan: `bench::cross_check`), the largest relative difference found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_relative_error: Option<f64>,
}

/// A case's achieved bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bandwidth {
    /// Compulsory bytes per second.
    pub compulsory_bytes_per_s: f64,
    /// Gather-worst bytes per second.
    pub gather_worst_bytes_per_s: f64,
    /// Gather-worst bytes per second over the copy bandwidth of the same run.
    pub gather_worst_over_copy: f64,
}

impl Record {
    /// [`Record::bandwidth`] filled in from the record's bytes, time and copy rate.
    fn with_bandwidth(mut self) -> Self {
        self.bandwidth =
            match (self.bytes_per_s(|b| b.compulsory), self.bytes_per_s(|b| b.gather_worst), self.fraction_of_copy()) {
                (Some(compulsory_bytes_per_s), Some(gather_worst_bytes_per_s), Some(gather_worst_over_copy)) => {
                    Some(Bandwidth { compulsory_bytes_per_s, gather_worst_bytes_per_s, gather_worst_over_copy })
                }
                _ => None,
            };
        self
    }

    /// Achieved bandwidth in bytes per second against `bytes` (compulsory or gather-worst).
    pub fn bytes_per_s(&self, bytes: impl Fn(&ByteModel) -> f64) -> Option<f64> {
        Some(bytes(self.bytes.as_ref()?) / (self.time?.median_ms * 1e-3))
    }

    /// The gather-worst bandwidth as a fraction of the same run's copy bandwidth.
    pub fn fraction_of_copy(&self) -> Option<f64> {
        Some(self.bytes_per_s(|b| b.gather_worst)? / self.copy_bytes_per_s?)
    }

    /// The key of the comparison a record belongs to: every system and variant of one model,
    /// graph, shape and pass.
    pub fn case(&self) -> (String, Model, u32, u32, Pass) {
        (self.graph.name.clone(), self.model, self.heads, self.feat, self.pass)
    }
}

/// Where and how a suite ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The schema version ([`SCHEMA`]).
    pub schema: u32,
    /// What wrote the file: `dfgnn bench suite` or a peer script.
    pub tool: String,
    /// When it started, RFC 3339 UTC.
    pub date: String,
    /// The commit the binary was built from (`git describe`, `-dirty` when the tree had changes).
    pub commit: String,
    /// The backend and device.
    pub device: String,
    /// The command line.
    pub command: String,
    /// Untimed calls before timing.
    pub warmup: usize,
    /// The most timed calls per case.
    pub repeats: usize,
    /// Timed calls are cut to fit this many milliseconds per case (at least 3 calls).
    pub case_budget_ms: f64,
    /// Input sets in rotation.
    pub input_sets: usize,
    /// Graphs asked for but not run, and why.
    pub skipped: Vec<String>,
}

impl Meta {
    /// The metadata of a run starting now with this process's command line.
    pub fn now(tool: &str, device: String, options: &SuiteOptions) -> Self {
        Self {
            schema: SCHEMA,
            tool: tool.to_string(),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            commit: env!("DFGNN_COMMIT").to_string(),
            device,
            command: std::env::args().collect::<Vec<_>>().join(" "),
            warmup: options.warmup,
            repeats: options.repeats,
            case_budget_ms: options.case_budget_ms,
            input_sets: options.input_sets,
            skipped: Vec::new(),
        }
    }
}

/// A suite's JSON file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteFile {
    /// Where and how it ran.
    pub meta: Meta,
    /// One per case.
    pub records: Vec<Record>,
    /// The name of the part of the results it holds: the file's stem when it was read (`real-suite`,
    /// `gen-peers`), empty for a file made in this run. Not in the JSON.
    #[serde(skip)]
    pub part: String,
}

impl SuiteFile {
    /// Reads a suite file, refusing other schema versions.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::Usage { what: format!("cannot read {}: {e}", path.display()) })?;
        let mut file: Self = serde_json::from_str(&text)
            .map_err(|e| CliError::Usage { what: format!("{} is not a suite file: {e}", path.display()) })?;
        file.part = path.file_stem().map_or(String::new(), |s| s.to_string_lossy().into_owned());
        if file.meta.schema != SCHEMA {
            return Err(CliError::Usage {
                what: format!("{}: schema {} (this dfgnn reads {SCHEMA})", path.display(), file.meta.schema),
            });
        }
        Ok(file)
    }

    /// Writes the file as pretty JSON, through a temporary file beside it and a rename, so that a
    /// run stopped while writing leaves the previous whole file.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(|e| CliError::Usage { what: e.to_string() })?;
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        std::fs::write(&partial, text + "\n")
            .and_then(|()| std::fs::rename(&partial, path))
            .map_err(|e| CliError::Usage { what: format!("cannot write {}: {e}", path.display()) })
    }
}

/// What the suite runs.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    /// Graph names or files.
    pub graphs: Vec<String>,
    /// Models.
    pub models: Vec<Model>,
    /// Heads × features per head.
    pub shapes: Vec<(u32, u32)>,
    /// Schedules (`auto` = the plan) and baselines.
    pub variants: Vec<Variant>,
    /// Time forward+backward too.
    pub backward: bool,
    /// Untimed calls first.
    pub warmup: usize,
    /// The most timed calls.
    pub repeats: usize,
    /// Fewer timed calls (at least 3) when they would take longer than this per case.
    pub case_budget_ms: f64,
    /// Input sets in rotation.
    pub input_sets: usize,
    /// Where Cora and Citeseer are looked for (`<dir>/planetoid/<name>.npz`).
    pub data_dir: Option<PathBuf>,
    /// Also write each graph to `<dir>/<name>.npz` (for `benches/peers.py`).
    pub write_graphs: Option<PathBuf>,
    /// No graph is started once the suite has run this long (the rest are listed as skipped).
    pub time_limit: Option<std::time::Duration>,
}

impl Default for SuiteOptions {
    fn default() -> Self {
        Self {
            graphs: DEFAULT_GRAPHS.map(String::from).to_vec(),
            models: Model::ALL.to_vec(),
            shapes: DEFAULT_SHAPES.to_vec(),
            variants: Variant::ALL.to_vec(),
            backward: true,
            warmup: 3,
            repeats: 10,
            case_budget_ms: 1000.0,
            input_sets: 2,
            data_dir: None,
            write_graphs: None,
            time_limit: None,
        }
    }
}

impl SuiteOptions {
    /// `--quick`: one warm-up call, at most 3 timed ones, 200 ms per case.
    pub fn quick(mut self) -> Self {
        self.warmup = 1;
        self.repeats = 3;
        self.case_budget_ms = 200.0;
        self
    }
}

/// Resolves a suite graph name: `cora` and `citeseer` are the data directory's Planetoid files;
/// anything else goes to [`load_graph`] (a file or a generated name). `Ok(Err(reason))` for a
/// real graph whose file is missing (the suite skips it and says why).
pub fn resolve_graph(
    name: &str,
    options: &SuiteOptions,
    load: &LoadOptions,
) -> Result<std::result::Result<Csr, String>> {
    match crate::data::planetoid_file(name, options.data_dir.as_deref()) {
        Some(Ok(path)) => return Ok(Ok(dfgnn_graphs::planetoid::load(&path)?.graph)),
        Some(Err(why)) => return Ok(Err(why)),
        None => {}
    }
    if let Some(network) = name.strip_prefix("gt-")
        && dfgnn_graphs::collection::network(network).is_none()
    {
        return Ok(Err(format!(
            "{name}: not in the graph-tool collection (scripts/fetch-graph-tool-data.sh, DFGNN_GRAPH_TOOL_DIR)"
        )));
    }
    load_graph(name, load).map(Ok)
}

/// The records of one graph: every model × shape × variant × pass of `options`. A model or
/// variant that refuses the graph or shape (the cuSPARSE path off GT or off a GPU) gives records
/// with the reason in `error`.
pub fn run_graph(
    backend: &Backend,
    name: &str,
    graph: &Csr,
    options: &SuiteOptions,
    progress: &ProgressBar,
) -> Result<Vec<Record>> {
    progress.set_message(format!("{name}: preparing"));
    let dg = DeviceGraph::new(backend, graph)?;
    let graph_record = GraphRecord::of(name, dg.stats());
    let mut records = Vec::new();
    for &(heads, feat) in &options.shapes {
        let bench = BenchOptions {
            heads,
            feat,
            variants: options.variants.clone(),
            warmup: options.warmup,
            repeats: options.repeats,
            case_budget_ms: Some(options.case_budget_ms),
            backward: options.backward,
            input_sets: options.input_sets,
            seed: 1,
            plan: Default::default(),
            dropout: 0.0,
        };
        progress.set_message(format!("{name}: copy bandwidth"));
        let copy = copy_bandwidth_for(&dg, &bench)?;
        for &model in &options.models {
            let report = match bench_prepared(&dg, model, &bench, copy, progress) {
                Ok(report) => report,
                // Inputs that do not fit are this case's refusal, not the suite's end.
                Err(CliError::Library(e @ dfgnn::Error::OutOfMemory { .. })) => {
                    progress.inc(options.variants.len() as u64);
                    for &variant in &options.variants {
                        for pass in passes(options.backward) {
                            records.push(refused(&graph_record, model, variant, heads, feat, pass, e.to_string()));
                        }
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
            let (fwd_bytes, bwd_bytes) = report.bytes;
            let fb_bytes = ByteModel {
                compulsory: fwd_bytes.compulsory + bwd_bytes.compulsory,
                gather_worst: fwd_bytes.gather_worst + bwd_bytes.gather_worst,
            };
            for row in &report.rows {
                for pass in passes(options.backward) {
                    let (time, repeats, peak, bytes) = match pass {
                        Pass::Forward => (Some(row.forward), row.forward_repeats, row.forward_peak_bytes, fwd_bytes),
                        Pass::ForwardBackward => {
                            (row.forward_backward, row.forward_backward_repeats, row.peak_bytes, fb_bytes)
                        }
                    };
                    records.push(
                        Record {
                            system: "dfgnn".to_string(),
                            model,
                            variant: row.requested.name().to_string(),
                            graph: graph_record.clone(),
                            heads,
                            feat,
                            pass,
                            time: if row.error.is_some() { None } else { time },
                            repeats,
                            bytes: Some(bytes),
                            copy_bytes_per_s: Some(report.copy_bytes_per_s),
                            bandwidth: None,
                            peak_bytes: row.error.is_none().then_some(peak),
                            base_bytes: Some(report.base_bytes),
                            plan: row.plan.clone(),
                            reasons: row.reasons.clone(),
                            error: row.error.clone(),
                            check_relative_error: row.check_relative_error,
                        }
                        .with_bandwidth(),
                    );
                }
            }
        }
    }
    Ok(records)
}

/// The file name (without extension) a suite graph is written under: its name, or a file's stem.
pub fn graph_file_name(name: &str) -> String {
    Path::new(name).file_name().map_or(name.to_string(), |f| {
        let f = f.to_string_lossy();
        f.split('.').next().unwrap_or(&f).to_string()
    })
}

/// The passes timed.
fn passes(backward: bool) -> Vec<Pass> {
    if backward { vec![Pass::Forward, Pass::ForwardBackward] } else { vec![Pass::Forward] }
}

/// The record of a case that could not run.
fn refused(
    graph: &GraphRecord,
    model: Model,
    variant: Variant,
    heads: u32,
    feat: u32,
    pass: Pass,
    why: String,
) -> Record {
    Record {
        system: "dfgnn".to_string(),
        model,
        variant: variant.name().to_string(),
        graph: graph.clone(),
        heads,
        feat,
        pass,
        time: None,
        repeats: 0,
        bytes: None,
        copy_bytes_per_s: None,
        bandwidth: None,
        peak_bytes: None,
        base_bytes: None,
        plan: String::new(),
        reasons: Vec::new(),
        error: Some(why),
        check_relative_error: None,
    }
}

/// The whole suite: every graph of `options` loaded (or generated) in turn, run, and dropped
/// before the next; a bar of one step per model × shape × schedule of each graph. `save` is given
/// the file so far after every graph, so that a run stopped from outside keeps what it measured.
/// Past [`SuiteOptions::time_limit`], the graphs not started are listed as skipped.
pub fn run(
    backend: &Backend,
    options: &SuiteOptions,
    load: &LoadOptions,
    progress: &ProgressBar,
    mut save: impl FnMut(&SuiteFile) -> Result<()>,
) -> Result<SuiteFile> {
    let started = std::time::Instant::now();
    let mut file = SuiteFile {
        meta: Meta::now("dfgnn bench suite", backend.description(), options),
        records: Vec::new(),
        part: String::new(),
    };
    let per_graph = (options.models.len() * options.shapes.len() * options.variants.len()) as u64;
    progress.set_length(per_graph * options.graphs.len() as u64);
    for name in &options.graphs {
        if let Some(limit) = options.time_limit.filter(|&limit| started.elapsed() >= limit) {
            let why = format!("{name}: not started, the suite's time limit ({} s) was reached", limit.as_secs_f64());
            progress.suspend(|| eprintln!("bench suite: skipping {why}"));
            file.meta.skipped.push(why);
            progress.inc(per_graph);
            continue;
        }
        progress.set_message(format!("{name}: loading"));
        // A graph too large for the host or the device is skipped with the reason (the largest
        // sizes of a scaling run find the machine's bound so).
        let too_large = |e: &CliError| {
            matches!(
                e,
                CliError::Graph(GraphError::OverBudget { .. } | GraphError::TooLarge { .. })
                    | CliError::Library(dfgnn::Error::OutOfMemory { .. })
            )
        };
        let skip = |why: String, file: &mut SuiteFile| {
            progress.suspend(|| eprintln!("bench suite: skipping {why}"));
            file.meta.skipped.push(why);
        };
        let graph = match resolve_graph(name, options, load) {
            Ok(Ok(graph)) => graph,
            Ok(Err(why)) => {
                skip(why, &mut file);
                progress.inc(per_graph);
                continue;
            }
            Err(e) if too_large(&e) => {
                skip(format!("{name}: {e}"), &mut file);
                progress.inc(per_graph);
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some(dir) = &options.write_graphs {
            progress.set_message(format!("{name}: writing .npz"));
            let path = dir.join(format!("{}.npz", graph_file_name(name)));
            std::fs::create_dir_all(dir)
                .map_err(|e| CliError::Usage { what: format!("cannot create {}: {e}", dir.display()) })?;
            dfgnn_graphs::format::npz::write(&path, &graph)?;
        }
        match run_graph(backend, name, &graph, options, progress) {
            Ok(records) => file.records.extend(records),
            Err(e) if too_large(&e) => skip(format!("{name}: {e}"), &mut file),
            Err(e) => return Err(e),
        }
        save(&file)?;
    }
    Ok(file)
}
