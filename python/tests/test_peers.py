"""benches/peers.py on a tiny graph: every peer's output check runs and passes (a smoke test of
the script; its timings are wall-clock times of tiny cases and nothing is asserted about them).
dfgnn's own layers and ops (system `dfgnn-python`) run on the CPU here, on dfgnn's emulator."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

PEERS = pathlib.Path(__file__).resolve().parents[2] / "benches" / "peers.py"
TOLERANCE = 1e-3

DFGNN_PYTHON = "dfgnn-python"
#: Per model, the (system, variant) pairs peers.py must time at one head and at several, besides
#: turbo-gnn's (only with CUDA) and dfgnn's own (only where dfgnn imports; see the tests below).
EXPECTED = {
    "gt": ({("pyg", "TransformerConv"), ("pyg", "attention"), ("torch_sparse", "cusparse")},) * 2,
    "agnn": ({("pyg", "AGNNConv"), ("pyg", "attention")}, {("pyg", "attention")}),
    "gat": ({("pyg", "GATConv"), ("pyg", "attention")},) * 2,
    "gatv2": ({("pyg", "GATv2Conv"), ("pyg", "attention")},) * 2,
}
#: The same for dfgnn's layers (the PyG layer's drop-in) and bare ops.
EXPECTED_DFGNN = {
    "gt": ({(DFGNN_PYTHON, "TransformerConv"), (DFGNN_PYTHON, "attention")},) * 2,
    "agnn": ({(DFGNN_PYTHON, "AGNNConv"), (DFGNN_PYTHON, "attention")}, {(DFGNN_PYTHON, "attention")}),
    "gat": ({(DFGNN_PYTHON, "GATConv"), (DFGNN_PYTHON, "attention")},) * 2,
    "gatv2": ({(DFGNN_PYTHON, "GATv2Conv"), (DFGNN_PYTHON, "attention")},) * 2,
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


def run_peers(tmp_path: pathlib.Path, *extra: str, env: dict | None = None) -> dict:
    graphs = tmp_path / "graphs"
    graphs.mkdir()
    graph = write_graph(graphs / "tiny.npz", num_nodes=96, degree=4, seed=5)
    suite_file(tmp_path / "suite.json", graph)
    # Fewer checked rows than rows, so that the check runs on a sampled subgraph (whose local
    # destination ids differ from the graph's), as it does on every benchmark graph.
    subprocess.run([sys.executable, str(PEERS), "--suite", str(tmp_path / "suite.json"), "--graphs", str(graphs),
                    "--out", str(tmp_path / "peers.json"), "--check-rows", "16", "--tolerance", str(TOLERANCE),
                    *extra], check=True, env=env)
    return json.loads((tmp_path / "peers.json").read_text())


@pytest.fixture(scope="module")
def peers_out(tmp_path_factory) -> dict:
    """One run of every peer on the tiny graph, shared by the tests below."""
    return run_peers(tmp_path_factory.mktemp("peers"))


def check_cases(out: dict, expected: dict, systems: set[str]) -> None:
    """The records of `systems` are those `expected` names, each checked within the tolerance
    and timed (the cuSPARSE pipeline's backward excepted: it has none)."""
    by_case = {}
    for r in out["records"]:
        by_case.setdefault((r["model"], r["heads"], r["feat"]), []).append(r)
    for model, (one_head, several) in expected.items():
        for heads, feat in SHAPES:
            records = [r for r in by_case.get((model, heads, feat), []) if r["system"] in systems]
            want = one_head if heads == 1 else several
            assert {(r["system"], r["variant"]) for r in records} == want, (model, heads, feat)
            assert {r["pass"] for r in records} == set(PASSES), (model, heads, feat)
            for r in records:
                name = f"{model} {heads}x{feat} {r['system']} {r['variant']} {r['pass']}"
                assert r["check_relative_error"] is not None and r["check_relative_error"] <= TOLERANCE, name
                if r["system"] == "torch_sparse" and r["pass"] == "forward_backward":
                    assert r["error"] == "not timed: the peer has no backward", name
                else:
                    assert r["error"] is None, (name, r["error"])
                    assert r["repeats"] >= 1 and r["time"]["median_ms"] >= 0, name


def test_every_peer_passes_its_check_and_is_timed(peers_out):
    systems = {r["system"] for r in peers_out["records"]}
    assert systems <= {"pyg", "torch_sparse", "turbo_gnn", DFGNN_PYTHON}, systems
    check_cases(peers_out, EXPECTED, {"pyg", "torch_sparse"})


def test_dfgnn_python_peers_pass_their_check_and_are_timed(peers_out):
    """dfgnn's layers and ops against the same f64 formulas as PyG's (on the CPU: the emulator)."""
    pytest.importorskip("dfgnn.nn", reason="dfgnn is not importable: its peers' checks did not run")
    assert not [s for s in peers_out["meta"]["skipped"] if s.startswith(DFGNN_PYTHON)], peers_out["meta"]["skipped"]
    check_cases(peers_out, EXPECTED_DFGNN, {DFGNN_PYTHON})


def load_peers_module():
    spec = importlib.util.spec_from_file_location("peers", PEERS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, args, kwargs", [
    ("TransformerConv", (8, 4), {"heads": 2, "concat": True, "root_weight": False}),
    ("GATConv", (8, 4), {"heads": 2, "concat": True, "add_self_loops": False, "bias": False}),
    ("GATv2Conv", (8, 4), {"heads": 2, "concat": True, "add_self_loops": False, "bias": False, "share_weights": False}),
    ("AGNNConv", (), {"requires_grad": True, "add_self_loops": False}),
])
def test_dfgnn_layers_are_the_pyg_layers_drop_in(name, args, kwargs):
    """peers.py's dfgnn layer has the PyG layer's class (a subclass), arguments and state_dict."""
    pytest.importorskip("dfgnn.nn", reason="dfgnn is not importable: its layers were not compared")
    import dfgnn.nn
    from torch_geometric import nn as pyg

    peers = load_peers_module()
    cpu = torch.device("cpu")
    pyg_layer = peers.make_layer(getattr(pyg, name), None, 7, cpu, *args, **kwargs)
    fused = peers.make_layer(getattr(pyg, name), getattr(dfgnn.nn, name), 7, cpu, *args, **kwargs)
    assert type(pyg_layer) is getattr(pyg, name) and type(fused) is getattr(dfgnn.nn, name)
    assert isinstance(fused, getattr(pyg, name)) and fused.fallback == "error"
    want, got = pyg_layer.state_dict(), fused.state_dict()
    assert want.keys() == got.keys() and all(torch.equal(want[k], got[k]) for k in want), name


def test_without_dfgnn_its_peers_are_listed_as_skipped(tmp_path):
    """Where dfgnn does not import, peers.py says so in meta.skipped and times the other peers."""
    hidden = tmp_path / "hide"
    (hidden / "dfgnn").mkdir(parents=True)
    (hidden / "dfgnn" / "__init__.py").write_text('raise ImportError("hidden by test_peers.py")\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(hidden), os.environ.get("PYTHONPATH")])))
    out = run_peers(tmp_path, "--peers", f"pyg:attention,{DFGNN_PYTHON}", env=env)
    assert f"{DFGNN_PYTHON}: dfgnn not importable (ImportError: hidden by test_peers.py)" in out["meta"]["skipped"]
    systems = {(r["system"], r["variant"]) for r in out["records"]}
    assert systems == {("pyg", "attention")}, systems


def test_turbo_gnn_passes_its_check(peers_out):
    pytest.importorskip("turbo_gnn", reason="turbo-gnn is not installed: its check did not run")
    if not torch.cuda.is_available():
        pytest.skip("turbo-gnn runs on CUDA only: its check did not run")
    records = [r for r in peers_out["records"] if r["system"] == "turbo_gnn"]
    assert {(r["model"], r["variant"]) for r in records} == {("gt", "graph_transformer_aggr"), ("gatv2", "gatv2_aggr")}
    for r in records:
        assert r["check_relative_error"] <= TOLERANCE and r["error"] is None, r
