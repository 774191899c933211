//! Misuse is an error, never a panic: each pattern rule, each shape, zero dimensions, overflowing
//! sizes, and out-of-range arguments.

use dfgnn_reference::{
    Dims, Pattern, RefError, attention_csmat, gat_backward, gt_backward, gt_forward, row_softmax, spmm,
};

use crate::common::Graph;

fn pattern_error(num_dst: usize, num_src: usize, offsets: &[u64], columns: &[u32]) -> RefError {
    Pattern::new(num_dst, num_src, offsets, columns).unwrap_err()
}

#[test]
fn each_pattern_rule_is_checked() {
    let bad = |what, at| RefError::InvalidPattern { what, at };
    assert_eq!(pattern_error(2, 3, &[0, 1], &[0]), bad("offsets length should be num_dst + 1", 2));
    assert_eq!(pattern_error(0, 0, &[], &[]), bad("offsets length should be num_dst + 1", 0));
    assert_eq!(pattern_error(usize::MAX, 1, &[0], &[]), bad("offsets length should be num_dst + 1", 1));
    assert_eq!(pattern_error(2, 3, &[1, 1, 2], &[0, 1]), bad("offsets should start at 0", 0));
    assert_eq!(pattern_error(3, 3, &[0, 2, 1, 2], &[0, 1]), bad("offsets should be non-decreasing", 2));
    assert_eq!(pattern_error(2, 3, &[0, 1, 3], &[0, 1]), bad("the last offset should equal columns.len()", 2));
    assert_eq!(pattern_error(2, 3, &[0, 1, 3], &[0, 1, 3]), bad("column index should be < num_src", 2));
    assert_eq!(pattern_error(2, 0, &[0, 0, 1], &[0]), bad("column index should be < num_src", 0));
    let ok = Pattern::new(0, 0, &[0], &[]).unwrap();
    assert_eq!((ok.num_edges(), ok.is_square()), (0, true));
}

#[test]
fn a_hand_built_invalid_pattern_is_rejected_by_every_op() {
    let p = Pattern { num_dst: 2, num_src: 2, offsets: &[0, 1, 5], columns: &[0, 1] };
    let dims = Dims { heads: 1, feat: 1 };
    let x = [0.0f64; 2];
    assert!(matches!(gt_forward(&p, dims, &x, &x, &x, 1.0), Err(RefError::InvalidPattern { .. })));
    assert!(matches!(row_softmax(&p, 1, &x), Err(RefError::InvalidPattern { .. })));
    assert!(matches!(spmm(&p, dims, &x, &x), Err(RefError::InvalidPattern { .. })));
}

#[test]
fn shape_mismatches_name_the_argument() {
    let g = Graph::from_rows(3, &[&[0, 2], &[1]]);
    let p = g.pattern();
    let dims = Dims { heads: 2, feat: 3 };
    let q = vec![0.1f64; 12];
    let k = vec![0.2f64; 18];
    let err = gt_forward(&p, dims, &q, &k[..17], &k, 1.0).unwrap_err();
    assert_eq!(
        err,
        RefError::ShapeMismatch { op: "gt_forward", arg: "k", layout: "[num_src, heads, feat]", expected: 18, got: 17 }
    );
    assert_eq!(err.to_string(), "gt_forward: argument `k` [num_src, heads, feat] should have 18 elements, got 17");
    let fwd = gt_forward(&p, dims, &q, &k, &k, 1.0).unwrap();
    let err = gt_backward(&p, dims, &q, &k, &k, 1.0, &fwd.out, &fwd.lse[..3], &q).unwrap_err();
    assert!(matches!(err, RefError::ShapeMismatch { arg: "lse", expected: 4, got: 3, .. }));
    let a = vec![0.0f64; 6];
    let err = gat_backward(&p, dims, &k, &q, &a, &a[..5], 0.2, &q, &[0.0; 4], &q).unwrap_err();
    assert!(matches!(err, RefError::ShapeMismatch { arg: "a_src", .. }));
    let err = row_softmax(&p, 2, &[0.0f64; 5]).unwrap_err();
    assert!(matches!(err, RefError::ShapeMismatch { arg: "scores", expected: 6, .. }));
}

#[test]
fn zero_dims_overflow_and_bad_head_index_are_errors() {
    let g = Graph::from_rows(2, &[&[0, 1], &[1]]);
    let p = g.pattern();
    let none: [f64; 0] = [];
    let err = gt_forward(&p, Dims { heads: 0, feat: 3 }, &none, &none, &none, 1.0).unwrap_err();
    assert!(matches!(err, RefError::InvalidArgument { what: "heads should be at least 1", .. }));
    let err = spmm(&p, Dims { heads: 1, feat: 0 }, &[0.0f64; 3], &none).unwrap_err();
    assert!(matches!(err, RefError::InvalidArgument { what: "feat should be at least 1", .. }));
    let huge = Dims { heads: usize::MAX / 2, feat: 3 };
    let err = gt_forward(&p, huge, &none, &none, &none, 1.0).unwrap_err();
    assert!(matches!(err, RefError::InvalidArgument { what: "array size overflows usize", .. }));
    let err = spmm(&p, Dims { heads: 1 << 40, feat: 1 << 30 }, &none, &none).unwrap_err();
    assert!(matches!(err, RefError::InvalidArgument { what: "array size overflows usize", .. }));
    // With no sources every input is empty, so only the output size can overflow.
    let rows = Graph::from_rows(0, &[&[], &[], &[], &[], &[], &[], &[], &[]]);
    let wide = Dims { heads: 1 << 31, feat: 1 << 31 };
    let err = spmm(&rows.pattern(), wide, &none, &none).unwrap_err();
    assert!(matches!(err, RefError::InvalidArgument { what: "array size overflows usize", .. }));
    let err = attention_csmat(&p, 2, 2, &[0.0f64; 6]).unwrap_err();
    assert!(matches!(err, RefError::InvalidArgument { what: "head should be < heads", .. }));
}
