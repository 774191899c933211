//! GAT's forwards with the positive part (`kernels::gat::part`) mirror its tables: the host runs
//! row `i` of a part table where it planned row `i` of GAT's (or of its dropout table), so both
//! must have the same width, slots, step and packed entry, row for row, named after the mirrored
//! forward (`gat_fwd_*` → `gat_part_fwd_*`, `gat_drop_fwd_*` → `gat_drop_part_fwd_*`).

use dfgnn_device::kernels::attention::variants::Variant;
use dfgnn_device::kernels::gat;
use dfgnn_device::kernels::gat::part::PartForward;

fn mirrors<F, G, R, C>(what: &str, base: &[Variant<F, G, R, C>], part: &[PartForward]) {
    assert_eq!(base.len(), part.len(), "{what}");
    for (b, p) in base.iter().zip(part) {
        assert_eq!((b.width, b.slots, b.forward_step), (p.width, p.slots, p.step), "{what}");
        assert_eq!(b.packed.is_some(), p.packed.is_some(), "{what}");
        assert_eq!(b.forward.name.replacen("_fwd_", "_part_fwd_", 1), p.forward.name, "{what}");
        if let (Some(bp), Some(pp)) = (&b.packed, &p.packed) {
            assert_eq!(bp.forward.name.replacen("_fwd_", "_part_fwd_", 1), pp.name, "{what}");
        }
    }
}

#[test]
fn the_part_tables_mirror_gats_tables_row_for_row() {
    mirrors("gat", gat::VARIANTS, gat::part::VARIANTS);
    mirrors("gat dropout", gat::dropout::VARIANTS, gat::part::dropout::VARIANTS);
}
