//! GT and AGNN against the f64 reference under the project's tolerance rule
//! (`dfgnn_reference::precision`) for a spread of shapes, every schedule and every kernel variant:
//! on the emulator always, and on CUDA device 0 with `--ignored` (those tests are ignored
//! otherwise, and fail without a device); GT with attention dropout against the reference fed the
//! same mask. The proptests crate adds random graphs and shrinking.

mod common;

use common::{BAD_DROPOUT, DROPOUT_SHAPES, assert_dropout_refused, assert_packs, assert_passed, dropout_cases, graph};
use dfgnn::{Backend, DeviceGraph, Error, Gt, GtConfig, PlanOptions, Schedule};
use dfgnn_reference::{
    Dims, Pattern, compare, compare_scalar, dropout_factors, gt_backward, gt_backward_dropout, gt_forward,
    gt_forward_dropout, upcast,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn check(backend: &Backend, heads: u32, feat: u32, options: PlanOptions) {
    let mut rng = ChaCha8Rng::seed_from_u64(heads as u64 * 1000 + feat as u64);
    let g = graph(&mut rng, 40, 40);
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

/// CUDA device 0; panics (failing the test) when there is none.
fn gpu() -> Backend {
    Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}"))
}

fn spread(backend: &Backend) {
    let shapes = [(1, 1), (1, 7), (2, 3), (1, 32), (3, 33), (4, 64), (8, 16), (2, 100), (1, 128), (2, 256), (8, 64)];
    for (h, f) in shapes {
        check(backend, h, f, PlanOptions::default());
        check(backend, h, f, PlanOptions { unfused_backward: Some(true), ..Default::default() });
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
    use dfgnn_reference::{agnn_backward, agnn_forward, compare_at_scale, l2_normalize};
    let mut rng = ChaCha8Rng::seed_from_u64(77 + heads as u64 * 1000 + feat as u64);
    let g = graph(&mut rng, 40, 40);
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
        compare_at_scale(
            "dh",
            &backend.download(&grads.dh).unwrap(),
            &naive_g.dh,
            &rg.dh,
            &l2_normalize(g.num_dst(), dims, &upcast(&h)).unwrap().norm,
        ),
        compare_scalar(
            "dβ",
            backend.download(&grads.d_beta).unwrap()[0],
            naive_g.d_beta,
            rg.d_beta,
            rg.d_beta_magnitude,
        ),
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

/// AGNN's forward is GT's over the normalised features, bit for bit (out and lse), on every
/// fused schedule and the baselines: where it runs its own kernels (keys made from the gathered
/// values and the inverse norms) GT's backward, which reads `hn`, recomputes its scores exactly.
fn check_agnn_is_gt_on_normalized_features(backend: &Backend) {
    use dfgnn::{Agnn, AgnnConfig, Gt, GtConfig};
    let mut rng = ChaCha8Rng::seed_from_u64(93);
    let g = graph(&mut rng, 40, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let split = PlanOptions {
        schedule: Schedule::RowSplit,
        split_threshold: Some(16),
        chunk_edges: Some(10),
        ..Default::default()
    };
    let mut plans: Vec<PlanOptions> =
        Schedule::ALL.into_iter().map(|schedule| PlanOptions { schedule, ..Default::default() }).collect();
    plans.push(split);
    for (heads, feat) in [(1, 7), (2, 32), (3, 33), (4, 64), (1, 256)] {
        let n = g.num_dst() * (heads * feat) as usize;
        let h: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let bh = backend.upload(&h).unwrap();
        let beta = 2.3f32;
        for plan in &plans {
            let context = format!("AGNN H={heads} F={feat} {plan:?}");
            let agnn = Agnn::new(&dg, &AgnnConfig { heads, feat, plan: plan.clone() }).unwrap();
            let fwd = agnn.forward(&bh, beta).unwrap();
            let hn = agnn.normalized(&fwd).unwrap();
            let q: Vec<f32> = backend.download(&hn).unwrap().iter().map(|x| beta * x).collect();
            let gt = Gt::new(&dg, &GtConfig { heads, feat, scale: Some(1.0), plan: plan.clone() }).unwrap();
            assert_eq!(gt.plan(), agnn.plan(), "{context}");
            let bq = backend.upload(&q).unwrap();
            let gt_fwd = gt.forward(&bq, &hn, &bh).unwrap();
            for (what, ours, gts) in [("out", fwd.out(), &gt_fwd.out), ("lse", fwd.lse(), &gt_fwd.lse)] {
                let (ours, gts) = (backend.download(ours).unwrap(), backend.download(gts).unwrap());
                if let Some(i) = ours.iter().zip(&gts).position(|(a, b)| a.to_bits() != b.to_bits()) {
                    panic!("{context}: {what}[{i}] = {} against GT's {}\n{}", ours[i], gts[i], agnn.plan());
                }
            }
        }
    }
}

#[test]
fn agnn_is_gt_on_normalized_features_on_the_emulator() {
    check_agnn_is_gt_on_normalized_features(&Backend::emulator());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn agnn_is_gt_on_normalized_features_on_the_gpu() {
    check_agnn_is_gt_on_normalized_features(&gpu());
}

/// β in device memory (what the Python package passes): the bits of the same β from the host, on
/// every schedule; nothing uploaded or downloaded by the forward and the backward (no wait: what
/// a captured CUDA graph needs); a new β in the same buffer is read by the next call; a NaN β
/// gives the fused schedules NaN outputs and gradients (rows without edges stay zero), an
/// infinite one no finite dβ, and neither an error nor a fault on any schedule.
fn check_agnn_device_beta(backend: &Backend, options: PlanOptions) {
    use dfgnn::{Agnn, AgnnConfig};
    let mut rng = ChaCha8Rng::seed_from_u64(91);
    let g = graph(&mut rng, 40, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let (heads, feat) = (2, 16);
    let n = g.num_dst() * (heads * feat) as usize;
    let mut rand_vec = |n: usize| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (h, d_out) = (backend.upload(&rand_vec(n)).unwrap(), backend.upload(&rand_vec(n)).unwrap());
    let agnn = Agnn::new(&dg, &AgnnConfig { heads, feat, plan: options.clone() }).unwrap();
    let context = format!("AGNN with β on the device, {options:?}");
    let run = |beta: &dfgnn::Buffer<f32>| {
        let before = backend.counts();
        let fwd = agnn.forward_device_beta(&h, beta).unwrap();
        let grads = agnn.backward(&fwd, &d_out).unwrap();
        let made = backend.counts() - before;
        assert_eq!((made.uploads, made.downloads), (0, 0), "{context}: the host moved data: {made:?}");
        let out = backend.download(fwd.out()).unwrap();
        (out, backend.download(&grads.dh).unwrap(), backend.download(&grads.d_beta).unwrap()[0])
    };
    let host = |beta: f32| {
        let fwd = agnn.forward(&h, beta).unwrap();
        let grads = agnn.backward(&fwd, &d_out).unwrap();
        let out = backend.download(fwd.out()).unwrap();
        (out, backend.download(&grads.dh).unwrap(), backend.download(&grads.d_beta).unwrap()[0])
    };
    let bits = |(out, dh, d_beta): (Vec<f32>, Vec<f32>, f32)| {
        (
            out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            dh.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            d_beta.to_bits(),
        )
    };
    let mut beta = backend.upload(&[1.3f32]).unwrap();
    assert_eq!(bits(run(&beta)), bits(host(1.3)), "{context}: β = 1.3");
    backend.copy(&backend.upload(&[-0.4f32]).unwrap(), &mut beta).unwrap();
    assert_eq!(bits(run(&beta)), bits(host(-0.4)), "{context}: β = -0.4 written into the same buffer");
    // A non-finite β: the fused passes give NaN; the baselines' softmax takes a row of NaN scores
    // for an empty one (zeros). Never an error or a fault.
    let fused = !matches!(options.schedule, Schedule::EdgeParallel | Schedule::Unfused);
    let row = (heads * feat) as usize;
    backend.copy(&backend.upload(&[f32::NAN]).unwrap(), &mut beta).unwrap();
    let (out, dh, d_beta) = run(&beta);
    for i in 0..g.num_dst() {
        let has_edges = g.offsets()[i + 1] > g.offsets()[i];
        let values = &out[i * row..(i + 1) * row];
        let expected = |x: &f32| if has_edges && fused { x.is_nan() } else { x.is_nan() || *x == 0.0 };
        assert!(values.iter().all(expected), "{context}: β = NaN, row {i}: {values:?}");
    }
    if fused {
        assert!(dh.iter().any(|x| x.is_nan()) && d_beta.is_nan(), "{context}: β = NaN");
    }
    backend.copy(&backend.upload(&[f32::INFINITY]).unwrap(), &mut beta).unwrap();
    let d_beta = run(&beta).2;
    assert!(!fused || !d_beta.is_finite(), "{context}: β = ∞ gave dβ = {d_beta}");
    let err = agnn.forward_device_beta(&h, &d_out).map(drop).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { what: "beta", expected: 1, .. }), "{err}");
    let err = agnn.forward(&h, f32::NAN).map(drop).unwrap_err();
    assert!(matches!(err, Error::Unsupported { ref what } if what.contains("β")), "{err}");
}

fn agnn_device_beta_spread(backend: &Backend) {
    let split = PlanOptions {
        schedule: Schedule::RowSplit,
        split_threshold: Some(16),
        chunk_edges: Some(10),
        ..Default::default()
    };
    check_agnn_device_beta(backend, PlanOptions::default());
    check_agnn_device_beta(backend, split);
    for schedule in [Schedule::EdgeParallel, Schedule::Unfused] {
        check_agnn_device_beta(backend, PlanOptions { schedule, ..Default::default() });
    }
}

#[test]
fn agnn_reads_beta_from_device_memory_on_the_emulator() {
    agnn_device_beta_spread(&Backend::emulator());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn agnn_reads_beta_from_device_memory_on_the_gpu() {
    agnn_device_beta_spread(&gpu());
}

/// GT with attention dropout `p` against the reference fed the same mask (`dropout_factors`):
/// the output and every gradient (also from a saved forward), the same bits on a second run, and
/// on a baseline schedule a clear error.
fn check_dropout(backend: &Backend, heads: u32, feat: u32, options: PlanOptions, p: f32, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let g = graph(&mut rng, 40, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let n = g.num_dst() * (heads * feat) as usize;
    let mut rand_vec = |n: usize| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (q, k, v, d_out) = (rand_vec(n), rand_vec(n), rand_vec(n), rand_vec(n));
    let mut gt = Gt::new(&dg, &GtConfig { heads, feat, scale: None, plan: options.clone() }).unwrap();
    gt.set_dropout(p, seed).unwrap();
    let up_ = |x: &[f32]| backend.upload(x).unwrap();
    let (bq, bk, bv, bd) = (up_(&q), up_(&k), up_(&v), up_(&d_out));
    let context = format!("GT dropout p={p} seed={seed} H={heads} F={feat} {options:?}\n{}", gt.plan());
    if !gt.plan().schedule.is_fused() {
        return assert_dropout_refused(gt.forward(&bq, &bk, &bv), &context);
    }
    assert_packs(heads, feat, &options, gt.plan(), &context);
    let fwd = gt.forward(&bq, &bk, &bv).unwrap();
    let down = |b: &dfgnn::Buffer<f32>| backend.download(b).unwrap();
    let (out, lse, stats) = (down(&fwd.out), down(&fwd.lse), down(fwd.stats()));
    let grads = gt.backward(&gt.saved_forward(&bq, &bk, &bv, up_(&out), up_(&lse), up_(&stats)).unwrap(), &bd).unwrap();
    let pat = Pattern::new(g.num_dst(), g.num_src(), g.offsets(), g.columns()).unwrap();
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let m64 = dropout_factors(seed, f64::from(p), g.nnz(), dims.heads);
    let m32: Vec<f32> = m64.iter().map(|&x| x as f32).collect();
    let (c32, up) = (gt.scale(), upcast);
    let c64 = f64::from(c32);
    let (q64, k64, v64, d64) = (up(&q), up(&k), up(&v), up(&d_out));
    let r = gt_forward_dropout(&pat, dims, &q64, &k64, &v64, c64, &m64).unwrap();
    let rg = gt_backward_dropout(&pat, dims, &q64, &k64, &v64, c64, &r.out, &r.lse, &d64, &m64).unwrap();
    let nf = gt_forward_dropout(&pat, dims, &q, &k, &v, c32, &m32).unwrap();
    let ng = gt_backward_dropout(&pat, dims, &q, &k, &v, c32, &nf.out, &nf.lse, &d_out, &m32).unwrap();
    let checks = [
        compare("out", &out, &nf.out, &r.out),
        compare("lse", &lse, &nf.lse, &r.lse),
        compare("dq", &down(&grads.dq), &ng.dq, &rg.dq),
        compare("dk", &down(&grads.dk), &ng.dk, &rg.dk),
        compare("dv", &down(&grads.dv), &ng.dv, &rg.dv),
    ];
    assert_passed(&checks, &context);
    let again = gt.backward(&gt.forward(&bq, &bk, &bv).unwrap(), &bd).unwrap();
    assert_eq!(down(&again.dk), down(&grads.dk), "{context}");
    assert_eq!(down(&again.dv), down(&grads.dv), "{context}");
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
    let plain = Gt::new(&dg, &GtConfig::new(2, 8)).unwrap();
    let mut zero = Gt::new(&dg, &GtConfig::new(2, 8)).unwrap();
    zero.set_dropout(0.0, 99).unwrap();
    let x: Vec<f32> = (0..40 * 16).map(|i| ((i * 37) % 17) as f32 / 17.0 - 0.5).collect();
    let bx = backend.upload(&x).unwrap();
    let (p_out, z_out) = (plain.forward(&bx, &bx, &bx).unwrap(), zero.forward(&bx, &bx, &bx).unwrap());
    assert_eq!(backend.download(&p_out.out).unwrap(), backend.download(&z_out.out).unwrap());
    for bad in BAD_DROPOUT {
        assert!(matches!(zero.set_dropout(bad, 1), Err(Error::Unsupported { .. })), "p = {bad}");
    }
}

#[test]
fn gt_dropout_matches_reference_on_the_emulator() {
    dropout_spread(&Backend::emulator());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn gt_dropout_matches_reference_on_the_gpu() {
    dropout_spread(&gpu());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn kept_device_memory_is_reused_or_given_back_and_too_much_is_a_clear_error_on_the_gpu() {
    let backend = Backend::cuda(0).expect("a CUDA device");
    backend.keep_freed_memory().expect("the default memory pool");
    let floats = |fraction: f64| (backend.limits().total_memory as f64 * fraction / 4.0) as usize;
    // Half the device, freed into the pool, then more than that half: the pool's kept memory and
    // new memory would pass the device's, so the allocation must give the kept memory back.
    drop(backend.alloc::<f32>(floats(0.5)).expect("half the device"));
    drop(backend.alloc::<f32>(floats(0.6)).expect("six tenths of the device after half was freed"));
    // More than the device holds: a clear error, after which the backend still works.
    match backend.alloc::<f32>(floats(1.0) + 1024) {
        Err(Error::OutOfMemory { requested, total, .. }) => assert!(requested > total / 2, "{requested} of {total}"),
        Err(other) => panic!("more than the device holds gave {other}"),
        Ok(_) => panic!("more than the device holds was allocated"),
    }
    let small = backend.upload(&[1.0f32, 2.0, 3.0]).expect("a small upload after the error");
    assert_eq!(backend.download(&small).expect("its download"), vec![1.0, 2.0, 3.0]);
}
