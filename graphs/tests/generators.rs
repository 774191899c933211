//! Pins generated graphs so that any change of the random stream, the sampling code or the
//! platform's arithmetic is caught, and checks the shape of the benchmark graphs.

use dfgnn_graphs::generate::{chung_lu, erdos_renyi, inject_hubs, molecule_batch, rmat, sbm_batch};
use dfgnn_graphs::{Csr, GraphStats, named};

/// FNV-1a over the shape, offsets and columns.
fn fingerprint(g: &Csr) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(&(g.num_dst() as u64).to_le_bytes());
    eat(&(g.num_src() as u64).to_le_bytes());
    g.offsets().iter().for_each(|o| eat(&o.to_le_bytes()));
    g.columns().iter().for_each(|c| eat(&c.to_le_bytes()));
    h
}

#[test]
fn small_generated_graphs_are_pinned() {
    let cases = [
        ("er", erdos_renyi(1000, 7.5, 42).unwrap()),
        ("chung_lu", chung_lu(5000, 6.0, 2.1, 42).unwrap()),
        ("rmat", rmat(10, 8, 42).unwrap()),
        ("sbm", sbm_batch(8, 60, 12.0, 42).unwrap().graph),
        ("mol", molecule_batch(50, 22, 42).unwrap().graph),
        ("hubs", inject_hubs(&erdos_renyi(300, 2.0, 1).unwrap(), 2, 400, 42).unwrap()),
    ];
    let got: Vec<(&str, usize, u64)> = cases.iter().map(|(n, g)| (*n, g.nnz(), fingerprint(g))).collect();
    let expected: Vec<(&str, usize, u64)> = vec![
        ("er", 7500, 9706103035879123748),
        ("chung_lu", 24953, 12998952188399747847),
        ("rmat", 8192, 8406563269745123088),
        ("sbm", 6382, 10948531380603523830),
        ("mol", 2372, 5603204526444791980),
        ("hubs", 1398, 1568092784072577088),
    ];
    assert_eq!(got, expected);
}

/// The benchmark graphs of `named::BENCHMARKS` (numbers also in graphs/README.md). This test
/// takes about 3 s when `rand_chacha` and `ppv-lite86` are optimised in the dev profile, and
/// about 30 s when they are not.
#[test]
fn benchmark_graphs_have_their_documented_shape() {
    let er = GraphStats::of(&named::generate("er-1M-d16").unwrap());
    assert_eq!((er.num_dst, er.nnz, er.in_degree.max), (1 << 20, 1 << 24, 41));
    let pl = GraphStats::of(&named::generate("pl-1M-d16").unwrap());
    assert_eq!((pl.num_dst, pl.nnz, pl.in_degree.max, pl.rows_above(1000)), (1 << 20, 13_961_842, 209_503, 900));
    let batch = GraphStats::of(&named::generate("batch-1024x120-d50").unwrap());
    assert_eq!((batch.num_dst, batch.nnz, batch.in_degree.max), (122_884, 6_279_834, 86));
}
