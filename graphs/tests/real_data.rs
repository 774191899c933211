//! Real files: graph-tool's bundled networks, Cora and Citeseer, MOSES molecules, and
//! interoperability with graph-tool and scipy. Nothing is downloaded.
//!
//! A test whose data or tool is absent prints `skipped: ...` and returns, unless
//! `DFGNN_REQUIRE_DATA` asks for that data: `1` or `all` for everything, or a comma-separated
//! list of `graph-tool`, `planetoid`, `moses`, `interop`. Then the absence is a failure, so CI
//! cannot pass a data test that did not run.

use std::path::Path;
use std::process::Command;

use dfgnn_graphs::format::{gt, npz, read_path, write_path};
use dfgnn_graphs::{GraphStats, collection, corner, generate, moses, planetoid};

/// Whether `DFGNN_REQUIRE_DATA` asks for the data set `kind`.
fn required(kind: &str) -> bool {
    std::env::var("DFGNN_REQUIRE_DATA")
        .is_ok_and(|v| v.split(',').map(str::trim).any(|k| k == "1" || k == "all" || k == kind))
}

/// Says the test is skipped, or fails it when `DFGNN_REQUIRE_DATA` asks for `kind`.
fn skip(kind: &str, why: &str) {
    assert!(!required(kind), "DFGNN_REQUIRE_DATA asks for {kind}, but {why}");
    println!("skipped: {why}");
}

#[test]
fn graph_tool_collection_loads() {
    let dir = collection::dir();
    if !dir.is_dir() {
        return skip(
            "graph-tool",
            &format!("{} is absent (run scripts/fetch-graph-tool-data.sh, set {})", dir.display(), collection::DIR_ENV),
        );
    }
    for net in collection::NETWORKS {
        let path = collection::path(net.name);
        let g = read_path(&path).unwrap_or_else(|err| panic!("{err}"));
        let s = GraphStats::of(&g);
        let name = net.name;
        assert_eq!(g.num_dst(), net.vertices, "{name}");
        if net.directed {
            assert_eq!(g.nnz(), net.edges, "{name}");
        } else {
            // Each undirected edge is both directions, a self loop once.
            assert_eq!(g.nnz() as u64 + s.self_loops, 2 * net.edges as u64, "{name}");
            assert_eq!(g.symmetrize().unwrap().nnz(), g.dedup().nnz(), "{name} is symmetric");
        }
        let named = dfgnn_graphs::named::generate(&format!("gt-{name}")).unwrap_or_else(|err| panic!("{err}"));
        assert!(named == g, "gt-{name} loads the same graph");
    }
}

#[test]
fn planetoid_loads() {
    let expected = [("cora", 2708, 10556, 1433, 7, 140), ("citeseer", 3327, 9228, 3703, 6, 120)];
    let Some(dir) = planetoid::data_dir() else {
        return skip(
            "planetoid",
            &format!("set {} to the directory holding planetoid/cora.npz", planetoid::DATA_DIR_ENV),
        );
    };
    for (name, n, nnz, f, classes, train) in expected {
        let path = planetoid::path(&dir, name);
        if !path.exists() {
            skip("planetoid", &format!("{} is absent (set DFGNN_DATA_DIR)", path.display()));
            continue;
        }
        let p = planetoid::load(&path).unwrap();
        assert_eq!((p.num_nodes(), p.graph.nnz(), p.num_features), (n, nnz, f), "{name}");
        assert_eq!(p.features.len(), n * f);
        assert_eq!(p.num_classes(), classes);
        assert_eq!(p.train_mask.iter().filter(|&&m| m).count(), train);
        assert_eq!(p.val_mask.iter().filter(|&&m| m).count(), 500);
        assert_eq!(p.test_mask.iter().filter(|&&m| m).count(), 1000);
        assert!(p.features.iter().all(|&x| x == 0.0 || x == 1.0), "binary bag of words");
        assert_eq!(p.graph.symmetrize().unwrap(), p.graph, "{name} is symmetric and sorted");
        // The plain sparse reader sees the same graph.
        assert_eq!(npz::read(&path).unwrap(), p.graph);
    }
}

#[test]
fn moses_molecules_load() {
    let Some(dir) = moses::data_dir() else {
        return skip("moses", "set DFGNN_MOSES_DIR to molsets' moses/dataset/data (see graphs/README.md)");
    };
    let batch = moses::load_batch(&dir, moses::Split::Test, 2000).unwrap();
    assert_eq!(batch.num_graphs(), 2000);
    let s = GraphStats::of(&batch.graph);
    assert!(s.in_degree.max <= 4, "{s}");
    assert!((15.0..30.0).contains(&(batch.graph.num_dst() as f64 / 2000.0)), "{s}");
    assert_eq!(batch.graph.symmetrize().unwrap(), batch.graph);
    // Every molecule of the test split parses.
    let all = moses::read_smiles(dir.join(moses::Split::Test.file_name()), None).unwrap();
    assert_eq!(all.len(), 176_074);
    for smiles in &all {
        dfgnn_graphs::smiles::parse(smiles).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A Python with graph-tool, scipy and numpy, if there is one.
fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import graph_tool, scipy.sparse, scipy.io, numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

const INTEROP: &str = r#"
import sys, numpy as np, scipy.sparse as sp, scipy.io, graph_tool.all as gt
d = sys.argv[1]
for name in ["square", "bipartite"]:
    a = sp.load_npz(f"{d}/{name}.npz").tocsr()
    m = scipy.io.mmread(f"{d}/{name}.mtx").tocsr().astype(float)
    # Count duplicates as multiplicities (a bool matrix would merge them).
    af = sp.csr_matrix((np.ones(a.nnz), a.indices.copy(), a.indptr.copy()), shape=a.shape)
    af.sum_duplicates(); m.sum_duplicates()
    assert a.shape == m.shape and (af != m).nnz == 0, name
    g = gt.load_graph(f"{d}/{name}.gt")
    assert g.is_directed()
    assert g.num_edges() == a.nnz, (name, g.num_edges(), a.nnz)
    assert g.num_vertices() == max(a.shape), name
    src = g.get_edges()[:, 0]; dst = g.get_edges()[:, 1]
    b = sp.csr_matrix((np.ones(len(src)), (dst, src)), shape=(g.num_vertices(),) * 2)
    b.sum_duplicates(); af.resize(b.shape)
    assert (b != af).nnz == 0, name
    print(name, a.shape, a.nnz, "ok")
# Files written by scipy and graph-tool for the Rust side to read back.
a = sp.load_npz(f"{d}/square.npz")
c = a.tocsc(); c.sum_duplicates()
sp.save_npz(f"{d}/py_compressed.npz", c, compressed=True)
sp.save_npz(f"{d}/py_plain.npz", a, compressed=False)
g = gt.load_graph(f"{d}/square.gt")
g.vp["name"] = g.new_vp("string", vals=[f"v{i}" for i in range(g.num_vertices())])
g.ep["w"] = g.new_ep("vector<double>", vals=[[1.0] * (i % 3) for i in range(g.num_edges())])
g.gp["note"] = g.new_gp("python::object", val={"x": 1})
g.save(f"{d}/py.gt.gz")
u = g.copy(); u.set_directed(False)
u.save(f"{d}/py_undirected.gt")
"#;

#[test]
fn writers_interoperate_with_scipy_and_graph_tool() {
    let Some(py) = python() else {
        return skip(
            "interop",
            "no python3 with graph_tool and scipy (apt-get install python3-graph-tool python3-scipy)",
        );
    };
    let dir = std::env::temp_dir().join(format!("dfgnn-graphs-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let square = generate::inject_hubs(&generate::erdos_renyi(400, 3.0, 5).unwrap(), 1, 300, 5).unwrap();
    let bipartite = corner::bipartite();
    for (name, g) in [("square", &square), ("bipartite", &bipartite)] {
        for ext in ["npz", "mtx", "gt"] {
            write_path(dir.join(format!("{name}.{ext}")), g).unwrap();
        }
    }
    let out = Command::new(py).args(["-c", INTEROP]).arg(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "python failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |f: &str| read_path(Path::new(&dir).join(f)).unwrap_or_else(|e| panic!("{e}"));
    let same = |file: &str, want: &dfgnn_graphs::Csr| {
        let got = read(file);
        assert!(got == *want, "{file}: read {} edges, want {}", got.nnz(), want.nnz());
    };
    same("py_compressed.npz", &square.sort_rows().dedup());
    same("py_plain.npz", &square);
    same("py.gt.gz", &square.sort_rows());
    // graph-tool keeps each directed edge once as an undirected edge; read back, every edge
    // appears in both directions (a self loop once).
    let mut both: Vec<(u32, u32)> = square.edges().collect();
    both.extend(square.edges().filter(|(i, j)| i != j).map(|(i, j)| (j, i)));
    let undirected = dfgnn_graphs::Csr::from_edges(400, 400, &both).unwrap().sort_rows();
    same("py_undirected.gt", &undirected);
    assert_eq!(gt::read(dir.join("bipartite.gt")).unwrap(), bipartite.sort_rows());
    std::fs::remove_dir_all(&dir).ok();
}
