//! Issue 12's inputs, as a new user met them: sparse or huge declared ids, shapes a file cannot
//! back, empty and missing files, binary garbage. Each gives a clear, typed error (or, where
//! asked, a relabelled graph) without a large allocation: the allocation cases run again in a
//! child process under `ulimit -v` (1 GiB of address space), where a giant allocation aborts.

use std::io::Cursor;
use std::path::PathBuf;
use std::process::Command;

use dfgnn_graphs::format::npy::DType;
use dfgnn_graphs::format::{Format, ReadOptions, npz, read_path_with, read_stream};
use dfgnn_graphs::{Csr, GraphError, GraphStats, IdMap, Limits, named};

/// Reads text in `format` with `options`.
fn read(format: Format, text: &[u8], options: &ReadOptions) -> dfgnn_graphs::Result<dfgnn_graphs::format::Loaded> {
    read_stream(format, text, "input", options)
}

fn keep() -> ReadOptions {
    ReadOptions::default()
}

fn relabel() -> ReadOptions {
    ReadOptions { relabel: true, ..ReadOptions::default() }
}

/// An `.npz` image with `shape` and the given CSR arrays (int64).
fn npz_image(shape: [i64; 2], indptr: &[i64], indices: &[i64]) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let le = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    for (name, data, len) in
        [("shape", le(&shape), 2), ("indptr", le(indptr), indptr.len()), ("indices", le(indices), indices.len())]
    {
        zip.start_file(format!("{name}.npy"), zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(&dfgnn_graphs::format::npy::header(DType::Int(8), &[len]).unwrap()).unwrap();
        zip.write_all(&data).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn assert_sparse(result: dfgnn_graphs::Result<impl std::fmt::Debug>, case: &str) {
    let e = result.unwrap_err();
    assert!(matches!(e, GraphError::SparseIds { .. }), "{case}: {e}");
    assert!(e.to_string().contains("--relabel"), "{case}: {e}");
}

/// Every allocation case of the table: an error naming the relabel option, or with
/// relabelling a small graph and its id map.
fn allocation_cases() {
    // Edge list `0 1` / `4000000000 0`: one large id asked for 4e9 nodes.
    let text = b"0 1\n4000000000 0\n";
    assert_sparse(read(Format::EdgeList, text, &keep()), "edge list id 4e9");
    let loaded = read(Format::EdgeList, text, &relabel()).unwrap();
    assert_eq!((loaded.graph.num_dst(), loaded.graph.nnz()), (3, 2));
    assert_eq!(loaded.ids, Some(IdMap { dst: vec![0, 1, 4_000_000_000], src: None }));
    assert_eq!(loaded.graph.edges().collect::<Vec<_>>(), vec![(0, 2), (1, 0)]);
    // The largest u32 id, and a header claiming 4e9 nodes.
    assert_sparse(read(Format::EdgeList, b"0 4294967295\n", &keep()), "id 2^32 - 1");
    let header = b"# dfgnn: num_dst=4000000000 num_src=4000000000\n0 1\n";
    assert_sparse(read(Format::EdgeList, header, &keep()), "dfgnn header 4e9");
    // Id 10^8: stats worked (1.5 GB) but `run` aborted; now a clear error, or relabelled.
    assert_sparse(read(Format::EdgeList, b"0 100000000\n", &keep()), "id 1e8");
    assert_eq!(read(Format::EdgeList, b"0 100000000\n", &relabel()).unwrap().graph.num_dst(), 2);
    // Matrix Market headers 3e9 x 3e9 and 4e9 x 4e9 with two entries.
    for size in ["3000000000", "4000000000"] {
        let mtx = format!("%%MatrixMarket matrix coordinate pattern general\n{size} {size} 2\n1 1\n{size} 2\n");
        assert_sparse(read(Format::MatrixMarket, mtx.as_bytes(), &keep()), size);
        let loaded = read(Format::MatrixMarket, mtx.as_bytes(), &relabel()).unwrap();
        assert_eq!((loaded.graph.num_dst(), loaded.graph.nnz()), (3, 2), "{size}");
    }
    // A Matrix Market header promising 2^40 entries reserves nothing for them.
    let mtx = b"%%MatrixMarket matrix coordinate pattern general\n2 2 1099511627776\n1 1\n";
    assert!(read(Format::MatrixMarket, mtx, &keep()).unwrap_err().to_string().contains("1 of 1099511627776"));
    // .npz with shape [3, 4e9] and three edges: the statistics used to abort (32 GB).
    let image = npz_image([3, 4_000_000_000], &[0, 1, 2, 3], &[0, 5, 3_999_999_999]);
    assert_sparse(npz::read_bytes(&image, "shape.npz"), "npz shape [3, 4e9]");
    let loaded = npz::read_bytes_with(&image, "shape.npz", &relabel()).unwrap();
    assert_eq!((loaded.graph.num_dst(), loaded.graph.num_src()), (3, 3));
    assert_eq!(loaded.ids.unwrap().src(), &[0, 5, 3_999_999_999]);
    // And a graph built by hand with 4e9 sources: statistics need O(E), the transpose is
    // checked against a budget.
    let g = Csr::new(3, 4_000_000_000, vec![0, 1, 2, 3], vec![0, 5, 3_999_999_999]).unwrap();
    assert_eq!(GraphStats::of(&g).out_degree.zero, 3_999_999_997);
    let e = g.try_transpose(&Limits::max_bytes(1 << 30)).unwrap_err();
    assert!(matches!(e, GraphError::OverBudget { what: "the transpose", .. }), "{e}");
    // A budget refuses what the input does back: 10^5 ids in 10^5 edges within 1 MB.
    let many: String = (0..100_000).map(|i| format!("{i} {}\n", (i + 1) % 100_000)).collect();
    let small = ReadOptions { limits: Limits::max_bytes(1 << 20), ..ReadOptions::default() };
    let e = read(Format::EdgeList, many.as_bytes(), &small).unwrap_err();
    assert!(matches!(e, GraphError::OverBudget { .. }), "{e}");
    // Generators refuse what the machine cannot give before drawing anything.
    assert!(matches!(named::generate("er-4G-d1000"), Err(GraphError::OverBudget { .. } | GraphError::TooLarge { .. })));
}

#[test]
fn allocation_cases_give_errors() {
    allocation_cases();
}

/// The environment variable that marks the child process.
const CHILD: &str = "DFGNN_GRAPHS_UNDER_ULIMIT";

#[test]
fn allocation_cases_under_a_memory_limit() {
    if std::env::var_os(CHILD).is_some() {
        return allocation_cases();
    }
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "ulimit -v 1048576 && exec '{}' allocation_cases_under_a_memory_limit --exact --test-threads=1",
        exe.display()
    );
    let out = Command::new("sh").args(["-c", &script]).env(CHILD, "1").output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1 passed"), "child under ulimit -v 1 GiB failed:\n{text}");
}

#[test]
fn empty_and_missing_inputs() {
    // An empty edge list is a valid empty graph, unless the caller needs nodes.
    let empty = read(Format::EdgeList, b"", &keep()).unwrap();
    assert_eq!((empty.graph.num_dst(), empty.graph.nnz()), (0, 0));
    let strict = ReadOptions { reject_empty: true, ..ReadOptions::default() };
    let e = read(Format::EdgeList, b"# only a comment\n", &strict).unwrap_err();
    assert!(e.to_string().contains("the graph is empty (no nodes)"), "{e}");
    // A missing file says so first, through the reader and through the name resolver.
    let missing = PathBuf::from("/nonexistent/dfgnn/graph.txt");
    let e = read_path_with(&missing, &keep()).unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent/dfgnn/graph.txt: No such file"), "{e}");
    let e = named::load("missing-graph.mtx", &keep()).unwrap_err();
    assert!(e.to_string().starts_with("missing-graph.mtx: no such file"), "{e}");
}

#[test]
fn binary_garbage_is_never_echoed() {
    let garbage: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 0x80).collect();
    let mut cases: Vec<String> = Vec::new();
    for format in [Format::EdgeList, Format::MatrixMarket, Format::GraphTool] {
        cases.push(read(format, &garbage, &keep()).unwrap_err().to_string());
    }
    let mut npy = b"\x93NUMPY\x01\x00\x40\x00".to_vec();
    npy.extend_from_slice(&garbage[..64]);
    cases.push(dfgnn_graphs::format::npy::parse(&npy, "g.npy").unwrap_err().to_string());
    for message in &cases {
        // The one non-ASCII character allowed is the `.gt` magic the message quotes.
        assert!(message.replace('\u{26fe}', "").is_ascii(), "raw bytes echoed: {message}");
    }
    // A SMILES string is text: the message quotes an escaped prefix and the one character at
    // fault (escaped when it is a control character).
    let smiles: String = garbage.iter().map(|&b| char::from(b & 0x1f)).collect();
    cases.push(dfgnn_graphs::smiles::parse(&smiles).unwrap_err().to_string());
    for message in cases {
        assert!(!message.chars().any(char::is_control), "control characters echoed: {message}");
        assert!(message.len() < 400, "{} bytes: {message}", message.len());
    }
}
