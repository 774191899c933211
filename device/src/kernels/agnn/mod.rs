//! AGNN's own kernels: the per-head L2 normalisation of the features, which also writes the
//! queries `q = β·hn` (β read from device memory), and its backward. The attention itself is
//! GT's ([`crate::kernels::gt`]) with `q = β·h/‖h‖`, `k = h/‖h‖`, `v = h` and score scale 1; dβ's
//! per-(node, head) shares are summed by [`crate::kernels::util::SUM_PARTIALS`] and
//! [`crate::kernels::util::SUM_FINISH`].

mod normalize;

pub use normalize::*;
