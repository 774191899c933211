//! Pieces every kernel family shares.

pub mod dropout;
pub mod gather;
pub mod lanes;
pub mod node_rows;
pub mod pass;
pub mod reduce;
pub mod segment;
pub mod softmax;
#[macro_use]
pub mod unroll;
pub mod vector;
