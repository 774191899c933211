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
use dfgnn::{Backend, Error, Result};

#[derive(Parser)]
#[command(
    name = "dfgnn",
    version,
    about = "Fused attention GNN kernels on NVIDIA GPUs, with a CPU SIMT emulator"
)]
struct Cli {
    /// Which backend runs the kernels.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, global = true)]
    backend: BackendChoice,
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
    /// The main job: runs the kernels on the default input and checks them.
    Run {
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
    /// Graph utilities.
    Graph {
        #[command(subcommand)]
        command: GraphCommand,
    },
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
        Command::Run { seed } => demo(&select_backend(cli.backend)?, seed, 1),
        Command::Demo { seed, scale } => demo(&select_backend(cli.backend)?, seed, scale),
        Command::Info => {
            let backend = select_backend(cli.backend)?;
            let l = backend.limits();
            println!(
                "device: {} (compute capability {}.{})",
                l.name, l.compute_capability.0, l.compute_capability.1
            );
            println!("multiprocessors: {}", l.multiprocessors);
            println!(
                "shared memory per block (opt-in): {} bytes",
                l.max_shared_per_block
            );
            println!("L2: {} bytes; memory: {} bytes", l.l2_bytes, l.total_memory);
            Ok(())
        }
        Command::Graph {
            command: GraphCommand::Stats { graph },
        } => graph_stats(&graph),
    }
}

fn demo(backend: &Backend, seed: u64, scale: usize) -> Result<()> {
    let (reports, ms) = backend.time(|| dfgnn::demo::check_chain(backend, seed, scale))?;
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
    println!(
        "chain demo passed on {} ({ms:.1} ms including transfers)",
        backend.kind()
    );
    Ok(())
}

fn graph_stats(graph: &str) -> Result<()> {
    let path = std::path::Path::new(graph);
    let g = if path.exists() {
        dfgnn_graphs::format::read_path(path)?
    } else {
        dfgnn_graphs::named::generate(graph).map_err(|e| match e {
            dfgnn_graphs::GraphError::Io { .. } => Error::Io {
                path: graph.to_string(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            },
            other => Error::Unsupported {
                what: format!("`{graph}` is neither a file nor a graph name: {other}"),
            },
        })?
    };
    println!("{graph}");
    print!("{}", dfgnn_graphs::GraphStats::of(&g));
    Ok(())
}
