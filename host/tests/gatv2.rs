//! GATv2 against the f64 reference under the project's tolerance rule
//! (`dfgnn_reference::precision`) for a spread of shapes, every schedule and kernel variant: on
//! the emulator always, and on CUDA device 0 with `--ignored` (those tests are ignored otherwise,
//! and fail without a device).

mod common;

use common::{BAD_DROPOUT, DROPOUT_SHAPES, assert_dropout_refused, assert_packs, assert_passed, dropout_cases, graph};
use dfgnn::Error;
use dfgnn::{Backend, DeviceGraph, GatV2, GatV2Config, PlanOptions, Schedule};
use dfgnn_reference::{
    Dims, Pattern, compare, dropout_factors, gatv2_backward, gatv2_backward_dropout, gatv2_forward,
    gatv2_forward_dropout, upcast,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SLOPE: f32 = 0.2;

fn check(backend: &Backend, heads: u32, feat: u32, n_src: usize, options: PlanOptions) {
    let mut rng = ChaCha8Rng::seed_from_u64(9 + heads as u64 * 1000 + feat as u64 + n_src as u64);
    let g = graph(&mut rng, 40, n_src);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let hf = (heads * feat) as usize;
    let mut rand_vec = |n: usize| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (xl, xr, a, d_out) =
        (rand_vec(g.num_src() * hf), rand_vec(g.num_dst() * hf), rand_vec(hf), rand_vec(g.num_dst() * hf));
    let model = GatV2::new(&dg, &GatV2Config { heads, feat, slope: SLOPE, plan: options.clone() }).unwrap();
    let up_ = |x: &[f32]| backend.upload(x).unwrap();
    let (bxl, bxr, ba, bd) = (up_(&xl), up_(&xr), up_(&a), up_(&d_out));
    let fwd = model.forward(&bxl, &bxr, &ba).unwrap();
    let grads = model.backward(&fwd, &bd).unwrap();
    let p = Pattern::new(g.num_dst(), g.num_src(), g.offsets(), g.columns()).unwrap();
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let up = upcast;
    let s64 = SLOPE as f64;
    let r = gatv2_forward(&p, dims, &up(&xl), &up(&xr), &up(&a), s64).unwrap();
    let rg = gatv2_backward(&p, dims, &up(&xl), &up(&xr), &up(&a), s64, &r.out, &r.lse, &up(&d_out)).unwrap();
    let naive = gatv2_forward(&p, dims, &xl, &xr, &a, SLOPE).unwrap();
    let ng = gatv2_backward(&p, dims, &xl, &xr, &a, SLOPE, &naive.out, &naive.lse, &d_out).unwrap();
    let down = |b: &dfgnn::Buffer<f32>| backend.download(b).unwrap();
    let checks = [
        compare("out", &down(&fwd.out), &naive.out, &r.out),
        compare("lse", &down(&fwd.lse), &naive.lse, &r.lse),
        compare("dxl", &down(&grads.dxl), &ng.dxl, &rg.dxl),
        compare("dxr", &down(&grads.dxr), &ng.dxr, &rg.dxr),
        compare("da", &down(&grads.da), &ng.da, &rg.da),
    ];
    let context = format!("GATv2 H={heads} F={feat} N_src={n_src} {options:?}\n{}", model.plan());
    assert_passed(&checks, &context);

    // Deterministic: a second run gives the same bits.
    let again = model.backward(&model.forward(&bxl, &bxr, &ba).unwrap(), &bd).unwrap();
    assert_eq!(down(&again.da), down(&grads.da), "{context}");
    assert_eq!(down(&again.dxl), down(&grads.dxl), "{context}");
    assert_eq!(down(&again.dxr), down(&grads.dxr), "{context}");
}

fn spread(backend: &Backend) {
    for (h, f) in [(1, 1), (1, 7), (3, 33), (4, 64), (1, 128)] {
        // Square, then bipartite (more sources than rows).
        for n_src in [40, 57] {
            check(backend, h, f, n_src, PlanOptions::default());
        }
        check(backend, h, f, 40, common::split_options());
        for schedule in [Schedule::EdgeParallel, Schedule::Unfused, Schedule::RowGroup] {
            check(backend, h, f, 40, PlanOptions { schedule, ..Default::default() });
        }
        check(backend, h, f, 40, common::group_options());
        check(backend, h, f, 40, PlanOptions { unfused_backward: Some(true), ..Default::default() });
    }
    for (h, f) in [(8, 64), (3, 33)] {
        for max_slots in [2, 4, 8] {
            for scalar_loads in [false, true] {
                let options = PlanOptions { max_slots: Some(max_slots), scalar_loads, ..Default::default() };
                check(backend, h, f, 40, options.clone());
                check(backend, h, f, 40, PlanOptions { schedule: Schedule::RowGroup, ..options.clone() });
                let split = PlanOptions {
                    schedule: Schedule::RowSplit,
                    split_threshold: Some(16),
                    chunk_edges: Some(10),
                    ..options
                };
                check(backend, h, f, 40, split);
            }
        }
    }
}

/// GATv2 with attention dropout `p` against the reference fed the same mask (`dropout_factors`):
/// the output and every gradient (so the backward regenerated the forward's mask), the same bits
/// on a second run, and on a baseline schedule a clear error.
fn check_dropout(backend: &Backend, heads: u32, feat: u32, options: PlanOptions, p: f32, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let g = graph(&mut rng, 40, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let hf = (heads * feat) as usize;
    let mut rand_vec = |n: usize| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (xl, xr, a, d_out) =
        (rand_vec(g.num_src() * hf), rand_vec(g.num_dst() * hf), rand_vec(hf), rand_vec(g.num_dst() * hf));
    let mut model = GatV2::new(&dg, &GatV2Config { heads, feat, slope: SLOPE, plan: options.clone() }).unwrap();
    model.set_dropout(p, seed).unwrap();
    let up_ = |x: &[f32]| backend.upload(x).unwrap();
    let (bxl, bxr, ba, bd) = (up_(&xl), up_(&xr), up_(&a), up_(&d_out));
    let context = format!("GATv2 dropout p={p} seed={seed} H={heads} F={feat} {options:?}\n{}", model.plan());
    if !model.plan().schedule.is_fused() {
        return assert_dropout_refused(model.forward(&bxl, &bxr, &ba), &context);
    }
    assert_packs(heads, feat, &options, model.plan(), &context);
    let fwd = model.forward(&bxl, &bxr, &ba).unwrap();
    let grads = model.backward(&fwd, &bd).unwrap();
    let pat = Pattern::new(g.num_dst(), g.num_src(), g.offsets(), g.columns()).unwrap();
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let m64 = dropout_factors(seed, f64::from(p), g.nnz(), dims.heads);
    let m32: Vec<f32> = m64.iter().map(|&x| x as f32).collect();
    let (up, s64) = (upcast, SLOPE as f64);
    let r = gatv2_forward_dropout(&pat, dims, &up(&xl), &up(&xr), &up(&a), s64, &m64).unwrap();
    let rg = gatv2_backward_dropout(&pat, dims, &up(&xl), &up(&xr), &up(&a), s64, &r.out, &r.lse, &up(&d_out), &m64)
        .unwrap();
    let n = gatv2_forward_dropout(&pat, dims, &xl, &xr, &a, SLOPE, &m32).unwrap();
    let ng = gatv2_backward_dropout(&pat, dims, &xl, &xr, &a, SLOPE, &n.out, &n.lse, &d_out, &m32).unwrap();
    let down = |b: &dfgnn::Buffer<f32>| backend.download(b).unwrap();
    let checks = [
        compare("out", &down(&fwd.out), &n.out, &r.out),
        compare("lse", &down(&fwd.lse), &n.lse, &r.lse),
        compare("dxl", &down(&grads.dxl), &ng.dxl, &rg.dxl),
        compare("dxr", &down(&grads.dxr), &ng.dxr, &rg.dxr),
        compare("da", &down(&grads.da), &ng.da, &rg.da),
    ];
    assert_passed(&checks, &context);
    let again = model.backward(&model.forward(&bxl, &bxr, &ba).unwrap(), &bd).unwrap();
    assert_eq!(down(&again.dxl), down(&grads.dxl), "{context}");
    assert_eq!(down(&again.da), down(&grads.da), "{context}");
}

fn dropout_spread(backend: &Backend) {
    for (h, f) in DROPOUT_SHAPES {
        for (options, p, seed) in dropout_cases(h) {
            check_dropout(backend, h, f, options, p, seed);
        }
    }
    // p = 0 is no dropout: the same bits as a model that never set it.
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let g = graph(&mut rng, 40, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let plain = GatV2::new(&dg, &GatV2Config::new(2, 8)).unwrap();
    let mut zero = GatV2::new(&dg, &GatV2Config::new(2, 8)).unwrap();
    zero.set_dropout(0.0, 99).unwrap();
    let x: Vec<f32> = (0..40 * 16).map(|i| ((i * 37) % 17) as f32 / 17.0 - 0.5).collect();
    let (bx, ba) = (backend.upload(&x).unwrap(), backend.upload(&x[..16]).unwrap());
    let (p_out, z_out) = (plain.forward(&bx, &bx, &ba).unwrap(), zero.forward(&bx, &bx, &ba).unwrap());
    assert_eq!(backend.download(&p_out.out).unwrap(), backend.download(&z_out.out).unwrap());
    for bad in BAD_DROPOUT {
        assert!(matches!(zero.set_dropout(bad, 1), Err(Error::Unsupported { .. })), "p = {bad}");
    }
}

#[test]
fn gatv2_matches_reference_on_the_emulator() {
    spread(&Backend::emulator());
}

#[test]
fn gatv2_dropout_matches_reference_on_the_emulator() {
    dropout_spread(&Backend::emulator());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn gatv2_dropout_matches_reference_on_the_gpu() {
    dropout_spread(&Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}")));
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn gatv2_matches_reference_on_the_gpu() {
    spread(&Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}")));
}
