//! Pieces every kernel family shares.

pub mod reduce;
