"""benches/peers.py on a tiny graph: every peer's output check runs and passes (a smoke test of
the script; its timings are wall-clock times of tiny cases and nothing is asserted about them)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

PEERS = pathlib.Path(__file__).resolve().parents[2] / "benches" / "peers.py"
TOLERANCE = 1e-3

#: Per model, the (system, variant) pairs peers.py must time at one head and at several (turbo-gnn
#: only with CUDA, see the test below).
EXPECTED = {
    "gt": ({("pyg", "TransformerConv"), ("pyg", "attention"), ("torch_sparse", "cusparse")},) * 2,
    "agnn": ({("pyg", "AGNNConv"), ("pyg", "attention")}, {("pyg", "attention")}),
    "gat": ({("pyg", "GATConv"), ("pyg", "attention")},) * 2,
    "gatv2": ({("pyg", "GATv2Conv"), ("pyg", "attention")},) * 2,
}
SHAPES = [(1, 8), (2, 4)]
PASSES = ["forward", "forward_backward"]


def write_graph(path: pathlib.Path, num_nodes: int, degree: int, seed: int) -> dict:
    """A random graph as the scipy CSR `.npz` `dfgnn graph write` writes (rows = destinations),
    with rows of different lengths, one empty row, a self loop and a duplicate edge."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 2 * degree, num_nodes)
    lengths[3] = 0
    indices = [np.sort(rng.integers(0, num_nodes, n)) for n in lengths]
    indices[0] = np.array([0, 1, 1, 5])
    lengths[0] = 4
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = np.concatenate(indices).astype(np.int32)
    np.savez(path, indptr=indptr, indices=flat, data=np.ones(flat.size, np.float32),
             shape=np.array([num_nodes, num_nodes]), format=np.array(b"csr"))
    return {"name": path.stem, "nodes": num_nodes, "edges": int(flat.size)}


def suite_file(path: pathlib.Path, graph: dict) -> None:
    """A suite.json with dfgnn's plan records (the cases peers.py reads) for every model, shape
    and pass."""
    records = [{"system": "dfgnn", "variant": "auto", "model": m, "graph": graph, "heads": h, "feat": f,
                "pass": p} for m in EXPECTED for h, f in SHAPES for p in PASSES]
    meta = {"schema": 1, "commit": "test", "warmup": 1, "repeats": 1, "case_budget_ms": 0}
    path.write_text(json.dumps({"meta": meta, "records": records}))


def run_peers(tmp_path: pathlib.Path) -> dict:
    graphs = tmp_path / "graphs"
    graphs.mkdir()
    graph = write_graph(graphs / "tiny.npz", num_nodes=96, degree=4, seed=5)
    suite_file(tmp_path / "suite.json", graph)
    # Fewer checked rows than rows, so that the check runs on a sampled subgraph (whose local
    # destination ids differ from the graph's), as it does on every benchmark graph.
    subprocess.run([sys.executable, str(PEERS), "--suite", str(tmp_path / "suite.json"), "--graphs", str(graphs),
                    "--out", str(tmp_path / "peers.json"), "--check-rows", "16", "--tolerance", str(TOLERANCE)],
                   check=True)
    return json.loads((tmp_path / "peers.json").read_text())


def test_every_peer_passes_its_check_and_is_timed(tmp_path):
    out = run_peers(tmp_path)
    by_case = {}
    for r in out["records"]:
        by_case.setdefault((r["model"], r["heads"], r["feat"]), []).append(r)
    for model, (one_head, several) in EXPECTED.items():
        for heads, feat in SHAPES:
            records = [r for r in by_case.get((model, heads, feat), []) if r["system"] != "turbo_gnn"]
            want = one_head if heads == 1 else several
            assert {(r["system"], r["variant"]) for r in records} == want, (model, heads, feat)
            for r in records:
                name = f"{model} {heads}x{feat} {r['system']} {r['variant']} {r['pass']}"
                assert r["check_relative_error"] is not None and r["check_relative_error"] <= TOLERANCE, name
                if r["system"] == "torch_sparse" and r["pass"] == "forward_backward":
                    assert r["error"] == "not timed: the peer has no backward", name
                else:
                    assert r["error"] is None, (name, r["error"])
                    assert r["repeats"] >= 1 and r["time"]["median_ms"] >= 0, name


def test_turbo_gnn_passes_its_check(tmp_path):
    pytest.importorskip("turbo_gnn", reason="turbo-gnn is not installed: its check did not run")
    if not torch.cuda.is_available():
        pytest.skip("turbo-gnn runs on CUDA only: its check did not run")
    records = [r for r in run_peers(tmp_path)["records"] if r["system"] == "turbo_gnn"]
    assert {(r["model"], r["variant"]) for r in records} == {("gt", "graph_transformer_aggr"), ("gatv2", "gatv2_aggr")}
    for r in records:
        assert r["check_relative_error"] <= TOLERANCE and r["error"] is None, r
