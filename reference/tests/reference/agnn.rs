//! AGNN: gradient checks for h and β, a dense cosine-attention oracle, the zero-vector clamp of
//! the normalisation, and the square-graph requirement.

use dfgnn_reference::{
    AGNN_NORM_EPS, Dims, RefError, agnn_backward, agnn_forward, l2_normalize, l2_normalize_backward,
};

use crate::common::{
    DIMS, Graph, assert_close, assert_gradient, dense_attention, dense_len, max_abs, rng, test_graphs, uniform,
};

const BETA: f64 = 1.7;

#[test]
fn agnn_gradients_match_central_differences() {
    let square = test_graphs(70).into_iter().filter(|g| g.num_dst == g.num_src);
    for (gi, g) in square.enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let mut r = rng(700 + gi as u64);
            let h = uniform(&mut r, dense_len(g.num_dst, dims));
            let d_out = uniform(&mut r, dense_len(g.num_dst, dims));
            let fwd = agnn_forward(&p, dims, &h, BETA).unwrap();
            let grads = agnn_backward(&p, dims, &h, BETA, &fwd.out, &fwd.lse, &d_out).unwrap();
            let ctx = format!("graph {gi} ({}x{}), {dims:?}", g.num_dst, g.num_src);
            assert_gradient(&format!("{ctx}: dh"), &h, &grads.dh, &d_out, |x| {
                agnn_forward(&p, dims, x, BETA).unwrap().out
            });
            assert_gradient(&format!("{ctx}: d_beta"), &[BETA], &[grads.d_beta], &d_out, |b| {
                agnn_forward(&p, dims, &h, b[0]).unwrap().out
            });
            // The β check is not vacuous: d_beta is clearly non-zero in every configuration.
            assert!(grads.d_beta.abs() > 1e-4, "{ctx}: d_beta = {}", grads.d_beta);
        }
    }
}

#[test]
fn agnn_forward_matches_dense_cosine_attention() {
    let g = Graph::random(80, 10, 10);
    let p = g.pattern();
    for dims in DIMS {
        let h = uniform(&mut rng(81), dense_len(g.num_dst, dims));
        let fwd = agnn_forward(&p, dims, &h, BETA).unwrap();
        let f = dims.feat;
        let at = |n: usize, hd: usize| &h[(n * dims.heads + hd) * f..][..f];
        let norm = |x: &[f64]| x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let score = |i, j, hd| {
            let (a, b) = (at(i, hd), at(j, hd));
            let cos = a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>() / (norm(a) * norm(b));
            BETA * cos
        };
        let (out, lse) = dense_attention(&g, dims, score, &h);
        assert_close("out", &fwd.out, &out, 1e-12);
        assert_close("lse", &fwd.lse, &lse, 1e-12);
    }
}

#[test]
fn zero_vectors_normalise_to_zero_and_stay_finite() {
    let g = Graph::random(90, 6, 6);
    let p = g.pattern();
    let dims = Dims { heads: 2, feat: 3 };
    let mut h = uniform(&mut rng(91), dense_len(6, dims));
    // Node 0, head 1 is the zero vector.
    h[3..6].fill(0.0);
    let n = l2_normalize(6, dims, &h).unwrap();
    assert_eq!(&n.hn[3..6], &[0.0; 3]);
    assert_eq!(n.norm[1], AGNN_NORM_EPS);
    let d_out = uniform(&mut rng(92), dense_len(6, dims));
    let fwd = agnn_forward(&p, dims, &h, BETA).unwrap();
    let grads = agnn_backward(&p, dims, &h, BETA, &fwd.out, &fwd.lse, &d_out).unwrap();
    assert!(fwd.out.iter().chain(&grads.dh).all(|x| x.is_finite()));
    assert!(grads.d_beta.is_finite());
}

#[test]
fn normalisation_backward_treats_a_clamped_norm_as_constant() {
    let dims = Dims { heads: 1, feat: 3 };
    let h = [0.0, 1e-14, 0.0, 3.0, 0.0, 4.0];
    let d_hn = [1.0, 2.0, 3.0, 1.0, 1.0, 1.0];
    let dh = l2_normalize_backward(2, dims, &h, &d_hn).unwrap();
    assert_close("clamped", &dh[..3], &[1e12, 2e12, 3e12], 1e-3);
    // Node 1: hn = (0.6, 0, 0.8), hn·d_hn = 1.4, dh = (d_hn − 1.4 hn) / 5.
    assert_close("smooth", &dh[3..], &[0.032, 0.2, -0.024], 1e-15);
    assert!(max_abs(&dh) > 0.0);
}

#[test]
fn normalisation_gradient_matches_central_differences() {
    let dims = Dims { heads: 3, feat: 4 };
    let mut r = rng(95);
    let h = uniform(&mut r, dense_len(5, dims));
    let d_hn = uniform(&mut r, dense_len(5, dims));
    let dh = l2_normalize_backward(5, dims, &h, &d_hn).unwrap();
    assert_gradient("l2_normalize", &h, &dh, &d_hn, |x| l2_normalize(5, dims, x).unwrap().hn);
}

#[test]
fn agnn_rejects_a_bipartite_pattern() {
    let g = Graph::random(99, 5, 4);
    let dims = Dims { heads: 1, feat: 2 };
    let h = vec![0.5; dense_len(5, dims)];
    let err = agnn_forward(&g.pattern(), dims, &h, 1.0).unwrap_err();
    assert_eq!(err, RefError::NotSquare { op: "agnn_forward", num_dst: 5, num_src: 4 });
    let z = vec![0.0; dense_len(5, dims)];
    let lse = vec![0.0; 5];
    let err = agnn_backward(&g.pattern(), dims, &h, 1.0, &z, &lse, &z).unwrap_err();
    assert!(matches!(err, RefError::NotSquare { op: "agnn_backward", .. }));
}
