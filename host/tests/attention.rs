//! GT and AGNN against the f64 reference under the project's tolerance rule
//! (`dfgnn_reference::precision`) for a spread of shapes, every schedule and every kernel variant:
//! on the emulator always, and on CUDA device 0 with `--ignored` (those tests are ignored
//! otherwise, and fail without a device). The proptests crate adds random graphs and shrinking.

use dfgnn::{Backend, DeviceGraph, Gt, GtConfig, PlanOptions, Schedule};
use dfgnn_graphs::Csr;
use dfgnn_reference::{Check, Dims, Pattern, compare, compare_scalar, gt_backward, gt_forward, upcast};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn graph(rng: &mut ChaCha8Rng, n: usize) -> Csr {
    let mut edges = Vec::new();
    for i in 0..n {
        let d = match i % 5 {
            0 => 0,
            1 => 1,
            2 => rng.random_range(2..9),
            3 => rng.random_range(9..40),
            _ => 3,
        };
        for _ in 0..d {
            edges.push((i as u32, rng.random_range(0..n as u32)));
        }
    }
    for _ in 0..150 {
        edges.push((7, rng.random_range(0..n as u32)));
    }
    edges.push((3, 3));
    edges.push((3, 3));
    Csr::from_edges(n, n, &edges).unwrap()
}

fn check(backend: &Backend, heads: u32, feat: u32, options: PlanOptions) {
    let mut rng = ChaCha8Rng::seed_from_u64(heads as u64 * 1000 + feat as u64);
    let g = graph(&mut rng, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let n = g.num_dst() * (heads * feat) as usize;
    let mut rand_vec = |n: usize| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (q, k, v, d_out) = (rand_vec(n), rand_vec(n), rand_vec(n), rand_vec(n));
    let gt = Gt::new(&dg, &GtConfig { heads, feat, scale: None, plan: options.clone() }).unwrap();
    let (dq_, dk_, dv_) = (backend.upload(&q).unwrap(), backend.upload(&k).unwrap(), backend.upload(&v).unwrap());
    let fwd = gt.forward(&dq_, &dk_, &dv_).unwrap();
    let out = backend.download(&fwd.out).unwrap();
    let lse = backend.download(&fwd.lse).unwrap();
    let grads = gt.backward(&fwd, &backend.upload(&d_out).unwrap()).unwrap();
    let p = Pattern::new(g.num_dst(), g.num_src(), g.offsets(), g.columns()).unwrap();
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let scale = gt.scale() as f64;
    let r = gt_forward(&p, dims, &upcast(&q), &upcast(&k), &upcast(&v), scale).unwrap();
    let rg =
        gt_backward(&p, dims, &upcast(&q), &upcast(&k), &upcast(&v), scale, &r.out, &r.lse, &upcast(&d_out)).unwrap();
    let naive = gt_forward(&p, dims, &q, &k, &v, gt.scale()).unwrap();
    let naive_g = gt_backward(&p, dims, &q, &k, &v, gt.scale(), &naive.out, &naive.lse, &d_out).unwrap();
    let checks = [
        compare("out", &out, &naive.out, &r.out),
        compare("lse", &lse, &naive.lse, &r.lse),
        compare("dq", &backend.download(&grads.dq).unwrap(), &naive_g.dq, &rg.dq),
        compare("dk", &backend.download(&grads.dk).unwrap(), &naive_g.dk, &rg.dk),
        compare("dv", &backend.download(&grads.dv).unwrap(), &naive_g.dv, &rg.dv),
    ];
    assert_passed(&checks, &format!("GT H={heads} F={feat} {options:?}\n{}", gt.plan()));
}

/// Panics with every check when one failed.
fn assert_passed(checks: &[Check], context: &str) {
    if !checks.iter().all(Check::passed) {
        let lines: Vec<String> = checks.iter().map(Check::to_string).collect();
        panic!("{context}\n{}", lines.join("\n"));
    }
}

/// CUDA device 0; panics (failing the test) when there is none.
fn gpu() -> Backend {
    Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}"))
}

fn spread(backend: &Backend) {
    let shapes = [(1, 1), (1, 7), (2, 3), (1, 32), (3, 33), (4, 64), (8, 16), (2, 100), (1, 128), (2, 256), (8, 64)];
    for (h, f) in shapes {
        check(backend, h, f, PlanOptions::default());
        let split = PlanOptions {
            schedule: Schedule::RowSplit,
            split_threshold: Some(16),
            chunk_edges: Some(10),
            ..Default::default()
        };
        check(backend, h, f, split);
        for schedule in [Schedule::EdgeParallel, Schedule::Unfused, Schedule::RowGroup] {
            check(backend, h, f, PlanOptions { schedule, ..Default::default() });
            let small_groups =
                PlanOptions { schedule, group_rows: Some(3), split_threshold: Some(20), ..Default::default() };
            check(backend, h, f, small_groups);
        }
    }
    // Every kernel variant: more slots per lane (2, 4, 8), 4- and 1-float loads, natural row order.
    for (h, f) in [(8, 64), (8, 32), (4, 128), (3, 33)] {
        for max_slots in [2, 4, 8] {
            for scalar_loads in [false, true] {
                let options = PlanOptions { max_slots: Some(max_slots), scalar_loads, ..Default::default() };
                check(backend, h, f, options.clone());
                check(backend, h, f, PlanOptions { schedule: Schedule::RowGroup, ..options.clone() });
                let split = PlanOptions {
                    schedule: Schedule::RowSplit,
                    split_threshold: Some(16),
                    chunk_edges: Some(10),
                    ..options
                };
                check(backend, h, f, split);
            }
        }
    }
    check(backend, 4, 64, PlanOptions { natural_row_order: true, ..Default::default() });
}

#[test]
fn gt_matches_reference_for_a_spread_of_shapes_on_the_emulator() {
    spread(&Backend::emulator());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn gt_matches_reference_for_a_spread_of_shapes_on_the_gpu() {
    spread(&gpu());
}

fn check_agnn(backend: &Backend, heads: u32, feat: u32, options: PlanOptions) {
    use dfgnn::{Agnn, AgnnConfig};
    use dfgnn_reference::{agnn_backward, agnn_forward};
    let mut rng = ChaCha8Rng::seed_from_u64(77 + heads as u64 * 1000 + feat as u64);
    let g = graph(&mut rng, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let n = g.num_dst() * (heads * feat) as usize;
    let mut rand_vec = |n: usize| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (h, d_out) = (rand_vec(n), rand_vec(n));
    let beta = 1.7f32;
    let agnn = Agnn::new(&dg, &AgnnConfig { heads, feat, plan: options.clone() }).unwrap();
    let dh_ = backend.upload(&h).unwrap();
    let fwd = agnn.forward(&dh_, beta).unwrap();
    let out = backend.download(fwd.out()).unwrap();
    let grads = agnn.backward(&fwd, &backend.upload(&d_out).unwrap()).unwrap();
    let p = Pattern::new(g.num_dst(), g.num_src(), g.offsets(), g.columns()).unwrap();
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let r = agnn_forward(&p, dims, &upcast(&h), beta as f64).unwrap();
    let rg = agnn_backward(&p, dims, &upcast(&h), beta as f64, &r.out, &r.lse, &upcast(&d_out)).unwrap();
    let naive = agnn_forward(&p, dims, &h, beta).unwrap();
    let naive_g = agnn_backward(&p, dims, &h, beta, &naive.out, &naive.lse, &d_out).unwrap();
    let checks = [
        compare("out", &out, &naive.out, &r.out),
        compare("dh", &backend.download(&grads.dh).unwrap(), &naive_g.dh, &rg.dh),
        compare_scalar("dβ", grads.d_beta, naive_g.d_beta, rg.d_beta, rg.d_beta_magnitude),
    ];
    assert_passed(&checks, &format!("AGNN H={heads} F={feat} {options:?}\n{}", agnn.plan()));
}

#[test]
fn agnn_matches_reference_on_the_emulator() {
    agnn_spread(&Backend::emulator());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn agnn_matches_reference_on_the_gpu() {
    agnn_spread(&gpu());
}

fn agnn_spread(backend: &Backend) {
    for (h, f) in [(1, 1), (1, 7), (2, 32), (3, 33), (4, 64)] {
        check_agnn(backend, h, f, PlanOptions::default());
        let split = PlanOptions {
            schedule: Schedule::RowSplit,
            split_threshold: Some(16),
            chunk_edges: Some(10),
            ..Default::default()
        };
        check_agnn(backend, h, f, split);
        for schedule in [Schedule::EdgeParallel, Schedule::Unfused] {
            check_agnn(backend, h, f, PlanOptions { schedule, ..Default::default() });
        }
    }
}
