"""dfgnn.ops and dfgnn.Graph on CPU tensors (the SIMT emulator) against plain-torch references."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch
from conftest import (
    agnn_reference,
    assert_tolerance,
    dropout_factors,
    gat_reference,
    gatv2_reference,
    gt_reference,
    softmax_aggregate,
)

import dfgnn
from dfgnn.ops import _gat_saves_part, agnn_attention, gat_attention, gat_attention_from_features, gatv2_attention, gt_attention


def _inputs(seed, shape, *sizes):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, *shape, generator=g, dtype=torch.float64) for n in sizes]


def test_gt_forward_and_backward_match_the_f64_reference(graph_case, shape):
    name, edge_index, num_src, num_dst = graph_case
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=(num_src, num_dst))
    q64, k64, v64 = _inputs(7, shape, num_dst, num_src, num_src)
    d_out = _inputs(8, shape, num_dst)[0]
    scale = 1 / math.sqrt(shape[1])
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        q, k, v = (x.to(dtype).detach().clone().requires_grad_() for x in (q64, k64, v64))
        if kind == "fused":
            out = gt_attention(q, k, v, graph)
        else:
            out = gt_reference(q, k, v, edge_index, num_dst, scale)
        out.backward(d_out.to(dtype))
        results[kind] = (out.detach(), q.grad, k.grad, v.grad)
    for i, what in enumerate(("out", "dq", "dk", "dv")):
        assert_tolerance(f"{name} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


def test_gt_dropout_matches_the_f64_reference_with_the_same_mask(graph_case, shape):
    name, edge_index, num_src, num_dst = graph_case
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=(num_src, num_dst))
    q64, k64, v64 = _inputs(27, shape, num_dst, num_src, num_src)
    d_out = _inputs(28, shape, num_dst)[0]
    scale, p, seed = 1 / math.sqrt(shape[1]), 0.35, 77 + shape[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        q, k, v = (x.to(dtype).detach().clone().requires_grad_() for x in (q64, k64, v64))
        if kind == "fused":
            out = gt_attention(q, k, v, graph, dropout=p, seed=seed)
        else:
            factors = dropout_factors(graph, p, seed, shape[0], dtype)
            src, dst = edge_index[0], edge_index[1]
            out = softmax_aggregate((q[dst] * k[src]).sum(-1) * scale, v, edge_index, num_dst, factors)[0]
        out.backward(d_out.to(dtype))
        results[kind] = (out.detach(), q.grad, k.grad, v.grad)
    for i, what in enumerate(("out", "dq", "dk", "dv")):
        assert_tolerance(f"{name} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


def test_agnn_forward_and_backward_match_the_f64_reference(graph_case, shape):
    name, edge_index, num_src, num_dst = graph_case
    if num_src != num_dst:
        pytest.skip("AGNN needs a square graph (the bipartite refusal is tested below)")
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=num_src)
    (h64,) = _inputs(9, shape, num_src)
    d_out = _inputs(10, shape, num_src)[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        h = h64.to(dtype).detach().clone().requires_grad_()
        beta = torch.tensor([0.7], dtype=dtype, requires_grad=True)
        out = agnn_attention(h, graph, beta) if kind == "fused" else agnn_reference(h, beta, edge_index)
        out.backward(d_out.to(dtype))
        results[kind] = (out.detach(), h.grad, beta.grad)
    norm = h64.to(torch.float32).double().norm(dim=-1, keepdim=True).clamp_min(1e-12)
    for i, what in enumerate(("out", "dh", "dbeta")):
        scale = norm if what == "dh" else None
        assert_tolerance(f"{name} {what}", results["fused"][i], results["naive"][i], results["ref"][i], scale)


@pytest.mark.parametrize("slope", [0.2, 0.0, 1.7])
def test_gat_forward_backward_and_weights_match_the_f64_reference(graph_case, shape, slope):
    name, edge_index, num_src, num_dst = graph_case
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=(num_src, num_dst))
    heads = shape[0]
    (h64,) = _inputs(11, shape, num_src)
    g = torch.Generator().manual_seed(12)
    el64, er64 = torch.randn(num_dst, heads, generator=g, dtype=torch.float64), torch.randn(num_src, heads, generator=g, dtype=torch.float64)
    d_out = _inputs(13, shape, num_dst)[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        h, el, er = (x.to(dtype).detach().clone().requires_grad_() for x in (h64, el64, er64))
        if kind == "fused":
            out, alpha = gat_attention(h, el, er, graph, slope, return_attention_weights=True)
        else:
            out, alpha = gat_reference(h, el, er, edge_index, num_dst, slope)
        out.backward(d_out.to(dtype))
        results[kind] = (out.detach(), alpha.detach(), h.grad, el.grad, er.grad)
    for i, what in enumerate(("out", "alpha", "dh", "d_el", "d_er")):
        assert_tolerance(f"{name} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


@pytest.mark.parametrize("p", [0.0, 0.4])
def test_gat_from_features_matches_the_f64_reference(graph_case, shape, p):
    """The node scores and their backward in dfgnn's kernels: out, α and the gradients of h,
    h_dst (on a bipartite graph) and both attention vectors against torch's node scores around
    the f64 reference; on a square graph h_dst is h (one array) and its gradient all in dh."""
    name, edge_index, num_src, num_dst = graph_case
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=(num_src, num_dst))
    heads, feat = shape
    square = num_src == num_dst
    h64, h_dst64 = _inputs(41, shape, num_src, num_dst)
    g = torch.Generator().manual_seed(42)
    a_dst64, a_src64 = (torch.randn(1, heads, feat, generator=g, dtype=torch.float64) for _ in range(2))
    d_out = _inputs(43, shape, num_dst)[0]
    seed = 97 + heads_seed(shape)
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        h, h_dst, a_dst, a_src = (x.to(dtype).detach().clone().requires_grad_() for x in (h64, h_dst64, a_dst64, a_src64))
        dst_features = h if square else h_dst
        if kind == "fused":
            out, alpha = gat_attention_from_features(
                h, a_dst, a_src, graph, h_dst=None if square else h_dst, return_attention_weights=True, dropout=p, seed=seed
            )
        else:
            el, er = (dst_features * a_dst).sum(-1), (h * a_src).sum(-1)
            factors = dropout_factors(graph, p, seed, heads, dtype) if p > 0 else None
            out, alpha = gat_reference(h, el, er, edge_index, num_dst, 0.2, factors)
        out.backward(d_out.to(dtype))
        grads = (h.grad, a_dst.grad, a_src.grad) + (() if square else (h_dst.grad,))
        results[kind] = (out.detach(), alpha.detach(), *grads)
    whats = ("out", "alpha", "dh", "da_dst", "da_src") + (() if square else ("dh_dst",))
    for i, what in enumerate(whats):
        assert_tolerance(f"{name} p={p} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


def test_gat_from_features_checks_its_inputs():
    edge_index = torch.tensor([[0, 1, 2, 2], [1, 2, 0, 1]])
    square = dfgnn.Graph.from_edge_index(edge_index, num_nodes=3)
    bipartite = dfgnn.Graph.from_edge_index(edge_index, num_nodes=(3, 4))
    h, a = torch.randn(3, 2, 5), torch.randn(2, 5)
    assert gat_attention_from_features(h, a, a, square).shape == (3, 2, 5)
    # h_dst given as h itself is the one-array case.
    assert torch.equal(gat_attention_from_features(h, a, a, square, h_dst=h), gat_attention_from_features(h, a, a, square))
    with pytest.raises(ValueError, match="h_dst is needed on a bipartite graph"):
        gat_attention_from_features(h, a, a, bipartite)
    with pytest.raises(ValueError, match="h_dst has"):
        gat_attention_from_features(h, a, a, bipartite, h_dst=torch.randn(4, 2, 4))
    with pytest.raises(ValueError, match=r"a_src must be \[2, 5\]"):
        gat_attention_from_features(h, a, torch.randn(2, 4), square)
    with pytest.raises(TypeError, match="float32"):
        gat_attention_from_features(h, a.double(), a, square)


def test_gat_saves_the_positive_part_only_for_training_with_the_same_output(graph_case, shape):
    name, edge_index, num_src, num_dst = graph_case
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=(num_src, num_dst))
    heads, feat = shape
    (h,) = (x.float() for x in _inputs(31, shape, num_src))
    g = torch.Generator().manual_seed(32)
    el, er = torch.randn(num_dst, heads, generator=g), torch.randn(num_src, heads, generator=g)
    with torch.no_grad():
        inference = gat_attention(h, el, er, graph)
    training = torch.ops.dfgnn.gat_forward(h, el, er, graph.id, 0.2, 0.0, None, True)
    plain = torch.ops.dfgnn.gat_forward(h, el, er, graph.id, 0.2, 0.0, None, False)
    # The part's tensors exist only where the plan sums it (these graphs have under 6 edges per
    # row, where it does not; the dense graph below has more).
    if _gat_saves_part(graph, heads, feat, 0.2, True):
        assert list(training[3].shape) == [num_dst, heads, feat], name
        assert list(training[4].shape) == [num_dst, heads], name
    else:
        assert training[3].numel() == 0 and training[4].numel() == 0, name
    assert plain[3].numel() == 0 and plain[4].numel() == 0, name
    # Saving the part changes no bit of the output or the softmax state.
    for i in range(3):
        assert torch.equal(training[i], plain[i]), f"{name} output {i}"
    assert torch.equal(training[0], inference), name


def test_gat_saves_its_part_on_a_dense_graph_only_and_matches_the_f64_reference_with_it():
    # 24 nodes, each pair an edge with probability 3/4: about 18 edges per row, where the plan
    # sums the positive part; a path (one edge per row) is where it does not.
    g = torch.Generator().manual_seed(51)
    pairs = torch.cartesian_prod(torch.arange(24), torch.arange(24)).T
    edge_index = pairs[:, torch.rand(pairs.shape[1], generator=g) < 0.75]
    dense = dfgnn.Graph.from_edge_index(edge_index, num_nodes=24)
    path = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 3]]), num_nodes=4)
    assert _gat_saves_part(dense, 3, 5, 0.2, True) and not _gat_saves_part(dense, 3, 5, 0.2, False)
    assert not _gat_saves_part(path, 3, 5, 0.2, True)
    shape = (3, 5)
    (h64,) = _inputs(52, shape, 24)
    el64, er64 = torch.randn(24, 3, generator=g, dtype=torch.float64), torch.randn(24, 3, generator=g, dtype=torch.float64)
    d_out = _inputs(53, shape, 24)[0]
    saved = torch.ops.dfgnn.gat_forward(h64.float(), el64.float(), er64.float(), dense.id, 0.2, 0.0, None, True)
    assert list(saved[3].shape) == [24, 3, 5] and list(saved[4].shape) == [24, 3]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        h, el, er = (x.to(dtype).detach().clone().requires_grad_() for x in (h64, el64, er64))
        if kind == "fused":
            out = gat_attention(h, el, er, dense, 0.2)
        else:
            out, _ = gat_reference(h, el, er, edge_index, 24, 0.2)
        out.backward(d_out.to(dtype))
        results[kind] = (out.detach(), h.grad, el.grad, er.grad)
    for i, what in enumerate(("out", "dh", "d_el", "d_er")):
        assert_tolerance(f"dense {what}", results["fused"][i], results["naive"][i], results["ref"][i])
    h, el, er = (x.float().requires_grad_() for x in (h64, el64, er64))
    torch.library.opcheck(torch.ops.dfgnn.gat_forward.default, (h, el, er, dense.id, 0.2, 0.0, None, True))
    a_dst, a_src = torch.randn(3, 5, requires_grad=True), torch.randn(3, 5, requires_grad=True)
    torch.library.opcheck(torch.ops.dfgnn.gat_nodes_forward.default, (h, None, a_dst, a_src, dense.id, 0.2, 0.0, None, True))


@pytest.mark.parametrize("p", [0.3, 0.8])
def test_gat_dropout_matches_the_f64_reference_with_the_same_mask(graph_case, shape, p):
    name, edge_index, num_src, num_dst = graph_case
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=(num_src, num_dst))
    heads, seed = shape[0], 1234 + heads_seed(shape)
    (h64,) = _inputs(21, shape, num_src)
    g = torch.Generator().manual_seed(22)
    el64, er64 = torch.randn(num_dst, heads, generator=g, dtype=torch.float64), torch.randn(num_src, heads, generator=g, dtype=torch.float64)
    d_out = _inputs(23, shape, num_dst)[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        h, el, er = (x.to(dtype).detach().clone().requires_grad_() for x in (h64, el64, er64))
        if kind == "fused":
            out, alpha = gat_attention(h, el, er, graph, 0.2, return_attention_weights=True, dropout=p, seed=seed)
        else:
            factors = dropout_factors(graph, p, seed, heads, dtype)
            out, alpha = gat_reference(h, el, er, edge_index, num_dst, 0.2, factors)
        out.backward(d_out.to(dtype))
        results[kind] = (out.detach(), alpha.detach(), h.grad, el.grad, er.grad)
    for i, what in enumerate(("out", "alpha", "dh", "d_el", "d_er")):
        assert_tolerance(f"{name} p={p} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


@pytest.mark.parametrize("p", [0.0, 0.3])
def test_gatv2_forward_backward_and_weights_match_the_f64_reference(graph_case, shape, p):
    name, edge_index, num_src, num_dst = graph_case
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=(num_src, num_dst))
    heads, seed = shape[0], 99 + heads_seed(shape)
    xl64, xr64 = _inputs(41, shape, num_src, num_dst)
    a64 = torch.randn(*shape, generator=torch.Generator().manual_seed(42), dtype=torch.float64)
    d_out = _inputs(43, shape, num_dst)[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        xl, xr, a = (x.to(dtype).detach().clone().requires_grad_() for x in (xl64, xr64, a64))
        if kind == "fused":
            out, alpha = gatv2_attention(xl, xr, a, graph, 0.2, dropout=p, seed=seed, return_attention_weights=True)
        else:
            factors = dropout_factors(graph, p, seed, heads, dtype) if p > 0 else None
            out, alpha = gatv2_reference(xl, xr, a, edge_index, num_dst, 0.2, factors)
        out.backward(d_out.to(dtype))
        results[kind] = (out.detach(), alpha.detach(), xl.grad, xr.grad, a.grad)
    for i, what in enumerate(("out", "alpha", "dxl", "dxr", "da")):
        assert_tolerance(f"{name} p={p} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


def test_gatv2_checks_its_shapes_and_draws_its_seeds_from_torch():
    graph = dfgnn.Graph.from_edge_index(_random_edges_for_workspace(), num_nodes=30)
    xl, xr, a = torch.randn(30, 2, 4), torch.randn(30, 2, 4), torch.randn(2, 4)
    with pytest.raises(ValueError, match=r"a must be \[2, 4\]"):
        gatv2_attention(xl, xr, torch.randn(1, 2, 4), graph)
    with pytest.raises(ValueError, match="xr has"):
        gatv2_attention(xl, torch.randn(30, 2, 5), a, graph)
    with pytest.raises(TypeError, match="float32"):
        gatv2_attention(xl, xr, a.double(), graph)
    with pytest.raises(ValueError, match="dropout"):
        gatv2_attention(xl, xr, a, graph, dropout=1.0)
    torch.manual_seed(4)
    first, second = gatv2_attention(xl, xr, a, graph, dropout=0.5), gatv2_attention(xl, xr, a, graph, dropout=0.5)
    torch.manual_seed(4)
    assert torch.equal(first, gatv2_attention(xl, xr, a, graph, dropout=0.5))
    assert not torch.equal(first, second)
    assert torch.equal(gatv2_attention(xl, xr, a, graph), gatv2_attention(xl, xr, a, graph, dropout=0.0, seed=3))


def heads_seed(shape):
    return 17 * shape[0] + shape[1]


def test_gat_dropout_zero_is_no_dropout_and_the_mask_drops_about_p():
    edge_index = _random_edges_for_workspace()
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=30)
    h, el, er = torch.randn(30, 3, 4), torch.randn(30, 3), torch.randn(30, 3)
    assert torch.equal(gat_attention(h, el, er, graph), gat_attention(h, el, er, graph, dropout=0.0, seed=5))
    mask = dfgnn.ops.dropout_mask(graph, 0.5, 99, 3)
    assert mask.shape == (graph.num_edges, 3) and mask.dtype == torch.bool
    assert 0.35 < mask.float().mean() < 0.65
    assert torch.equal(mask, dfgnn.ops.dropout_mask(graph, 0.5, torch.tensor(99), 3))
    assert not torch.equal(mask, dfgnn.ops.dropout_mask(graph, 0.5, 100, 3))
    for bad in (-0.1, 1.0, math.nan):
        with pytest.raises(ValueError, match="dropout"):
            gat_attention(h, el, er, graph, dropout=bad)
    with pytest.raises(ValueError, match="seed"):
        gat_attention(h, el, er, graph, dropout=0.5, seed=torch.tensor([1.0]))


def test_gat_dropout_seeds_come_from_torchs_generator_and_the_backward_reuses_them():
    edge_index = _random_edges_for_workspace()
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=30)
    g = torch.Generator().manual_seed(31)
    h64, d_out = torch.randn(30, 2, 5, generator=g, dtype=torch.float64), torch.randn(30, 2, 5, generator=g, dtype=torch.float64)
    el64, er64 = torch.randn(30, 2, generator=g, dtype=torch.float64), torch.randn(30, 2, generator=g, dtype=torch.float64)

    def run():
        h, el, er = (x.float().requires_grad_() for x in (h64, el64, er64))
        out = gat_attention(h, el, er, graph, dropout=0.5)
        torch.rand(100)  # torch's generator moves on before the backward: it must not redraw
        out.backward(d_out.float())
        return out.detach(), h.grad, el.grad, er.grad

    torch.manual_seed(7)
    first, second = run(), run()
    torch.manual_seed(7)
    again = run()
    for a, b in zip(first, again):
        assert torch.equal(a, b), "the same torch seed gives the same masks"
    assert not torch.equal(first[0], second[0]), "each call draws a new mask"
    torch.manual_seed(7)
    seed = torch.randint(0, 2**63 - 1, (), dtype=torch.int64)
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32)):
        h, el, er = (x.to(dtype).detach().clone().requires_grad_() for x in (h64, el64, er64))
        out, _ = gat_reference(h, el, er, graph.edge_index, 30, 0.2, dropout_factors(graph, 0.5, seed, 2, dtype))
        out.backward(d_out.to(dtype))
        results[kind] = (out.detach(), h.grad, el.grad, er.grad)
    for i, what in enumerate(("out", "dh", "d_el", "d_er")):
        assert_tolerance(what, first[i], results["naive"][i], results["ref"][i])


def test_gat_checks_its_score_shapes():
    graph = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), num_nodes=3)
    h = torch.randn(3, 2, 4)
    with pytest.raises(ValueError, match=r"el must be \[3, 2\]"):
        gat_attention(h, torch.randn(3, 3), torch.randn(3, 2), graph)
    with pytest.raises(TypeError, match="float32"):
        gat_attention(h, torch.randn(3, 2).double(), torch.randn(3, 2), graph)
    with pytest.raises(ValueError, match="finite"):
        gat_attention(h, torch.randn(3, 2), torch.randn(3, 2), graph, math.nan)


def test_workspaces_are_measured_once_per_op_and_shape():
    graph = dfgnn.Graph.from_edge_index(_random_edges_for_workspace(), num_nodes=30)
    for _ in range(3):
        q = torch.randn(30, 2, 8, requires_grad=True)
        gt_attention(q, q, q, graph).sum().backward()
    assert sorted(graph._workspace) == [("_gt_backward", 2, 8), ("_gt_forward", 2, 8)]


def _random_edges_for_workspace():
    g = torch.Generator().manual_seed(3)
    return torch.randint(0, 30, (2, 400), generator=g)


def test_agnn_takes_two_dimensional_features_and_a_float_beta():
    edge_index = torch.tensor([[0, 1, 2, 2], [1, 2, 0, 1]])
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=3)
    h = torch.randn(3, 6)
    out = agnn_attention(h, graph, 2.0)
    expected = agnn_reference(h.double()[:, None], torch.tensor([2.0], dtype=torch.float64), edge_index)[:, 0]
    assert out.shape == (3, 6)
    assert torch.allclose(out.double(), expected, atol=1e-5)


def _agnn_step(graph, h, beta):
    out = agnn_attention(h, graph, beta)
    return [out, *torch.autograd.grad(out.square().sum(), (h, beta))]


def test_agnn_never_reads_beta_or_its_gradient_on_the_host(monkeypatch):
    """The forward and backward hand β to the kernels by address and get dβ in a tensor: no
    ``.item()`` (a wait for the device, and impossible under CUDA-graph capture)."""
    edge_index = torch.randint(0, 40, (2, 300), generator=torch.Generator().manual_seed(4))
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=40, add_self_loops=True)
    h = torch.randn(40, 2, 8, generator=torch.Generator().manual_seed(5), requires_grad=True)
    beta = torch.tensor([0.9], requires_grad=True)
    expected = _agnn_step(graph, h, beta)

    def no_host_read(*_):
        raise AssertionError("a host read of a tensor's value")

    for method in ("item", "tolist", "__float__", "__int__", "__bool__"):
        monkeypatch.setattr(torch.Tensor, method, no_host_read)
    got = _agnn_step(graph, h, beta)
    monkeypatch.undo()
    for a, b in zip(expected, got):
        assert torch.equal(a, b)
    assert got[2].shape == beta.shape


def test_agnn_reads_the_beta_of_each_call():
    edge_index = torch.tensor([[0, 1, 2, 2, 3, 0], [1, 2, 0, 1, 3, 3]])
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=4)
    h = torch.randn(4, 1, 6, generator=torch.Generator().manual_seed(6), requires_grad=True)
    beta = torch.tensor([0.3], requires_grad=True)
    first = _agnn_step(graph, h, beta)
    with torch.no_grad():
        beta.fill_(-1.2)  # in place, as an optimiser's step
    second = _agnn_step(graph, h, beta)
    assert not torch.equal(first[0], second[0]) and not torch.equal(first[2], second[2])
    h64 = h.detach().double().requires_grad_()
    beta64 = torch.tensor([-1.2], dtype=torch.float64, requires_grad=True)
    ref = agnn_reference(h64, beta64, edge_index)
    ref_grads = torch.autograd.grad(ref.square().sum(), (h64, beta64))
    for got, want in zip(second, [ref, *ref_grads]):
        assert torch.allclose(got.double(), want, atol=1e-4, rtol=1e-4)
    # A β view at an offset that is not 16-byte aligned is read through a copy; the gradient
    # reaches the original.
    storage = torch.tensor([5.0, -1.2, 7.0], requires_grad=True)
    view = storage[1:2]
    assert view.data_ptr() % 16 != 0
    third = _agnn_step(graph, h, view)
    for a, b in zip(second, third):
        assert torch.equal(a, b)


def test_agnn_beta_errors_and_a_non_finite_beta():
    edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 1, 3, 3]])  # node 0 receives no edge
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=4)
    h = torch.randn(4, 2, 5)
    with pytest.raises(ValueError, match="one float32 value"):
        agnn_attention(h, graph, torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="one float32 value"):
        agnn_attention(h, graph, torch.tensor([1.0], dtype=torch.float64))
    with pytest.raises(ValueError, match="meta"):
        agnn_attention(h, graph, torch.tensor([1.0], device="meta"))
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="finite"):  # a host value is checked
            agnn_attention(h, graph, bad)
    # A tensor β is not read on the host: NaN gives NaN, not an error (rows 1, 2, 3 have edges).
    beta = torch.tensor([math.nan], requires_grad=True)
    out = agnn_attention(h, graph, beta)
    assert torch.isnan(out[1:]).all() and torch.equal(out[0], torch.zeros_like(out[0]))
    out.sum().backward()
    assert torch.isnan(beta.grad).all()


def test_reruns_are_bit_identical():
    edge_index = torch.randint(0, 30, (2, 150), generator=torch.Generator().manual_seed(3))
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=30)
    q, k, v = (torch.randn(30, 2, 8, requires_grad=True) for _ in range(3))
    runs = []
    for _ in range(2):
        out = gt_attention(q, k, v, graph)
        grads = torch.autograd.grad(out.square().sum(), (q, k, v))
        runs.append((out, *grads))
    for a, b in zip(*runs):
        assert torch.equal(a, b)


def test_graphs_are_cached_per_tensor_and_version():
    edge_index = torch.tensor([[0, 1], [1, 0]])
    first = dfgnn.Graph.from_edge_index(edge_index, num_nodes=2)
    assert dfgnn.Graph.from_edge_index(edge_index, num_nodes=2) is first
    assert dfgnn.Graph.from_edge_index(edge_index.clone(), num_nodes=2) is not first
    assert dfgnn.Graph.from_edge_index(edge_index, num_nodes=3) is not first
    edge_index[0, 0] = 1
    edited = dfgnn.Graph.from_edge_index(edge_index, num_nodes=2)
    assert edited is not first
    assert (edited.num_src, edited.num_dst, edited.num_edges) == (2, 2, 2)


def test_self_loops_are_replaced_as_pyg_does():
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 1, 0, 2]])
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=4, add_self_loops=True)
    assert graph.num_edges == 2 + 4
    with pytest.raises(ValueError, match="bipartite"):
        dfgnn.Graph.from_edge_index(edge_index, num_nodes=(4, 3), add_self_loops=True)


def test_pyg_edge_index_gives_its_sparse_size():
    torch_geometric = pytest.importorskip("torch_geometric")
    edge_index = torch_geometric.EdgeIndex(torch.tensor([[0, 1], [1, 0]]), sparse_size=(5, 5))
    graph = dfgnn.Graph.from_edge_index(edge_index)
    assert (graph.num_src, graph.num_dst, graph.num_edges) == (5, 5, 2)


@pytest.mark.parametrize(
    "edge_index, num_nodes, error, match",
    [
        (torch.tensor([[0, 1], [1, 5]]), 3, ValueError, "destination node 5"),
        (torch.tensor([[-1, 1], [1, 0]]), 3, ValueError, "source node -1"),
        (torch.tensor([[0, 1, 2]]), 3, ValueError, r"\[2, E\]"),
        (torch.tensor([[0.0, 1.0], [1.0, 0.0]]), 3, TypeError, "int64 or int32"),
        ([[0, 1], [1, 0]], 3, TypeError, "torch.Tensor"),
        (torch.tensor([[0, 1], [1, 0]]), 2**32, ValueError, "nodes"),
        (torch.tensor([[0, 1], [1, 0]]), (2, 2, 2), TypeError, "num_nodes"),
    ],
)
def test_malformed_graphs_are_clear_errors(edge_index, num_nodes, error, match):
    with pytest.raises(error, match=match):
        dfgnn.Graph.from_edge_index(edge_index, num_nodes=num_nodes)


def test_bad_tensors_are_clear_errors():
    graph = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), num_nodes=3)
    q = torch.randn(3, 2, 4)
    with pytest.raises(TypeError, match="float32"):
        gt_attention(q.double(), q.double(), q.double(), graph)
    with pytest.raises(TypeError, match="float32"):
        gt_attention(q.half(), q, q, graph)
    with pytest.raises(ValueError, match=r"\[3, H, F\]"):
        gt_attention(torch.randn(4, 2, 4), q, q, graph)
    with pytest.raises(ValueError, match="heads"):
        gt_attention(q, torch.randn(3, 4, 2), q, graph)
    with pytest.raises(ValueError, match="meta"):
        gt_attention(q.to("meta"), q, q, graph)
    misaligned = torch.randn(3 * 8 + 1)[1:].view(3, 2, 4)
    with pytest.raises(ValueError, match="aligned"):
        gt_attention(misaligned, q, q, graph)
    with pytest.raises(TypeError, match="dfgnn.Graph"):
        gt_attention(q, q, q, "graph")
    with pytest.raises(ValueError, match="finite"):
        gt_attention(q, q, q, graph, scale=math.inf)
    bipartite = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1], [1, 0]]), num_nodes=(3, 2))
    with pytest.raises(ValueError, match="sources are its destinations"):
        agnn_attention(torch.randn(2, 4), bipartite)


def test_non_contiguous_inputs_are_made_contiguous():
    graph = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), num_nodes=3)
    q = torch.randn(2, 3, 4).transpose(0, 1)
    assert not q.is_contiguous()
    assert torch.equal(gt_attention(q, q, q, graph), gt_attention(q.contiguous(), q.contiguous(), q.contiguous(), graph))


def test_the_ops_pass_opcheck():
    edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 3]])
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=4)
    q, k, v = (torch.randn(4, 2, 4, requires_grad=True) for _ in range(3))
    torch.library.opcheck(torch.ops.dfgnn.gt_forward.default, (q, k, v, graph.id, 0.5, 0.0, None))
    torch.library.opcheck(torch.ops.dfgnn.gt_forward.default, (q, k, v, graph.id, 0.5, 0.3, torch.tensor(5)))
    h = torch.randn(4, 1, 5, requires_grad=True)
    beta = torch.tensor([1.3], requires_grad=True)
    torch.library.opcheck(torch.ops.dfgnn.agnn_forward.default, (h, beta, graph.id))
    h, el, er = torch.randn(4, 3, 5, requires_grad=True), torch.randn(4, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True)
    for train in (False, True):
        torch.library.opcheck(torch.ops.dfgnn.gat_forward.default, (h, el, er, graph.id, 0.2, 0.0, None, train))
    seed = torch.tensor(11, dtype=torch.int64)
    torch.library.opcheck(torch.ops.dfgnn.gat_forward.default, (h, el, er, graph.id, 0.2, 0.4, seed, True))
    a_dst, a_src = torch.randn(3, 5, requires_grad=True), torch.randn(3, 5, requires_grad=True)
    h_dst = torch.randn(4, 3, 5, requires_grad=True)
    for train, dst in ((False, None), (True, None), (True, h_dst)):
        torch.library.opcheck(torch.ops.dfgnn.gat_nodes_forward.default, (h, dst, a_dst, a_src, graph.id, 0.2, 0.0, None, train))
    torch.library.opcheck(torch.ops.dfgnn.gat_nodes_forward.default, (h, None, a_dst, a_src, graph.id, 0.2, 0.4, seed, True))
    xl, xr, a = torch.randn(4, 3, 5, requires_grad=True), torch.randn(4, 3, 5, requires_grad=True), torch.randn(3, 5, requires_grad=True)
    torch.library.opcheck(torch.ops.dfgnn.gatv2_forward.default, (xl, xr, a, graph.id, 0.2, 0.0, None))
    torch.library.opcheck(torch.ops.dfgnn.gatv2_forward.default, (xl, xr, a, graph.id, 0.2, 0.4, seed))


def test_torch_compile_fullgraph_matches_eager():
    edge_index = torch.tensor([[0, 1, 2, 2, 3, 0], [1, 2, 0, 1, 3, 3]])
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=4)

    def step(q, k, v, h, beta, el, er):
        loss = gt_attention(q, k, v, graph).sum() + agnn_attention(h, graph, beta).square().sum()
        loss = loss + gat_attention(q, el, er, graph).square().sum()
        # Attention dropout with its seed drawn from torch's generator inside the compiled step.
        loss = loss + gat_attention(v, el, er, graph, dropout=0.5).square().sum()
        loss = loss + gt_attention(q, k, v, graph, dropout=0.2).square().sum()
        # GAT from the features: one array, then h_dst apart.
        loss = loss + gat_attention_from_features(v, q[1], k[2], graph, dropout=0.4).square().sum()
        loss = loss + gat_attention_from_features(v, q[1], k[2], graph, h_dst=k).square().sum()
        return loss + gatv2_attention(q, k, q[0], graph, dropout=0.3).square().sum()

    args = [torch.randn(4, 2, 4, requires_grad=True) for _ in range(3)]
    args += [torch.randn(4, 5, requires_grad=True), torch.tensor([0.9], requires_grad=True)]
    args += [torch.randn(4, 2, requires_grad=True), torch.randn(4, 2, requires_grad=True)]
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    torch.manual_seed(3)
    eager_loss = step(*args)
    eager_grads = torch.autograd.grad(eager_loss, args)
    torch.manual_seed(3)
    compiled_loss = compiled(*args)
    compiled_grads = torch.autograd.grad(compiled_loss, args)
    assert torch.equal(eager_loss, compiled_loss)
    for a, b in zip(eager_grads, compiled_grads):
        assert torch.equal(a, b)


def test_importing_touches_no_cuda():
    code = "import torch, dfgnn, dfgnn.nn; assert not torch.cuda.is_initialized(), 'CUDA initialised'"
    subprocess.run([sys.executable, "-c", code], check=True)


def _gt_in_a_child(_):
    edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 3]])
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=4)
    q = torch.arange(4 * 2 * 4, dtype=torch.float32).reshape(4, 2, 4) / 10
    return gt_attention(q, q, q, graph)


def test_a_forked_child_runs_the_ops():
    import multiprocessing

    expected = _gt_in_a_child(None)  # the parent's state exists before the fork
    with multiprocessing.get_context("fork").Pool(1) as pool:
        (got,) = pool.map(_gt_in_a_child, [None])
    assert torch.equal(got, expected)
