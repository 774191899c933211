//! The fuzz targets: one function per reader and one for graph preparation. Each takes any
//! bytes; an `Err` is a fine outcome, a panic, abort, hang or over-budget allocation is a
//! finding. Oracles beyond "does not crash": every graph a reader returns passes `Csr::new`'s
//! checks by construction, and `prepare` checks the transpose against the CSR and round-trips
//! the graph through every writer.

use std::io::Cursor;

use dfgnn_graphs::format::{Format, ReadOptions, edge_list, gt, mtx, npy, npz, read_stream};
use dfgnn_graphs::{Csr, GraphStats, Limits, block_diagonal, relabel, smiles};
use flate2::read::MultiGzDecoder;

/// The memory budget every target reads within (the script adds `ulimit -v` on top).
pub const BUDGET: u64 = 256 << 20;

/// A target: a name (its corpus folder) and the function.
pub struct Target {
    /// The name, also the folder of its seed corpus.
    pub name: &'static str,
    /// Runs one input.
    pub run: fn(&[u8]),
}

/// Every target.
pub const TARGETS: [Target; 8] = [
    Target { name: "npz", run: npz_target },
    Target { name: "npy", run: npy_target },
    Target { name: "mtx", run: mtx_target },
    Target { name: "edge_list", run: edge_list_target },
    Target { name: "gt", run: gt_target },
    Target { name: "gt_gz", run: gt_gz_target },
    Target { name: "smiles", run: smiles_target },
    Target { name: "prepare", run: prepare_target },
];

/// The options a reader runs with: a small budget, ids kept or relabelled.
fn options(relabel: bool) -> ReadOptions {
    ReadOptions { limits: Limits::max_bytes(BUDGET), relabel, reject_empty: false }
}

/// Exercises a graph a reader returned (statistics and transpose must not fail on it).
fn use_graph(g: &Csr) {
    let s = GraphStats::of(g);
    assert_eq!(s.nnz, g.nnz());
    let t = g.try_transpose(&Limits::max_bytes(BUDGET)).expect("a read graph's transpose fits the read budget");
    assert_eq!(t.nnz(), g.nnz());
}

fn stream_target(format: Format, data: &[u8]) {
    for relabel in [false, true] {
        if let Ok(loaded) = read_stream(format, data, "fuzz", &options(relabel)) {
            use_graph(&loaded.graph);
        }
    }
}

fn npz_target(data: &[u8]) {
    for relabel in [false, true] {
        if let Ok(loaded) = npz::read_bytes_with(data, "fuzz.npz", &options(relabel)) {
            use_graph(&loaded.graph);
        }
    }
}

fn npy_target(data: &[u8]) {
    if let Ok(a) = npy::parse(data, "fuzz.npy") {
        let _ = a.to_ints::<i64>("fuzz.npy", i64::MIN as i128, i64::MAX as i128);
        let _ = a.to_f32("fuzz.npy");
        let _ = a.to_bools("fuzz.npy");
        let _ = a.to_text();
    }
}

fn mtx_target(data: &[u8]) {
    stream_target(Format::MatrixMarket, data);
}

fn edge_list_target(data: &[u8]) {
    stream_target(Format::EdgeList, data);
}

fn gt_target(data: &[u8]) {
    stream_target(Format::GraphTool, data);
}

fn gt_gz_target(data: &[u8]) {
    for relabel in [false, true] {
        if let Ok(loaded) = read_stream(Format::GraphTool, MultiGzDecoder::new(data), "fuzz.gt.gz", &options(relabel)) {
            use_graph(&loaded.graph);
        }
    }
}

fn smiles_target(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    for line in &lines {
        if let Ok(m) = smiles::parse(line) {
            let _ = m.to_csr();
        }
    }
    let _ = smiles::batch(&lines);
}

/// Reads a little-endian `u16` at `k` (0 past the end).
fn u16_at(data: &[u8], k: usize) -> u16 {
    u16::from_le_bytes([data.get(k).copied().unwrap_or(0), data.get(k + 1).copied().unwrap_or(0)])
}

/// Builds a graph from the bytes (two sides of up to 2^16 nodes, `(dst, src)` pairs), or raw
/// CSR arrays through `Csr::new`, then runs every preparation step and checks them.
fn prepare_target(data: &[u8]) {
    let limits = Limits::max_bytes(BUDGET);
    let (num_dst, num_src) = (u16_at(data, 0) as usize, u16_at(data, 2) as usize);
    let body = data.get(4..).unwrap_or(&[]);
    let graph = if data.first().is_some_and(|b| b & 1 == 1) {
        // Raw arrays: offsets from the first half of the pairs, columns from the rest.
        let words: Vec<u16> = (0..body.len() / 2).map(|k| u16_at(body, 2 * k)).collect();
        let (offsets, columns) = words.split_at(words.len().min(num_dst.min(64) + 1));
        let offsets: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
        let columns: Vec<u32> = columns.iter().map(|&c| c as u32).collect();
        Csr::new(num_dst.min(64), num_src, offsets, columns)
    } else {
        let edges: Vec<(u32, u32)> =
            (0..body.len() / 4).map(|k| (u16_at(body, 4 * k) as u32, u16_at(body, 4 * k + 2) as u32)).collect();
        Csr::from_edges_with(num_dst, num_src, &edges, &limits)
    };
    let Ok(g) = graph else { return };
    let s = GraphStats::of(&g);
    assert_eq!((s.num_dst, s.num_src, s.nnz), (g.num_dst(), g.num_src(), g.nnz()));
    let t = g.try_transpose(&limits).expect("small graphs fit the budget");
    for j in 0..t.num_src() {
        for (&i, &e) in t.column(j).iter().zip(t.column_edge_ids(j)) {
            assert_eq!(g.columns()[e as usize] as usize, j, "transpose slot points back at its edge");
            assert!(g.edge_range(i as usize).contains(&(e as usize)));
        }
    }
    let sorted = g.sort_rows();
    assert_eq!(sorted.dedup().nnz() as u64, g.nnz() as u64 - s.duplicate_edges);
    if g.is_square() {
        let sym = g.symmetrize().expect("a square graph symmetrizes");
        assert_eq!(sym.transpose().offsets(), sym.offsets());
        let _ = g.with_self_loops();
    }
    let _ = block_diagonal(&[g.clone(), g.reversed()]);
    let (r, ids) = relabel::relabel(&g, &limits).expect("small graphs relabel");
    assert_eq!(r.nnz(), g.nnz());
    assert!(ids.dst.windows(2).all(|w| w[0] < w[1]), "the id map increases");
    round_trips(&g);
}

/// Every writer's output reads back as the same graph (`.gt` sorts rows by source).
fn round_trips(g: &Csr) {
    let read = |format: Format, bytes: &[u8]| {
        read_stream(format, bytes, "rt", &options(false)).map(|l| l.graph).expect("a written graph reads back")
    };
    let mut bytes = Vec::new();
    mtx::write_to(&mut bytes, g).expect("writing to memory");
    assert!(read(Format::MatrixMarket, &bytes) == *g, "mtx round trip");
    bytes.clear();
    edge_list::write_to(&mut bytes, g).expect("writing to memory");
    assert!(read(Format::EdgeList, &bytes) == *g, "edge list round trip");
    bytes.clear();
    gt::write_to(&mut bytes, g).expect("writing to memory");
    assert!(read(Format::GraphTool, &bytes) == g.sort_rows(), "gt round trip");
    let mut cursor = Cursor::new(Vec::new());
    npz::write_to(&mut cursor, g).expect("writing to memory");
    assert!(npz::read_bytes(cursor.get_ref(), "rt.npz").expect("npz reads back") == *g, "npz round trip");
}
