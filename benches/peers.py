#!/usr/bin/env python3
"""Peers timed in the same run as `dfgnn bench suite`, with the same protocol.

    python3 benches/peers.py --suite OUT/suite.json --graphs OUT/graphs --out OUT/peers.json

For every graph, model, shape and pass of the suite file (the graphs as `.npz` files that
`dfgnn bench suite --write-graphs DIR` or `dfgnn graph write NAME DIR/NAME.npz` wrote), times:

- PyG 2.8: `TransformerConv` (GT), `GATConv` (GAT), `GATv2Conv` (GATv2), `AGNNConv` (AGNN), each
  as a whole layer and as its bare attention part (the layer's gather, per-edge score,
  `torch_geometric.utils.softmax` and scatter-add on given q, k, v / h). `AGNNConv` has one head,
  so the AGNN layer runs at 1xF only; its attention part runs at every shape, the cosine per head;
- `torch_sparse`: GT through cuSPARSE (`torch.sparse.sampled_addmm`, a row softmax over the CSR
  values, `torch.sparse.mm`), per head, forward only;
- turbo-gnn 0.1.0rc4 when it is installed: `graph_transformer_aggr` (GT) and `gatv2_aggr` (GATv2).
  It scores `Q[source]·K[destination]`, so PyG's `q[dst]·k[src]` is `Q = k, K = q`;
- dfgnn's own Python package when it is importable (system `dfgnn-python`): `dfgnn.nn`'s
  `TransformerConv`, `GATConv`, `GATv2Conv`, `AGNNConv` as layers (the same constructor arguments
  and the same `state_dict` as the PyG layer they are compared with: the drop-in comparison;
  `fallback="error"`, so PyG's path never runs in their place), and the bare ops
  (`dfgnn.ops.gt_attention`, `gat_attention`, `gatv2_attention`, `agnn_attention`) on the very
  tensors of PyG's attention part. The graph is prepared outside the timing, once per loaded
  graph file (`dfgnn.Graph.from_edge_index` on the case's `edge_index`; the layers find it in its
  cache); the output check plans the forward ops, the first warm-up call the backward ones. The
  prepared graph lives outside torch's allocator, so its `device_bytes` are added to the peak.

Protocol (that of `dfgnn bench`): CUDA events around each call, warm-up calls, then the median of
the timed calls, cut to no fewer than 3 when they would exceed the case budget (judged by the last
warm-up call); two input sets in rotation; peak memory is `torch.cuda.max_memory_allocated()`
over one call less the other input set. Before timing, each peer's output is checked against an
f64 evaluation of the same formula (PyG's convention) on a sample of rows that includes the
longest one; a peer that differs by more than `--tolerance` (relative to the output's largest
magnitude) is recorded with the difference as its error and not timed.

The records use the suite's JSON schema, so `dfgnn bench report suite.json peers.json` shows every
peer's time over dfgnn's plan's in the same run. Needs torch and torch_geometric; without CUDA it
runs on the CPU with a wall clock (for testing the script, not for timing:
python/tests/test_peers.py runs every peer's check that way on a tiny graph).
"""

import argparse
import datetime
import json
import math
import os
import sys
import time

import numpy as np
import torch

SCHEMA = 1
MIN_REPEATS = 3
#: The `system` of dfgnn's Python layers and ops in the records (`dfgnn` is the suite's own).
DFGNN_PYTHON = "dfgnn-python"


def load_graph(path, device):
    """A scipy CSR `.npz` (rows = destinations) as (src, dst, indptr, num_dst, num_src)."""
    z = np.load(path, allow_pickle=False)
    indptr = torch.from_numpy(z["indptr"].astype(np.int64))
    indices = torch.from_numpy(z["indices"].astype(np.int64))
    num_dst, num_src = (int(x) for x in z["shape"])
    dst = torch.repeat_interleave(torch.arange(num_dst), indptr[1:] - indptr[:-1])
    return indices.to(device), dst.to(device), indptr.to(device), num_dst, num_src


class Timer:
    """CUDA events on a GPU, the wall clock on the CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def time(self, fn):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3


def time_calls(timer, fn, warmup, repeats, budget_ms, sets):
    """The suite's protocol: warm-up, then the median of timed calls (cut to the budget)."""
    last = float("nan")
    for i in range(warmup):
        last = timer.time(lambda: fn(i % sets))
    if budget_ms and last > 0:
        repeats = min(repeats, max(MIN_REPEATS, int(budget_ms / last)))
    samples = [timer.time(lambda i=i: fn(i % sets)) for i in range(warmup, warmup + max(repeats, 1))]
    ordered = sorted(samples)
    # The median as dfgnn takes it (the upper one of an even count).
    return {"median_ms": ordered[len(ordered) // 2], "min_ms": ordered[0], "max_ms": ordered[-1]}, len(samples)


# ---- the formulas, in PyG's convention (scores of edge src -> dst, softmax over a row's edges) ----

def row_softmax(scores, dst, num_dst):
    from torch_geometric.utils import softmax

    return softmax(scores, dst, num_nodes=num_dst)


def aggregate(messages, dst, num_dst):
    from torch_geometric.utils import scatter

    return scatter(messages, dst, dim=0, dim_size=num_dst, reduce="sum")


def gt_attention(q, k, v, src, dst, num_dst):
    """out[i] = sum_j softmax_j(q_i . k_j / sqrt(F)) v_j: PyG's TransformerConv attention."""
    scores = (q[dst] * k[src]).sum(-1) / math.sqrt(q.shape[-1])
    return aggregate(v[src] * row_softmax(scores, dst, num_dst).unsqueeze(-1), dst, num_dst)


def gat_attention(h, h_dst, a_src, a_dst, src, dst, num_dst, slope=0.2):
    """GATConv: softmax_j(LeakyReLU(a_dst . h_i + a_src . h_j)) h_j."""
    scores = (h_dst * a_dst).sum(-1)[dst] + (h * a_src).sum(-1)[src]
    alpha = row_softmax(torch.nn.functional.leaky_relu(scores, slope), dst, num_dst)
    return aggregate(h[src] * alpha.unsqueeze(-1), dst, num_dst)


def gatv2_attention(x_l, x_r, att, src, dst, num_dst, slope=0.2):
    """GATv2Conv: softmax_j(att . LeakyReLU(x_r[i] + x_l[j])) x_l[j]."""
    scores = (torch.nn.functional.leaky_relu(x_r[dst] + x_l[src], slope) * att).sum(-1)
    return aggregate(x_l[src] * row_softmax(scores, dst, num_dst).unsqueeze(-1), dst, num_dst)


def agnn_attention(h, h_dst, beta, src, dst, num_dst):
    """AGNNConv: softmax_j(beta cos(h_i, h_j)) h_j, the cosine per head (over the last axis);
    `h_dst` are the destinations' rows of `h` (all of `h` on a whole graph, the sampled rows in
    the check)."""
    cos = (torch.nn.functional.normalize(h_dst, p=2.0, dim=-1)[dst]
           * torch.nn.functional.normalize(h, p=2.0, dim=-1)[src]).sum(-1)
    return aggregate(h[src] * row_softmax(beta * cos, dst, num_dst).unsqueeze(-1), dst, num_dst)


def cusparse_gt(q, k, v, indptr, src, num_dst, num_src):
    """GT through cuSPARSE, per head: SDDMM (sampled_addmm), a row softmax of the CSR values,
    SpMM. The DGL-sparse-style unfused pipeline."""
    heads, feat = q.shape[1], q.shape[2]
    crow, col = indptr, src
    lengths = (crow[1:] - crow[:-1])
    outs = []
    for h in range(heads):
        pattern = torch.sparse_csr_tensor(crow, col, torch.zeros(col.numel(), device=q.device, dtype=q.dtype),
                                          size=(num_dst, num_src))
        s = torch.sparse.sampled_addmm(pattern, q[:, h, :], k[:, h, :].T.contiguous(), beta=0.0,
                                       alpha=1.0 / math.sqrt(feat))
        vals = s.values()
        row_max = torch.segment_reduce(vals, "max", lengths=lengths, unsafe=True)
        row_max = torch.nan_to_num(row_max, neginf=0.0)
        e = torch.exp(vals - torch.repeat_interleave(row_max, lengths))
        row_sum = torch.segment_reduce(e, "sum", lengths=lengths, unsafe=True)
        p = e / torch.repeat_interleave(row_sum, lengths)
        probs = torch.sparse_csr_tensor(crow, col, p, size=(num_dst, num_src))
        outs.append(torch.sparse.mm(probs, v[:, h, :]))
    return torch.stack(outs, dim=1)


# ---- the peers: each builds (forward(set) -> output, parameters to check with) on one case ----

def sample_rows(indptr, count):
    """Rows to check: the longest row and `count` others spread over the graph."""
    lengths = indptr[1:] - indptr[:-1]
    n = lengths.numel()
    picked = torch.unique(torch.cat([torch.linspace(0, n - 1, min(count, n), device=indptr.device).long(),
                                     lengths.argmax().view(1)]))
    return picked


def subgraph(indptr, src, rows):
    """The edges of `rows` as (src, local dst) and the row count."""
    starts, ends = indptr[rows], indptr[rows + 1]
    lengths = ends - starts
    local = torch.repeat_interleave(torch.arange(rows.numel(), device=rows.device), lengths)
    offsets = torch.repeat_interleave(starts - torch.cumsum(lengths, 0) + lengths, lengths)
    edges = torch.arange(int(lengths.sum()), device=rows.device) + offsets
    return src[edges], local, rows.numel()


class Case:
    """One graph on the device with its edge lists and sampled rows."""

    def __init__(self, path, device, check_rows):
        self.src, self.dst, self.indptr, self.num_dst, self.num_src = load_graph(path, device)
        self.edge_index = torch.stack([self.src, self.dst])
        self.rows = sample_rows(self.indptr, check_rows)
        self.sub_src, self.sub_dst, self.sub_n = subgraph(self.indptr, self.src, self.rows)
        self.turbo = None  # turbo-gnn's graph, made on first use (turbo_graph)
        self.dfgnn = None  # dfgnn's prepared graph, made on first use (dfgnn_graph)

    def dfgnn_graph(self):
        """dfgnn's graph of the case's `edge_index`, prepared once (outside any timing) and kept:
        `Graph.from_edge_index` caches it per tensor, so dfgnn's layers, called with the same
        `edge_index` and sizes, get this one (a layer sizes it (x rows, x rows): on a graph with
        fewer destinations than sources it prepares its own, in the output check)."""
        if self.dfgnn is None:
            import dfgnn

            self.dfgnn = dfgnn.Graph.from_edge_index(self.edge_index, num_nodes=(self.num_src, self.num_dst))
        return self.dfgnn


def relative_error(got, want):
    got, want = got.double(), want.double()
    scale = want.abs().max().item() if want.numel() else 0.0
    return (got - want).abs().max().item() / max(scale, 1e-30) if want.numel() else 0.0


def rand(shape, device, seed, grad=False):
    """Uniform in [-1, 1), drawn on `device` (a million-node input in milliseconds)."""
    g = torch.Generator(device=device).manual_seed(seed)
    t = torch.rand(shape, generator=g, device=device) * 2 - 1
    return t.requires_grad_(grad)


def make_layer(pyg_cls, fused_cls, seed, device, *args, **kwargs):
    """PyG's layer `pyg_cls(*args, **kwargs)`, initialised under `seed`, on `device`; with
    `fused_cls` (a `dfgnn.nn` layer), dfgnn's layer of the same arguments carrying that PyG
    layer's `state_dict` instead (the drop-in comparison). `fallback="error"`: were dfgnn's layer to
    fall back to PyG's path, the case fails rather than time PyG under dfgnn's name."""
    torch.manual_seed(seed)
    conv = pyg_cls(*args, **kwargs)
    if fused_cls is not None:
        fused = fused_cls(*args, fallback="error", **kwargs)
        fused.load_state_dict(conv.state_dict())
        conv = fused
    return conv.to(device)


def fused_layer(layer, fused_cls):
    """The peer of dfgnn's layer `fused_cls`: `layer(seed, fused_cls)`, PyG's layer maker with
    dfgnn's class in place of PyG's (the same arguments, `state_dict`, input and reference)."""
    return lambda seed: layer(seed, fused_cls)


def fused_op(case, bare, op):
    """The peer of a dfgnn op: `op(graph, *inputs)` on the inputs of PyG's attention part `bare`
    (the same tensors, the same reference), `graph` dfgnn's prepared graph of the case."""
    def made(seed):
        graph = case.dfgnn_graph()
        _, reference, inputs = bare(seed)
        return (lambda: op(graph, *inputs)), reference, inputs
    return made


def peers_for(model, case, heads, feat, device, sets, have_turbo, have_dfgnn):
    """The peers of `model` on `case`: (system, variant, make) where make(seed) gives
    (call, reference, params): call() runs the peer and returns its output; reference() is the
    f64 formula on the sampled rows, compared with the output's rows; params are the tensors
    whose gradients the backward makes (none: the peer has no backward)."""
    n_dst, n_src, width = case.num_dst, case.num_src, heads * feat
    src, dst, ei = case.src, case.dst, case.edge_index
    ss, sd, sn, rows = case.sub_src, case.sub_dst, case.sub_n, case.rows
    from torch_geometric import nn as pyg

    if have_dfgnn:
        import dfgnn.nn as fused
        import dfgnn.ops as ops
    out = []
    if model == "gt":
        def layer(seed, fused_cls=None):
            conv = make_layer(pyg.TransformerConv, fused_cls, seed, device, width, feat, heads=heads, concat=True,
                              root_weight=False)
            x = rand((n_src, width), device, seed, grad=True)

            def reference():
                with torch.no_grad():
                    q = conv.lin_query(x).view(-1, heads, feat).double()
                    k = conv.lin_key(x).view(-1, heads, feat).double()
                    v = conv.lin_value(x).view(-1, heads, feat).double()
                    return gt_attention(q[rows], k, v, ss, sd, sn).reshape(sn, -1)
            return (lambda: conv(x, ei)), reference, [x] + list(conv.parameters())

        def bare(seed):
            q, k, v = (rand((n, heads, feat), device, seed + i, grad=True) for i, n in enumerate((n_dst, n_src, n_src)))

            def reference():
                return gt_attention(q.detach()[rows].double(), k.detach().double(), v.detach().double(), ss, sd, sn)
            return (lambda: gt_attention(q, k, v, src, dst, n_dst)), reference, [q, k, v]

        def sparse(seed):
            q, k, v = (rand((n, heads, feat), device, seed + i) for i, n in enumerate((n_dst, n_src, n_src)))

            def reference():
                return gt_attention(q[rows].double(), k.double(), v.double(), ss, sd, sn)
            return (lambda: cusparse_gt(q, k, v, case.indptr, src, n_dst, n_src)), reference, []

        out += [("pyg", "TransformerConv", layer), ("pyg", "attention", bare), ("torch_sparse", "cusparse", sparse)]
        if have_dfgnn:
            out += [(DFGNN_PYTHON, "TransformerConv", fused_layer(layer, fused.TransformerConv)),
                    (DFGNN_PYTHON, "attention", fused_op(case, bare, lambda g, q, k, v: ops.gt_attention(q, k, v, g)))]
        if have_turbo and feat in (32, 64, 128, 256):
            graph = turbo_graph(case)

            def turbo(seed):
                import turbo_gnn

                q, k, v = (rand((n, heads, feat), device, seed + i, grad=True) for i, n in enumerate((n_dst, n_src, n_src)))
                x = torch.empty((n_dst, width), device=device)

                def reference():
                    return gt_attention(q.detach()[rows].double(), k.detach().double(), v.detach().double(), ss, sd, sn)
                # Q[source] . K[destination]: PyG's q[dst] . k[src] with Q = k, K = q.
                return (lambda: turbo_gnn.ops.graph_transformer_aggr(graph, x, k, q, v, 1.0 / math.sqrt(feat))), \
                    reference, [q, k, v]
            out.append(("turbo_gnn", "graph_transformer_aggr", turbo))
    elif model == "gat":
        def layer(seed, fused_cls=None):
            conv = make_layer(pyg.GATConv, fused_cls, seed, device, width, feat, heads=heads, concat=True,
                              add_self_loops=False, bias=False)
            x = rand((n_src, width), device, seed, grad=True)
            lin = getattr(conv, "lin", None) or conv.lin_src

            def reference():
                with torch.no_grad():
                    h = lin(x).view(-1, heads, feat).double()
                    return gat_attention(h, h[rows], conv.att_src.double().view(heads, feat),
                                         conv.att_dst.double().view(heads, feat), ss, sd, sn).reshape(sn, -1)
            return (lambda: conv(x, ei)), reference, [x] + list(conv.parameters())

        def bare(seed):
            h = rand((n_src, heads, feat), device, seed, grad=True)
            h_dst = rand((n_dst, heads, feat), device, seed + 1, grad=True)
            a_src, a_dst = rand((heads, feat), device, seed + 2, grad=True), rand((heads, feat), device, seed + 3, grad=True)

            def reference():
                d = lambda t: t.detach().double()  # noqa: E731
                return gat_attention(d(h), d(h_dst)[rows], d(a_src), d(a_dst), ss, sd, sn)
            return (lambda: gat_attention(h, h_dst, a_src, a_dst, src, dst, n_dst)), reference, [h, h_dst, a_src, a_dst]
        out += [("pyg", "GATConv", layer), ("pyg", "attention", bare)]
        if have_dfgnn:
            # PyG's attention part computes the node scores from h and att; so does dfgnn's op
            # from the features (in its own kernels, with their backward).
            def gat(g, h, h_dst, a_src, a_dst):
                return ops.gat_attention_from_features(h, a_dst, a_src, g, h_dst=h_dst)
            out += [(DFGNN_PYTHON, "GATConv", fused_layer(layer, fused.GATConv)),
                    (DFGNN_PYTHON, "attention", fused_op(case, bare, gat))]
    elif model == "gatv2":
        def layer(seed, fused_cls=None):
            conv = make_layer(pyg.GATv2Conv, fused_cls, seed, device, width, feat, heads=heads, concat=True,
                              add_self_loops=False, bias=False, share_weights=False)
            x = rand((n_src, width), device, seed, grad=True)

            def reference():
                with torch.no_grad():
                    x_l = conv.lin_l(x).view(-1, heads, feat).double()
                    x_r = conv.lin_r(x).view(-1, heads, feat).double()
                    return gatv2_attention(x_l, x_r[rows], conv.att.double().view(heads, feat), ss, sd, sn).reshape(sn, -1)
            return (lambda: conv(x, ei)), reference, [x] + list(conv.parameters())

        def bare(seed):
            x_l = rand((n_src, heads, feat), device, seed, grad=True)
            x_r = rand((n_dst, heads, feat), device, seed + 1, grad=True)
            att = rand((heads, feat), device, seed + 2, grad=True)

            def reference():
                d = lambda t: t.detach().double()  # noqa: E731
                return gatv2_attention(d(x_l), d(x_r)[rows], d(att), ss, sd, sn)
            return (lambda: gatv2_attention(x_l, x_r, att, src, dst, n_dst)), reference, [x_l, x_r, att]
        out += [("pyg", "GATv2Conv", layer), ("pyg", "attention", bare)]
        if have_dfgnn:
            out += [(DFGNN_PYTHON, "GATv2Conv", fused_layer(layer, fused.GATv2Conv)),
                    (DFGNN_PYTHON, "attention",
                     fused_op(case, bare, lambda g, x_l, x_r, att: ops.gatv2_attention(x_l, x_r, att, g)))]
        if have_turbo and feat in (32, 64, 128, 256):
            graph = turbo_graph(case)

            def turbo(seed):
                import turbo_gnn

                x_l = rand((n_src, heads, feat), device, seed, grad=True)
                x_r = rand((n_dst, heads, feat), device, seed + 1, grad=True)
                att = rand((heads, feat), device, seed + 2, grad=True)

                def reference():
                    d = lambda t: t.detach().double()  # noqa: E731
                    return gatv2_attention(d(x_l), d(x_r)[rows], d(att), ss, sd, sn)
                return (lambda: turbo_gnn.ops.gatv2_aggr(graph, x_r, x_l, att, 0.2)), reference, [x_l, x_r, att]
            out.append(("turbo_gnn", "gatv2_aggr", turbo))
    elif model == "agnn" and n_dst == n_src:
        # AGNNConv has one head (one cosine over all features): the layer at 1xF only; the bare
        # attention part at every shape, the cosine per head as dfgnn's AGNN takes it.
        def layer(seed, fused_cls=None):
            conv = make_layer(pyg.AGNNConv, fused_cls, seed, device, requires_grad=True, add_self_loops=False)
            x = rand((n_src, feat), device, seed, grad=True)

            def reference():
                with torch.no_grad():
                    x64 = x.double()
                    return agnn_attention(x64, x64[rows], conv.beta.double(), ss, sd, sn)
            return (lambda: conv(x, ei)), reference, [x] + list(conv.parameters())

        def bare(seed):
            h = rand((n_src, heads, feat), device, seed, grad=True)

            def reference():
                h64 = h.detach().double()
                return agnn_attention(h64, h64[rows], 1.0, ss, sd, sn)
            return (lambda: agnn_attention(h, h, 1.0, src, dst, n_dst)), reference, [h]
        if heads == 1:
            out.append(("pyg", "AGNNConv", layer))
        out.append(("pyg", "attention", bare))
        if have_dfgnn:
            # β = 1 as in PyG's part, as a tensor made here: a float would be uploaded on every call.
            beta = torch.ones((), device=device)
            if heads == 1:
                out.append((DFGNN_PYTHON, "AGNNConv", fused_layer(layer, fused.AGNNConv)))
            out.append((DFGNN_PYTHON, "attention", fused_op(case, bare, lambda g, h: ops.agnn_attention(h, g, beta))))
    return out


def turbo_graph(case):
    """turbo-gnn's dual CSR of the case's graph (its forward CSR: rows = destinations), built
    once per graph."""
    if case.turbo is None:
        from turbo_gnn import AdjacencyForwardBackwardWithNodeBuckets

        case.turbo = AdjacencyForwardBackwardWithNodeBuckets.from_edge_list(
            case.edge_index, num_nodes=max(case.num_dst, case.num_src))
    return case.turbo


def run_peer(timer, make, case, passes, args, outside_bytes=0, sets=2):
    """(check error, {pass: (timing, repeats, peak)}) of one peer; passes it cannot run (a
    backward without autograd) are left out; raises what the peer raises. `outside_bytes`: device
    memory the peer holds outside torch's allocator (dfgnn's prepared graph), added to the peak."""
    made = [make(1000 * s + 7) for s in range(sets)]
    call, reference, _ = made[0]
    with torch.no_grad():
        full = call()
    got = full.reshape(full.shape[0], -1)[case.rows]
    error = relative_error(got, reference().reshape(case.sub_n, -1))
    if not error <= args.tolerance:
        return error, {}
    d_out = rand(tuple(full.shape), full.device, 99)
    del full, got
    results = {}
    for p in passes:
        if p == "forward_backward" and not made[0][2]:
            continue

        def once(i, p=p):
            c, _, params = made[i]
            if p == "forward":
                with torch.no_grad():
                    c()
            else:
                for t in params:
                    t.grad = None
                c().backward(d_out)
        timing, repeats = time_calls(timer, once, args.warmup, args.repeats, args.case_budget_ms, sets)
        peak = None
        if timer.cuda:
            torch.cuda.synchronize()
            other = sum(t.numel() * t.element_size() for t in made[1][2])
            torch.cuda.reset_peak_memory_stats()
            once(0)
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - other + outside_bytes
        results[p] = (timing, repeats, peak)
    return error, results


def version_of(distribution):
    """The installed version of `distribution`, or a note that it has none (imported from a path)."""
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "(no installed version)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", required=True, help="the suite.json of dfgnn bench suite")
    ap.add_argument("--graphs", required=True, help="folder of <graph name>.npz files")
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", default="", help="HxF,... (default: the suite's)")
    ap.add_argument("--peers", default="", help="system[:variant],... to run (default: all)")
    ap.add_argument("--warmup", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--case-budget-ms", type=float, default=None)
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--check-rows", type=int, default=2048,
                    help="rows the output check samples (the longest row is added)")
    ap.add_argument("--time-limit-s", type=float, default=None,
                    help="start no case after this many seconds (those left are listed in meta.skipped)")
    args = ap.parse_args()
    suite = json.load(open(args.suite))
    meta = suite["meta"]
    args.warmup = meta["warmup"] if args.warmup is None else args.warmup
    args.repeats = meta["repeats"] if args.repeats is None else args.repeats
    args.case_budget_ms = meta["case_budget_ms"] if args.case_budget_ms is None else args.case_budget_ms
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    timer = Timer(device)
    try:
        import turbo_gnn  # noqa: F401
        have_turbo = device.type == "cuda"
        turbo_why = None if have_turbo else "turbo_gnn: no CUDA device"
    except Exception as e:  # an import error or a missing CUDA library: say which
        have_turbo, turbo_why = False, f"turbo_gnn: not importable ({e})"
    try:
        import dfgnn.nn  # noqa: F401  (the layers; needs torch_geometric)
        have_dfgnn, dfgnn_why = True, None
    except Exception as e:  # not installed, or a wheel that does not load here: say which
        have_dfgnn, dfgnn_why = False, f"{DFGNN_PYTHON}: dfgnn not importable ({type(e).__name__}: {e})"
    wanted_shapes = {tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s}
    wanted_peers = [p for p in args.peers.split(",") if p]

    def wanted(system, variant):
        return not wanted_peers or system in wanted_peers or f"{system}:{variant}" in wanted_peers

    cases = {}
    for r in suite["records"]:
        if r["system"] != "dfgnn" or r["variant"] != "auto":
            continue
        key = (r["graph"]["name"], r["model"], r["heads"], r["feat"])
        if wanted_shapes and (r["heads"], r["feat"]) not in wanted_shapes:
            continue
        cases.setdefault(key, {"graph": r["graph"], "passes": []})["passes"].append(r["pass"])
    # The headline's shape (4x64) on every graph first, in the suite's order, so that a run cut at
    # its time limit keeps the cases the README compares; then the others, graphs of fewer edges
    # first, so that the cheap ones (a batch graph's 1x128, a target of the issues) are not cut
    # behind the 1M-node graphs (the fourteenth session's report lost them so).
    def order(kv):
        (_, _, heads, feat), c = kv
        return (0, 0) if (heads, feat) == (4, 64) else (1, c["graph"].get("nnz", 0))
    cases = dict(sorted(cases.items(), key=order))
    versions = f"torch {torch.__version__}"
    try:
        import torch_geometric
        versions += f", torch_geometric {torch_geometric.__version__}"
    except ImportError:
        sys.exit("peers.py needs torch_geometric")
    if have_turbo:
        versions += f", turbo-gnn {version_of('turbo-gnn')}"
    if have_dfgnn:
        versions += f", dfgnn {version_of('dfgnn')} from {os.path.dirname(dfgnn.__file__)}"
    device_name = torch.cuda.get_device_name() if device.type == "cuda" else "CPU (wall clock; not a timing)"
    out = {"meta": {
        "schema": SCHEMA, "tool": "benches/peers.py",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": meta["commit"], "device": f"{device_name}; {versions}",
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "warmup": args.warmup, "repeats": args.repeats, "case_budget_ms": args.case_budget_ms, "input_sets": 2,
        "skipped": [why for why in (turbo_why, dfgnn_why) if why]}, "records": []}
    def write():
        # After every case, so that a run stopped at its time limit keeps what it measured.
        with open(args.out + ".tmp", "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
        os.replace(args.out + ".tmp", args.out)

    loaded = {}
    started = time.monotonic()
    for i, ((name, model, heads, feat), c) in enumerate(cases.items()):
        if args.time_limit_s is not None and time.monotonic() - started >= args.time_limit_s:
            out["meta"]["skipped"].append(f"{name} {model} {heads}x{feat}: not started, the time limit "
                                          f"({args.time_limit_s:g} s) was reached")
            continue
        path = os.path.join(args.graphs, f"{name}.npz")
        if not os.path.exists(path):
            out["meta"]["skipped"].append(f"{name}: no {path}")
            continue
        if name not in loaded:
            loaded.clear()
            if device.type == "cuda":
                torch.cuda.empty_cache()
            loaded[name] = Case(path, device, args.check_rows)
        case = loaded[name]
        for system, variant, make in peers_for(model, case, heads, feat, device, 2, have_turbo, have_dfgnn):
            if not wanted(system, variant):
                continue
            print(f"[{i + 1}/{len(cases)}] {name} {model} {heads}x{feat} {system} {variant}", file=sys.stderr, flush=True)
            base = {"system": system, "model": model, "variant": variant, "graph": c["graph"], "heads": heads,
                    "feat": feat, "bytes": None, "copy_bytes_per_s": None, "base_bytes": None, "plan": "",
                    "reasons": []}
            try:
                # dfgnn's graph, prepared here, before the peer's first call and outside any timing.
                outside = case.dfgnn_graph().device_bytes if system == DFGNN_PYTHON else 0
                error, results = run_peer(timer, make, case, c["passes"], args, outside)
                why = None if results or not c["passes"] else \
                    f"differs from the f64 formula by {error:.2e} of its magnitude (tolerance {args.tolerance:g})"
            except Exception as e:  # out of memory, unsupported shapes: the case's error, not the run's
                error, results, why = None, {}, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                if device.type == "cuda":
                    torch.cuda.empty_cache()
            for p in c["passes"]:
                t = results.get(p)
                if t:
                    timed = {"time": t[0], "repeats": t[1], "peak_bytes": t[2], "error": None}
                else:
                    timed = {"time": None, "repeats": 0, "peak_bytes": None,
                             "error": why or "not timed: the peer has no backward"}
                out["records"].append(dict(base, **{"pass": p, "check_relative_error": error}, **timed))
            write()
    write()
    print(f"{len(out['records'])} peer records -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
