//! The property-test suite on CUDA device 0, with larger graphs and more cases than on the
//! emulator. Every test needs the device, so every test is ignored unless asked for:
//! `cargo test -p dfgnn-proptests --test gpu -- --ignored` on a GPU machine (or
//! `scripts/gpu-tests.sh`), where a missing or unusable device fails them.

use dfgnn::Backend;
use dfgnn_proptests::cases::Budget;

/// CUDA device 0; panics (failing the test) when there is none.
fn gpu() -> Backend {
    Backend::cuda(0).unwrap_or_else(|e| panic!("this test needs a usable CUDA device: {e}"))
}

dfgnn_proptests::testgen_all!(
    gpu(),
    Budget::GPU,
    #[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
);

#[test]
#[ignore = "needs a CUDA device: cargo test -- --ignored on a GPU machine"]
fn full_cross_product() {
    dfgnn_proptests::suite::full_cross_product(&gpu());
}
