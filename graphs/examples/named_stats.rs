//! Generates named graphs and prints their statistics and generation time:
//! `cargo run --release -p dfgnn-graphs --example named_stats -- pl-1M-d16 er-1M-d16`.

use std::time::Instant;

use dfgnn_graphs::{GraphStats, named};

fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let names = if names.is_empty() { named::BENCHMARKS.iter().map(|s| s.to_string()).collect() } else { names };
    for name in names {
        let start = Instant::now();
        match named::generate(&name) {
            Ok(g) => {
                let took = start.elapsed();
                println!("== {name} (generated in {:.2} s)", took.as_secs_f64());
                println!("{}", GraphStats::of(&g));
            }
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
}
