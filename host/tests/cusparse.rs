//! The cuSPARSE path (`dfgnn::CusparseGt`, feature `cusparse`) against the f64 reference under the
//! project's tolerance rule (`dfgnn_reference::precision`), forward and backward, on graphs with
//! empty rows, duplicate edges, a long row and unsorted columns, bipartite and without edges, for
//! H = 1, 3 and F = 7, 64; and that two runs give the same bits. On CUDA device 0 with
//! `--ignored` (ignored otherwise, and failing without a device or without libcusparse); the
//! emulator's refusal is checked everywhere.
//!
//! When bits differ between runs, the failure names the first stage (scores, α, out, dα, ds, dq,
//! dk, dv) whose bits differ while every stage before it agrees; a second GPU test runs every
//! cuSPARSE SpMM algorithm, with and without waiting for the stream after each step, and prints
//! which give the same bits on every run (`--nocapture` shows the table).

mod common;

use common::{assert_passed, graph};
use dfgnn::cusparse::SpmmAlgorithm;
use dfgnn::{Backend, Buffer, CusparseGt, DeviceGraph, Error, GtConfig};
use dfgnn_graphs::Csr;
use dfgnn_reference::{Dims, Pattern, compare, gt_backward, gt_forward, upcast};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Runs the cuSPARSE path on `g` twice and checks both the results against the reference and
/// that the second run's bits are the first's.
fn check(backend: &Backend, g: &Csr, heads: u32, feat: u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(heads as u64 * 1000 + feat as u64 + g.nnz() as u64);
    let width = (heads * feat) as usize;
    let mut rand_vec = |n: usize| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (q, k, v, d_out) = (
        rand_vec(g.num_dst() * width),
        rand_vec(g.num_src() * width),
        rand_vec(g.num_src() * width),
        rand_vec(g.num_dst() * width),
    );
    let dg = DeviceGraph::new(backend, g).unwrap();
    let path = CusparseGt::new(&dg, &GtConfig::new(heads, feat)).unwrap();
    let up = |x: &[f32]| backend.upload(x).unwrap();
    let (q_, k_, v_, d_out_) = (up(&q), up(&k), up(&v), up(&d_out));
    let run = || {
        let fwd = path.forward(&q_, &k_, &v_).unwrap();
        let grads = path.backward(&fwd, &d_out_).unwrap();
        [&fwd.out, &grads.dq, &grads.dk, &grads.dv].map(|b| backend.download(b).unwrap())
    };
    let [out, dq, dk, dv] = run();
    let p = Pattern::new(g.num_dst(), g.num_src(), g.offsets(), g.columns()).unwrap();
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let scale = path.scale();
    let r = gt_forward(&p, dims, &upcast(&q), &upcast(&k), &upcast(&v), scale as f64).unwrap();
    let rg =
        gt_backward(&p, dims, &upcast(&q), &upcast(&k), &upcast(&v), scale as f64, &r.out, &r.lse, &upcast(&d_out))
            .unwrap();
    let naive = gt_forward(&p, dims, &q, &k, &v, scale).unwrap();
    let naive_g = gt_backward(&p, dims, &q, &k, &v, scale, &naive.out, &naive.lse, &d_out).unwrap();
    let checks = [
        compare("out", &out, &naive.out, &r.out),
        compare("dq", &dq, &naive_g.dq, &rg.dq),
        compare("dk", &dk, &naive_g.dk, &rg.dk),
        compare("dv", &dv, &naive_g.dv, &rg.dv),
    ];
    let context =
        format!("cuSPARSE GT H={heads} F={feat} on {} x {} nodes, {} edges", g.num_dst(), g.num_src(), g.nnz());
    assert_passed(&checks, &context);
    let again = run();
    let differing: Vec<&str> = ["out", "dq", "dk", "dv"]
        .into_iter()
        .zip([&out, &dq, &dk, &dv].into_iter().zip(&again))
        .filter(|(_, (first, second))| differences(first, second).is_some())
        .map(|(name, _)| name)
        .collect();
    if !differing.is_empty() {
        let stages = match stage_runs(&path, (&q_, &k_, &v_, &d_out_), 3) {
            Ok(lines) if lines.is_empty() => "stage by stage, three more runs agreed bit for bit".to_string(),
            Ok(lines) => format!("stage by stage over three more runs:\n  {}", lines.join("\n  ")),
            Err(e) => format!("the stage-by-stage runs failed: {e}"),
        };
        panic!(
            "{context}: {} differ between two runs (SpMM {:?}); {stages}",
            differing.join(", "),
            path.spmm_algorithm()
        );
    }
}

/// How many values of `second` differ in bits from `first`'s (of how many), with the first such
/// index and its two values; `None` when all agree.
fn differences(first: &[f32], second: &[f32]) -> Option<String> {
    if first.len() != second.len() {
        return Some(format!("lengths {} and {}", first.len(), second.len()));
    }
    let differ: Vec<usize> = (0..first.len()).filter(|&i| first[i].to_bits() != second[i].to_bits()).collect();
    let &at = differ.first()?;
    Some(format!(
        "{} of {} values differ (first at {at}: {:e} vs {:e})",
        differ.len(),
        first.len(),
        first[at],
        second[at]
    ))
}

/// Runs every stage of `path` `runs` times on the inputs and compares each later run with the
/// first: one line per run that differs, naming the first stage whose bits differ (every stage
/// before it agreed, so that stage is the one that varies) and every later stage that differs.
fn stage_runs(
    path: &CusparseGt<'_, '_>,
    (q, k, v, d_out): (&Buffer<f32>, &Buffer<f32>, &Buffer<f32>, &Buffer<f32>),
    runs: usize,
) -> Result<Vec<String>, Error> {
    let first = path.stages(q, k, v, d_out)?;
    let mut lines = Vec::new();
    for run in 1..runs {
        let later = path.stages(q, k, v, d_out)?;
        let differing: Vec<String> = first
            .iter()
            .zip(&later)
            .filter_map(|((name, a), (_, b))| differences(a, b).map(|d| format!("{name}: {d}")))
            .collect();
        if let Some((head, rest)) = differing.split_first() {
            let rest = if rest.is_empty() { String::new() } else { format!("; then {}", rest.join("; ")) };
            lines.push(format!("run {} vs run 0: first differing stage {head}{rest}", run));
        }
    }
    Ok(lines)
}

/// CUDA device 0; panics (failing the test) when there is none.
fn gpu() -> Backend {
    Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}"))
}

#[test]
#[ignore = "needs a CUDA device and libcusparse: cargo test -- --ignored on a GPU machine"]
fn cusparse_gt_matches_reference_on_the_gpu() {
    let backend = gpu();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let square = graph(&mut rng, 40, 40);
    let bipartite = graph(&mut rng, 40, 23);
    let no_edges = Csr::from_edges(6, 4, &[]).unwrap();
    for g in [&square, &bipartite, &no_edges] {
        for (heads, feat) in [(1, 7), (3, 7), (1, 64), (3, 64)] {
            check(&backend, g, heads, feat);
        }
    }
}

/// Which SpMM algorithms give the same bits on every run, with and without waiting for the stream
/// after each step (a difference that waiting removes is an ordering race, not the algorithm):
/// prints one line per case, then fails unless the path's own algorithm, unsynchronized, gave the
/// same bits everywhere.
#[test]
#[ignore = "needs a CUDA device and libcusparse: cargo test -- --ignored on a GPU machine"]
fn cusparse_spmm_algorithms_bits_across_runs_on_the_gpu() {
    let backend = gpu();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let square = graph(&mut rng, 40, 40);
    let bipartite = graph(&mut rng, 40, 23);
    let mut lines = Vec::new();
    let mut default_failed = false;
    for g in [&square, &bipartite] {
        let dg = DeviceGraph::new(&backend, g).unwrap();
        for (heads, feat) in [(1, 7), (3, 64)] {
            let mut rng = ChaCha8Rng::seed_from_u64(heads as u64 * 1000 + feat as u64 + g.nnz() as u64);
            let width = (heads * feat) as usize;
            let mut rand_vec = |n: usize| {
                let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
                backend.upload(&x).unwrap()
            };
            let inputs = (
                rand_vec(g.num_dst() * width),
                rand_vec(g.num_src() * width),
                rand_vec(g.num_src() * width),
                rand_vec(g.num_dst() * width),
            );
            let default = CusparseGt::new(&dg, &GtConfig::new(heads, feat)).unwrap().spmm_algorithm();
            for algorithm in SpmmAlgorithm::ALL {
                for synchronized in [false, true] {
                    let path = CusparseGt::new(&dg, &GtConfig::new(heads, feat))
                        .unwrap()
                        .with_spmm_algorithm(algorithm)
                        .with_synchronized_calls(synchronized);
                    let result = stage_runs(&path, (&inputs.0, &inputs.1, &inputs.2, &inputs.3), 4);
                    let verdict = match &result {
                        Ok(differ) if differ.is_empty() => "all 8 stages bit-identical over 4 runs".to_string(),
                        Ok(differ) => differ.join(" | "),
                        Err(e) => format!("error: {e}"),
                    };
                    let used = if algorithm == default { " (the path's)" } else { "" };
                    lines.push(format!(
                        "SpMM {algorithm:?}{used}, synchronized {synchronized}, H={heads} F={feat} on {} x {} \
                         nodes, {} edges: {verdict}",
                        g.num_dst(),
                        g.num_src(),
                        g.nnz()
                    ));
                    if algorithm == default && !synchronized && !matches!(&result, Ok(d) if d.is_empty()) {
                        default_failed = true;
                    }
                }
            }
        }
    }
    println!("{}", lines.join("\n"));
    assert!(
        !default_failed,
        "the path's SpMM algorithm did not give the same bits on every run:\n{}",
        lines.join("\n")
    );
}

#[test]
fn the_emulator_refuses_the_cusparse_path_with_a_reason() {
    let backend = Backend::emulator();
    let g = graph(&mut ChaCha8Rng::seed_from_u64(1), 10, 10);
    let dg = DeviceGraph::new(&backend, &g).unwrap();
    let err = CusparseGt::new(&dg, &GtConfig::new(2, 8)).err().expect("the emulator has no cuSPARSE");
    assert!(matches!(err, Error::Unsupported { ref what } if what.contains("CUDA device")), "{err}");
}
