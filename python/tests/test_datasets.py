"""dfgnn.datasets: molecules from SMILES strings and MOSES files (atoms, both directions of every
bond, PyG's batching, errors), and one training step of examples/moses_train.py's models, dfgnn's
against PyG's from the same state_dict, under the tolerance rule.

The MOSES tests read ``$DFGNN_MOSES_DIR`` (graphs/README.md); without it they skip, and fail when
``DFGNN_REQUIRE_DATA`` asks for ``moses`` (``1``, ``all`` or a list naming it)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import parity

from dfgnn import datasets

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "moses_train.py"

#: (SMILES, atoms, bonds): a chain, a branch with a double bond, an aromatic ring, a triple
#: bond, a bridged bicycle with a benzene ring (the first molecule of MOSES's test split),
#: charged bracket atoms in two parts.
KNOWN = [
    ("CCO", 3, 2),
    ("CC(=O)O", 4, 3),
    ("c1ccccc1", 6, 6),
    ("C#N", 2, 1),
    ("CC1C2CCC(C2)C1CN(CCO)C(=O)c1ccc(Cl)cc1", 22, 24),
    ("[NH4+].[Cl-]", 2, 0),
]


def moses_dir() -> str:
    """``$DFGNN_MOSES_DIR``, or a skip (a failure under ``DFGNN_REQUIRE_DATA``)."""
    path = os.environ.get("DFGNN_MOSES_DIR")
    if path and os.path.isdir(path):
        return path
    reason = "set DFGNN_MOSES_DIR to the MOSES folder (scripts/fetch-moses.sh, graphs/README.md): the MOSES test did not run"
    required = os.environ.get("DFGNN_REQUIRE_DATA", "")
    if any(k.strip() in ("1", "all", "moses") for k in required.split(",")):
        pytest.fail(reason + f" (DFGNN_REQUIRE_DATA={required})")
    pytest.skip(reason)


def check_batching(m: datasets.Molecules) -> None:
    """PyG's batching: ptr, batch, edge_ptr agree; edges stay inside their molecule, come in both
    directions, sorted by destination then source within each molecule."""
    n, e = m.num_nodes, m.num_edges
    assert m.ptr[0] == 0 and m.ptr[-1] == n and m.edge_ptr[0] == 0 and m.edge_ptr[-1] == e
    assert torch.equal(m.batch, torch.repeat_interleave(torch.arange(m.num_graphs), m.ptr.diff()))
    src, dst = m.edge_index
    edge_graph = torch.repeat_interleave(torch.arange(m.num_graphs), m.edge_ptr.diff())
    assert torch.equal(m.batch[src], edge_graph) and torch.equal(m.batch[dst], edge_graph)
    forward = set(zip(src.tolist(), dst.tolist(), m.bond_order.tolist(), strict=True))
    assert forward == {(d, s, o) for s, d, o in forward}, "every bond both ways, with one order"
    key = dst * max(n, 1) + src
    assert bool((key.diff() > 0).all()), "sorted by destination, then source; no duplicates"
    for t in (m.atomic_number, m.charge, m.hydrogens, m.edge_index, m.bond_order, m.batch, m.ptr, m.edge_ptr):
        assert t.dtype == torch.int64
    assert m.aromatic.dtype == torch.bool


def test_known_molecules_have_their_atoms_and_bonds():
    m = datasets.from_smiles([s for s, _, _ in KNOWN])
    assert m.num_graphs == len(m) == len(KNOWN)
    assert m.ptr.diff().tolist() == [atoms for _, atoms, _ in KNOWN]
    assert m.edge_ptr.diff().tolist() == [2 * bonds for _, _, bonds in KNOWN]
    check_batching(m)
    acetic = m[1:2]
    assert acetic.atomic_number.tolist() == [6, 6, 8, 8]
    assert acetic.edge_index.tolist() == [[1, 0, 2, 3, 1, 1], [0, 1, 1, 1, 2, 3]]
    assert [datasets.BOND_ORDERS[o] for o in acetic.bond_order.tolist()] == ["single"] * 2 + ["double", "single"] * 2
    benzene = m[2:3]
    assert benzene.aromatic.all() and (benzene.bond_order == datasets.BOND_ORDERS.index("aromatic")).all()
    assert m[3:4].bond_order.tolist() == [2, 2]
    salt = m[5:6]
    assert salt.charge.tolist() == [1, -1] and salt.hydrogens.tolist() == [4, 0] and salt.num_edges == 0
    assert [datasets.ATOM_TYPES[t] for t in salt.atom_type.tolist()] == ["N", "Cl"]


def test_features_slices_batches_and_pyg():
    m = datasets.from_smiles(["c1cc[nH]c1", "[O-]C(=O)C", "[Na+].[Cl-]", "P", "*C"])
    x = m.x
    assert x.shape == (m.num_nodes, datasets.NUM_ATOM_FEATURES) and x.dtype == torch.float32
    one_hot = x[:, : len(datasets.ATOM_TYPES)]
    assert torch.equal(one_hot.argmax(1), m.atom_type) and torch.equal(one_hot.sum(1), torch.ones(m.num_nodes))
    assert torch.equal(x[:, -3:], torch.stack([m.aromatic.float(), m.charge.float(), m.hydrogens.float()], 1))
    other = datasets.ATOM_TYPES.index("other")
    assert m.atom_type[m.ptr[2] :].tolist() == [other, datasets.ATOM_TYPES.index("Cl"), other, other, 0]
    assert m.hydrogens[3] == 1 and m.aromatic[:5].all(), "[nH] is aromatic with one hydrogen"
    parts = m.batches(2)
    assert [len(p) for p in parts] == [2, 2, 1]
    for p in parts:
        check_batching(p)
    for name in ("atomic_number", "bond_order", "charge"):
        assert torch.equal(torch.cat([getattr(p, name) for p in parts]), getattr(m, name))
    shifted = torch.cat([p.edge_index + m.ptr[2 * k] for k, p in enumerate(parts)], 1)
    assert torch.equal(shifted, m.edge_index)
    assert m[4:2].num_graphs == 0 and m[4:2].num_nodes == 0
    with pytest.raises(ValueError, match="step 1"):
        m[::2]
    with pytest.raises(TypeError, match="slice"):
        m[0]
    with pytest.raises(ValueError, match="batch size"):
        m.batches(0)
    pyg_data = pytest.importorskip("torch_geometric.data")
    b = m.to_pyg()
    assert isinstance(b, pyg_data.Batch) and b.num_graphs == 5 and b.num_nodes == m.num_nodes
    assert torch.equal(b.x, x) and torch.equal(b.edge_index, m.edge_index) and torch.equal(b.ptr, m.ptr)


def test_bad_smiles_and_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match=r"smiles\[1\]: SMILES \"C1CC\" at character 1: ring 1 is never closed"):
        datasets.from_smiles(["CCO", "C1CC", "C("])
    with pytest.raises(ValueError, match=r"smiles\[0\].*unknown element"):
        datasets.from_smiles(["[Xx]"])
    with pytest.raises(ValueError, match="at least one"):
        datasets.from_smiles([])
    with pytest.raises(TypeError, match="list"):
        datasets.from_smiles("CCO")
    with pytest.raises(TypeError, match=r"smiles\[1\]"):
        datasets.from_smiles(["C", 3])


def write_split(folder: Path, name: str, text: str) -> None:
    with gzip.open(folder / f"{name}.csv.gz", "wt") as f:
        f.write(text)


def test_moses_files_errors_name_the_folder_file_and_line(tmp_path, monkeypatch):
    monkeypatch.delenv("DFGNN_MOSES_DIR", raising=False)
    with pytest.raises(FileNotFoundError, match="DFGNN_MOSES_DIR"):
        datasets.moses("test")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        datasets.moses("test", dir=tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match="test.csv.gz"):
        datasets.moses("test", dir=tmp_path)
    write_split(tmp_path, "test", "SMILES,SPLIT\nCCO,test\nc1ccccc1,test\nC(C,test\n")
    monkeypatch.setenv("DFGNN_MOSES_DIR", str(tmp_path))
    two = datasets.moses("test", 2)
    assert two.ptr.tolist() == [0, 3, 9] and two.num_edges == 4 + 12
    with pytest.raises(ValueError, match=r"test.csv.gz:4: SMILES \"C\(C\" at character 1: unclosed"):
        datasets.moses("test")
    with pytest.raises(ValueError, match="count must be at least 1"):
        datasets.moses("test", 0)
    with pytest.raises(TypeError, match="count"):
        datasets.moses("test", 2.0)
    with pytest.raises(ValueError, match="unknown MOSES split"):
        datasets.moses("validation", 2)
    write_split(tmp_path, "train", "SMILES\nCC\n")
    with pytest.raises(ValueError, match="holds 1 molecules, fewer than count=5"):
        datasets.moses("train", 5)
    write_split(tmp_path, "test_scaffolds", "smiles\nCC\n")
    with pytest.raises(ValueError, match="test_scaffolds.csv.gz:1: expected a SMILES header"):
        datasets.moses("test_scaffolds")
    (tmp_path / "train.csv.gz").write_bytes(b"\x1f\x8b\x08\x00 not gzip")
    with pytest.raises(OSError, match="train.csv.gz"):
        datasets.moses("train")


def test_moses_test_split_loads():
    folder = moses_dir()
    m = datasets.moses("test", 2000, dir=folder)
    assert m.num_graphs == 2000
    check_batching(m)
    first = m[0:1]
    assert (first.num_nodes, first.num_edges) == (22, 48), "CC1C2CCC(C2)C1CN(CCO)C(=O)c1ccc(Cl)cc1"
    assert 15 < m.num_nodes / m.num_graphs < 30
    types = torch.bincount(m.atom_type, minlength=len(datasets.ATOM_TYPES))
    assert types[datasets.ATOM_TYPES.index("other")] == 0, "MOSES molecules hold only its elements"
    assert types.argmax() == datasets.ATOM_TYPES.index("C") and not m.charge.any(), "mostly carbon, all neutral"
    degree = torch.bincount(m.edge_index[1], minlength=m.num_nodes)
    assert int(degree.max()) <= 4 and int(degree.min()) >= 1


def load_example():
    spec = importlib.util.spec_from_file_location("moses_train", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Loss(torch.nn.Module):
    """The example's masked-atom loss of its model, as a module of ``(x, edge_index)``."""

    def __init__(self, loss, net, atom_type, masked):
        super().__init__()
        self.loss, self.net, self.atom_type, self.masked = loss, net, atom_type, masked

    def forward(self, x, edge_index):
        return self.loss(self.net(x, edge_index), self.atom_type, self.masked)


@pytest.mark.parametrize("model", ["gt", "gat"])
def test_a_training_step_of_the_example_matches_pyg(model):
    """The loss and the gradient of every parameter and of the input, dfgnn's model against
    PyG's from the same state_dict, f32 against f64 under the tolerance rule."""
    pytest.importorskip("torch_geometric")
    example = load_example()
    m = datasets.from_smiles([s for s, _, _ in KNOWN] + ["COc1ccc(-c2cc(=O)c3c(O)c(OC)c(OC)cc3o2)cc1O"])
    masked = torch.rand(m.num_nodes, generator=torch.Generator().manual_seed(3)) < 0.3
    assert masked.any()
    x = example.masked_inputs(m.x, masked)

    def make(impl):
        return lambda: _Loss(example.masked_loss, example.build(model, impl, hidden=8, heads=2, seed=7), m.atom_type, masked)

    parity(make("pyg"), make("dfgnn"), [x], m.edge_index)


def test_the_example_runs_on_the_cpu(tmp_path):
    """examples/moses_train.py end to end at tiny sizes on the CPU (dfgnn on its emulator)."""
    folder = moses_dir()
    out = tmp_path / "moses.json"
    cmd = [sys.executable, str(EXAMPLE), "--dir", folder, "--device", "cpu", "--molecules", "24", "--test-molecules", "8"]
    cmd += ["--batch", "8", "--hidden", "8", "--heads", "2", "--epochs", "1", "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(out.read_text())
    assert set(report["runs"]) == {"gt/pyg", "gt/dfgnn", "gat/pyg", "gat/dfgnn"}
    assert report["data"]["train_molecules"] == 24 and report["data"]["batches"] == 3
    for model in ("gt", "gat"):
        pyg_run, dfgnn_run = report["runs"][f"{model}/pyg"], report["runs"][f"{model}/dfgnn"]
        # The same start, batches and masks: the epochs' losses agree closely.
        assert dfgnn_run["max_train_loss_diff_vs_pyg"] < 1e-3, (pyg_run, dfgnn_run)
        assert 0.0 <= dfgnn_run["test_accuracy"] <= 1.0 and dfgnn_run["dfgnn_graph_mb"] > 0
