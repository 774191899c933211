//! Criterion benchmarks of every model × pass (`cargo bench -p dfgnn-benches --bench attention`).
//!
//! On a CUDA device (found by `Backend::auto`): every model of `Model::ALL` (GT, AGNN, GAT,
//! GATv2), forward and forward+backward,
//! at 4 heads × 64 on `er-256K-d16` and `pl-256K-d16` (4 M draws each), each graph prepared once,
//! each call timed with CUDA events (`iter_custom`), and the throughput the gather-worst byte model
//! of `dfgnn bench` (so criterion reports bytes per second). Without one: the same models and
//! passes on a tiny graph under the emulator, which times the emulator, not a GPU. The first line
//! says which.
//!
//! Before/after a change: `cargo bench -p dfgnn-benches --bench attention -- --save-baseline
//! before`, then `-- --baseline before`. On a machine without Rust, run the binary that `cargo
//! bench --no-run` built (`target/release/deps/attention-<hash>`) with `--bench` and the same
//! flags (`scripts/bench-suite.sh criterion`, docs/benchmarks.md); criterion keeps its data in
//! `CRITERION_HOME` (else `target/criterion` under the working directory). Without `--bench`
//! (`cargo test --bench attention`, as CI runs it) each benchmark runs once, untimed.

use std::time::Duration;

use criterion::{Criterion, Throughput};
use dfgnn::{Backend, BackendKind, DeviceGraph, PlanOptions};
use dfgnn_cli::bench::{Inputs, Model};

/// The graphs and shape of one backend's benchmarks.
fn cases(kind: BackendKind) -> (&'static [&'static str], (u32, u32)) {
    match kind {
        BackendKind::Cuda => (&["er-256K-d16", "pl-256K-d16"], (4, 64)),
        BackendKind::Emulator => (&["er-128-d4"], (2, 8)),
    }
}

/// Criterion's time of `iters` calls of `call`, each timed by the backend (CUDA events).
fn timed_calls(backend: &Backend, iters: u64, call: impl Fn() -> dfgnn::Result<()>) -> Duration {
    let ms: f64 = (0..iters).map(|_| backend.time(&call).expect("the benchmarked call runs").1).sum();
    Duration::from_secs_f64(ms * 1e-3)
}

fn attention(c: &mut Criterion) {
    let backend = Backend::auto().expect("a backend").backend;
    backend.keep_freed_memory().expect("the device's memory pool");
    let kind = backend.kind();
    let what = match kind {
        BackendKind::Cuda => "CUDA events",
        BackendKind::Emulator => "no GPU: the emulator on a tiny case, not GPU figures",
    };
    println!("dfgnn attention benchmarks on {} ({what})", backend.description());
    let (graphs, (heads, feat)) = cases(kind);
    for name in graphs {
        let graph = dfgnn_graphs::named::generate(name).expect("a generated graph");
        let dg = DeviceGraph::new(&backend, &graph).expect("the graph fits");
        let mut group = c.benchmark_group(format!("{kind}/{name}/{heads}x{feat}"));
        if kind == BackendKind::Emulator {
            group.sample_size(10).warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_secs(1));
        }
        for model in Model::ALL {
            let timed = match model.plan(&dg, heads, feat, PlanOptions::default(), 0.0) {
                Ok(timed) => timed,
                Err(e) => {
                    println!("{model} on {name}: skipped ({e})");
                    continue;
                }
            };
            let inputs = Inputs::new(model, &dg, heads, feat, 1, 1).expect("the inputs fit");
            let set = &inputs.sets[0];
            let (fwd, bwd) = model.bytes(dg.num_dst(), dg.num_src(), dg.nnz(), heads, feat);
            group.throughput(Throughput::Bytes(fwd.gather_worst as u64));
            group.bench_function(format!("{model}/forward"), |b| {
                b.iter_custom(|iters| timed_calls(&backend, iters, || timed.forward(set)))
            });
            group.throughput(Throughput::Bytes((fwd.gather_worst + bwd.gather_worst) as u64));
            group.bench_function(format!("{model}/forward_backward"), |b| {
                b.iter_custom(|iters| timed_calls(&backend, iters, || timed.forward_backward(set)))
            });
        }
        group.finish();
    }
}

criterion::criterion_group!(benches, attention);
criterion::criterion_main!(benches);
