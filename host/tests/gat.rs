//! GAT against the f64 reference under the project's tolerance rule
//! (`dfgnn_reference::precision`) for a spread of shapes, every schedule and kernel variant, both
//! entry points (features + attention vectors, and precomputed node scores; the features as two
//! arrays, and on the default plan also as one passed as both, whose `dh` then holds `dh_dst`):
//! on the emulator always, and on CUDA device 0 with `--ignored` (those tests are ignored
//! otherwise, and fail without a device); and with attention dropout against the reference fed
//! the same mask.

mod common;

use common::{BAD_DROPOUT, DROPOUT_SHAPES, assert_dropout_refused, assert_packs, assert_passed, dropout_cases, graph};
use dfgnn::{Backend, DeviceGraph, Error, Gat, GatConfig, PlanOptions, Schedule};
use dfgnn_reference::{
    Dims, Pattern, compare, dropout_factors, gat_backward, gat_backward_dropout, gat_backward_precomputed,
    gat_backward_precomputed_dropout, gat_forward, gat_forward_dropout, gat_forward_precomputed,
    gat_forward_precomputed_dropout, gat_node_scores, upcast,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SLOPE: f32 = 0.2;

/// [`check_nodes`] on a square graph of 40 nodes.
fn check(backend: &Backend, heads: u32, feat: u32, options: PlanOptions, one_array: bool) {
    check_nodes(backend, (40, 40), heads, feat, options, one_array);
}

/// GAT against the reference on a graph of `n_dst` × `n_src` nodes; with `one_array` (square
/// graphs), `h` is passed as `h_dst` too (the destinations' features are the sources', as in a
/// GAT layer), and `dh` must be the whole gradient of `h`.
fn check_nodes(
    backend: &Backend,
    (n_dst, n_src): (usize, usize),
    heads: u32,
    feat: u32,
    options: PlanOptions,
    one_array: bool,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(5 + heads as u64 * 1000 + feat as u64 + n_dst as u64 * 7 + n_src as u64);
    let g = graph(&mut rng, n_dst, n_src);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let hf = (heads * feat) as usize;
    let mut rand_vec = |n: usize, s: f32| (0..n).map(|_| s * rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (h, h_dst, d_out) = (rand_vec(n_src * hf, 1.0), rand_vec(n_dst * hf, 1.0), rand_vec(n_dst * hf, 1.0));
    let h_dst = if one_array { h.clone() } else { h_dst };
    let (a_dst, a_src) = (rand_vec(hf, 2.0), rand_vec(hf, 2.0));
    let mut gat = Gat::new(&dg, &GatConfig { heads, feat, slope: SLOPE, plan: options.clone() }).unwrap();
    let up_ = |x: &[f32]| backend.upload(x).unwrap();
    let (bh, bh_dst, ba_dst, ba_src) = (up_(&h), up_(&h_dst), up_(&a_dst), up_(&a_src));
    let bh_dst = if one_array { &bh } else { &bh_dst };
    let fwd = gat.forward(&bh, bh_dst, &ba_dst, &ba_src).unwrap();
    // The fused forwards but row_group's save the positive part where the plan says so (by
    // default on graphs of enough edges per row; the options force it either way): the
    // backward's row pass then reads no neighbour. The precomputed run below saves none (its row
    // pass gathers).
    let plan = gat.plan();
    let saves_part = plan.schedule.is_fused() && plan.groups.is_none() && plan.positive_part;
    if let Some(forced) = options.positive_part {
        assert_eq!(saves_part, forced && plan.schedule.is_fused() && plan.groups.is_none(), "{plan}");
    }
    assert_eq!(fwd.part().is_some(), saves_part, "{plan}");
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
    let context = format!("GAT H={heads} F={feat} {options:?} one_array={one_array}\n{}", gat.plan());
    let dh = match &grads.dh_dst {
        Some(dh_dst) => {
            assert!(!one_array, "{context}: dh_dst not folded into dh");
            vec![
                compare("dh", &down(&grads.dh), &ng.dh, &rg.dh),
                compare("dh_dst", &down(dh_dst), &ng.dh_dst, &rg.dh_dst),
            ]
        }
        None => {
            assert!(one_array, "{context}: dh_dst folded though h_dst is its own array");
            let (n_dh, r_dh) = (add(&ng.dh, &ng.dh_dst), add(&rg.dh, &rg.dh_dst));
            vec![compare("dh + dh_dst", &down(&grads.dh), &n_dh, &r_dh)]
        }
    };
    let mut checks =
        vec![compare("out", &out, &naive.out, &r.out), compare("lse", &down(&fwd.lse), &naive.lse, &r.lse)];
    checks.extend(dh);
    checks.extend([
        compare("da_dst", &down(&grads.da_dst), &ng.da_dst, &rg.da_dst),
        compare("da_src", &down(&grads.da_src), &ng.da_src, &rg.da_src),
    ]);
    assert_passed(&checks, &context);

    // The precomputed entry point, from f32 node scores (the reference's, rounded).
    let (el, er) = (
        gat_node_scores(g.num_dst(), dims, &h_dst, &a_dst).unwrap(),
        gat_node_scores(g.num_src(), dims, &h, &a_src).unwrap(),
    );
    let (bel, ber) = (up_(&el), up_(&er));
    gat.set_saves_part(false);
    // The forward without the part (for inference) gives the same output, bit for bit.
    let inference = gat.forward(&bh, bh_dst, &ba_dst, &ba_src).unwrap();
    assert_eq!(down(&inference.out), out, "{context}");
    assert_eq!(down(&inference.lse), down(&fwd.lse), "{context}");
    let pfwd = gat.forward_precomputed(&bh, &bel, &ber).unwrap();
    assert!(pfwd.part().is_none());
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
    gat.set_saves_part(true);
    let again = gat.backward(&gat.forward(&bh, bh_dst, &ba_dst, &ba_src).unwrap(), &up_(&d_out)).unwrap();
    assert_eq!(down(&again.da_src), down(&grads.da_src));
    assert_eq!(down(&again.da_dst), down(&grads.da_dst));
    assert_eq!(down(&again.dh), down(&grads.dh));
}

/// The element-wise sum of two gradients of one array (the reference's `dh + dh_dst`).
fn add<T: Copy + std::ops::Add<Output = T>>(a: &[T], b: &[T]) -> Vec<T> {
    a.iter().zip(b).map(|(&x, &y)| x + y).collect()
}

/// The node backward over node counts that split into several blocks of nodes, some not a
/// multiple of the kernel's unroll, features past a block's threads, and a bipartite graph.
fn node_counts(backend: &Backend) {
    for (h, f) in [(1, 1), (3, 33), (1, 300)] {
        for n in [67, 131] {
            check_nodes(backend, (n, n), h, f, PlanOptions::default(), true);
            check_nodes(backend, (n, n), h, f, PlanOptions::default(), false);
        }
        check_nodes(backend, (67, 131), h, f, PlanOptions::default(), false);
        check_nodes(backend, (131, 67), h, f, PlanOptions::default(), false);
    }
}

fn spread(backend: &Backend) {
    for (h, f) in [(1, 1), (1, 7), (2, 3), (3, 33), (4, 64), (1, 128), (2, 256)] {
        check(backend, h, f, PlanOptions::default(), false);
        check(backend, h, f, PlanOptions::default(), true);
        check(backend, h, f, common::split_options(), false);
        for schedule in [Schedule::EdgeParallel, Schedule::Unfused, Schedule::RowGroup] {
            check(backend, h, f, PlanOptions { schedule, ..Default::default() }, false);
        }
        check(backend, h, f, common::group_options(), false);
        for positive_part in [false, true] {
            check(backend, h, f, PlanOptions { positive_part: Some(positive_part), ..Default::default() }, f % 2 == 1);
        }
        check(backend, h, f, PlanOptions { unfused_backward: Some(true), ..Default::default() }, f % 2 == 0);
    }
    for (h, f) in [(8, 64), (3, 33)] {
        for max_slots in [2, 4, 8] {
            for scalar_loads in [false, true] {
                let options = PlanOptions { max_slots: Some(max_slots), scalar_loads, ..Default::default() };
                check(backend, h, f, options.clone(), false);
                check(backend, h, f, PlanOptions { schedule: Schedule::RowGroup, ..options.clone() }, false);
                let split = PlanOptions {
                    schedule: Schedule::RowSplit,
                    split_threshold: Some(16),
                    chunk_edges: Some(10),
                    ..options
                };
                check(backend, h, f, split, false);
            }
        }
    }
}

/// GAT with attention dropout `p` against the reference fed the same mask (`dropout_factors`),
/// through both entry points: the output and every gradient (so the backward regenerated the
/// forward's mask, also from a saved forward), the same bits on a second run, and on a baseline
/// schedule a clear error.
fn check_dropout(backend: &Backend, heads: u32, feat: u32, options: PlanOptions, p: f32, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let g = graph(&mut rng, 40, 40);
    let dg = DeviceGraph::new(backend, &g).unwrap();
    let n = g.num_dst() * (heads * feat) as usize;
    let hf = (heads * feat) as usize;
    let mut rand_vec = |n: usize, s: f32| (0..n).map(|_| s * rng.random_range(-1.0f32..1.0)).collect::<Vec<f32>>();
    let (h, h_dst, d_out) = (rand_vec(n, 1.0), rand_vec(n, 1.0), rand_vec(n, 1.0));
    let (a_dst, a_src) = (rand_vec(hf, 2.0), rand_vec(hf, 2.0));
    let mut gat = Gat::new(&dg, &GatConfig { heads, feat, slope: SLOPE, plan: options.clone() }).unwrap();
    gat.set_dropout(p, seed).unwrap();
    let up_ = |x: &[f32]| backend.upload(x).unwrap();
    let (bh, bh_dst, ba_dst, ba_src, bd) = (up_(&h), up_(&h_dst), up_(&a_dst), up_(&a_src), up_(&d_out));
    let context = format!("GAT dropout p={p} seed={seed} H={heads} F={feat} {options:?}\n{}", gat.plan());
    if !gat.plan().schedule.is_fused() {
        return assert_dropout_refused(gat.forward(&bh, &bh_dst, &ba_dst, &ba_src), &context);
    }
    assert_packs(heads, feat, &options, gat.plan(), &context);
    let fwd = gat.forward(&bh, &bh_dst, &ba_dst, &ba_src).unwrap();
    let grads = gat.backward(&fwd, &bd).unwrap();
    let pat = Pattern::new(g.num_dst(), g.num_src(), g.offsets(), g.columns()).unwrap();
    let dims = Dims { heads: heads as usize, feat: feat as usize };
    let m64 = dropout_factors(seed, f64::from(p), g.nnz(), dims.heads);
    let m32: Vec<f32> = m64.iter().map(|&x| x as f32).collect();
    let (up, s64) = (upcast, SLOPE as f64);
    let (h64, hd64, ad64, as64, d64) = (up(&h), up(&h_dst), up(&a_dst), up(&a_src), up(&d_out));
    let r = gat_forward_dropout(&pat, dims, &h64, &hd64, &ad64, &as64, s64, &m64).unwrap();
    let rg = gat_backward_dropout(&pat, dims, &h64, &hd64, &ad64, &as64, s64, &r.out, &r.lse, &d64, &m64).unwrap();
    let nf = gat_forward_dropout(&pat, dims, &h, &h_dst, &a_dst, &a_src, SLOPE, &m32).unwrap();
    let ng =
        gat_backward_dropout(&pat, dims, &h, &h_dst, &a_dst, &a_src, SLOPE, &nf.out, &nf.lse, &d_out, &m32).unwrap();
    let down = |b: &dfgnn::Buffer<f32>| backend.download(b).unwrap();
    let checks = [
        compare("out", &down(&fwd.out), &nf.out, &r.out),
        compare("lse", &down(&fwd.lse), &nf.lse, &r.lse),
        compare("dh", &down(&grads.dh), &ng.dh, &rg.dh),
        compare("dh_dst", &down(grads.dh_dst.as_ref().expect("h_dst is its own array")), &ng.dh_dst, &rg.dh_dst),
        compare("da_dst", &down(&grads.da_dst), &ng.da_dst, &rg.da_dst),
        compare("da_src", &down(&grads.da_src), &ng.da_src, &rg.da_src),
    ];
    assert_passed(&checks, &context);

    // The precomputed entry point, and its backward from the saved forward state.
    let el = gat_node_scores(g.num_dst(), dims, &h_dst, &a_dst).unwrap();
    let er = gat_node_scores(g.num_src(), dims, &h, &a_src).unwrap();
    let (bel, ber) = (up_(&el), up_(&er));
    let pfwd = gat.forward_precomputed(&bh, &bel, &ber).unwrap();
    let (out, lse, stats) = (down(&pfwd.out), down(&pfwd.lse), down(pfwd.stats()));
    let saved = gat.saved_forward(&bh, &bel, &ber, up_(&out), up_(&lse), up_(&stats)).unwrap();
    let pgrads = gat.backward_precomputed(&saved, &bd).unwrap();
    let (el64, er64) = (up(&el), up(&er));
    let pr = gat_forward_precomputed_dropout(&pat, dims, &h64, &el64, &er64, s64, &m64).unwrap();
    let prg =
        gat_backward_precomputed_dropout(&pat, dims, &h64, &el64, &er64, s64, &pr.out, &pr.lse, &d64, &m64).unwrap();
    let pn = gat_forward_precomputed_dropout(&pat, dims, &h, &el, &er, SLOPE, &m32).unwrap();
    let png =
        gat_backward_precomputed_dropout(&pat, dims, &h, &el, &er, SLOPE, &pn.out, &pn.lse, &d_out, &m32).unwrap();
    let checks = [
        compare("out", &out, &pn.out, &pr.out),
        compare("dh", &down(&pgrads.dh), &png.dh, &prg.dh),
        compare("d_el", &down(&pgrads.d_el), &png.d_el, &prg.d_el),
        compare("d_er", &down(&pgrads.d_er), &png.d_er, &prg.d_er),
    ];
    assert_passed(&checks, &format!("precomputed {context}"));

    // The same from a saved forward with its positive part (the PyTorch binding's path).
    if let Some((part_out, part_weight)) = pfwd.part() {
        let part = (up_(&down(part_out)), up_(&down(part_weight)));
        let saved = (up_(&out), up_(&lse), up_(&stats));
        let with_part = gat.saved_forward_with_part((&bh, &bel, &ber), saved, part).unwrap();
        assert!(with_part.part().is_some(), "{context}");
        let pgrads = gat.backward_precomputed(&with_part, &bd).unwrap();
        let checks = [
            compare("dh", &down(&pgrads.dh), &png.dh, &prg.dh),
            compare("d_el", &down(&pgrads.d_el), &png.d_el, &prg.d_el),
            compare("d_er", &down(&pgrads.d_er), &png.d_er, &prg.d_er),
        ];
        assert_passed(&checks, &format!("precomputed, saved with the part {context}"));
    }

    let again = gat.backward(&gat.forward(&bh, &bh_dst, &ba_dst, &ba_src).unwrap(), &bd).unwrap();
    assert_eq!(down(&again.dh), down(&grads.dh), "{context}");
    assert_eq!(down(&again.da_src), down(&grads.da_src), "{context}");
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
    let plain = Gat::new(&dg, &GatConfig::new(2, 8)).unwrap();
    let mut zero = Gat::new(&dg, &GatConfig::new(2, 8)).unwrap();
    zero.set_dropout(0.0, 99).unwrap();
    let x: Vec<f32> = (0..40 * 16).map(|i| ((i * 37) % 17) as f32 / 17.0 - 0.5).collect();
    let (bx, ba) = (backend.upload(&x).unwrap(), backend.upload(&x[..16]).unwrap());
    let (p_out, z_out) = (plain.forward(&bx, &bx, &ba, &ba).unwrap(), zero.forward(&bx, &bx, &ba, &ba).unwrap());
    assert_eq!(backend.download(&p_out.out).unwrap(), backend.download(&z_out.out).unwrap());
    for bad in BAD_DROPOUT {
        assert!(matches!(zero.set_dropout(bad, 1), Err(Error::Unsupported { .. })), "p = {bad}");
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

#[test]
fn gat_node_counts_match_reference_on_the_emulator() {
    node_counts(&Backend::emulator());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn gat_node_counts_match_reference_on_the_gpu() {
    node_counts(&Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}")));
}

#[test]
fn gat_dropout_matches_reference_on_the_emulator() {
    dropout_spread(&Backend::emulator());
}

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn gat_dropout_matches_reference_on_the_gpu() {
    dropout_spread(&Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}")));
}
