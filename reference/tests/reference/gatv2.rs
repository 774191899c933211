//! GATv2: gradient checks for every input (square and bipartite graphs) by central differences,
//! and a dense forward oracle that does not use the CSR edge order.

use dfgnn_reference::{
    Dims, dropout_factors, gatv2_backward, gatv2_backward_dropout, gatv2_forward, gatv2_forward_dropout,
};

use crate::common::{
    DIMS, Graph, assert_close, assert_gradient, dense_attention, dense_len, max_abs, rng, test_graphs, uniform,
};

const SLOPE: f64 = 0.2;

struct Inputs {
    xl: Vec<f64>,
    xr: Vec<f64>,
    a: Vec<f64>,
    d_out: Vec<f64>,
}

fn inputs(g: &Graph, dims: Dims, seed: u64) -> Inputs {
    let mut r = rng(seed);
    Inputs {
        xl: uniform(&mut r, dense_len(g.num_src, dims)),
        xr: uniform(&mut r, dense_len(g.num_dst, dims)),
        // An attention vector of norm ~2 spreads the scores.
        a: uniform(&mut r, dims.heads * dims.feat).iter().map(|x| 2.0 * x).collect(),
        d_out: uniform(&mut r, dense_len(g.num_dst, dims)),
    }
}

#[test]
fn gatv2_gradients_match_central_differences() {
    for (gi, g) in test_graphs(70).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let x = inputs(g, dims, 700 + gi as u64);
            let fwd = gatv2_forward(&p, dims, &x.xl, &x.xr, &x.a, SLOPE).unwrap();
            let grads = gatv2_backward(&p, dims, &x.xl, &x.xr, &x.a, SLOPE, &fwd.out, &fwd.lse, &x.d_out).unwrap();
            let ctx = format!("graph {gi} ({}x{}), {dims:?}", g.num_dst, g.num_src);
            let run = |xl: &[f64], xr: &[f64], a: &[f64]| gatv2_forward(&p, dims, xl, xr, a, SLOPE).unwrap().out;
            let d = &x.d_out;
            assert_gradient(&format!("{ctx}: dxl"), &x.xl, &grads.dxl, d, |v| run(v, &x.xr, &x.a));
            assert_gradient(&format!("{ctx}: dxr"), &x.xr, &grads.dxr, d, |v| run(&x.xl, v, &x.a));
            assert_gradient(&format!("{ctx}: da"), &x.a, &grads.da, d, |v| run(&x.xl, &x.xr, v));
            assert!(max_abs(&grads.dxl) > 1e-2 && max_abs(&grads.da) > 1e-3, "{ctx}");
            assert!(max_abs(&grads.dxr) > 1e-3, "{ctx}");
        }
    }
}

#[test]
fn gatv2_forward_matches_dense_attention() {
    for (gi, g) in test_graphs(80).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let x = inputs(g, dims, 800 + gi as u64);
            let fwd = gatv2_forward(&p, dims, &x.xl, &x.xr, &x.a, SLOPE).unwrap();
            let (hs, f) = (dims.heads, dims.feat);
            let score = |i: usize, j: usize, h: usize| -> f64 {
                (0..f)
                    .map(|t| {
                        let z = x.xl[(j * hs + h) * f + t] + x.xr[(i * hs + h) * f + t];
                        x.a[h * f + t] * if z > 0.0 { z } else { SLOPE * z }
                    })
                    .sum()
            };
            let (out, lse) = dense_attention(g, dims, score, &x.xl);
            assert_close("out", &fwd.out, &out, 1e-12);
            assert_close("lse", &fwd.lse, &lse, 1e-12);
        }
    }
}

#[test]
fn gatv2_dropout_gradients_match_central_differences() {
    for (gi, g) in test_graphs(90).iter().enumerate() {
        let p = g.pattern();
        for dims in DIMS {
            let x = inputs(g, dims, 900 + gi as u64);
            let m = dropout_factors(gi as u64, 0.4, p.num_edges(), dims.heads);
            let fwd = gatv2_forward_dropout(&p, dims, &x.xl, &x.xr, &x.a, SLOPE, &m).unwrap();
            let grads =
                gatv2_backward_dropout(&p, dims, &x.xl, &x.xr, &x.a, SLOPE, &fwd.out, &fwd.lse, &x.d_out, &m).unwrap();
            let ctx = format!("dropout, graph {gi} ({}x{}), {dims:?}", g.num_dst, g.num_src);
            let run =
                |xl: &[f64], xr: &[f64], a: &[f64]| gatv2_forward_dropout(&p, dims, xl, xr, a, SLOPE, &m).unwrap().out;
            let d = &x.d_out;
            assert_gradient(&format!("{ctx}: dxl"), &x.xl, &grads.dxl, d, |v| run(v, &x.xr, &x.a));
            assert_gradient(&format!("{ctx}: dxr"), &x.xr, &grads.dxr, d, |v| run(&x.xl, v, &x.a));
            assert_gradient(&format!("{ctx}: da"), &x.a, &grads.da, d, |v| run(&x.xl, &x.xr, v));
        }
    }
}

#[test]
fn gatv2_dropout_with_every_edge_kept_unscaled_is_gatv2() {
    let g = &test_graphs(91)[0];
    let p = g.pattern();
    let dims = DIMS[0];
    let x = inputs(g, dims, 91);
    let ones = vec![1.0; p.num_edges() * dims.heads];
    let plain = gatv2_forward(&p, dims, &x.xl, &x.xr, &x.a, SLOPE).unwrap();
    let masked = gatv2_forward_dropout(&p, dims, &x.xl, &x.xr, &x.a, SLOPE, &ones).unwrap();
    assert_eq!(plain, masked);
    let b = gatv2_backward(&p, dims, &x.xl, &x.xr, &x.a, SLOPE, &plain.out, &plain.lse, &x.d_out).unwrap();
    let bm =
        gatv2_backward_dropout(&p, dims, &x.xl, &x.xr, &x.a, SLOPE, &plain.out, &plain.lse, &x.d_out, &ones).unwrap();
    assert_eq!(b, bm);
}
