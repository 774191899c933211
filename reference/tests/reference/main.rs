//! Tests of `dfgnn-reference`, one binary: gradient checks by central differences for every input
//! of every model, independent dense and `sprs` cross-checks of the forward steps, softmax
//! properties, the f32-against-f64 baseline, and the error paths.

mod agnn;
mod common;
mod dropout;
mod errors;
mod gat;
mod gatv2;
mod gt;
mod pipeline;
mod precision;
