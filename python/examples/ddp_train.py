"""Data-parallel training of a dfgnn GAT (or GT) model with PyTorch's DDP, one process per GPU.

    torchrun --standalone --nproc_per_node=2 python/examples/ddp_train.py [--check] [--json out.json]
    torchrun --standalone --nproc_per_node=2 python/examples/ddp_train.py --backend gloo --device cpu --check

Each step, the training nodes of one global batch are split across the ranks; each rank samples
its own neighbourhood subgraph (PyG's ``NeighborLoader`` sampler when pyg-lib or torch-sparse is
installed, else the plain-torch fan-out sampler below; ``--check`` always uses the latter so that
one process can replay every rank's batches), runs the model on it and DDP averages the
gradients over NCCL (gloo on the CPU). The graph is a seeded random graph with learnable labels,
or Cora (``--cora path/to/cora.npz``).

``--check`` verifies the mechanics after ``--steps`` steps: the parameters are bit-identical on
every rank, and equal (within the float tolerance of a different summation order) to one
process that runs every rank's batch of each step and accumulates the gradients before stepping.
Prints one JSON line (rank 0), also written to ``--json``; exits non-zero when a check fails.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

import dfgnn.nn


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default=None, help="nccl (default with CUDA) or gloo")
    p.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds a collective may wait before it fails (not hangs)"
    )
    p.add_argument("--model", choices=["gat", "gt"], default="gat")
    p.add_argument("--cora", default=None, help="a Planetoid cora.npz (graphs/README.md); default: a random graph")
    p.add_argument("--nodes", type=int, default=20000)
    p.add_argument("--degree", type=int, default=16)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--classes", type=int, default=8)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=512, help="training nodes per rank and step")
    p.add_argument("--fanout", default="10,10")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--lr", type=float, default=0.005)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sampler", choices=["auto", "pyg", "torch"], default="auto")
    p.add_argument("--check", action="store_true", help="verify the parameters (see the module docstring)")
    p.add_argument("--json", default=None)
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------------
# Data


def random_graph(args):
    """A seeded G(n, m) graph whose labels the features determine (so training learns)."""
    g = torch.Generator().manual_seed(args.seed)
    n, m = args.nodes, args.nodes * args.degree
    edge_index = torch.stack([torch.randint(0, n, (m,), generator=g), torch.randint(0, n, (m,), generator=g)])
    x = torch.randn(n, args.features, generator=g)
    w = torch.randn(args.features, args.classes, generator=g)
    y = (x @ w).argmax(dim=1)
    train = torch.randperm(n, generator=g)[: n // 2]
    return x, edge_index, y, train


def cora(path):
    import numpy as np

    data = np.load(path)
    indptr, indices = torch.from_numpy(data["indptr"]).long(), torch.from_numpy(data["indices"]).long()
    dst = torch.repeat_interleave(torch.arange(len(indptr) - 1), indptr[1:] - indptr[:-1])
    x = torch.from_numpy(data["features"]).float()
    y = torch.from_numpy(data["labels"]).long()
    train = torch.from_numpy(data["train_mask"]).nonzero().flatten()
    return x, torch.stack([indices, dst]), y, train


class Csr:
    """In-neighbours by destination, for the fan-out sampler."""

    def __init__(self, edge_index, n):
        order = torch.argsort(edge_index[1], stable=True)
        self.src = edge_index[0][order]
        self.ptr = torch.zeros(n + 1, dtype=torch.long)
        torch.cumsum(torch.bincount(edge_index[1], minlength=n), 0, out=self.ptr[1:])


def sample(csr: Csr, seeds, fanouts, generator):
    """A PyG-``NeighborLoader``-shaped subgraph: ``(n_id, edge_index)`` with the seeds first in
    ``n_id`` and edges (local ids, source → destination) sampled with replacement, ``fanout``
    in-neighbours per node and hop."""
    n_id = seeds.clone()
    local = {int(v): i for i, v in enumerate(n_id.tolist())}
    frontier, edges = seeds, []
    for fanout in fanouts:
        start, deg = csr.ptr[frontier], csr.ptr[frontier + 1] - csr.ptr[frontier]
        keep = deg > 0
        dst, start, deg = frontier[keep], start[keep], deg[keep]
        pick = (torch.rand(len(dst), fanout, generator=generator) * deg[:, None]).long() + start[:, None]
        src = csr.src[pick].flatten()
        dst = dst[:, None].expand(-1, fanout).flatten()
        new = []
        for v in src.tolist():
            if v not in local:
                local[v] = len(local)
                new.append(v)
        edges.append(torch.stack([src, dst]))
        frontier = torch.tensor(new, dtype=torch.long)
        n_id = torch.cat([n_id, frontier])
    edge_index = torch.cat(edges, 1) if edges else torch.zeros(2, 0, dtype=torch.long)
    remap = torch.tensor([local[int(v)] for v in edge_index.flatten().tolist()], dtype=torch.long)
    return n_id, remap.view(2, -1)


def pyg_sampler_available() -> bool:
    import torch_geometric.typing as t

    return bool(getattr(t, "WITH_PYG_LIB", False) or getattr(t, "WITH_TORCH_SPARSE", False))


# ---------------------------------------------------------------------------------------------
# Model


class Net(nn.Module):
    def __init__(self, args, in_features, classes):
        super().__init__()
        h, c = args.heads, args.hidden
        if args.model == "gat":
            self.conv1 = dfgnn.nn.GATConv(in_features, c, heads=h, fallback="error")
            self.conv2 = dfgnn.nn.GATConv(h * c, classes, heads=1, concat=False, fallback="error")
        else:
            self.conv1 = dfgnn.nn.TransformerConv(in_features, c, heads=h, fallback="error")
            self.conv2 = dfgnn.nn.TransformerConv(h * c, classes, heads=1, concat=False, fallback="error")

    def forward(self, x, edge_index):
        return self.conv2(F.elu(self.conv1(x, edge_index)), edge_index)


def batch_seeds(train, step, rank, world, batch_size, seed):
    """The training nodes of rank ``rank`` at ``step``: its slice of the step's global batch."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + step)
    perm = train[torch.randperm(len(train), generator=g)]
    per_step = perm[: batch_size * world]
    return per_step[rank * batch_size : (rank + 1) * batch_size]


def batch(data, csr, fanouts, step, rank, world, args, loader_batches=None):
    """``(x, edge_index, y, seeds)`` of one rank's batch, on the CPU."""
    x, edge_index, y, train = data
    if loader_batches is not None:
        b = next(loader_batches)
        return b.x, b.edge_index, b.y[: b.batch_size], b.batch_size
    seeds = batch_seeds(train, step, rank, world, args.batch_size, args.seed)
    generator = torch.Generator().manual_seed(args.seed * 7919 + step * world + rank)
    n_id, local = sample(csr, seeds, fanouts, generator)
    return x[n_id], local, y[seeds], len(seeds)


def train_step(model, opt, xb, eib, yb, size, device, scale=1.0, step=True):
    out = model(xb.to(device), eib.to(device))[:size]
    loss = F.cross_entropy(out, yb.to(device)) * scale
    loss.backward()
    if step:
        opt.step()
        opt.zero_grad(set_to_none=True)
    return float(loss.detach())


def flat_parameters(model) -> torch.Tensor:
    return torch.cat([p.detach().flatten().cpu() for p in model.parameters()])


def main(argv=None) -> int:
    args = parse_args(argv)
    cuda = torch.cuda.is_available() if args.device is None else args.device == "cuda"
    backend = args.backend or ("nccl" if cuda else "gloo")
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if cuda:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    fanouts = [int(f) for f in args.fanout.split(",")]
    data = cora(args.cora) if args.cora else random_graph(args)
    x, edge_index, y, train = data
    classes = int(y.max()) + 1
    csr = Csr(edge_index, x.size(0))

    use_pyg = not args.check and (args.sampler == "pyg" or (args.sampler == "auto" and pyg_sampler_available()))
    loader_batches = None
    if use_pyg:
        from torch_geometric.data import Data
        from torch_geometric.loader import NeighborLoader

        part = train[torch.randperm(len(train), generator=torch.Generator().manual_seed(args.seed))]
        mine = part[rank::world]  # each rank samples its own part of the training nodes
        loader = NeighborLoader(
            Data(x=x, edge_index=edge_index, y=y), num_neighbors=fanouts, batch_size=args.batch_size, input_nodes=mine, shuffle=True
        )

        def forever():
            while True:
                yield from loader

        loader_batches = forever()

    torch.manual_seed(args.seed)
    model = Net(args, x.size(1), classes).to(device)
    reference = Net(args, x.size(1), classes).to(device) if args.check and rank == 0 else None
    if reference is not None:
        reference.load_state_dict(model.state_dict())
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank] if cuda else None)
    opt = torch.optim.Adam(ddp.parameters(), lr=args.lr)

    times, losses = [], []
    for step in range(args.steps):
        xb, eib, yb, size = batch(data, csr, fanouts, step, rank, world, args, loader_batches)
        if cuda:
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        losses.append(train_step(ddp, opt, xb, eib, yb, size, device))
        if cuda:
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)

    result = {
        "world_size": world,
        "backend": backend,
        "device": str(device),
        "model": args.model,
        "sampler": "pyg NeighborLoader" if use_pyg else "plain-torch fan-out",
        "steps": args.steps,
        "step_ms_median": 1e3 * sorted(times)[len(times) // 2] if times else None,
        "first_loss": losses[0] if losses else None,
        "last_loss": losses[-1] if losses else None,
    }
    ok = True
    if args.check:
        mine = flat_parameters(model)
        gathered = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather_object(gathered, mine)
        if rank == 0:
            result["identical_across_ranks"] = all(torch.equal(gathered[0], g) for g in gathered)
            ref_opt = torch.optim.Adam(reference.parameters(), lr=args.lr)
            for step in range(args.steps):
                for r in range(world):  # every rank's batch, gradients accumulated, then one step
                    xb, eib, yb, size = batch(data, csr, fanouts, step, r, world, args)
                    train_step(reference, ref_opt, xb, eib, yb, size, device, scale=1 / world, step=r == world - 1)
            diff = float((flat_parameters(reference) - gathered[0]).abs().max())
            scale = float(gathered[0].abs().max())
            result["max_abs_diff_vs_accumulation"] = diff
            result["equal_to_accumulation"] = diff <= 1e-4 * max(1.0, scale)
            ok = result["identical_across_ranks"] and result["equal_to_accumulation"]
    if rank == 0:
        line = json.dumps(result)
        print(line, flush=True)
        if args.json:
            with open(args.json, "w") as f:
                f.write(line + "\n")
    # Every rank waits for rank 0's check before the teardown: a rank that tore its group down
    # and exited while rank 0 still worked left rank 0's teardown waiting on it (a hang seen in
    # CI with gloo).
    dist.barrier()
    # Rank 0 alone knows the check's outcome; torchrun fails the job when any rank fails.
    code = 0 if ok else 1
    teardown(args.timeout, code)
    return code


def teardown(timeout_s: float, code: int) -> None:
    """Destroys the process group, or exits with ``code`` if that takes past ``timeout_s``.

    ``destroy_process_group`` hangs now and then after a barrier (pytorch/pytorch#75097; seen here
    with gloo on the CPU: rank 0 idle in it for 30 minutes after writing its result), and no
    collective timeout covers it. Everything this process had to do is done by then, so a hung
    teardown is reported on stderr and the process leaves without it."""
    worker = threading.Thread(target=dist.destroy_process_group, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        print(f"ddp_train: destroy_process_group did not return in {timeout_s:g} s; exiting without it", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
