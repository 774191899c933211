//! Tables that stand in for others row for row. The host runs row `i` of GAT's forwards with the
//! positive part (`kernels::gat::part`, forward tables) where it planned row `i` of GAT's tables,
//! so both must have the same width, slots, step and packed entry, each entry named after the one
//! it mirrors (`gat_fwd_*` → `gat_part_fwd_*`, `gat_drop_fwd_*` → `gat_drop_part_fwd_*`). AGNN's
//! table (`kernels::agnn`) has GT's shapes, every entry GT's with AGNN's score (`gt_*` →
//! `agnn_*`).

use dfgnn_device::kernels::attention::variants::{Backward, ForwardVariant, Packed, Variant};
use dfgnn_device::kernels::{agnn, gat, gt};

fn mirrors<F, G, R, C>(what: &str, base: &[Variant<F, G, R, C>], part: &[ForwardVariant<F, G>]) {
    let name = |name: &str| name.replacen("_fwd_", "_part_fwd_", 1);
    assert_eq!(base.len(), part.len(), "{what}");
    for (b, p) in base.iter().zip(part) {
        assert_eq!((b.width, b.slots, b.forward_step), (p.width, p.slots, p.step), "{what}");
        assert_eq!(b.packed.is_some(), p.packed.is_some(), "{what}");
        assert!(p.group.is_none(), "{what}");
        assert_eq!(name(b.forward.name), p.forward.name, "{what}");
        if let (Some(bp), Some(pp)) = (&b.packed, &p.packed) {
            assert_eq!(name(bp.forward.name), pp.name, "{what}");
        }
    }
}

#[test]
fn the_part_tables_mirror_gats_tables_row_for_row() {
    mirrors("gat", gat::VARIANTS, gat::part::VARIANTS);
    mirrors("gat dropout", gat::dropout::VARIANTS, gat::part::dropout::VARIANTS);
}

#[test]
fn agnns_table_has_gts_shapes_row_for_row() {
    let name = |name: &str| name.replacen("gt_", "agnn_", 1);
    assert_eq!(gt::VARIANTS.len(), agnn::VARIANTS.len());
    for (g, a) in gt::VARIANTS.iter().zip(agnn::VARIANTS) {
        assert_eq!((g.width, g.slots, g.forward_step), (a.width, a.slots, a.forward_step));
        assert_eq!((name(g.forward.name), name(g.group.name)), (a.forward.name.into(), a.group.name.into()));
        let backward = |b: &Option<_>| b.map(|b: Backward<_, _>| (b.step, b.rows.name, b.cols.name));
        match (backward(&g.backward), backward(&a.backward)) {
            (Some((gs, gr, gc)), Some((as_, ar, ac))) => {
                assert_eq!((gs, name(gr), name(gc)), (as_, ar.into(), ac.into()))
            }
            (g, a) => assert_eq!(g.is_none(), a.is_none()),
        }
        let packed = |p: &Option<Packed<_, _, _>>| p.map(|p| [p.forward.name, p.rows.name, p.cols.name]);
        assert_eq!(packed(&g.packed).map(|p| p.map(name)), packed(&a.packed).map(|p| p.map(String::from)));
    }
}
