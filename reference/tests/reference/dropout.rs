//! The dropout mask: Philox-4x32-10 against the published known answers (Random123's
//! `kat_vectors`), and the mask's keep rate and independence of its inputs.

use dfgnn_reference::{dropout_factors, dropout_keep, dropout_threshold, philox4x32_10};

/// Random123's `kat_vectors`, the three `philox4x32 10` lines: counter, key, output.
const PHILOX_KAT: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
    ([0, 0, 0, 0], [0, 0], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
    ([u32::MAX; 4], [u32::MAX; 2], [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]),
    (
        [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
        [0xa409_3822, 0x299f_31d0],
        [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
    ),
];

#[test]
fn philox_matches_the_known_answers() {
    for (counter, key, want) in PHILOX_KAT {
        assert_eq!(philox4x32_10(counter, key), want, "counter {counter:x?} key {key:x?}");
    }
}

#[test]
fn the_mask_keeps_one_minus_p_of_the_edges() {
    for p in [0.1, 0.5, 0.9] {
        let kept = (0..200_000u64).filter(|&e| dropout_keep(7, p, e, (e % 3) as u32)).count() as f64 / 200_000.0;
        assert!((kept - (1.0 - p)).abs() < 0.005, "p = {p}: kept {kept}");
    }
    assert!((0..10_000u64).all(|e| dropout_keep(3, 0.0, e, 0)), "p = 0 keeps every edge");
    assert_eq!(dropout_threshold(0.0), 0);
    assert_eq!(dropout_threshold(0.5), 1 << 31);
}

#[test]
fn the_mask_depends_on_seed_edge_and_head() {
    let mask = |seed: u64, edge_shift: u64, head: u32| -> Vec<bool> {
        (0..256u64).map(|e| dropout_keep(seed, 0.5, e + edge_shift, head)).collect()
    };
    let base = mask(1, 0, 0);
    assert_ne!(base, mask(2, 0, 0), "seed");
    assert_ne!(base, mask(1, 1 << 32, 0), "edge id past 2^32");
    assert_ne!(base, mask(1, 0, 1), "head");
    assert_eq!(base, mask(1, 0, 0), "a pure function");
}

#[test]
fn the_factors_scale_kept_edges_by_one_over_one_minus_p() {
    let f = dropout_factors(11, 0.25, 100, 3);
    assert_eq!(f.len(), 300);
    for (i, &x) in f.iter().enumerate() {
        let keep = dropout_keep(11, 0.25, (i / 3) as u64, (i % 3) as u32);
        assert_eq!(x, if keep { 1.0 / 0.75 } else { 0.0 }, "item {i}");
    }
}
