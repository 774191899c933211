//! The unfused steps on their own: SDDMM against per-pair dot products, softmax properties (rows
//! sum to 1, lse, shift invariance, huge scores, empty and all-−∞ rows), alpha recomputed from the
//! lse, the two forms of the softmax backward, and SpMM (forward and backward) against `sprs`.

use dfgnn_reference::{
    Dims, alpha_from_lse, attention_csmat, attention_delta, row_softmax, row_softmax_backward,
    row_softmax_backward_with_delta, sddmm_backward, sddmm_dot, spmm, spmm_backward,
};
use sprs::prod::{mul_acc_mat_vec_csc, mul_acc_mat_vec_csr};

use crate::common::{Graph, assert_close, assert_gradient, dense_len, max_abs, rng, test_graphs, uniform};

/// A graph with every corner case and random `[E, H]` scores.
fn scored_graph(seed: u64, heads: usize) -> (Graph, Vec<f64>) {
    let g = Graph::random(seed, 9, 7);
    let scores = uniform(&mut rng(seed + 1), g.num_edges() * heads).iter().map(|s| 4.0 * s).collect();
    (g, scores)
}

#[test]
fn generated_graphs_have_every_corner_case() {
    for g in test_graphs(1) {
        let degrees: Vec<usize> = (0..g.num_dst).map(|i| g.row(i).len()).collect();
        assert!(degrees.contains(&0), "an empty row");
        assert!(*degrees.iter().max().unwrap() > 3 * g.num_src, "a super node");
        let has_dup = (0..g.num_dst)
            .filter(|&i| i != degrees.iter().position(|&d| d > 3 * g.num_src).unwrap())
            .any(|i| (0..g.num_src).any(|j| g.multiplicity(i, j) > 1));
        assert!(has_dup, "a duplicate edge outside the super node");
        if g.num_dst == g.num_src {
            assert!((0..g.num_dst).any(|i| g.multiplicity(i, i) > 0), "a self loop");
        }
    }
}

#[test]
fn sddmm_is_the_scaled_dot_product_of_each_edge() {
    let g = Graph::random(2, 6, 4);
    let dims = Dims { heads: 2, feat: 3 };
    let mut r = rng(3);
    let q = uniform(&mut r, dense_len(6, dims));
    let k = uniform(&mut r, dense_len(4, dims));
    let s = sddmm_dot(&g.pattern(), dims, &q, &k, 0.5).unwrap();
    let mut e = 0;
    for i in 0..g.num_dst {
        for &j in g.row(i) {
            for h in 0..2 {
                let want: f64 = (0..3).map(|f| q[(i * 2 + h) * 3 + f] * k[(j as usize * 2 + h) * 3 + f]).sum();
                assert!((s[e * 2 + h] - 0.5 * want).abs() < 1e-15);
            }
            e += 1;
        }
    }
}

#[test]
fn softmax_rows_sum_to_one_and_lse_is_the_log_partition() {
    let heads = 3;
    let (g, scores) = scored_graph(4, heads);
    let (alpha, lse) = row_softmax(&g.pattern(), heads, &scores).unwrap();
    for i in 0..g.num_dst {
        let edges = g.offsets[i] as usize..g.offsets[i + 1] as usize;
        for h in 0..heads {
            let l = lse[i * heads + h];
            if edges.is_empty() {
                assert_eq!(l, f64::NEG_INFINITY, "empty row {i}");
                continue;
            }
            let sum: f64 = edges.clone().map(|e| alpha[e * heads + h]).sum();
            assert!((sum - 1.0).abs() < 1e-14, "row {i} head {h}: sum {sum}");
            let z: f64 = edges.clone().map(|e| scores[e * heads + h].exp()).sum();
            assert!((l - z.ln()).abs() < 1e-13, "row {i} head {h}: lse");
            for e in edges.clone() {
                let a = alpha[e * heads + h];
                assert!(a > 0.0 && a <= 1.0);
                assert!((a - (scores[e * heads + h] - l).exp()).abs() < 1e-14);
            }
        }
    }
}

#[test]
fn softmax_is_invariant_to_a_per_row_shift() {
    let heads = 2;
    let (g, scores) = scored_graph(5, heads);
    let p = g.pattern();
    let shift = |i: usize, h: usize| 100.0 * (i as f64) - 37.5 * (h as f64);
    let mut shifted = scores.clone();
    for i in 0..g.num_dst {
        for e in g.offsets[i] as usize..g.offsets[i + 1] as usize {
            for h in 0..heads {
                shifted[e * heads + h] += shift(i, h);
            }
        }
    }
    let (a0, l0) = row_softmax(&p, heads, &scores).unwrap();
    let (a1, l1) = row_softmax(&p, heads, &shifted).unwrap();
    assert_close("alpha", &a1, &a0, 1e-13);
    for i in 0..g.num_dst {
        for h in 0..heads {
            let (x, y) = (l0[i * heads + h], l1[i * heads + h]);
            assert!(x == y || (y - x - shift(i, h)).abs() < 1e-12, "lse row {i}");
        }
    }
}

#[test]
fn softmax_handles_huge_and_minus_infinite_scores() {
    let g = Graph::from_rows(3, &[&[0, 1, 2], &[0, 1], &[2]]);
    let inf = f64::NEG_INFINITY;
    let scores = [1000.0, 999.0, -1000.0, inf, inf, 5.0];
    let (alpha, lse) = row_softmax(&g.pattern(), 1, &scores).unwrap();
    let z = 1.0 + (-1.0f64).exp();
    assert_close("huge row", &alpha[..3], &[1.0 / z, (-1.0f64).exp() / z, 0.0], 1e-15);
    assert!((lse[0] - (1000.0 + z.ln())).abs() < 1e-12);
    // A row whose scores are all −∞ behaves like an empty row instead of giving NaN.
    assert_eq!(&alpha[3..5], &[0.0, 0.0]);
    assert_eq!(lse[1], inf);
    assert_eq!((alpha[5], lse[2]), (1.0, 5.0));
    // exp(s − lse) inherits the rounding of lse ≈ 1000, about 1000·ε relative.
    let again = alpha_from_lse(&g.pattern(), 1, &scores, &lse).unwrap();
    assert_close("from lse", &again, &alpha, 1e-12);
}

#[test]
fn alpha_recomputed_from_lse_matches_the_softmax() {
    let heads = 3;
    let (g, scores) = scored_graph(6, heads);
    let p = g.pattern();
    let (alpha, lse) = row_softmax(&p, heads, &scores).unwrap();
    let again = alpha_from_lse(&p, heads, &scores, &lse).unwrap();
    assert_close("alpha", &again, &alpha, 1e-14);
}

#[test]
fn softmax_backward_matches_central_differences_and_the_delta_form() {
    let heads = 2;
    let (g, scores) = scored_graph(7, heads);
    let p = g.pattern();
    let w = uniform(&mut rng(8), scores.len());
    let (alpha, _) = row_softmax(&p, heads, &scores).unwrap();
    let ds = row_softmax_backward(&p, heads, &alpha, &w).unwrap();
    assert_gradient("softmax", &scores, &ds, &w, |s| row_softmax(&p, heads, s).unwrap().0);
    assert!(max_abs(&ds) > 1e-2);
    // With d_alpha = dO·v and D = dO·(Σ alpha v), the delta form gives the same ds.
    let dims = Dims { heads, feat: 3 };
    let mut r = rng(9);
    let v = uniform(&mut r, dense_len(g.num_src, dims));
    let d_out = uniform(&mut r, dense_len(g.num_dst, dims));
    let out = spmm(&p, dims, &alpha, &v).unwrap();
    let d_alpha = spmm_backward(&p, dims, &alpha, &v, &d_out).unwrap().d_alpha;
    let delta = attention_delta(g.num_dst, dims, &out, &d_out).unwrap();
    let a = row_softmax_backward(&p, heads, &alpha, &d_alpha).unwrap();
    let b = row_softmax_backward_with_delta(&p, heads, &alpha, &d_alpha, &delta).unwrap();
    assert_close("delta form", &b, &a, 1e-14);
}

#[test]
fn sddmm_and_spmm_backward_match_central_differences() {
    let g = Graph::random(11, 8, 6);
    let p = g.pattern();
    let dims = Dims { heads: 3, feat: 2 };
    let mut r = rng(12);
    let q = uniform(&mut r, dense_len(8, dims));
    let k = uniform(&mut r, dense_len(6, dims));
    let alpha = uniform(&mut r, g.num_edges() * 3);
    let w = uniform(&mut r, g.num_edges() * 3);
    let d_out = uniform(&mut r, dense_len(8, dims));
    let sd = sddmm_backward(&p, dims, &q, &k, &w, 0.3).unwrap();
    assert_gradient("sddmm dq", &q, &sd.dq, &w, |x| sddmm_dot(&p, dims, x, &k, 0.3).unwrap());
    assert_gradient("sddmm dk", &k, &sd.dk, &w, |x| sddmm_dot(&p, dims, &q, x, 0.3).unwrap());
    let sp = spmm_backward(&p, dims, &alpha, &k, &d_out).unwrap();
    assert_gradient("spmm d_alpha", &alpha, &sp.d_alpha, &d_out, |x| spmm(&p, dims, x, &k).unwrap());
    assert_gradient("spmm dv", &k, &sp.dv, &d_out, |x| spmm(&p, dims, &alpha, x).unwrap());
}

/// Column `(h, f)` of an `[n, H, F]` array.
fn column(x: &[f64], n: usize, dims: Dims, h: usize, f: usize) -> Vec<f64> {
    (0..n).map(|i| x[(i * dims.heads + h) * dims.feat + f]).collect()
}

#[test]
fn spmm_and_its_column_pass_match_sprs_products() {
    for g in test_graphs(13) {
        let p = g.pattern();
        let dims = Dims { heads: 2, feat: 5 };
        let mut r = rng(14);
        let scores = uniform(&mut r, g.num_edges() * dims.heads);
        let v = uniform(&mut r, dense_len(g.num_src, dims));
        let d_out = uniform(&mut r, dense_len(g.num_dst, dims));
        let (alpha, _) = row_softmax(&p, dims.heads, &scores).unwrap();
        let out = spmm(&p, dims, &alpha, &v).unwrap();
        let dv = spmm_backward(&p, dims, &alpha, &v, &d_out).unwrap().dv;
        for h in 0..dims.heads {
            let a = attention_csmat(&p, dims.heads, h, &alpha).unwrap();
            assert_eq!(a.shape(), (g.num_dst, g.num_src));
            assert!(a.nnz() < g.num_edges(), "sprs should merge the duplicate edges");
            for f in 0..dims.feat {
                let mut want = vec![0.0; g.num_dst];
                mul_acc_mat_vec_csr(a.view(), column(&v, g.num_src, dims, h, f), &mut want);
                assert_close("out", &column(&out, g.num_dst, dims, h, f), &want, 1e-14);
                // Aᵀ·dO, through sprs's CSC product on the transposed view: the column pass.
                let mut want_dv = vec![0.0; g.num_src];
                let d = column(&d_out, g.num_dst, dims, h, f);
                mul_acc_mat_vec_csc(a.transpose_view(), &d, &mut want_dv);
                assert_close("dv", &column(&dv, g.num_src, dims, h, f), &want_dv, 1e-14);
            }
        }
    }
}
