//! AGNN's own kernels: the per-head L2 normalisation of the features and its backward. The
//! attention itself is GT's ([`crate::kernels::gt`]) with `q = k = h/‖h‖`, `v = h`, scale β.

mod normalize;

pub use normalize::*;
