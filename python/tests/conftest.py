"""Shared pieces of the tests: test graphs, plain-torch references, the tolerance rule."""

from __future__ import annotations

import copy
import math

import pytest
import torch

#: The relative floor of the project's tolerance rule (reference/src/precision.rs).
FLOOR = 1e-5


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.numel() == 0:
        return 0.0
    d = (a.double() - b.double()).abs()
    return math.inf if torch.isnan(d).any() else float(d.max())


def assert_tolerance(
    name: str, fused: torch.Tensor, naive: torch.Tensor, reference: torch.Tensor, scale: torch.Tensor | None = None
) -> None:
    """The project's rule: max|fused − ref_f64| ≤ 2·max|naive_f32 − ref_f64| + FLOOR·max(1, |ref|).

    ``scale`` (broadcast against the results, in float64) judges a gradient through a clamped
    normalisation, AGNN's dh, slot by slot at its input's scale, as ``compare_at_scale`` of
    ``dfgnn_reference::precision`` does."""
    if scale is not None:
        fused, naive, reference = (x.double() * scale for x in (fused, naive, reference))
    error, naive_error = max_abs_diff(fused, reference), max_abs_diff(naive, reference)
    magnitude = float(reference.abs().max()) if reference.numel() else 0.0
    bound = 2 * naive_error + FLOOR * max(1.0, magnitude)
    assert error <= bound, f"{name}: error {error:.3e} > bound {bound:.3e} (naive {naive_error:.3e})"


def gt_reference(q, k, v, edge_index, num_dst, scale):
    """Edge-wise GT attention in plain torch (differentiable; any dtype)."""
    src, dst = edge_index[0], edge_index[1]
    return softmax_aggregate((q[dst] * k[src]).sum(-1) * scale, v, edge_index, num_dst)[0]


def gat_reference(h, el, er, edge_index, num_dst, slope, factors=None):
    """Edge-wise GAT attention from node scores in plain torch: (out, α in edge order), with
    attention dropout's ``[E, H]`` factors (0 dropped, ``1/(1 − p)`` kept) when given."""
    src, dst = edge_index[0], edge_index[1]
    s = torch.nn.functional.leaky_relu(el[dst] + er[src], slope)
    return softmax_aggregate(s, h, edge_index, num_dst, factors)


def gatv2_reference(xl, xr, a, edge_index, num_dst, slope, factors=None):
    """Edge-wise GATv2 attention in plain torch: (out, α in edge order), ``a`` ``[H, F]``."""
    src, dst = edge_index[0], edge_index[1]
    s = (torch.nn.functional.leaky_relu(xl[src] + xr[dst], slope) * a).sum(-1)
    return softmax_aggregate(s, xl, edge_index, num_dst, factors)


def dropout_factors(graph, p, seed, heads, dtype):
    """The ``[E, H]`` factors of the kernels' dropout mask (``dfgnn.ops.dropout_mask``)."""
    import dfgnn.ops

    return dfgnn.ops.dropout_mask(graph, p, seed, heads).cpu().to(dtype) / (1.0 - p)


def softmax_aggregate(s, v, edge_index, num_dst, factors=None):
    """``(Σ_j softmax_j(s)·v_j, α)`` per destination and head, ``s`` the ``[E, H]`` edge scores;
    with dropout ``factors``, α is multiplied by them (and returned so, as PyG's)."""
    src, dst = edge_index[0], edge_index[1]
    heads = s.shape[1]
    top = torch.full((num_dst, heads), -math.inf, dtype=s.dtype).scatter_reduce(
        0, dst[:, None].expand_as(s), s, "amax", include_self=True
    )
    e = torch.exp(s - top[dst].detach())
    total = torch.zeros(num_dst, heads, dtype=s.dtype).index_add(0, dst, e)
    alpha = e / total[dst]
    if factors is not None:
        alpha = alpha * factors
    return torch.zeros(num_dst, *v.shape[1:], dtype=v.dtype).index_add(0, dst, alpha[..., None] * v[src]), alpha


def agnn_reference(h, beta, edge_index):
    """AGNN in plain torch: ``h`` is [N, H, F], ``beta`` a one-element tensor."""
    hn = torch.nn.functional.normalize(h, p=2.0, dim=-1)
    return gt_reference(hn * beta.reshape(()), hn, h, edge_index, h.shape[0], 1.0)


def _edges(pairs):
    return torch.tensor(pairs, dtype=torch.int64).reshape(-1, 2).t().contiguous()


def _random_edges(seed: int, num_src: int, num_dst: int, num_edges: int):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_src, (num_edges,), generator=g)
    dst = torch.randint(0, num_dst, (num_edges,), generator=g)
    return torch.stack([src, dst])


#: (name, edge_index, num_src, num_dst): empty rows, duplicates, self loops, bipartite, no edges.
GRAPHS = [
    ("small", _edges([(0, 1), (1, 0), (2, 0), (3, 2), (0, 3)]), 4, 4),
    ("empty-rows", _edges([(0, 2), (1, 2), (3, 5)]), 6, 6),
    ("duplicates-and-self-loops", _edges([(1, 1), (1, 1), (0, 1), (2, 2), (0, 1), (2, 0)]), 3, 3),
    ("bipartite", _random_edges(1, 9, 5, 30), 9, 5),
    ("random", _random_edges(2, 40, 40, 200), 40, 40),
    ("no-edges", torch.zeros(2, 0, dtype=torch.int64), 3, 3),
]

#: (heads, features per head): odd and even, vector and scalar loads.
SHAPES = [(1, 4), (3, 5), (2, 8), (1, 7)]


@pytest.fixture(params=GRAPHS, ids=[g[0] for g in GRAPHS])
def graph_case(request):
    return request.param


@pytest.fixture(params=SHAPES, ids=[f"H{h}F{f}" for h, f in SHAPES])
def shape(request):
    return request.param


def parity(make_pyg, make_dfgnn, inputs, edge_index, device="cpu"):
    """Runs PyG's layer (or a model of PyG's layers) in f64 (reference) and f32 (naive) and
    dfgnn's in f32 with the same state_dict; compares, under the tolerance rule, the output and
    the gradients of every input and parameter (``make_pyg`` and ``make_dfgnn`` are called after
    ``torch.manual_seed(0)``; a model that returns its loss has it compared as the output)."""
    torch.manual_seed(0)
    base = make_pyg()
    fused = make_dfgnn()
    assert base.state_dict().keys() == fused.state_dict().keys()
    fused.load_state_dict(base.state_dict())
    layers = {"ref": copy.deepcopy(base).double(), "naive": base, "fused": fused.to(device)}
    d_out = None
    results = {}
    for kind, layer in layers.items():
        dtype = torch.float64 if kind == "ref" else torch.float32
        on = device if kind == "fused" else "cpu"
        xs = [x.to(on, dtype).detach().clone().requires_grad_() for x in inputs]
        out = layer(xs[0] if len(xs) == 1 else tuple(xs), edge_index.to(on))
        if d_out is None:
            d_out = torch.randn(out.shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
        out.backward(d_out.to(on, dtype))
        cpu = lambda t: None if t is None else t.cpu()  # noqa: E731
        grads = {f"d{name}": cpu(p.grad) for name, p in layer.named_parameters()}
        grads.update({f"dx{i}": cpu(x.grad) for i, x in enumerate(xs)})
        results[kind] = {"out": out.detach().cpu(), **grads}
    assert results["fused"].keys() == results["ref"].keys()
    for name, reference in results["ref"].items():
        if reference is None:  # a parameter the layer does not use (lin_skip without root weight)
            assert results["fused"][name] is None, name
            continue
        assert_tolerance(name, results["fused"][name], results["naive"][name], reference)
