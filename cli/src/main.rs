//! The `dfgnn` command-line tool.
//!
//! ```text
//! dfgnn run                 the main job (see README.md)
//! dfgnn demo                the chain demo: proof-of-chain kernels checked against plain Rust
//! dfgnn info                which backend runs, and the device's limits
//! dfgnn graph stats FILE    statistics of a graph file (.npz, .mtx, edge list, .gt) or named graph
//! ```
//! Every command prints its error and exits non-zero on failure.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use dfgnn::Backend;
use dfgnn_cli::Result;
use dfgnn_cli::data::{data_dir, default_graph, load_graph};

#[derive(Parser)]
#[command(name = "dfgnn", version, about = "Fused attention GNN kernels on NVIDIA GPUs, with a CPU SIMT emulator")]
struct Cli {
    /// Which backend runs the kernels.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, global = true)]
    backend: BackendChoice,
    /// Where data sets are looked for (`planetoid/cora.npz`); default: dfgnn-graphs' data
    /// directory.
    #[arg(long, env = "DFGNN_DATA_DIR", global = true)]
    data_dir: Option<std::path::PathBuf>,
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
    /// The main job: GT and AGNN, forward and backward, under every schedule, on the default
    /// graph (Cora when the data directory holds it, else a generated power-law graph with super
    /// nodes) or a given one, checked against the f64 reference and timed.
    Run {
        /// A graph file or generated-graph name instead of the default.
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
    },
    /// The chain demo: a warp-shuffle row softmax and a block segmented reduction, checked
    /// against plain Rust on random CSR data.
    Demo {
        /// Random seed of the inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Size multiplier of the inputs.
        #[arg(long, default_value_t = 1)]
        scale: usize,
    },
    /// Shows which backend runs and the device's limits.
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

#[derive(Subcommand)]
enum BenchCommand {
    /// GT forward and forward+backward per schedule.
    Gt(BenchArgs),
}

#[derive(clap::Args)]
struct BenchArgs {
    /// A graph file or generated-graph name (e.g. er-1M-d16, pl-1M-d16, batch-1024x120-d50).
    #[arg(long, default_value = "er-64K-d16")]
    graph: String,
    /// Heads.
    #[arg(long, default_value_t = 4)]
    heads: u32,
    /// Features per head.
    #[arg(long, default_value_t = 64)]
    feat: u32,
    /// Schedules to time, comma-separated (`auto` is the scheduler's plan).
    #[arg(long, value_delimiter = ',', default_value = "auto,row_tiled,row_split")]
    schedule: Vec<String>,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Timed runs (the median is reported).
    #[arg(long, default_value_t = 10)]
    repeats: usize,
    /// Time the forward only.
    #[arg(long)]
    forward_only: bool,
    /// Input sets to rotate through.
    #[arg(long, default_value_t = 2)]
    input_sets: usize,
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
}

#[derive(Subcommand)]
enum GraphCommand {
    /// Prints the statistics of a graph: a file (.npz, .mtx, .txt/.el/.edges, .gt, .gt.gz) or a
    /// named generated graph (e.g. `pl-1M-d16`, `er-4K-d8`).
    Stats {
        /// The file or graph name.
        graph: String,
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

fn select_backend(choice: BackendChoice) -> Result<Backend> {
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
    println!("backend: {}", backend.description());
    Ok(backend)
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run { graph, heads, feat, schedule, beta, seed } => {
            let (name, graph) = match graph {
                Some(g) => (g.clone(), load_graph(&g)?),
                None => default_graph(&data_dir(cli.data_dir.as_deref()))?,
            };
            main_job(&select_backend(cli.backend)?, &name, &graph, heads, feat, &schedule, beta, seed)
        }
        Command::Demo { seed, scale } => demo(&select_backend(cli.backend)?, seed, scale),
        Command::Info => {
            let backend = select_backend(cli.backend)?;
            let l = backend.limits();
            println!("device: {} (compute capability {}.{})", l.name, l.compute_capability.0, l.compute_capability.1);
            println!("multiprocessors: {}", l.multiprocessors);
            println!("shared memory per block (opt-in): {} bytes", l.max_shared_per_block);
            println!("L2: {} bytes; memory: {} bytes", l.l2_bytes, l.total_memory);
            Ok(())
        }
        Command::Graph { command: GraphCommand::Stats { graph } } => graph_stats(&graph),
        Command::Bench { command: BenchCommand::Gt(args) } => bench_gt(&select_backend(cli.backend)?, &args),
    }
}

#[allow(clippy::too_many_arguments)]
fn main_job(
    backend: &Backend,
    name: &str,
    graph: &dfgnn_graphs::Csr,
    heads: u32,
    feat: u32,
    schedules: &[String],
    beta: f32,
    seed: u64,
) -> Result<()> {
    let stats = dfgnn_graphs::GraphStats::of(graph);
    println!(
        "graph: {name}: {} x {} nodes, {} edges, in-degree mean {:.1} max {}",
        graph.num_dst(),
        graph.num_src(),
        graph.nnz(),
        stats.in_degree.mean,
        stats.in_degree.max
    );
    let mut options = dfgnn_cli::run::RunOptions { heads, feat, beta, seed, ..Default::default() };
    if !schedules.is_empty() {
        options.schedules = schedules.iter().map(|s| s.parse()).collect::<dfgnn::Result<Vec<_>>>()?;
    }
    println!("features: {heads} heads x {feat}; checks against the f64 reference: error <= 2x naive f32 + floor");
    let rows = dfgnn_cli::run::run(backend, graph, &options)?;
    println!("{:<5} {:<14} {:>10} {:>12} {:>8}  plan", "model", "schedule", "fwd ms", "fwd+bwd ms", "err/tol");
    for r in &rows {
        println!(
            "{:<5} {:<14} {:>10.3} {:>12.3} {:>8.3}  {}",
            r.model,
            r.schedule.name(),
            r.forward_ms,
            r.forward_backward_ms,
            r.error_ratio,
            r.plan
        );
    }
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

fn bench_gt(backend: &Backend, args: &BenchArgs) -> Result<()> {
    let graph = load_graph(&args.graph)?;
    let schedules = args.schedule.iter().map(|s| s.parse()).collect::<dfgnn::Result<Vec<dfgnn::Schedule>>>()?;
    let options = dfgnn_cli::bench::BenchOptions {
        heads: args.heads,
        feat: args.feat,
        schedules,
        warmup: args.warmup,
        repeats: args.repeats,
        backward: !args.forward_only,
        input_sets: args.input_sets,
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
            ..Default::default()
        },
    };
    println!(
        "bench gt: graph {}, {} heads x {} features, {} warm-up + {} timed runs",
        args.graph, args.heads, args.feat, args.warmup, args.repeats
    );
    let report = dfgnn_cli::bench::bench_gt(backend, &graph, &options)?;
    print!("{report}");
    Ok(())
}

fn graph_stats(graph: &str) -> Result<()> {
    let g = load_graph(graph)?;
    println!("{graph}");
    print!("{}", dfgnn_graphs::GraphStats::of(&g));
    Ok(())
}
