"""3-layer GT, GAT (and GATv2) models on a large generated graph: epoch time and peak memory, dfgnn's
layers against PyG's.

    python python/examples/large_graph.py [--graph er|pl] [--nodes 1048576] [--degree 16] \\
        [--heads 4] [--feat 64] [--models gt,gat] [--json large_graph.json]

The graph is generated here with torch, seeded: ``er`` draws ``nodes·degree`` edges with uniform
sources and destinations (G(n, m), the model of dfgnn's ``er-1M-d16``; the same size and degree
distribution, not the same edges), ``pl`` draws sources and destinations from Chung–Lu weights
``(rank + 1)^(-1/(γ-1))``, γ = 2.1 (the model of ``pl-1M-d16``, with repeated edges kept). The
features are random (``[N, heads·feat]``), the loss is the mean square of the last layer's output.

A model is three layers of ``heads × feat`` (concatenated, so each layer maps ``heads·feat`` to
``heads·feat``) with ELU between them: ``TransformerConv`` (GT), ``GATConv`` (GAT) or
``GATv2Conv`` (GATv2, ``--models gatv2``), without attention dropout (the layers' default; both
libraries run the same model). An
epoch is one full-graph forward, backward and Adam step, synchronised; the time is the median
over ``--epochs`` epochs after one warm-up epoch; the peak is ``torch.cuda.max_memory_allocated``
over the timed epochs (the graph, features and parameters included). A run that runs out of
memory is reported as such. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
import torch_geometric.nn as pyg
from torch import nn

import dfgnn.nn


def generate(kind: str, nodes: int, degree: int, seed: int, device) -> torch.Tensor:
    g = torch.Generator(device="cpu").manual_seed(seed)
    m = nodes * degree
    if kind == "er":
        src, dst = torch.randint(0, nodes, (m,), generator=g), torch.randint(0, nodes, (m,), generator=g)
    else:
        weights = (torch.arange(nodes, dtype=torch.float64) + 1).pow(-1 / (2.1 - 1))
        src = torch.multinomial(weights, m, replacement=True, generator=g)
        dst = torch.multinomial(weights, m, replacement=True, generator=g)
    return torch.stack([src, dst]).to(device)


LAYERS = {
    ("gt", "pyg"): lambda d, h, f: pyg.TransformerConv(d, f, heads=h),
    ("gt", "dfgnn"): lambda d, h, f: dfgnn.nn.TransformerConv(d, f, heads=h, fallback="error"),
    ("gat", "pyg"): lambda d, h, f: pyg.GATConv(d, f, heads=h, add_self_loops=False),
    ("gat", "dfgnn"): lambda d, h, f: dfgnn.nn.GATConv(d, f, heads=h, add_self_loops=False, fallback="error"),
    ("gatv2", "pyg"): lambda d, h, f: pyg.GATv2Conv(d, f, heads=h, add_self_loops=False),
    ("gatv2", "dfgnn"): lambda d, h, f: dfgnn.nn.GATv2Conv(d, f, heads=h, add_self_loops=False, fallback="error"),
}


class Net(nn.Module):
    def __init__(self, model, impl, heads, feat, layers=3):
        super().__init__()
        make = LAYERS[(model, impl)]
        self.convs = nn.ModuleList(make(heads * feat, heads, feat) for _ in range(layers))

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i + 1 < len(self.convs):
                x = F.elu(x)
        return x


def measure(model, impl, x, edge_index, args, device):
    torch.manual_seed(0)
    net = Net(model, impl, args.heads, args.feat).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def epoch():
        opt.zero_grad(set_to_none=True)
        net(x, edge_index).square().mean().backward()
        opt.step()

    try:
        epoch()  # warm-up: graph preparation, plans, workspaces, allocator
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        times = []
        for _ in range(args.epochs):
            start = time.perf_counter()
            epoch()
            torch.cuda.synchronize(device)
            times.append(time.perf_counter() - start)
        return {"epoch_ms": 1e3 * statistics.median(times), "peak_gb": torch.cuda.max_memory_allocated(device) / 1e9}
    except torch.OutOfMemoryError:
        return {"epoch_ms": None, "peak_gb": None, "error": "out of memory"}
    finally:
        del net, opt
        torch.cuda.empty_cache()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", choices=["er", "pl"], default="er")
    p.add_argument("--nodes", type=int, default=2**20)
    p.add_argument("--degree", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--feat", type=int, default=64)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--models", default="gt,gat")
    p.add_argument("--impls", default="dfgnn,pyg")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="large_graph.json")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("large_graph.py times CUDA runs: no CUDA device")
    device = torch.device("cuda", torch.cuda.current_device())
    edge_index = generate(args.graph, args.nodes, args.degree, args.seed, device)
    x = torch.randn(args.nodes, args.heads * args.feat, generator=torch.Generator().manual_seed(1)).to(device)
    name = f"{args.graph}-N{args.nodes}-d{args.degree}"
    report = {"graph": name, "edges": edge_index.shape[1], "heads": args.heads, "feat": args.feat, "gpu": torch.cuda.get_device_name(device), "runs": {}}
    for model in args.models.split(","):
        for impl in args.impls.split(","):
            report["runs"][f"{model}/{impl}"] = measure(model, impl, x, edge_index, args, device)
    print(f"3-layer models on {name} ({report['edges']} edges), {args.heads}x{args.feat}, {report['gpu']}")
    print(f"{'model/layers':<14} {'epoch (ms)':>11} {'peak (GB)':>10}")
    for key, r in report["runs"].items():
        if r["epoch_ms"] is None:
            print(f"{key:<14} {r['error']:>22}")
        else:
            print(f"{key:<14} {r['epoch_ms']:>11.1f} {r['peak_gb']:>10.2f}")
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
