//! GT: gradient checks for q, k and v (square and bipartite, also under attention dropout), a
//! dense forward oracle, and zero output and gradients where a node has no edges.

use dfgnn_reference::{
    Dims, default_gt_scale, dropout_factors, gt_backward, gt_backward_dropout, gt_forward, gt_forward_dropout,
};

use crate::common::{
    DIMS, Graph, assert_close, assert_gradient, dense_attention, dense_len, dot, max_abs, rng, test_graphs, uniform,
};

/// Random q, k, v and d_out for `g`.
fn inputs(g: &Graph, dims: Dims, seed: u64) -> [Vec<f64>; 4] {
    let mut r = rng(seed);
    [
        uniform(&mut r, dense_len(g.num_dst, dims)),
        uniform(&mut r, dense_len(g.num_src, dims)),
        uniform(&mut r, dense_len(g.num_src, dims)),
        uniform(&mut r, dense_len(g.num_dst, dims)),
    ]
}

#[test]
fn gt_gradients_match_central_differences() {
    for (gi, g) in test_graphs(10).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            // A scale above 1 sharpens the softmax so the checks see non-uniform attention.
            let c = 1.5 * default_gt_scale::<f64>(dims.feat);
            let [q, k, v, d_out] = inputs(g, dims, 100 + gi as u64);
            let fwd = gt_forward(&p, dims, &q, &k, &v, c).unwrap();
            let grads = gt_backward(&p, dims, &q, &k, &v, c, &fwd.out, &fwd.lse, &d_out).unwrap();
            let ctx = format!("graph {gi} ({}x{}), {dims:?}", g.num_dst, g.num_src);
            assert!(max_abs(&grads.dq) > 1e-3 && max_abs(&grads.dk) > 1e-3, "{ctx}");
            let out = |q: &[f64], k: &[f64], v: &[f64]| gt_forward(&p, dims, q, k, v, c).unwrap().out;
            assert_gradient(&format!("{ctx}: dq"), &q, &grads.dq, &d_out, |x| out(x, &k, &v));
            assert_gradient(&format!("{ctx}: dk"), &k, &grads.dk, &d_out, |x| out(&q, x, &v));
            assert_gradient(&format!("{ctx}: dv"), &v, &grads.dv, &d_out, |x| out(&q, &k, x));
        }
    }
}

#[test]
fn gradient_check_rejects_a_wrong_gradient() {
    let g = Graph::random(3, 6, 6);
    let p = g.pattern();
    let dims = Dims { heads: 2, feat: 3 };
    let [q, k, v, d_out] = inputs(&g, dims, 4);
    let fwd = gt_forward(&p, dims, &q, &k, &v, 1.0).unwrap();
    let grads = gt_backward(&p, dims, &q, &k, &v, 1.0, &fwd.out, &fwd.lse, &d_out).unwrap();
    let out = |x: &[f64]| gt_forward(&p, dims, x, &k, &v, 1.0).unwrap().out;
    let mut wrong = grads.dq.clone();
    wrong[1] += 1e-4 * max_abs(&grads.dq);
    let err = crate::common::gradient_error(&q, &wrong, &d_out, out);
    assert!(err > 1e-5, "a perturbed gradient passed the check (error {err:e})");
    // The same check with the gradient at another scale must fail too.
    let scaled: Vec<f64> = grads.dq.iter().map(|x| 1.01 * x).collect();
    let err = crate::common::gradient_error(&q, &scaled, &d_out, out);
    assert!(err > 1e-3, "a scaled gradient passed the check (error {err:e})");
}

#[test]
fn gt_forward_matches_dense_attention() {
    for (gi, g) in test_graphs(20).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let c = default_gt_scale::<f64>(dims.feat);
            let [q, k, v, _] = inputs(g, dims, 200 + gi as u64);
            let fwd = gt_forward(&p, dims, &q, &k, &v, c).unwrap();
            let f = dims.feat;
            let at = |x: &[f64], n: usize, h: usize| -> Vec<f64> { x[(n * dims.heads + h) * f..][..f].to_vec() };
            let score = |i, j, h| c * dot(&at(&q, i, h), &at(&k, j, h));
            let (out, lse) = dense_attention(g, dims, score, &v);
            assert_close("out", &fwd.out, &out, 1e-12);
            assert_close("lse", &fwd.lse, &lse, 1e-12);
        }
    }
}

#[test]
fn nodes_without_edges_get_zero_output_and_zero_gradients() {
    // Rows 1 and 3 are empty; sources 2 and 4 are never referenced; row 0 repeats source 1.
    let g = Graph::from_rows(5, &[&[1, 1, 3], &[], &[3, 0], &[]]);
    let p = g.pattern();
    let dims = Dims { heads: 2, feat: 3 };
    let [q, k, v, d_out] = inputs(&g, dims, 5);
    let fwd = gt_forward(&p, dims, &q, &k, &v, 0.7).unwrap();
    let grads = gt_backward(&p, dims, &q, &k, &v, 0.7, &fwd.out, &fwd.lse, &d_out).unwrap();
    let node = |x: &[f64], n: usize| x[n * 6..(n + 1) * 6].to_vec();
    for i in [1, 3] {
        assert_eq!(node(&fwd.out, i), vec![0.0; 6]);
        assert_eq!(node(&grads.dq, i), vec![0.0; 6]);
        assert_eq!(fwd.lse[i * 2..i * 2 + 2], [f64::NEG_INFINITY; 2]);
    }
    for j in [2, 4] {
        assert_eq!(node(&grads.dk, j), vec![0.0; 6]);
        assert_eq!(node(&grads.dv, j), vec![0.0; 6]);
    }
    for x in [&grads.dq, &grads.dk, &grads.dv] {
        assert!(x.iter().all(|v| v.is_finite()));
    }
    assert!(max_abs(&node(&grads.dv, 1)) > 0.0 && max_abs(&node(&grads.dq, 0)) > 0.0);
}

#[test]
fn default_scale_is_one_over_sqrt_feat() {
    assert_eq!(default_gt_scale::<f64>(4), 0.5);
    assert_eq!(default_gt_scale::<f64>(1), 1.0);
    assert_eq!(default_gt_scale::<f32>(3), (1.0 / 3f64.sqrt()) as f32);
}

#[test]
fn gt_dropout_gradients_match_central_differences() {
    for (gi, g) in test_graphs(12).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let c = 1.5 * default_gt_scale::<f64>(dims.feat);
            let [q, k, v, d_out] = inputs(g, dims, 120 + gi as u64);
            let m = dropout_factors(gi as u64, 0.4, p.num_edges(), dims.heads);
            let fwd = gt_forward_dropout(&p, dims, &q, &k, &v, c, &m).unwrap();
            let grads = gt_backward_dropout(&p, dims, &q, &k, &v, c, &fwd.out, &fwd.lse, &d_out, &m).unwrap();
            let ctx = format!("dropout, graph {gi} ({}x{}), {dims:?}", g.num_dst, g.num_src);
            let out = |q: &[f64], k: &[f64], v: &[f64]| gt_forward_dropout(&p, dims, q, k, v, c, &m).unwrap().out;
            assert_gradient(&format!("{ctx}: dq"), &q, &grads.dq, &d_out, |x| out(x, &k, &v));
            assert_gradient(&format!("{ctx}: dk"), &k, &grads.dk, &d_out, |x| out(&q, x, &v));
            assert_gradient(&format!("{ctx}: dv"), &v, &grads.dv, &d_out, |x| out(&q, &k, x));
        }
    }
    // Every edge kept and unscaled is GT.
    let g = &test_graphs(13)[0];
    let p = g.pattern();
    let dims = DIMS[0];
    let [q, k, v, d_out] = inputs(g, dims, 13);
    let ones = vec![1.0; p.num_edges() * dims.heads];
    let plain = gt_forward(&p, dims, &q, &k, &v, 0.5).unwrap();
    assert_eq!(plain, gt_forward_dropout(&p, dims, &q, &k, &v, 0.5, &ones).unwrap());
    let b = gt_backward(&p, dims, &q, &k, &v, 0.5, &plain.out, &plain.lse, &d_out).unwrap();
    assert_eq!(b, gt_backward_dropout(&p, dims, &q, &k, &v, 0.5, &plain.out, &plain.lse, &d_out, &ones).unwrap());
}
