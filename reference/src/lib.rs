//! CPU ground truth for dfgnn: the unfused GT, GAT, GATv2 and AGNN attention of docs/design.md §3,
//! forward and backward, generic over `f32` and `f64`.
//!
//! Run in `f64` this crate is the oracle every fused kernel is checked against; run in `f32` it is
//! the naive baseline of the tolerance rule "fused error ≤ 2 × naive error, both against `f64`"
//! (see [`precision`]). It is allowed to be slow: plain loops, one pass per step, no threads.
//!
//! # Conventions
//! - The graph is a [`Pattern`]: CSR rows are destinations, row `i` lists its in-neighbours `j`,
//!   and edge `e` of row `i` is `offsets[i] + k`. Duplicates and self loops are ordinary edges,
//!   empty rows give output 0 and gradient 0, and `num_dst ≠ num_src` (bipartite) is allowed
//!   except for AGNN.
//! - Dense node features are row-major `[N, H, F]` slices, element `(n, h, f)` at
//!   `(n*H + h)*F + f`; per-edge arrays are edge-major `[E, H]` (`e*H + h`); per-node scalars such
//!   as the log-sum-exp are `[N, H]`; attention vectors are `[H, F]`.
//! - The softmax is max-subtracted. The forward saves only the per-row log-sum-exp (`−∞` for an
//!   empty row); every backward recomputes alpha from it.
//! - Every function is pure, checks its arguments and returns [`RefError`] instead of panicking.
//!
//! # Example
//! ```
//! use dfgnn_reference::{Dims, Pattern, default_gt_scale, gt_backward, gt_forward};
//!
//! // Destination 0 attends to sources 0 and 1; destination 1 has no in-neighbours.
//! let (offsets, columns) = ([0u64, 2, 2], [0u32, 1]);
//! let pattern = Pattern::new(2, 2, &offsets, &columns)?;
//! let dims = Dims { heads: 1, feat: 2 };
//! let (q, k, v) = ([1.0, 0.0, 0.5, 0.5], [1.0, 0.0, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0]);
//! let c = default_gt_scale::<f64>(dims.feat);
//! let fwd = gt_forward(&pattern, dims, &q, &k, &v, c)?;
//! assert_eq!(&fwd.out[2..], &[0.0, 0.0]);
//! assert_eq!(fwd.lse[1], f64::NEG_INFINITY);
//! let d_out = [1.0; 4];
//! let grads = gt_backward(&pattern, dims, &q, &k, &v, c, &fwd.out, &fwd.lse, &d_out)?;
//! assert_eq!(&grads.dq[2..], &[0.0, 0.0]);
//! # Ok::<(), dfgnn_reference::RefError>(())
//! ```
//!
//! # Layout
//! | module | what |
//! |---|---|
//! | [`ops`] | the unfused steps: [`sddmm_dot`], [`row_softmax`], [`spmm`] and their backwards |
//! | [`gt`] | GT (scaled dot-product attention) |
//! | [`gat`] | GAT, from features or from precomputed node scores |
//! | [`gatv2`] | GATv2 (a score over the features: `⟨a, LeakyReLU(xl_j + xr_i)⟩`) |
//! | [`agnn`] | AGNN (cosine attention with temperature β) |
//! | [`dropout`] | attention dropout's mask (Philox-4x32-10 of seed, edge and head), as the kernels make it |
//! | [`precision`] | the project's tolerance rule ([`compare`]), `f32`/`f64` conversions |
//! | [`sparse`] | one head's attention matrix as a `sprs` CSR matrix |
//!
//! # Architecture invariant
//! This crate depends on no other dfgnn crate; it takes its own borrowed CSR view.

pub mod agnn;
pub mod dropout;
mod error;
pub mod gat;
pub mod gatv2;
pub mod gt;
mod num;
pub mod ops;
mod pattern;
pub mod precision;
pub mod sparse;

pub use agnn::{
    AGNN_NORM_EPS, AgnnForward, AgnnGrads, Normalized, agnn_backward, agnn_forward, l2_normalize, l2_normalize_backward,
};
pub use dropout::{dropout_factors, dropout_keep, dropout_threshold, philox4x32_10};
pub use error::RefError;
pub use gat::{
    EdgeScoreGrads, GatForward, GatGrads, GatPrecomputedGrads, NodeScoreGrads, gat_backward, gat_backward_dropout,
    gat_backward_precomputed, gat_backward_precomputed_dropout, gat_edge_scores, gat_edge_scores_backward, gat_forward,
    gat_forward_dropout, gat_forward_precomputed, gat_forward_precomputed_dropout, gat_node_scores,
    gat_node_scores_backward,
};
pub use gatv2::{
    GatV2Forward, GatV2Grads, GatV2ScoreGrads, gatv2_backward, gatv2_backward_dropout, gatv2_edge_scores,
    gatv2_edge_scores_backward, gatv2_forward, gatv2_forward_dropout,
};
pub use gt::{GtForward, GtGrads, default_gt_scale, gt_backward, gt_backward_dropout, gt_forward, gt_forward_dropout};
pub use ops::{
    SddmmGrads, SpmmGrads, alpha_from_lse, attention_delta, row_softmax, row_softmax_backward,
    row_softmax_backward_with_delta, sddmm_backward, sddmm_dot, spmm, spmm_backward,
};
pub use pattern::{Dims, Pattern};
pub use precision::{
    Check, NAIVE_ERROR_FACTOR, RELATIVE_FLOOR, allowed_error, compare, compare_at_scale, compare_scalar, downcast,
    magnitude, max_abs_diff, upcast,
};
pub use sparse::attention_csmat;
