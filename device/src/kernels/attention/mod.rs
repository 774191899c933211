//! The fused attention passes, written once for every model: a model supplies its [`Score`]
//! (the score of an edge and the score's gradients), the passes do everything else.
//!
//! | pass | file | per unit (a row, or a chunk of a split row) |
//! |---|---|---|
//! | forward | [`forward`] | SDDMM → online softmax → SpMM in registers; out, lse, (m, 1/l) |
//! | forward, `row_group` | [`group`] | a block per group of rows; scores in shared memory |
//! | backward rows | [`rows`] | α recomputed; `D = dO·o` and the row input's gradient (GT: dq) |
//! | backward columns | [`cols`] | over the CSC: key and value gradients (GT: dk, dv) |
//! | combine | [`combine`] | merges the partials of split rows (entry points of their own) |
//!
//! A model plugs in through [`score`] and declares its entry points with [`variants`].
//!
//! Each pass is generic over the load width `V` (`f32`, or `F4` when `F % 4 == 0`), the vectors
//! per lane `SLOTS`, the edges per step and team `STEP`, and the model. A model's family (e.g.
//! [`crate::kernels::gt`]) instantiates them as entry points, from one variant table.

pub mod cols;
pub mod combine;
pub mod forward;
pub mod group;
pub mod rows;
pub mod score;
pub mod variants;

pub use combine::ATTENTION_SUM_COMBINE;
pub use score::{HeadScalar, Score, ScoreGradient, SlotValue, load_slots};
