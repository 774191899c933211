//! The property-test suite on the SIMT emulator (every kernel checked for races, out-of-bounds
//! accesses and divergent barriers as it runs). Budget: about 4 minutes on 2 cores in the dev
//! profile; the full H × F × schedule × options sweep is `--ignored`.

use dfgnn::Backend;
use dfgnn_proptests::cases::Budget;

dfgnn_proptests::testgen_all!(Backend::emulator(), Budget::EMULATOR);

#[test]
#[ignore = "slow: the full H x F x schedule x forced-options cross product, about 3,800 checks, 7 minutes on the emulator"]
fn full_cross_product() {
    dfgnn_proptests::suite::full_cross_product(&Backend::emulator());
}
