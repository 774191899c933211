//! Every format through real files: `read_path` / `write_path` round trips (plain and gzipped)
//! on the corner cases and a power-law graph, and errors that name the file.

use std::path::PathBuf;

use dfgnn_graphs::format::{read_path, write_path};
use dfgnn_graphs::{Csr, GraphError, corner, generate};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dfgnn-graphs-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("the temp dir should be writable");
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// What a format gives back: `.gt` sorts rows by source, the others keep the order.
fn expected(ext: &str, g: &Csr) -> Csr {
    if ext.starts_with("gt") { g.sort_rows() } else { g.clone() }
}

#[test]
fn every_format_round_trips_through_files() {
    let dir = TempDir::new("roundtrip");
    let mut graphs = corner::all();
    graphs.push(("power_law", generate::chung_lu(3000, 6.0, 2.1, 7).unwrap()));
    graphs.push(("hub_bipartite", generate::inject_hubs(&corner::bipartite(), 2, 700, 1).unwrap()));
    for ext in ["npz", "mtx", "mtx.gz", "txt", "el.gz", "edges", "tsv", "gt", "gt.gz"] {
        for (name, g) in &graphs {
            let path = dir.path(&format!("{name}.{ext}"));
            write_path(&path, g).unwrap();
            let back = read_path(&path).unwrap_or_else(|e| panic!("{name}.{ext}: {e}"));
            assert_eq!(back, expected(ext, g), "{name}.{ext}");
        }
    }
}

#[test]
fn errors_name_the_file() {
    let dir = TempDir::new("errors");
    let cases: [(&str, &[u8], &str); 6] = [
        ("bad.txt", b"0 1\n1 two\n", ":2:"),
        ("bad.mtx", b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n", ":3:"),
        ("bad.npz", b"PK\x05\x06 short", "at byte"),
        ("bad.gt", b"\xe2\x9b\xbe gt\x01\x00\x00", "at byte"),
        ("bad.gt.gz", b"not gzip at all", "bad.gt.gz"),
        ("bad.csv", b"", "unknown graph format"),
    ];
    for (name, bytes, needle) in cases {
        let path = dir.path(name);
        std::fs::write(&path, bytes).unwrap();
        let e = read_path(&path).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(name), "{name}: {text}");
        assert!(text.contains(needle), "{name}: {text}");
    }
    let missing = read_path(dir.path("missing.mtx")).unwrap_err();
    assert!(matches!(missing, GraphError::Io { .. }), "{missing}");
}

#[test]
fn truncated_files_are_errors_for_every_format() {
    let dir = TempDir::new("truncated");
    let g = generate::erdos_renyi(200, 5.0, 3).unwrap();
    for ext in ["npz", "mtx", "gt", "gt.gz", "mtx.gz"] {
        let path = dir.path(&format!("full.{ext}"));
        write_path(&path, &g).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        for keep in [bytes.len() / 3, bytes.len() / 2, bytes.len() - 7] {
            let cut = dir.path(&format!("cut.{ext}"));
            std::fs::write(&cut, &bytes[..keep]).unwrap();
            assert!(read_path(&cut).is_err(), "{ext} cut to {keep} bytes should not load");
        }
    }
}
