//! GAT: gradient checks for every input of both variants (square and bipartite), the shared
//! feature case of a square graph, a dense forward oracle, the LeakyReLU edge scores, and both
//! variants under attention dropout.

use dfgnn_reference::{
    Dims, dropout_factors, gat_backward, gat_backward_dropout, gat_backward_precomputed,
    gat_backward_precomputed_dropout, gat_edge_scores, gat_forward, gat_forward_dropout, gat_forward_precomputed,
    gat_forward_precomputed_dropout, gat_node_scores,
};

use crate::common::{
    DIMS, Graph, assert_close, assert_gradient, dense_attention, dense_len, max_abs, rng, test_graphs, uniform,
};

const SLOPE: f64 = 0.2;

struct Inputs {
    h: Vec<f64>,
    h_dst: Vec<f64>,
    a_dst: Vec<f64>,
    a_src: Vec<f64>,
    d_out: Vec<f64>,
}

fn inputs(g: &Graph, dims: Dims, seed: u64) -> Inputs {
    let mut r = rng(seed);
    Inputs {
        h: uniform(&mut r, dense_len(g.num_src, dims)),
        h_dst: uniform(&mut r, dense_len(g.num_dst, dims)),
        // Attention vectors of norm ~2 make the scores span both LeakyReLU branches widely.
        a_dst: uniform(&mut r, dims.heads * dims.feat).iter().map(|x| 2.0 * x).collect(),
        a_src: uniform(&mut r, dims.heads * dims.feat).iter().map(|x| 2.0 * x).collect(),
        d_out: uniform(&mut r, dense_len(g.num_dst, dims)),
    }
}

#[test]
fn gat_gradients_match_central_differences() {
    for (gi, g) in test_graphs(30).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let x = inputs(g, dims, 300 + gi as u64);
            let fwd = gat_forward(&p, dims, &x.h, &x.h_dst, &x.a_dst, &x.a_src, SLOPE).unwrap();
            let (out, lse) = (&fwd.out, &fwd.lse);
            let grads = gat_backward(&p, dims, &x.h, &x.h_dst, &x.a_dst, &x.a_src, SLOPE, out, lse, &x.d_out).unwrap();
            let ctx = format!("graph {gi} ({}x{}), {dims:?}", g.num_dst, g.num_src);
            let run = |h: &[f64], h_dst: &[f64], a_dst: &[f64], a_src: &[f64]| {
                gat_forward(&p, dims, h, h_dst, a_dst, a_src, SLOPE).unwrap().out
            };
            let d = &x.d_out;
            assert_gradient(&format!("{ctx}: dh"), &x.h, &grads.dh, d, |v| run(v, &x.h_dst, &x.a_dst, &x.a_src));
            assert_gradient(&format!("{ctx}: dh_dst"), &x.h_dst, &grads.dh_dst, d, |v| {
                run(&x.h, v, &x.a_dst, &x.a_src)
            });
            assert_gradient(&format!("{ctx}: da_dst"), &x.a_dst, &grads.da_dst, d, |v| {
                run(&x.h, &x.h_dst, v, &x.a_src)
            });
            assert_gradient(&format!("{ctx}: da_src"), &x.a_src, &grads.da_src, d, |v| {
                run(&x.h, &x.h_dst, &x.a_dst, v)
            });
            assert!(max_abs(&grads.dh) > 1e-2 && max_abs(&grads.da_src) > 1e-3, "{ctx}");
            // With F = 1 every row may sit on one side of the LeakyReLU kink, where el_i cancels
            // in the row's softmax and dh_dst is legitimately 0.
            if dims.feat > 1 {
                assert!(max_abs(&grads.dh_dst) > 1e-2, "{ctx}");
            }
        }
    }
}

#[test]
fn gat_precomputed_gradients_match_central_differences() {
    for (gi, g) in test_graphs(40).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let mut r = rng(400 + gi as u64);
            let h = uniform(&mut r, dense_len(g.num_src, dims));
            let el = uniform(&mut r, g.num_dst * dims.heads);
            let er = uniform(&mut r, g.num_src * dims.heads);
            let d_out = uniform(&mut r, dense_len(g.num_dst, dims));
            let fwd = gat_forward_precomputed(&p, dims, &h, &el, &er, SLOPE).unwrap();
            let (out, lse) = (&fwd.out, &fwd.lse);
            let grads = gat_backward_precomputed(&p, dims, &h, &el, &er, SLOPE, out, lse, &d_out).unwrap();
            let ctx = format!("graph {gi} ({}x{}), {dims:?}", g.num_dst, g.num_src);
            let run =
                |h: &[f64], el: &[f64], er: &[f64]| gat_forward_precomputed(&p, dims, h, el, er, SLOPE).unwrap().out;
            assert_gradient(&format!("{ctx}: dh"), &h, &grads.dh, &d_out, |v| run(v, &el, &er));
            assert_gradient(&format!("{ctx}: d_el"), &el, &grads.d_el, &d_out, |v| run(&h, v, &er));
            assert_gradient(&format!("{ctx}: d_er"), &er, &grads.d_er, &d_out, |v| run(&h, &el, v));
            assert!(max_abs(&grads.d_er) > 1e-3);
        }
    }
}

#[test]
fn square_graph_with_shared_features_sums_both_paths() {
    let g = Graph::random(50, 8, 8);
    let p = g.pattern();
    let dims = Dims { heads: 2, feat: 3 };
    let x = inputs(&g, dims, 51);
    let fwd = gat_forward(&p, dims, &x.h, &x.h, &x.a_dst, &x.a_src, SLOPE).unwrap();
    let grads = gat_backward(&p, dims, &x.h, &x.h, &x.a_dst, &x.a_src, SLOPE, &fwd.out, &fwd.lse, &x.d_out).unwrap();
    let total: Vec<f64> = grads.dh.iter().zip(&grads.dh_dst).map(|(a, b)| a + b).collect();
    assert_gradient("shared h", &x.h, &total, &x.d_out, |h| {
        gat_forward(&p, dims, h, h, &x.a_dst, &x.a_src, SLOPE).unwrap().out
    });
}

#[test]
fn gat_forward_matches_dense_attention_and_the_precomputed_variant() {
    for (gi, g) in test_graphs(60).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let x = inputs(g, dims, 600 + gi as u64);
            let fwd = gat_forward(&p, dims, &x.h, &x.h_dst, &x.a_dst, &x.a_src, SLOPE).unwrap();
            let el = gat_node_scores(g.num_dst, dims, &x.h_dst, &x.a_dst).unwrap();
            let er = gat_node_scores(g.num_src, dims, &x.h, &x.a_src).unwrap();
            let pre = gat_forward_precomputed(&p, dims, &x.h, &el, &er, SLOPE).unwrap();
            assert_eq!(fwd, pre, "the full model is the precomputed one after the node scores");
            let (hs, f) = (dims.heads, dims.feat);
            let node_dot = |feats: &[f64], a: &[f64], n: usize, h: usize| -> f64 {
                (0..f).map(|t| feats[(n * hs + h) * f + t] * a[h * f + t]).sum()
            };
            let score = |i, j, h| {
                let z = node_dot(&x.h_dst, &x.a_dst, i, h) + node_dot(&x.h, &x.a_src, j, h);
                if z > 0.0 { z } else { SLOPE * z }
            };
            let (out, lse) = dense_attention(g, dims, score, &x.h);
            assert_close("out", &fwd.out, &out, 1e-12);
            assert_close("lse", &fwd.lse, &lse, 1e-12);
        }
    }
}

#[test]
fn edge_scores_are_leaky_relu_of_el_plus_er() {
    let g = Graph::from_rows(3, &[&[0, 2], &[1], &[]]);
    let p = g.pattern();
    let el = [0.5, -1.0, 3.0];
    let er = [0.25, 0.75, -2.0];
    let s = gat_edge_scores(&p, 1, &el, &er, 0.1).unwrap();
    // Edges: (0,0): 0.75 > 0; (0,2): -1.5 -> -0.15; (1,1): -0.25 -> -0.025.
    assert_close("scores", &s, &[0.75, -0.15, -0.025], 1e-15);
}

#[test]
fn gat_dropout_gradients_match_central_differences() {
    for (gi, g) in test_graphs(50).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let x = inputs(g, dims, 500 + gi as u64);
            let m = dropout_factors(gi as u64, 0.4, p.num_edges(), dims.heads);
            let (h, h_dst, a_dst, a_src) = (&x.h, &x.h_dst, &x.a_dst, &x.a_src);
            let fwd = gat_forward_dropout(&p, dims, h, h_dst, a_dst, a_src, SLOPE, &m).unwrap();
            let (out, lse) = (&fwd.out, &fwd.lse);
            let grads = gat_backward_dropout(&p, dims, h, h_dst, a_dst, a_src, SLOPE, out, lse, &x.d_out, &m).unwrap();
            let ctx = format!("dropout, graph {gi} ({}x{}), {dims:?}", g.num_dst, g.num_src);
            let run = |h: &[f64], h_dst: &[f64], a_dst: &[f64], a_src: &[f64]| {
                gat_forward_dropout(&p, dims, h, h_dst, a_dst, a_src, SLOPE, &m).unwrap().out
            };
            let d = &x.d_out;
            assert_gradient(&format!("{ctx}: dh"), h, &grads.dh, d, |v| run(v, h_dst, a_dst, a_src));
            assert_gradient(&format!("{ctx}: dh_dst"), h_dst, &grads.dh_dst, d, |v| run(h, v, a_dst, a_src));
            assert_gradient(&format!("{ctx}: da_dst"), a_dst, &grads.da_dst, d, |v| run(h, h_dst, v, a_src));
            assert_gradient(&format!("{ctx}: da_src"), a_src, &grads.da_src, d, |v| run(h, h_dst, a_dst, v));

            let mut r = rng(550 + gi as u64);
            let el = uniform(&mut r, g.num_dst * dims.heads);
            let er = uniform(&mut r, g.num_src * dims.heads);
            let fwd = gat_forward_precomputed_dropout(&p, dims, h, &el, &er, SLOPE, &m).unwrap();
            let (out, lse) = (&fwd.out, &fwd.lse);
            let pre = gat_backward_precomputed_dropout(&p, dims, h, &el, &er, SLOPE, out, lse, &x.d_out, &m).unwrap();
            let run = |h: &[f64], el: &[f64], er: &[f64]| {
                gat_forward_precomputed_dropout(&p, dims, h, el, er, SLOPE, &m).unwrap().out
            };
            assert_gradient(&format!("{ctx}: precomputed dh"), h, &pre.dh, d, |v| run(v, &el, &er));
            assert_gradient(&format!("{ctx}: d el"), &el, &pre.d_el, d, |v| run(h, v, &er));
            assert_gradient(&format!("{ctx}: d er"), &er, &pre.d_er, d, |v| run(h, &el, v));
        }
    }
}

#[test]
fn gat_dropout_with_every_edge_kept_unscaled_is_gat() {
    let g = &test_graphs(51)[0];
    let p = g.pattern();
    let dims = DIMS[0];
    let x = inputs(g, dims, 51);
    let ones = vec![1.0; p.num_edges() * dims.heads];
    let (h, h_dst, a_dst, a_src) = (&x.h, &x.h_dst, &x.a_dst, &x.a_src);
    let plain = gat_forward(&p, dims, h, h_dst, a_dst, a_src, SLOPE).unwrap();
    let masked = gat_forward_dropout(&p, dims, h, h_dst, a_dst, a_src, SLOPE, &ones).unwrap();
    assert_eq!(plain, masked);
    let (out, lse) = (&plain.out, &plain.lse);
    let b = gat_backward(&p, dims, h, h_dst, a_dst, a_src, SLOPE, out, lse, &x.d_out).unwrap();
    let bm = gat_backward_dropout(&p, dims, h, h_dst, a_dst, a_src, SLOPE, out, lse, &x.d_out, &ones).unwrap();
    assert_eq!(b, bm);
}
