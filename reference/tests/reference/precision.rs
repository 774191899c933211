//! The naive `f32` run against the `f64` oracle (the baseline of the tolerance rule), and the
//! semantics of the precision helpers.

use dfgnn_reference::{
    Dims, NAIVE_ERROR_FACTOR, RELATIVE_FLOOR, agnn_backward, agnn_forward, allowed_error, compare, compare_scalar,
    default_gt_scale, downcast, gat_backward, gat_forward, gt_backward, gt_forward, max_abs_diff, upcast,
};

use crate::common::{Graph, dense_len, rng, uniform};

/// Asserts that the f32 result differs from the f64 one by a small, non-zero amount.
#[track_caller]
fn assert_naive_error(what: &str, naive: &[f32], oracle: &[f64], bound: f64) {
    let err = max_abs_diff(naive, oracle);
    assert!(err > 0.0, "{what}: f32 and f64 agree exactly; the baseline would be 0");
    assert!(err < bound, "{what}: naive f32 error {err:e} >= {bound:e}");
}

#[test]
fn naive_f32_differs_from_f64_by_a_small_nonzero_amount() {
    let g = Graph::random(21, 300, 300);
    let p = g.pattern();
    let dims = Dims { heads: 2, feat: 16 };
    let n = dense_len(300, dims);
    let mut r = rng(22);
    let [q, k, v, d_out] = [0; 4].map(|_| uniform(&mut r, n));
    let a: Vec<f64> = uniform(&mut r, 64);
    let [q32, k32, v32, d32] = [&q, &k, &v, &d_out].map(|x| downcast(x));
    let a32 = downcast(&a);
    // Inputs are f32-representable, so the difference is the f32 arithmetic alone.
    let [q, k, v, d_out] = [&q32, &k32, &v32, &d32].map(|x| upcast(x));
    let a = upcast(&a32);
    let c = default_gt_scale::<f64>(16);

    let f64_gt = gt_forward(&p, dims, &q, &k, &v, c).unwrap();
    let f32_gt = gt_forward(&p, dims, &q32, &k32, &v32, c as f32).unwrap();
    assert_naive_error("gt out", &f32_gt.out, &f64_gt.out, 1e-5);
    assert_naive_error("gt lse", &f32_gt.lse, &f64_gt.lse, 1e-5);
    let g64 = gt_backward(&p, dims, &q, &k, &v, c, &f64_gt.out, &f64_gt.lse, &d_out).unwrap();
    let g32 = gt_backward(&p, dims, &q32, &k32, &v32, c as f32, &f32_gt.out, &f32_gt.lse, &d32).unwrap();
    assert_naive_error("gt dq", &g32.dq, &g64.dq, 1e-5);
    assert_naive_error("gt dk", &g32.dk, &g64.dk, 1e-5);
    assert_naive_error("gt dv", &g32.dv, &g64.dv, 1e-5);

    let (ad, asrc) = a.split_at(32);
    let (ad32, asrc32) = a32.split_at(32);
    let f64_gat = gat_forward(&p, dims, &v, &q, ad, asrc, 0.2).unwrap();
    let f32_gat = gat_forward(&p, dims, &v32, &q32, ad32, asrc32, 0.2).unwrap();
    assert_naive_error("gat out", &f32_gat.out, &f64_gat.out, 1e-5);
    let (o64, l64) = (&f64_gat.out, &f64_gat.lse);
    let (o32, l32) = (&f32_gat.out, &f32_gat.lse);
    let g64 = gat_backward(&p, dims, &v, &q, ad, asrc, 0.2, o64, l64, &d_out).unwrap();
    let g32 = gat_backward(&p, dims, &v32, &q32, ad32, asrc32, 0.2, o32, l32, &d32).unwrap();
    assert_naive_error("gat dh", &g32.dh, &g64.dh, 1e-5);
    assert_naive_error("gat da_src", &g32.da_src, &g64.da_src, 1e-4);

    let f64_agnn = agnn_forward(&p, dims, &v, 2.0).unwrap();
    let f32_agnn = agnn_forward(&p, dims, &v32, 2.0).unwrap();
    assert_naive_error("agnn out", &f32_agnn.out, &f64_agnn.out, 1e-5);
    let (o64, l64) = (&f64_agnn.out, &f64_agnn.lse);
    let (o32, l32) = (&f32_agnn.out, &f32_agnn.lse);
    let g64 = agnn_backward(&p, dims, &v, 2.0, o64, l64, &d_out).unwrap();
    let g32 = agnn_backward(&p, dims, &v32, 2.0, o32, l32, &d32).unwrap();
    assert_naive_error("agnn dh", &g32.dh, &g64.dh, 1e-5);
    assert_naive_error("agnn d_beta", &[g32.d_beta], &[g64.d_beta], 1e-4);
}

#[test]
fn max_abs_diff_counts_disagreements_without_a_finite_difference_as_infinite() {
    let inf = f64::INFINITY;
    assert_eq!(max_abs_diff::<f32>(&[], &[]), 0.0);
    assert_eq!(max_abs_diff(&[1.0f32, 2.0, -3.0], &[1.0, 2.5, -3.25]), 0.5);
    assert_eq!(max_abs_diff(&[1.0f32], &[1.0, 2.0]), inf);
    assert_eq!(max_abs_diff(&[f32::NAN, 1.0], &[f64::NAN, 1.0]), 0.0);
    assert_eq!(max_abs_diff(&[f32::NAN], &[1.0]), inf);
    assert_eq!(max_abs_diff(&[1.0f32], &[f64::NAN]), inf);
    assert_eq!(max_abs_diff(&[f32::INFINITY], &[inf]), 0.0);
    assert_eq!(max_abs_diff(&[f32::INFINITY], &[-inf]), inf);
    assert_eq!(max_abs_diff(&[f32::NEG_INFINITY], &[1e300]), inf);
    assert_eq!(max_abs_diff(&[0.1f32], &[0.1]), (f64::from(0.1f32) - 0.1).abs());
    assert_eq!(max_abs_diff(&[0.5f64, 0.25], &[0.5, 0.5]), 0.25);
}

#[test]
fn tolerance_rule_and_conversions() {
    assert_eq!(NAIVE_ERROR_FACTOR, 2.0);
    assert_eq!(allowed_error(1e-6, 0.5), 2e-6 + RELATIVE_FLOOR);
    assert_eq!(allowed_error(1e-6, 10.0), 2e-6 + 10.0 * RELATIVE_FLOOR);
    // The naive run passes its own rule; a result off by a floor and a half does not.
    let (naive, oracle) = ([1.0f32 + 1e-7], [1.0f64]);
    assert!(compare("x", &naive, &naive, &oracle).passed());
    assert!(!compare("x", &[1.0 + 1.5 * RELATIVE_FLOOR as f32 + 2e-7], &naive, &oracle).passed());
    assert!(compare_scalar("s", 0.0, 0.0, 0.0, 100.0).bound >= 100.0 * RELATIVE_FLOOR);
    let x = [0.1f32, -3.5, 1e-30, f32::MAX];
    assert_eq!(downcast(&upcast(&x)), x);
    assert_eq!(downcast(&[0.1f64]), [0.1f32]);
}
