//! GAT against the f64 reference under the project's tolerance rule
//! (`dfgnn_reference::precision`) for a spread of shapes, every schedule and kernel variant, both
//! entry points (features + attention vectors, and precomputed node scores): on the emulator
//! always, and on CUDA device 0 with `--ignored` (those tests are ignored otherwise, and fail
//! without a device).

use dfgnn::{Backend, DeviceGraph, Gat, GatConfig, PlanOptions, Schedule};
use dfgnn_graphs::Csr;
use dfgnn_reference::{
    Check, Dims, Pattern, compare, gat_backward, gat_backward_precomputed, gat_forward, gat_forward_precomputed,
    gat_node_scores, upcast,
};
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
    let up = upcast;
    let (s64, s32) = (SLOPE as f64, SLOPE);
    let r = gat_forward(&p, dims, &up(&h), &up(&h_dst), &up(&a_dst), &up(&a_src), s64).unwrap();
    let rg = gat_backward(&p, dims, &up(&h), &up(&h_dst), &up(&a_dst), &up(&a_src), s64, &r.out, &r.lse, &up(&d_out))
        .unwrap();
    let naive = gat_forward(&p, dims, &h, &h_dst, &a_dst, &a_src, s32).unwrap();
    let ng = gat_backward(&p, dims, &h, &h_dst, &a_dst, &a_src, s32, &naive.out, &naive.lse, &d_out).unwrap();
    let down = |b: &dfgnn::Buffer<f32>| backend.download(b).unwrap();
    let checks = [
        compare("out", &out, &naive.out, &r.out),
        compare("lse", &down(&fwd.lse), &naive.lse, &r.lse),
        compare("dh", &down(&grads.dh), &ng.dh, &rg.dh),
        compare("dh_dst", &down(&grads.dh_dst), &ng.dh_dst, &rg.dh_dst),
        compare("da_dst", &down(&grads.da_dst), &ng.da_dst, &rg.da_dst),
        compare("da_src", &down(&grads.da_src), &ng.da_src, &rg.da_src),
    ];
    let context = format!("GAT H={heads} F={feat} {options:?}\n{}", gat.plan());
    assert_passed(&checks, &context);

    // The precomputed entry point, from f32 node scores (the reference's, rounded).
    let (el, er) = (
        gat_node_scores(g.num_dst(), dims, &h_dst, &a_dst).unwrap(),
        gat_node_scores(g.num_src(), dims, &h, &a_src).unwrap(),
    );
    let (bel, ber) = (up_(&el), up_(&er));
    let pfwd = gat.forward_precomputed(&bh, &bel, &ber).unwrap();
    let pgrads = gat.backward_precomputed(&pfwd, &up_(&d_out)).unwrap();
    let pr = gat_forward_precomputed(&p, dims, &up(&h), &up(&el), &up(&er), s64).unwrap();
    let prg =
        gat_backward_precomputed(&p, dims, &up(&h), &up(&el), &up(&er), s64, &pr.out, &pr.lse, &up(&d_out)).unwrap();
    let pn = gat_forward_precomputed(&p, dims, &h, &el, &er, s32).unwrap();
    let png = gat_backward_precomputed(&p, dims, &h, &el, &er, s32, &pn.out, &pn.lse, &d_out).unwrap();
    let checks = [
        compare("out", &down(&pfwd.out), &pn.out, &pr.out),
        compare("dh", &down(&pgrads.dh), &png.dh, &prg.dh),
        compare("d_el", &down(&pgrads.d_el), &png.d_el, &prg.d_el),
        compare("d_er", &down(&pgrads.d_er), &png.d_er, &prg.d_er),
    ];
    assert_passed(&checks, &format!("precomputed {context}"));

    // Deterministic: a second run gives the same bits.
    let again = gat.backward(&gat.forward(&bh, &bh_dst, &ba_dst, &ba_src).unwrap(), &up_(&d_out)).unwrap();
    assert_eq!(down(&again.da_src), down(&grads.da_src));
    assert_eq!(down(&again.dh), down(&grads.dh));
}

/// Panics with every check when one failed.
fn assert_passed(checks: &[Check], context: &str) {
    if !checks.iter().all(Check::passed) {
        let lines: Vec<String> = checks.iter().map(Check::to_string).collect();
        panic!("{context}\n{}", lines.join("\n"));
    }
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
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn gat_matches_reference_on_the_gpu() {
    spread(&Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}")));
}
