//! AGNN's table (`kernels::agnn`) has GT's shapes, row for row, every entry GT's with AGNN's
//! score (`gt_*` → `agnn_*`): AGNN plans on it with GT's host machinery (`Gt::with_table`), and
//! its forward over tiles is GT's.

use dfgnn_device::kernels::attention::variants::{Backward, Packed};
use dfgnn_device::kernels::{agnn, gt};

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
