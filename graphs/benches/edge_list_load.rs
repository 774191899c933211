//! Load speed of the SNAP edge-list reader: writes a uniform random graph of about 21 M edges
//! (`DFGNN_BENCH_EDGES` overrides the count) to a temporary file, then times
//! `format::edge_list::read` five times (after one warm-up that fills the page cache) and prints
//! the median in millions of edges per second.
//!
//! Run with `cargo bench -p dfgnn-graphs --bench edge_list_load`.

use std::time::Instant;

use dfgnn_graphs::format::edge_list;
use dfgnn_graphs::generate::erdos_renyi;

fn main() {
    let edges: f64 = std::env::var("DFGNN_BENCH_EDGES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_971_520.0);
    let n = 1usize << 21;
    let g = erdos_renyi(n, edges / n as f64, 1).expect("benchmark graph parameters should be valid");
    let path = std::env::temp_dir().join(format!("dfgnn-edge-list-bench-{}.txt", std::process::id()));
    edge_list::write(&path, &g).expect("the temporary directory should be writable");
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("edge list: {} nodes, {} edges, {:.1} MB at {}", g.num_dst(), g.nnz(), bytes as f64 / 1e6, path.display());
    let loaded = edge_list::read(&path).expect("the written file should load");
    assert_eq!(loaded, g, "the loaded graph should equal the written one");
    let mut times = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let h = edge_list::read(&path).expect("the written file should load");
        times.push(start.elapsed().as_secs_f64());
        assert_eq!(h.nnz(), g.nnz());
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "load: median {:.3} s of {} runs (min {:.3}, max {:.3}): {:.1} M edges/s, {:.0} MB/s",
        median,
        times.len(),
        times[0],
        times[times.len() - 1],
        g.nnz() as f64 / median / 1e6,
        bytes as f64 / median / 1e6
    );
    std::fs::remove_file(&path).ok();
}
