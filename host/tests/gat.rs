//! GAT against the f64 reference for a spread of shapes, every schedule and kernel variant, both
//! entry points (features + attention vectors, and precomputed node scores): on the emulator
//! always, and on the GPU when one is found.

use dfgnn::{Backend, DeviceGraph, Gat, GatConfig, PlanOptions, Schedule};
use dfgnn_graphs::Csr;
use dfgnn_reference::{Dims, Pattern, gat_backward, gat_forward, max_abs_diff};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A square graph with empty rows, a super row, a duplicated self loop and varied degrees.
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

/// The tolerance rule: error against f64 at most twice a naive f32 run's, plus a small floor.
fn within(err: f64, naive: f64) -> bool {
    err <= 2.0 * naive + 1e-5
}

const SLOPE: f32 = 0.2;

fn check(backend: &Backend, heads: u32, feat: u32, options: PlanOptions) {
    let mut rng = ChaCha8Rng::seed_from_u64(5 + heads as u64 * 1000 + feat as u64);
    let g = graph(&mut rng, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let n = g.num_dst() * (heads * feat) as usize;
    let hf = (heads * feat) as usize;
    let mut rand_vec = |n: usize, s: f32| (0..n).map(|_| s * rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (h, h_dst, d_out) = (rand_vec(n, 1.0), rand_vec(n, 1.0), rand_vec(n, 1.0));
    let (a_dst, a_src) = (rand_vec(hf, 2.0), rand_vec(hf, 2.0));
    let gat = Gat::new(&dg, &GatConfig { heads, feat, slope: SLOPE, plan: options.clone() }).unwrap();
    let up_ = |x: &[f32]| backend.upload(x).unwrap();
    let (bh, bh_dst, ba_dst, ba_src) = (up_(&h), up_(&h_dst), up_(&a_dst), up_(&a_src));
    let fwd = gat.forward(&bh, &bh_dst, &ba_dst, &ba_src).unwrap();
    let out = backend.download(&fwd.out).unwrap();
    let grads = gat.backward(&fwd, &up_(&d_out)).unwrap();
    let p = Pattern::new(g.num_dst(), g.num_src(), g.offsets(), g.columns()).unwrap();
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let up = |x: &[f32]| x.iter().map(|&a| a as f64).collect::<Vec<f64>>();
    let (s64, s32) = (SLOPE as f64, SLOPE);
    let r = gat_forward(&p, dims, &up(&h), &up(&h_dst), &up(&a_dst), &up(&a_src), s64).unwrap();
    let rg = gat_backward(&p, dims, &up(&h), &up(&h_dst), &up(&a_dst), &up(&a_src), s64, &r.out, &r.lse, &up(&d_out))
        .unwrap();
    let naive = gat_forward(&p, dims, &h, &h_dst, &a_dst, &a_src, s32).unwrap();
    let ng = gat_backward(&p, dims, &h, &h_dst, &a_dst, &a_src, s32, &naive.out, &naive.lse, &d_out).unwrap();
    let down = |b: &dfgnn::Buffer<f32>| backend.download(b).unwrap();
    let checks = [
        ("out", max_abs_diff(&out, &r.out), max_abs_diff(&naive.out, &r.out)),
        ("dh", max_abs_diff(&down(&grads.dh), &rg.dh), max_abs_diff(&ng.dh, &rg.dh)),
        ("dh_dst", max_abs_diff(&down(&grads.dh_dst), &rg.dh_dst), max_abs_diff(&ng.dh_dst, &rg.dh_dst)),
        ("da_dst", max_abs_diff(&down(&grads.da_dst), &rg.da_dst), max_abs_diff(&ng.da_dst, &rg.da_dst)),
        ("da_src", max_abs_diff(&down(&grads.da_src), &rg.da_src), max_abs_diff(&ng.da_src, &rg.da_src)),
    ];
    for (name, err, naive) in checks {
        assert!(
            within(err, naive),
            "H={heads} F={feat} {options:?}: {name} error {err:.3e} vs naive {naive:.3e}\n{}",
            gat.plan()
        );
    }
    // Deterministic: a second run gives the same bits.
    let again = gat.backward(&gat.forward(&bh, &bh_dst, &ba_dst, &ba_src).unwrap(), &up_(&d_out)).unwrap();
    assert_eq!(down(&again.da_src), down(&grads.da_src));
    assert_eq!(down(&again.dh), down(&grads.dh));
}

fn spread(backend: &Backend) {
    for (h, f) in [(1, 1), (1, 7), (2, 3), (3, 33), (4, 64), (1, 128), (2, 256)] {
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
        }
        check(
            backend,
            h,
            f,
            PlanOptions {
                schedule: Schedule::RowGroup,
                group_rows: Some(3),
                split_threshold: Some(20),
                ..Default::default()
            },
        );
    }
    for (h, f) in [(8, 64), (3, 33)] {
        for max_slots in [2, 4, 8] {
            for scalar_loads in [false, true] {
                let options = PlanOptions { max_slots: Some(max_slots), scalar_loads, ..Default::default() };
                check(backend, h, f, options.clone());
                check(backend, h, f, PlanOptions { schedule: Schedule::RowGroup, ..options.clone() });
                check(
                    backend,
                    h,
                    f,
                    PlanOptions {
                        schedule: Schedule::RowSplit,
                        split_threshold: Some(16),
                        chunk_edges: Some(10),
                        ..options
                    },
                );
            }
        }
    }
}

#[test]
fn gat_matches_reference_on_the_emulator() {
    spread(&Backend::emulator());
}

#[test]
fn gat_matches_reference_on_the_gpu() {
    match Backend::cuda(0) {
        Ok(b) => spread(&b),
        Err(e) => eprintln!("skipped: no GPU ({e})"),
    }
}
