"""3-layer GT and GAT models on MOSES molecules in mini-batches, dfgnn's layers against PyG's:
masked-atom prediction, epoch time, peak memory and test accuracy.

    python python/examples/moses_train.py [--dir DIR] [--molecules 250000] [--test-molecules 20000] \\
        [--batch 1024] [--heads 4] [--hidden 128] [--epochs 5] [--models gt,gat] [--impls pyg,dfgnn] \\
        [--device cuda|cpu] [--seed 0] [--json moses_train.json]

Data: the first ``--molecules`` molecules of MOSES's ``train`` split for training and the first
``--test-molecules`` of its ``test`` split (held out) for testing, read by
``dfgnn.datasets.moses`` from ``--dir`` (default ``$DFGNN_MOSES_DIR``), cut once into batches of
``--batch`` molecules (PyG's batching: one block-diagonal graph per batch, both directions of
every bond) and moved to the device once.

Task: attribute masking (Hu et al., "Strategies for Pre-training Graph Neural Networks", ICLR
2020). Each atom is masked with probability 0.15: its atom-type one-hot (C, N, O, F, S, Cl, Br,
H, other) is zeroed and a mask flag set; aromaticity, formal charge and bracket hydrogens stay.
The model predicts the masked atoms' types (cross-entropy over the masked atoms). Training
draws new masks every epoch (a generator seeded per epoch); the test masks are drawn once.
Reported: the masked-atom accuracy on the test molecules after the last epoch, against the
accuracy of always answering the most common atom type of the training atoms (the floor a model
must beat).

Model: ``Linear(13, hidden)``, three layers ``h = ELU(conv(h) + h)`` with ``conv`` mapping
``hidden`` to ``heads × hidden/heads`` (heads concatenated), then ``Linear(hidden, 9)``. ``gt``:
``TransformerConv``; ``gat``: ``GATConv`` (self loops added, PyG's default). No dropout; Adam,
lr 1e-3. ``pyg`` builds it from PyG's layers, ``dfgnn`` from dfgnn's (``fallback="error"``:
never PyG's path) and loads the PyG model's ``state_dict``: both start from the same
parameters and see the same batches, in the same (seeded, shuffled) order, with the same masks.

An epoch is one pass over the training batches (forward, backward and Adam step per batch),
timed with ``torch.cuda.synchronize`` on either side. The first epoch is a warm-up (dfgnn
prepares each batch's graph on first use and caches it; the allocator warms up) and is left
out: the time is the median of the ``--epochs`` epochs after it. The peak is
``torch.cuda.max_memory_allocated`` over those epochs, the batches on the device included
(``resident_gb``: what was allocated before training, the batches and the parameters).
dfgnn's prepared graphs live outside torch's allocator, so the peak does not count them: they
are reported apart (``dfgnn_graph_mb``, all the batches' graphs together). Prints a table and
writes one JSON with everything, the versions, the GPU, the date and the command; for each
model, the largest gap between dfgnn's and PyG's epoch losses (``max_train_loss_diff_vs_pyg``).

On the CPU (``--device cpu``) dfgnn runs its SIMT emulator: for tiny sizes only, e.g.
``--molecules 64 --test-molecules 32 --batch 16 --hidden 16 --heads 2 --epochs 1``.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.metadata
import json
import os
import platform
import shlex
import statistics
import sys
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
import torch_geometric
import torch_geometric.nn as pyg
from torch import nn

import dfgnn
import dfgnn.nn
from dfgnn import datasets

#: The probability that an atom is masked.
MASK_RATE = 0.15
#: The classes: the atom types.
NUM_TYPES = len(datasets.ATOM_TYPES)
#: The model's input: the atom features and the mask flag.
IN_FEATURES = datasets.NUM_ATOM_FEATURES + 1

CONVS = {
    ("gt", "pyg"): lambda c, h: pyg.TransformerConv(c, c // h, heads=h),
    ("gt", "dfgnn"): lambda c, h: dfgnn.nn.TransformerConv(c, c // h, heads=h, fallback="error"),
    ("gat", "pyg"): lambda c, h: pyg.GATConv(c, c // h, heads=h),
    ("gat", "dfgnn"): lambda c, h: dfgnn.nn.GATConv(c, c // h, heads=h, fallback="error"),
}


class Net(nn.Module):
    """The masked-atom model: embedding, three residual attention layers, classifier."""

    def __init__(self, model: str, impl: str, hidden: int, heads: int, layers: int = 3):
        super().__init__()
        if hidden % heads:
            raise ValueError(f"--hidden {hidden} must be a multiple of --heads {heads}")
        self.embed = nn.Linear(IN_FEATURES, hidden)
        self.convs = nn.ModuleList(CONVS[(model, impl)](hidden, heads) for _ in range(layers))
        self.head = nn.Linear(hidden, NUM_TYPES)

    def forward(self, x, edge_index):
        h = self.embed(x)
        for conv in self.convs:
            h = F.elu(conv(h, edge_index) + h)
        return self.head(h)


def build(model: str, impl: str, hidden: int, heads: int, seed: int) -> Net:
    """The model, initialised from ``seed`` as PyG's: dfgnn's loads the PyG model's state_dict."""
    torch.manual_seed(seed)
    reference = Net(model, "pyg", hidden, heads)
    if impl == "pyg":
        return reference
    net = Net(model, impl, hidden, heads)
    net.load_state_dict(reference.state_dict())
    return net


def masked_inputs(x, masked):
    """The model's input: ``x`` with the atom types of ``masked`` atoms zeroed, and the mask flag."""
    keep = (~masked).to(x.dtype)[:, None]
    return torch.cat([x[:, :NUM_TYPES] * keep, x[:, NUM_TYPES:], masked.to(x.dtype)[:, None]], dim=1)


def masked_loss(logits, atom_type, masked):
    """Mean cross-entropy over the masked atoms (0 when none is; no host synchronisation)."""
    per_atom = F.cross_entropy(logits, atom_type, reduction="none")
    return (per_atom * masked).sum() / masked.sum().clamp(min=1)


@dataclass
class Batch:
    """One mini-batch on the device: PyG's batched graph and the masked-atom targets."""

    x: torch.Tensor
    edge_index: torch.Tensor
    atom_type: torch.Tensor

    @staticmethod
    def of(molecules: datasets.Molecules, device) -> Batch:
        return Batch(molecules.x.to(device), molecules.edge_index.to(device), molecules.atom_type.to(device))


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_epoch(net, opt, batches, epoch, seed, device):
    """One pass over ``batches`` in a seeded order, new masks from a seeded generator; the mean
    loss (a device tensor: read after the timing)."""
    order = torch.randperm(len(batches), generator=torch.Generator().manual_seed(seed * 10_000 + epoch))
    masks = torch.Generator(device=device).manual_seed(seed * 10_000 + epoch)
    net.train()
    total = torch.zeros((), device=device)
    for i in order.tolist():
        b = batches[i]
        masked = torch.rand(b.x.shape[0], generator=masks, device=device) < MASK_RATE
        opt.zero_grad(set_to_none=True)
        loss = masked_loss(net(masked_inputs(b.x, masked), b.edge_index), b.atom_type, masked)
        loss.backward()
        opt.step()
        total += loss.detach()
    return total / len(batches)


@torch.no_grad()
def evaluate(net, batches, masks):
    """Masked-atom accuracy and mean loss over ``batches`` with fixed ``masks``."""
    net.eval()
    correct, count, loss = 0, 0, 0.0
    for b, masked in zip(batches, masks, strict=True):
        logits = net(masked_inputs(b.x, masked), b.edge_index)
        correct += int(((logits.argmax(dim=1) == b.atom_type) & masked).sum())
        count += int(masked.sum())
        loss += float(masked_loss(logits, b.atom_type, masked))
    return correct / max(count, 1), loss / len(batches)


def graph_bytes(batches, model):
    """The device bytes of dfgnn's prepared graphs of ``batches`` (cached by the layers)."""
    return sum(
        dfgnn.Graph.from_edge_index(b.edge_index, num_nodes=b.x.shape[0], add_self_loops=model == "gat").device_bytes
        for b in batches
    )


def run(model, impl, train, test, test_masks, args, device):
    net = build(model, impl, args.hidden, args.heads, args.seed).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    # What is allocated before training: the batches on the device and the parameters.
    resident = torch.cuda.memory_allocated(device) if device.type == "cuda" else None
    times, losses = [], []
    for epoch in range(1 + args.epochs):
        if epoch == 1 and device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        sync(device)
        start = time.perf_counter()
        loss = train_epoch(net, opt, train, epoch, args.seed, device)
        sync(device)
        times.append(time.perf_counter() - start)
        losses.append(float(loss))
        print(f"  {model}/{impl} epoch {epoch}: {1e3 * times[-1]:.1f} ms, train loss {losses[-1]:.4f}", flush=True)
    result = {
        "epoch_ms": 1e3 * statistics.median(times[1:]),
        "epoch_ms_all": [1e3 * t for t in times],
        "warmup_epoch_ms": 1e3 * times[0],
        "peak_gb": torch.cuda.max_memory_allocated(device) / 1e9 if device.type == "cuda" else None,
        "resident_gb": resident / 1e9 if resident is not None else None,
        "train_loss": losses,
    }
    result["test_accuracy"], result["test_loss"] = evaluate(net, test, test_masks)
    if impl == "dfgnn":
        result["dfgnn_graph_mb"] = (graph_bytes(train, model) + graph_bytes(test, model)) / 1e6
    del net, opt
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


def version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=None, help="the MOSES folder (default $DFGNN_MOSES_DIR)")
    p.add_argument("--molecules", type=int, default=250_000, help="training molecules (MOSES train)")
    p.add_argument("--test-molecules", type=int, default=20_000, help="test molecules (MOSES test)")
    p.add_argument("--batch", type=int, default=1024, help="molecules per batch")
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--hidden", type=int, default=128, help="hidden width (heads × hidden/heads)")
    p.add_argument("--epochs", type=int, default=5, help="timed epochs, after one warm-up epoch")
    p.add_argument("--models", default="gt,gat", help="comma-separated, of gt,gat")
    p.add_argument("--impls", default="pyg,dfgnn", help="comma-separated, of pyg,dfgnn")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="moses_train.json")
    args = p.parse_args(argv)
    models, impls = args.models.split(","), args.impls.split(",")
    for name, given, known in (("--models", models, ("gt", "gat")), ("--impls", impls, ("pyg", "dfgnn"))):
        if not set(given) <= set(known):
            p.error(f"{name} takes a comma-separated list of {','.join(known)}, not {','.join(given)}")
    if args.epochs < 1 or args.batch < 1:
        p.error("--epochs and --batch must be at least 1")
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: no CUDA device")
    device = torch.device("cuda", torch.cuda.current_device()) if args.device == "cuda" else torch.device("cpu")

    start = time.perf_counter()
    train_set = datasets.moses("train", args.molecules, dir=args.dir)
    test_set = datasets.moses("test", args.test_molecules, dir=args.dir)
    load_s = time.perf_counter() - start
    train = [Batch.of(m, device) for m in train_set.batches(args.batch)]
    test = [Batch.of(m, device) for m in test_set.batches(args.batch)]
    draw = torch.Generator().manual_seed(args.seed + 1)
    test_masks = [(torch.rand(b.x.shape[0], generator=draw) < MASK_RATE).to(device) for b in test]
    # The floor: always answering the training atoms' most common type, scored on the test masks.
    counts = torch.bincount(train_set.atom_type, minlength=NUM_TYPES)
    majority = int(counts.argmax())
    masked_test_types = torch.cat([b.atom_type[m].cpu() for b, m in zip(test, test_masks, strict=True)])
    report = {
        "command": shlex.join([sys.executable, *sys.argv]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "torch_geometric": torch_geometric.__version__,
            "dfgnn": version("dfgnn"),
            "cuda": torch.version.cuda,
        },
        "device": str(device),
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "args": vars(args),
        "data": {
            "load_s": load_s,
            "train_molecules": train_set.num_graphs,
            "train_atoms": train_set.num_nodes,
            "train_edges": train_set.num_edges,
            "test_molecules": test_set.num_graphs,
            "test_atoms": test_set.num_nodes,
            "batches": len(train),
            "atoms_per_batch": train_set.num_nodes / len(train),
            "edges_per_batch": train_set.num_edges / len(train),
            "masked_test_atoms": masked_test_types.numel(),
        },
        "majority_type": datasets.ATOM_TYPES[majority],
        "majority_accuracy": float((masked_test_types == majority).double().mean()),
        "runs": {},
    }
    print(
        f"MOSES: {train_set.num_graphs} training molecules ({train_set.num_nodes} atoms, {train_set.num_edges} edges) "
        f"in {len(train)} batches of {args.batch}, {test_set.num_graphs} test molecules; loaded in {load_s:.1f} s",
        flush=True,
    )
    for model in models:
        for impl in impls:
            report["runs"][f"{model}/{impl}"] = run(model, impl, train, test, test_masks, args, device)
    for model in models:
        runs = report["runs"]
        if f"{model}/pyg" in runs and f"{model}/dfgnn" in runs:
            # The same start, batches and masks: the curves part only by float rounding.
            pairs = zip(runs[f"{model}/pyg"]["train_loss"], runs[f"{model}/dfgnn"]["train_loss"], strict=True)
            runs[f"{model}/dfgnn"]["max_train_loss_diff_vs_pyg"] = max(abs(a - b) for a, b in pairs)
    where = report["gpu"] or "CPU (dfgnn on its emulator)"
    print(f"3-layer models, {args.heads} heads × {args.hidden // args.heads}, masked-atom prediction, {where}")
    print(f"{'model/layers':<13} {'epoch (ms)':>11} {'peak (GB)':>10} {'resident (GB)':>14} {'loss':>8} {'test acc (%)':>13}")
    for key, r in report["runs"].items():
        peak, resident = (f"{r[k]:.3f}" if r[k] is not None else "-" for k in ("peak_gb", "resident_gb"))
        loss, accuracy = r["train_loss"][-1], 100 * r["test_accuracy"]
        print(f"{key:<13} {r['epoch_ms']:>11.1f} {peak:>10} {resident:>14} {loss:>8.4f} {accuracy:>13.2f}")
    print(f"always {report['majority_type']}: {100 * report['majority_accuracy']:.2f} % of the masked test atoms")
    for key, r in report["runs"].items():
        if "dfgnn_graph_mb" in r:
            print(f"  {key}: prepared graphs {r['dfgnn_graph_mb']:.1f} MB outside torch's allocator (not in the peak)")
        if "max_train_loss_diff_vs_pyg" in r:
            print(f"  {key}: epoch train losses within {r['max_train_loss_diff_vs_pyg']:.2e} of PyG's")
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
