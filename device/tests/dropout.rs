//! The kernels' dropout mask (`kernels::common::dropout`) against the published Philox-4x32-10
//! known answers (Random123's `kat_vectors`) and against the reference's independent
//! implementation, over random seeds, edge ids (past 2^32 too), heads and probabilities; and
//! the models' dropout tables against their ordinary ones.

use dfgnn_device::abi::DropoutParams;
use dfgnn_device::kernels::attention::variants::Variant;
use dfgnn_device::kernels::common::dropout::{factor, keep, philox4x32_10};
use dfgnn_device::kernels::{gat, gatv2, gt};
use dfgnn_reference::{dropout_keep, dropout_threshold};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn philox_matches_the_known_answers() {
    let kat: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        ([0, 0, 0, 0], [0, 0], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
        ([u32::MAX; 4], [u32::MAX; 2], [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];
    for (counter, key, want) in kat {
        assert_eq!(philox4x32_10(counter, key), want, "counter {counter:x?} key {key:x?}");
    }
}

#[test]
fn the_mask_matches_the_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for _ in 0..20_000 {
        let (seed, p) = (rng.random::<u64>(), rng.random_range(0.0..0.99));
        let edge = if rng.random_bool(0.5) { rng.random_range(0..1u64 << 20) } else { rng.random::<u64>() };
        let head = rng.random_range(0..64u32);
        let dropout = DropoutParams { seed, threshold: dropout_threshold(p), scale: 1.0 / (1.0 - p as f32) };
        let kept = dropout_keep(seed, p, edge, head);
        let context = format!("seed {seed} p {p} edge {edge} head {head}");
        assert_eq!(keep(&dropout, edge, head), kept, "{context}");
        let want = if !kept {
            0.0
        } else if dropout.threshold > 0 {
            dropout.scale
        } else {
            1.0
        };
        assert_eq!(factor::<true>(&dropout, edge, head), want, "{context}");
    }
}

#[test]
fn no_dropout_keeps_every_weight_as_it_is() {
    for edge in 0..1000 {
        assert_eq!(factor::<true>(&DropoutParams::OFF, edge, (edge % 5) as u32), 1.0);
        assert_eq!(factor::<false>(&DropoutParams { seed: 1, threshold: u32::MAX, scale: 2.0 }, edge, 0), 1.0);
    }
}

/// A table row as the planner and the hosts read it: (width, slots, forward step, backward step,
/// packed) and each entry's name.
type Row = (u32, u32, u32, Option<u32>, bool, Vec<&'static str>);

/// A table's rows.
fn rows<F, G, R, C>(table: &[Variant<F, G, R, C>]) -> Vec<Row> {
    table
        .iter()
        .map(|v| {
            let mut names = vec![v.forward.name, v.group.name];
            names.extend(v.backward.iter().flat_map(|b| [b.rows.name, b.cols.name]));
            names.extend(v.packed.iter().flat_map(|p| [p.forward.name, p.rows.name, p.cols.name]));
            (v.width, v.slots, v.forward_step, v.backward.as_ref().map(|b| b.step), v.packed.is_some(), names)
        })
        .collect()
}

/// The hosts plan on a model's table and, with dropout on, run the same row of its dropout
/// table: both must have the same rows, entry for entry (`<model>_drop_*` for `<model>_*`).
#[test]
fn every_dropout_table_has_its_models_rows() {
    fn same<F, G, R, C>(model: &str, base: &[Variant<F, G, R, C>], drop: &[Variant<F, G, R, C>]) {
        let (base, drop) = (rows(base), rows(drop));
        assert_eq!(base.len(), drop.len(), "{model}");
        for (b, d) in base.iter().zip(&drop) {
            assert_eq!((b.0, b.1, b.2, b.3, b.4), (d.0, d.1, d.2, d.3, d.4), "{model}");
            let renamed: Vec<String> = b.5.iter().map(|n| n.replacen(model, &format!("{model}_drop"), 1)).collect();
            assert_eq!(renamed, d.5, "{model}");
        }
    }
    same("gt", gt::VARIANTS, gt::dropout::VARIANTS);
    same("gat", gat::VARIANTS, gat::dropout::VARIANTS);
    same("gatv2", gatv2::VARIANTS, gatv2::dropout::VARIANTS);
}
