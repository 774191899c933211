//! The `dfgnn` command-line tool.
//!
//! ```text
//! dfgnn run                 the main job (see README.md)
//! dfgnn demo                the chain demo: proof-of-chain kernels checked against plain Rust
//! dfgnn info                which backend runs, the device's limits and the memory budget
//! dfgnn bench gt|agnn|gat|gatv2   one model's timings per schedule
//! dfgnn bench suite         the benchmark suite: JSON, Markdown report and SVG plots
//! dfgnn bench report JSON   the Markdown report (or README's headline, docs/results.md's block) of suite files
//! dfgnn graph stats FILE    statistics of a graph file (.npz, .mtx, edge list, .gt) or named graph
//! dfgnn graph write G OUT   writes a graph (file or name) as .npz, .mtx, an edge list or .gt
//! ```
//! Results go to stdout, progress to stderr (shown only on a terminal); every command prints its
//! error and exits non-zero on failure.

use std::process::ExitCode;

use bytesize::ByteSize;
use clap::{Parser, Subcommand, ValueEnum};
use dfgnn::Backend;
use dfgnn_cli::data::{LoadOptions, default_graph, resolve_graph};
use dfgnn_cli::progress;
use dfgnn_cli::run::RunRow;
use dfgnn_cli::suite::{SuiteFile, SuiteOptions};
use dfgnn_cli::{CliError, Result};
use dfgnn_graphs::Csr;

#[derive(Parser)]
#[command(name = "dfgnn", version, about = "Fused attention GNN kernels on NVIDIA GPUs, with a CPU SIMT emulator")]
struct Cli {
    /// Which backend runs the kernels.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, global = true)]
    backend: BackendChoice,
    /// Where data sets are looked for (`planetoid/cora.npz`); no default (without it, the main job
    /// generates its graph).
    #[arg(long, env = "DFGNN_DATA_DIR", global = true)]
    data_dir: Option<std::path::PathBuf>,
    /// The most memory dfgnn's buffers and the main job's host arrays may take (e.g. `512MiB`,
    /// `8GB`); default: the memory available (the emulator), the driver's limit (the GPU).
    #[arg(long, global = true)]
    max_memory: Option<ByteSize>,
    /// Compact node ids to those the edges use (for edge lists whose ids are far above their
    /// node count); the original ids are written to `--ids-out`.
    #[arg(long, global = true)]
    relabel: bool,
    /// Where `--relabel` writes the original ids (default: `<file name>.ids.tsv` here).
    #[arg(long, global = true)]
    ids_out: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendChoice {
    /// The GPU when one is usable, else the emulator (also `DFGNN_BACKEND`).
    Auto,
    /// The CUDA device 0; an error when there is none.
    Cuda,
    /// The SIMT emulator on the CPU.
    Emulator,
}

#[derive(Subcommand)]
enum Command {
    /// The main job: GT, AGNN and GAT, forward and backward, under every schedule, on the default
    /// graph (Cora when the data directory holds it, else a generated power-law graph with super
    /// nodes) or a given one, checked against the f64 reference and timed. Each row is printed as
    /// soon as it is measured.
    Run(RunArgs),
    /// The chain demo: a warp-shuffle row softmax and a block segmented reduction, checked
    /// against plain Rust on random CSR data.
    Demo {
        /// Random seed of the inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Size multiplier of the inputs (1 to 1024).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
        scale: u32,
    },
    /// Shows which backend runs, the device's limits and the memory budget.
    Info,
    /// Timing of the attention kernels (median of repeats, CUDA events, after warm-up).
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
    },
    /// Graph utilities.
    Graph {
        #[command(subcommand)]
        command: GraphCommand,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// A graph file, generated-graph name or `cora`/`citeseer` (from the data directory) instead of the default.
    #[arg(long)]
    graph: Option<String>,
    /// Heads.
    #[arg(long, default_value_t = 4)]
    heads: u32,
    /// Features per head.
    #[arg(long, default_value_t = 32)]
    feat: u32,
    /// Schedules, comma-separated (default: all; `auto` is the scheduler's choice).
    #[arg(long, value_delimiter = ',')]
    schedule: Vec<String>,
    /// AGNN's temperature β.
    #[arg(long, default_value_t = 1.0)]
    beta: f32,
    /// Random seed of the inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// GT forward and forward+backward per schedule.
    Gt(BenchArgs),
    /// AGNN (normalisation included, β = 1) forward and forward+backward per schedule.
    Agnn(BenchArgs),
    /// GAT forward (node scores included) and forward+backward per schedule.
    Gat(BenchArgs),
    /// GATv2 forward and forward+backward per schedule.
    Gatv2(BenchArgs),
    /// The benchmark suite: graphs × models × shapes × schedules × {forward, forward+backward};
    /// writes `suite.json`, `report.md` and SVG plots into `--out`.
    Suite(SuiteArgs),
    /// The Markdown report of suite files (dfgnn's and the peers'), on stdout.
    Report(ReportArgs),
}

#[derive(clap::Args)]
struct SuiteArgs {
    /// Where suite.json, report.md and the plots go.
    #[arg(long)]
    out: std::path::PathBuf,
    /// Graphs (names, files, `cora`, `citeseer`), comma-separated (default: the suite's set).
    #[arg(long, value_delimiter = ',')]
    graphs: Vec<String>,
    /// Models, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    models: Vec<String>,
    /// Shapes HxF, comma-separated (default: 1x128,4x64,8x32).
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<String>,
    /// Schedules and baselines, comma-separated (default: all; `auto` is the plan, `cusparse` GT
    /// through cuSPARSE, checked against the plan first).
    #[arg(long, value_delimiter = ',')]
    schedules: Vec<String>,
    /// Time the forward only.
    #[arg(long)]
    forward_only: bool,
    /// One warm-up call, at most 3 timed ones, 200 ms per case (for tuning).
    #[arg(long)]
    quick: bool,
    /// Untimed calls before timing (default 3; 1 with --quick).
    #[arg(long)]
    warmup: Option<usize>,
    /// The most timed calls per case (default 10; 3 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    repeats: Option<u64>,
    /// Timed calls are cut (to no fewer than 3) to take about this long per case (default 1000; 200
    /// with --quick).
    #[arg(long)]
    case_budget_ms: Option<f64>,
    /// Other suite files (the peers') to join into the report and plots.
    #[arg(long)]
    join: Vec<std::path::PathBuf>,
    /// Write no plots.
    #[arg(long)]
    no_plots: bool,
    /// Input sets in rotation (default 2; 1 halves the inputs' memory for the largest graphs).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64))]
    input_sets: Option<u64>,
    /// Also write each graph to `DIR/<name>.npz`, for benches/peers.py.
    #[arg(long)]
    write_graphs: Option<std::path::PathBuf>,
    /// Start no graph after this many seconds (those left are listed as skipped); suite.json is
    /// written after every graph, so a run stopped from outside keeps what it measured.
    #[arg(long)]
    time_limit_s: Option<f64>,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Suite files (`dfgnn bench suite`'s suite.json, benches/peers.py's output).
    files: Vec<std::path::PathBuf>,
    /// Print README's headline table instead of the report.
    #[arg(long, conflicts_with = "results_block")]
    headline: bool,
    /// Print docs/results.md's generated block instead of the report.
    #[arg(long)]
    results_block: bool,
    /// Also write the SVG plots into this folder.
    #[arg(long)]
    plots: Option<std::path::PathBuf>,
    /// Also rewrite the headline block of this README (between its `<!-- headline` markers).
    #[arg(long)]
    readme: Option<std::path::PathBuf>,
    /// Also rewrite the generated block of this docs/results.md (between its `<!-- results`
    /// markers).
    #[arg(long)]
    results: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// A graph file, generated-graph name (e.g. er-1M-d16, pl-1M-d16, batch-1024x120-d50) or `cora`/`citeseer` (from the data directory).
    #[arg(long, default_value = "er-64K-d16")]
    graph: String,
    /// Heads.
    #[arg(long, default_value_t = 4)]
    heads: u32,
    /// Features per head.
    #[arg(long, default_value_t = 64)]
    feat: u32,
    /// Schedules to time, comma-separated (`auto` is the scheduler's plan; `cusparse`, GT only,
    /// cuSPARSE's SDDMM and SpMM around dfgnn's softmax, checked against the plan first).
    #[arg(long, value_delimiter = ',', default_value = "auto,row_tiled,row_split")]
    schedule: Vec<String>,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// Timed runs (the median is reported).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    repeats: u32,
    /// Time the forward only.
    #[arg(long)]
    forward_only: bool,
    /// Input sets to rotate through.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    input_sets: u32,
    /// Rows with more edges than this are split (row_split).
    #[arg(long)]
    split_threshold: Option<u64>,
    /// Edges per chunk of a split row.
    #[arg(long)]
    chunk_edges: Option<u32>,
    /// Most register slots per lane.
    #[arg(long)]
    max_slots: Option<u32>,
    /// Threads per block of the row kernels.
    #[arg(long)]
    block_threads: Option<u32>,
    /// Use 4-byte loads even when F % 4 == 0.
    #[arg(long)]
    scalar_loads: bool,
    /// Take whole rows in row order (default: longest first).
    #[arg(long)]
    natural_row_order: bool,
    /// Rows per block of the row kernels.
    #[arg(long)]
    units_per_block: Option<u32>,
    /// Stage sources in shared memory for row_group (true/false; default: the planner decides).
    #[arg(long)]
    group_staging: Option<bool>,
    /// Pack whole rows of fewer edges than this, one per team of a warp (0: none; default: the
    /// planner decides, rows of at most one warp step when a warp has several teams).
    #[arg(long)]
    team_rows_below: Option<u64>,
    /// The forward over tiles: `off`, `dense` (GT and AGNN) or `edges` (every model); default: the
    /// planner decides, under `auto` only.
    #[arg(long)]
    tiles: Option<String>,
    /// GAT: whether a forward for training also sums each row's positive part, so that the
    /// backward's row pass gathers nothing (true/false; default: it does).
    #[arg(long)]
    positive_part: Option<bool>,
    /// After a fused forward, run the unfused backward instead of the fused passes (true/false;
    /// default: the planner decides; with dropout the fused passes run whatever this says).
    #[arg(long)]
    unfused_backward: Option<bool>,
    /// GT and AGNN: run the backward over closed blocks after the forward over dense tiles (true/false;
    /// default: the planner decides).
    #[arg(long)]
    block_backward: Option<bool>,
    /// Attention dropout's probability (GT, GAT, GATv2; 0: none): the forwards and backwards are
    /// timed with the mask, as in training (a fixed seed).
    #[arg(long, default_value_t = 0.0)]
    dropout: f32,
    /// Relabel the graph's nodes first, for locality: `degree` (decreasing in-degree) or `rcm`
    /// (reverse Cuthill-McKee); the reordering's host time is printed apart from the timings.
    #[arg(long)]
    reorder: Option<String>,
}

#[derive(Subcommand)]
enum GraphCommand {
    /// Prints the statistics of a graph: a file (.npz, .mtx, .txt/.el/.edges, .gt, .gt.gz), a
    /// named generated graph (e.g. `pl-1M-d16`, `er-4K-d8`) or `cora`/`citeseer` of the data
    /// directory.
    Stats {
        /// The file or graph name.
        graph: String,
    },
    /// Writes a graph (a file, a generated name, `cora`/`citeseer` of the data directory) to a
    /// file whose extension says the format (`.npz` as scipy's `save_npz` writes it, `.mtx`, an
    /// edge list, `.gt`): what `benches/peers.py` reads.
    Write {
        /// The file or graph name.
        graph: String,
        /// The file to write.
        out: std::path::PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dfgnn: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The backend asked for, with the memory budget asked for.
fn select_backend(choice: BackendChoice, max_memory: Option<usize>) -> Result<Backend> {
    let backend = match choice {
        BackendChoice::Cuda => Backend::cuda(0)?,
        BackendChoice::Emulator => Backend::emulator(),
        BackendChoice::Auto => {
            let selection = Backend::auto()?;
            if let Some(reason) = selection.fallback_reason {
                eprintln!("dfgnn: no usable GPU ({reason}); running on the SIMT emulator");
            }
            selection.backend
        }
    };
    // The CLI's process is dfgnn's alone: freed device memory stays for the next call.
    backend.keep_freed_memory()?;
    let backend = match max_memory {
        Some(bytes) => backend.with_memory_budget(bytes),
        None => backend,
    };
    println!("backend: {}", backend.description());
    Ok(backend)
}

/// A graph by Planetoid name (from `data_dir`), file or generated name, with a spinner while it
/// loads.
fn load_with_progress(graph: &str, data_dir: Option<&std::path::Path>, options: &LoadOptions) -> Result<Csr> {
    let spinner = progress::spinner(format!("loading {graph}"));
    let result = resolve_graph(graph, data_dir, options);
    spinner.finish_and_clear();
    result
}

fn run(cli: Cli) -> Result<()> {
    let max_memory = match cli.max_memory {
        Some(size) => Some(usize::try_from(size.as_u64()).map_err(|_| CliError::Usage {
            what: format!("--max-memory {size} is more than this machine can address"),
        })?),
        None => None,
    };
    let load =
        LoadOptions { max_bytes: max_memory.map(|b| b as u64), relabel: cli.relabel, ids_out: cli.ids_out.clone() };
    match cli.command {
        Command::Run(args) => {
            let (name, graph) = match &args.graph {
                Some(g) => (g.clone(), load_with_progress(g, cli.data_dir.as_deref(), &load)?),
                None => {
                    let spinner = progress::spinner("loading the default graph");
                    let result = default_graph(cli.data_dir.as_deref());
                    spinner.finish_and_clear();
                    result?
                }
            };
            main_job(&select_backend(cli.backend, max_memory)?, &name, &graph, &args, max_memory)
        }
        Command::Demo { seed, scale } => demo(&select_backend(cli.backend, max_memory)?, seed, scale as usize),
        Command::Info => {
            let backend = select_backend(cli.backend, max_memory)?;
            let l = backend.limits();
            println!("device: {} (compute capability {}.{})", l.name, l.compute_capability.0, l.compute_capability.1);
            println!("multiprocessors: {}", l.multiprocessors);
            println!("shared memory per block (opt-in): {} bytes", l.max_shared_per_block);
            println!("L2: {} bytes; memory: {} bytes", l.l2_bytes, l.total_memory);
            match backend.memory_budget() {
                usize::MAX => println!("memory budget: the driver's"),
                bytes => println!("memory budget: {bytes} bytes ({})", ByteSize(bytes as u64)),
            }
            Ok(())
        }
        Command::Graph { command: GraphCommand::Stats { graph } } => {
            graph_stats(&graph, cli.data_dir.as_deref(), &load)
        }
        Command::Graph { command: GraphCommand::Write { graph, out } } => {
            let g = load_with_progress(&graph, cli.data_dir.as_deref(), &load)?;
            dfgnn_graphs::format::write_path(&out, &g)?;
            println!("{graph}: {} x {} nodes, {} edges -> {}", g.num_dst(), g.num_src(), g.nnz(), out.display());
            Ok(())
        }
        Command::Bench { command: BenchCommand::Suite(args) } => {
            suite(&select_backend(cli.backend, max_memory)?, &args, cli.data_dir.clone(), &load)
        }
        Command::Bench { command: BenchCommand::Report(args) } => report(&args),
        Command::Bench { command } => {
            let (model, args) = match command {
                BenchCommand::Gt(args) => (dfgnn_cli::bench::Model::Gt, args),
                BenchCommand::Agnn(args) => (dfgnn_cli::bench::Model::Agnn, args),
                BenchCommand::Gat(args) => (dfgnn_cli::bench::Model::Gat, args),
                BenchCommand::Gatv2(args) => (dfgnn_cli::bench::Model::GatV2, args),
                BenchCommand::Suite(_) | BenchCommand::Report(_) => unreachable!("matched above"),
            };
            let graph = load_with_progress(&args.graph, cli.data_dir.as_deref(), &load)?;
            bench(&select_backend(cli.backend, max_memory)?, &graph, model, &args)
        }
    }
}

fn main_job(backend: &Backend, name: &str, graph: &Csr, args: &RunArgs, max_memory: Option<usize>) -> Result<()> {
    let stats = {
        let spinner = progress::spinner("graph statistics");
        let stats = dfgnn_graphs::GraphStats::of(graph);
        spinner.finish_and_clear();
        stats
    };
    println!(
        "graph: {name}: {} x {} nodes, {} edges, in-degree mean {:.1} max {}",
        graph.num_dst(),
        graph.num_src(),
        graph.nnz(),
        stats.in_degree.mean,
        stats.in_degree.max
    );
    let mut options = dfgnn_cli::run::RunOptions {
        heads: args.heads,
        feat: args.feat,
        beta: args.beta,
        seed: args.seed,
        ..Default::default()
    };
    if let Some(bytes) = max_memory {
        options.max_memory = bytes;
    }
    if !args.schedule.is_empty() {
        options.schedules = args.schedule.iter().map(|s| s.parse()).collect::<dfgnn::Result<Vec<_>>>()?;
    }
    dfgnn_cli::run::preflight(backend, graph, &options)?;
    println!(
        "features: {} heads x {}; checks against the f64 reference: error <= 2x naive f32 + floor",
        args.heads, args.feat
    );
    let bar = progress::steps("starting");
    bar.suspend(|| {
        println!("{:<5} {:<14} {:>10} {:>12} {:>8}  plan", "model", "schedule", "fwd ms", "fwd+bwd ms", "err/tol")
    });
    let mut print_row = |r: &RunRow| {
        bar.suspend(|| {
            println!(
                "{:<5} {:<14} {:>10.3} {:>12.3} {:>8.3}  {}",
                r.model,
                r.schedule.name(),
                r.forward_ms,
                r.forward_backward_ms,
                r.error_ratio,
                r.plan
            )
        })
    };
    let rows = dfgnn_cli::run::run(backend, graph, &options, &bar, &mut print_row);
    bar.finish_and_clear();
    let rows = rows?;
    dfgnn_cli::run::verdict(&rows)?;
    println!("all {} checks passed on {}", rows.len(), backend.kind());
    Ok(())
}

fn demo(backend: &Backend, seed: u64, scale: usize) -> Result<()> {
    let (reports, ms) = backend.time(|| dfgnn_cli::demo::check_chain(backend, seed, scale))?;
    println!(
        "{:<20} {:>7} {:>8} {:>14} {:>14} {:>14}",
        "input", "rows", "values", "softmax err", "naive f32 err", "segsum rel err"
    );
    for r in &reports {
        println!(
            "{:<20} {:>7} {:>8} {:>14.3e} {:>14.3e} {:>14.3e}",
            r.name, r.rows, r.nnz, r.softmax_error, r.softmax_naive_error, r.segment_relative_error
        );
    }
    println!("chain demo passed on {} ({ms:.1} ms including transfers)", backend.kind());
    Ok(())
}

fn bench(backend: &Backend, graph: &Csr, model: dfgnn_cli::bench::Model, args: &BenchArgs) -> Result<()> {
    let variants = args.schedule.iter().map(|s| s.parse()).collect::<Result<Vec<dfgnn_cli::bench::Variant>>>()?;
    let options = dfgnn_cli::bench::BenchOptions {
        heads: args.heads,
        feat: args.feat,
        variants,
        warmup: args.warmup as usize,
        repeats: args.repeats as usize,
        case_budget_ms: None,
        backward: !args.forward_only,
        input_sets: args.input_sets as usize,
        seed: 1,
        plan: dfgnn::PlanOptions {
            split_threshold: args.split_threshold,
            chunk_edges: args.chunk_edges,
            max_slots: args.max_slots,
            block_threads: args.block_threads,
            scalar_loads: args.scalar_loads,
            natural_row_order: args.natural_row_order,
            units_per_block: args.units_per_block,
            group_staging: args.group_staging,
            team_rows_below: args.team_rows_below,
            tiles: args.tiles.as_deref().map(str::parse).transpose()?,
            positive_part: args.positive_part,
            unfused_backward: args.unfused_backward,
            block_backward: args.block_backward,
            ..Default::default()
        },
        dropout: args.dropout,
    };
    println!(
        "bench {}: graph {}, {} heads x {} features, {} warm-up + {} timed runs{}",
        model.name(),
        args.graph,
        args.heads,
        args.feat,
        args.warmup,
        args.repeats,
        if args.dropout != 0.0 { format!(", attention dropout {}", args.dropout) } else { String::new() }
    );
    let reordered;
    let graph = match &args.reorder {
        None => graph,
        Some(name) => {
            let ordering: dfgnn_graphs::reorder::Ordering = name.parse()?;
            let start = std::time::Instant::now();
            let perm = dfgnn_graphs::reorder::order(graph, ordering)?;
            let ordered_ms = start.elapsed().as_secs_f64() * 1e3;
            reordered = graph.permuted(&perm)?;
            let total_ms = start.elapsed().as_secs_f64() * 1e3;
            println!(
                "reordering: {} in {ordered_ms:.1} ms, relabelled in {:.1} ms more (host, once per graph)",
                ordering.name(),
                total_ms - ordered_ms
            );
            &reordered
        }
    };
    let bar = progress::steps("starting");
    let report = dfgnn_cli::bench::bench(backend, graph, model, &options, &bar);
    bar.finish_and_clear();
    let report = report?;
    print!("{report}");
    Ok(())
}

fn graph_stats(graph: &str, data_dir: Option<&std::path::Path>, load: &LoadOptions) -> Result<()> {
    let g = load_with_progress(graph, data_dir, load)?;
    println!("{graph}");
    print!("{}", dfgnn_graphs::GraphStats::of(&g));
    Ok(())
}

/// A shape `HxF`.
fn parse_shape(text: &str) -> Result<(u32, u32)> {
    let bad = || CliError::Usage { what: format!("shape `{text}`: expected HxF, e.g. 4x64") };
    let (h, f) = text.split_once('x').ok_or_else(bad)?;
    let (h, f) = (h.parse::<u32>().map_err(|_| bad())?, f.parse::<u32>().map_err(|_| bad())?);
    if h == 0 || f == 0 {
        return Err(bad());
    }
    Ok((h, f))
}

fn suite(backend: &Backend, args: &SuiteArgs, data_dir: Option<std::path::PathBuf>, load: &LoadOptions) -> Result<()> {
    let mut options = SuiteOptions {
        data_dir,
        backward: !args.forward_only,
        write_graphs: args.write_graphs.clone(),
        ..Default::default()
    };
    if args.quick {
        options = options.quick();
    }
    if !args.graphs.is_empty() {
        options.graphs = args.graphs.clone();
    }
    if !args.models.is_empty() {
        options.models = args.models.iter().map(|m| m.parse()).collect::<Result<_>>()?;
    }
    if !args.shapes.is_empty() {
        options.shapes = args.shapes.iter().map(|s| parse_shape(s)).collect::<Result<_>>()?;
    }
    if !args.schedules.is_empty() {
        options.variants = args.schedules.iter().map(|s| s.parse()).collect::<Result<_>>()?;
    }
    options.warmup = args.warmup.unwrap_or(options.warmup);
    options.repeats = args.repeats.map_or(options.repeats, |r| r as usize);
    options.case_budget_ms = args.case_budget_ms.unwrap_or(options.case_budget_ms);
    options.input_sets = args.input_sets.map_or(options.input_sets, |n| n as usize);
    options.time_limit = args
        .time_limit_s
        .map(|s| {
            std::time::Duration::try_from_secs_f64(s)
                .map_err(|_| CliError::Usage { what: format!("--time-limit-s {s}: not a number of seconds") })
        })
        .transpose()?;
    // Joined files are read first, so a bad one fails before anything is timed.
    let joined = args.join.iter().map(|p| SuiteFile::read(p)).collect::<Result<Vec<_>>>()?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Usage { what: format!("cannot create {}: {e}", args.out.display()) })?;
    let json = args.out.join("suite.json");
    let bar = progress::steps("starting");
    let file = dfgnn_cli::suite::run(backend, &options, load, &bar, |so_far| so_far.write(&json));
    bar.finish_and_clear();
    let file = file?;
    file.write(&json)?;
    let files: Vec<SuiteFile> = std::iter::once(file).chain(joined).collect();
    let md = args.out.join("report.md");
    std::fs::write(&md, dfgnn_cli::suite::report::markdown(&files))
        .map_err(|e| CliError::Usage { what: format!("cannot write {}: {e}", md.display()) })?;
    println!("{} records -> {}; report -> {}", files[0].records.len(), json.display(), md.display());
    if !args.no_plots {
        for path in dfgnn_cli::suite::plots::write_all(&files, &args.out)? {
            println!("plot -> {}", path.display());
        }
    }
    Ok(())
}

fn report(args: &ReportArgs) -> Result<()> {
    use dfgnn_cli::suite::report::{HEADLINE, headline, markdown};
    use dfgnn_cli::suite::results::{RESULTS, block};
    let files = args.files.iter().map(|p| SuiteFile::read(p)).collect::<Result<Vec<_>>>()?;
    if args.headline {
        print!("{}", headline(&files));
    } else if args.results_block {
        print!("{}", block(&files));
    } else {
        print!("{}", markdown(&files));
    }
    if let Some(dir) = &args.plots {
        for path in dfgnn_cli::suite::plots::write_all(&files, dir)? {
            eprintln!("plot -> {}", path.display());
        }
    }
    if let Some(path) = &args.readme {
        rewrite_block(path, HEADLINE, &headline(&files))?;
    }
    if let Some(path) = &args.results {
        rewrite_block(path, RESULTS, &block(&files))?;
    }
    Ok(())
}

/// Rewrites the generated `block` of the Markdown file at `path` with `body`.
fn rewrite_block(path: &std::path::Path, block: dfgnn_cli::suite::report::Block, body: &str) -> Result<()> {
    let cannot = |e: std::io::Error| CliError::Usage { what: format!("{}: {e}", path.display()) };
    let text = std::fs::read_to_string(path).map_err(cannot)?;
    let new = block.replace(&text, body).ok_or_else(|| CliError::Usage {
        what: format!("{}: no generated block (a `{}` line, then `{}`)", path.display(), block.begin, block.end),
    })?;
    std::fs::write(path, new).map_err(cannot)?;
    eprintln!("generated block -> {}", path.display());
    Ok(())
}
