//! The property-test suite on CUDA device 0, with larger graphs and more cases than on the
//! emulator. Without a usable GPU every test prints `skipped: no GPU (...)` and passes.

use dfgnn::Backend;
use dfgnn_proptests::cases::Budget;

fn backend() -> Option<Backend> {
    match Backend::cuda(0) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            None
        }
    }
}

dfgnn_proptests::testgen_all!(backend(), Budget::GPU);

#[test]
fn full_cross_product() {
    if let Some(b) = backend() {
        dfgnn_proptests::suite::full_cross_product(&b);
    }
}
