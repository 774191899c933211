//! The cuSPARSE path (`dfgnn::CusparseGt`, feature `cusparse`) against the f64 reference under the
//! project's tolerance rule (`dfgnn_reference::precision`), forward and backward, on graphs with
//! empty rows, duplicate edges, a long row and unsorted columns, bipartite and without edges, for
//! H = 1, 3 and F = 7, 64; and that two runs give the same bits. On CUDA device 0 with
//! `--ignored` (ignored otherwise, and failing without a device or without libcusparse); the
//! emulator's refusal is checked everywhere.

mod common;

use common::{assert_passed, graph};
use dfgnn::{Backend, CusparseGt, DeviceGraph, Error, GtConfig};
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
    for (name, (first, second)) in ["out", "dq", "dk", "dv"].iter().zip([&out, &dq, &dk, &dv].into_iter().zip(&again)) {
        let same = first.iter().zip(second).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{context}: {name} differs between two runs");
    }
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

#[test]
fn the_emulator_refuses_the_cusparse_path_with_a_reason() {
    let backend = Backend::emulator();
    let g = graph(&mut ChaCha8Rng::seed_from_u64(1), 10, 10);
    let dg = DeviceGraph::new(&backend, &g).unwrap();
    let err = CusparseGt::new(&dg, &GtConfig::new(2, 8)).err().expect("the emulator has no cuSPARSE");
    assert!(matches!(err, Error::Unsupported { ref what } if what.contains("CUDA device")), "{err}");
}
