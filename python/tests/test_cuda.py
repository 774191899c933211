"""dfgnn.ops on CUDA tensors: parity with the f64 reference, streams, CUDA graphs, determinism,
devices, errors. Skipped (with the reason) where no GPU is present; under DFGNN_REQUIRE_CUDA=1
a missing GPU fails them instead, so on the GPU machine they cannot pass by skipping."""

from __future__ import annotations

import gc
import math
import os

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
from dfgnn.ops import agnn_attention, gat_attention, gat_attention_from_features, gatv2_attention, gt_attention


@pytest.fixture
def cuda():
    """``torch.device("cuda", 0)``, or a skip (a failure under DFGNN_REQUIRE_CUDA=1)."""
    if not torch.cuda.is_available():
        reason = "no CUDA device: the CUDA tests did not run"
        if os.environ.get("DFGNN_REQUIRE_CUDA") == "1":
            pytest.fail(reason + " (DFGNN_REQUIRE_CUDA=1)")
        pytest.skip(reason)
    return torch.device("cuda", 0)


def _edges(seed: int, num_src: int, num_dst: int, num_edges: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randint(0, num_src, (num_edges,), generator=g), torch.randint(0, num_dst, (num_edges,), generator=g)])


#: (name, edge_index, num_src, num_dst): a super node (row 0 takes a third of the edges), empty
#: rows, duplicates, a bipartite graph.
CASES = [
    ("random", _edges(1, 300, 300, 3000), 300, 300),
    ("super-node", torch.cat([_edges(2, 500, 500, 2000), torch.stack([torch.arange(1000) % 500, torch.zeros(1000, dtype=torch.int64)])], 1), 500, 500),
    ("empty-rows-and-duplicates", torch.tensor([[0, 0, 3, 3, 3], [1, 1, 2, 2, 5]]), 6, 6),
    ("bipartite", _edges(3, 200, 70, 1500), 200, 70),
]
SHAPES = [(1, 1), (3, 7), (8, 8), (2, 33), (1, 100)]


def _inputs(seed, shape, *sizes):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, *shape, generator=g, dtype=torch.float64) for n in sizes]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"H{h}F{f}" for h, f in SHAPES])
def test_gt_and_gat_on_cuda_match_the_f64_reference(cuda, case, shape):
    name, edge_index, num_src, num_dst = case
    graph = dfgnn.Graph.from_edge_index(edge_index.to(cuda), num_nodes=(num_src, num_dst))
    assert graph.device == cuda
    q64, k64, v64 = _inputs(7, shape, num_dst, num_src, num_src)
    d_out = _inputs(8, shape, num_dst)[0]
    el64, er64 = (torch.randn(n, shape[0], dtype=torch.float64) for n in (num_dst, num_src))
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        q, k, v, el, er = (x.to(dtype).detach().clone().requires_grad_() for x in (q64, k64, v64, el64, er64))
        if kind == "fused":
            dev = [x.detach().to(cuda).requires_grad_() for x in (q, k, v, el, er)]
            gt = gt_attention(*dev[:3], graph)
            gat = gat_attention(dev[2], dev[3], dev[4], graph)
            torch.autograd.backward([gt, gat], [d_out.float().to(cuda)] * 2)
            grads = [x.grad.cpu() for x in dev]
            gt, gat = gt.detach().cpu(), gat.detach().cpu()
        else:
            gt = gt_reference(q, k, v, edge_index, num_dst, 1 / math.sqrt(shape[1]))
            gat, _ = gat_reference(v, el, er, edge_index, num_dst, 0.2)
            torch.autograd.backward([gt, gat], [d_out.to(dtype)] * 2)
            grads = [x.grad for x in (q, k, v, el, er)]
            gt, gat = gt.detach(), gat.detach()
        results[kind] = [gt, gat, *grads]
    for i, what in enumerate(("gt", "gat", "dq", "dk", "dv", "d_el", "d_er")):
        assert_tolerance(f"{name} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"H{h}F{f}" for h, f in SHAPES])
@pytest.mark.parametrize("p", [0.0, 0.4])
def test_gat_from_features_on_cuda_matches_the_f64_reference(cuda, case, shape, p):
    """GAT with dfgnn's node scores: out and the gradients of h, h_dst (bipartite) and both
    attention vectors, the reference's scores made by torch and fed the kernels' mask."""
    name, edge_index, num_src, num_dst = case
    graph = dfgnn.Graph.from_edge_index(edge_index.to(cuda), num_nodes=(num_src, num_dst))
    heads, seed, square = shape[0], 9 + shape[1], num_src == num_dst
    h64, h_dst64 = _inputs(27, shape, num_src, num_dst)
    g = torch.Generator().manual_seed(28)
    a_dst64, a_src64 = (torch.randn(*shape, generator=g, dtype=torch.float64) for _ in range(2))
    d_out = _inputs(29, shape, num_dst)[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        xs = [x.to(dtype).detach().clone().requires_grad_() for x in (h64, h_dst64, a_dst64, a_src64)]
        if kind == "fused":
            h, h_dst, a_dst, a_src = dev = [x.detach().to(cuda).requires_grad_() for x in xs]
            out = gat_attention_from_features(h, a_dst, a_src, graph, h_dst=None if square else h_dst, dropout=p, seed=seed)
            out.backward(d_out.float().to(cuda))
            out = out.detach().cpu()
        else:
            h, h_dst, a_dst, a_src = dev = xs
            features = h if square else h_dst
            factors = dropout_factors(graph, p, seed, heads, dtype) if p > 0 else None
            out, _ = gat_reference(h, (features * a_dst).sum(-1), (h * a_src).sum(-1), edge_index, num_dst, 0.2, factors)
            out.backward(d_out.to(dtype))
            out = out.detach()
        grads = [x.grad.cpu() for x in dev[:1] + dev[2:]] + ([] if square else [dev[1].grad.cpu()])
        results[kind] = [out, *grads]
    whats = ("out", "dh", "da_dst", "da_src") + (() if square else ("dh_dst",))
    for i, what in enumerate(whats):
        assert_tolerance(f"{name} p={p} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"H{h}F{f}" for h, f in SHAPES])
@pytest.mark.parametrize("p", [0.0, 0.4])
def test_gatv2_and_attention_dropout_on_cuda_match_the_f64_reference(cuda, case, shape, p):
    """GATv2 (without and with dropout) and GAT with dropout, the reference fed the kernels' mask."""
    name, edge_index, num_src, num_dst = case
    graph = dfgnn.Graph.from_edge_index(edge_index.to(cuda), num_nodes=(num_src, num_dst))
    heads, seed = shape[0], 5 + shape[1]
    xl64, xr64 = _inputs(17, shape, num_src, num_dst)
    a64 = torch.randn(*shape, generator=torch.Generator().manual_seed(18), dtype=torch.float64)
    el64, er64 = (torch.randn(n, heads, dtype=torch.float64) for n in (num_dst, num_src))
    d_out = _inputs(19, shape, num_dst)[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        xl, xr, a, el, er = (x.to(dtype).detach().clone().requires_grad_() for x in (xl64, xr64, a64, el64, er64))
        if kind == "fused":
            dev = [x.detach().to(cuda).requires_grad_() for x in (xl, xr, a, el, er)]
            v2 = gatv2_attention(*dev[:3], graph, dropout=p, seed=seed)
            gat = gat_attention(dev[0], dev[3], dev[4], graph, dropout=p, seed=seed)
            torch.autograd.backward([v2, gat], [d_out.float().to(cuda)] * 2)
            grads = [x.grad.cpu() for x in dev]
            v2, gat = v2.detach().cpu(), gat.detach().cpu()
        else:
            factors = dropout_factors(graph, p, seed, heads, dtype) if p > 0 else None
            v2, _ = gatv2_reference(xl, xr, a, edge_index, num_dst, 0.2, factors)
            gat, _ = gat_reference(xl, el, er, edge_index, num_dst, 0.2, factors)
            torch.autograd.backward([v2, gat], [d_out.to(dtype)] * 2)
            grads = [x.grad for x in (xl, xr, a, el, er)]
            v2, gat = v2.detach(), gat.detach()
        results[kind] = [v2, gat, *grads]
    for i, what in enumerate(("gatv2", "gat", "dxl", "dxr", "da", "d_el", "d_er")):
        assert_tolerance(f"{name} p={p} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gt_dropout_on_cuda_matches_the_f64_reference(cuda, case):
    name, edge_index, num_src, num_dst = case
    graph = dfgnn.Graph.from_edge_index(edge_index.to(cuda), num_nodes=(num_src, num_dst))
    shape, p, seed = (4, 16), 0.3, 21
    q64, k64, v64 = _inputs(22, shape, num_dst, num_src, num_src)
    d_out = _inputs(23, shape, num_dst)[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        q, k, v = (x.to(dtype).detach().clone().requires_grad_() for x in (q64, k64, v64))
        if kind == "fused":
            dev = [x.detach().to(cuda).requires_grad_() for x in (q, k, v)]
            out = gt_attention(*dev, graph, dropout=p, seed=seed)
            out.backward(d_out.float().to(cuda))
            results[kind] = [out.detach().cpu(), *(x.grad.cpu() for x in dev)]
        else:
            factors = dropout_factors(graph, p, seed, shape[0], dtype)
            src, dst = edge_index[0], edge_index[1]
            out = softmax_aggregate((q[dst] * k[src]).sum(-1) / 4.0, v, edge_index, num_dst, factors)[0]
            out.backward(d_out.to(dtype))
            results[kind] = [out.detach(), q.grad, k.grad, v.grad]
    for i, what in enumerate(("out", "dq", "dk", "dv")):
        assert_tolerance(f"{name} {what}", results["fused"][i], results["naive"][i], results["ref"][i])


def test_agnn_on_cuda_matches_the_f64_reference(cuda):
    edge_index = _edges(4, 200, 200, 2000)
    graph = dfgnn.Graph.from_edge_index(edge_index.to(cuda), num_nodes=200)
    (h64,) = _inputs(9, (2, 16), 200)
    d_out = _inputs(10, (2, 16), 200)[0]
    results = {}
    for kind, dtype in (("ref", torch.float64), ("naive", torch.float32), ("fused", torch.float32)):
        device = cuda if kind == "fused" else torch.device("cpu")
        h = h64.to(device, dtype).detach().requires_grad_()
        beta = torch.tensor([0.7], dtype=dtype, device=device, requires_grad=True)
        out = agnn_attention(h, graph, beta) if kind == "fused" else agnn_reference(h, beta, edge_index)
        out.backward(d_out.to(device, dtype))
        results[kind] = (out.detach().cpu(), h.grad.cpu(), beta.grad.cpu())
    for i, what in enumerate(("out", "dh", "dbeta")):
        assert_tolerance(what, results["fused"][i], results["naive"][i], results["ref"][i])


def _step(graph, q, k, v, el, er, beta):
    """One forward and backward of GT, GAT and AGNN (on ``v``, with a learnable β): the outputs
    and the input gradients, dβ included."""
    gt = gt_attention(q, k, v, graph)
    gat = gat_attention(v, el, er, graph)
    agnn = agnn_attention(v, graph, beta)
    loss = gt.square().sum() + gat.square().sum() + agnn.square().sum()
    return [gt, gat, agnn, *torch.autograd.grad(loss, (q, k, v, el, er, beta))]


def _leaves(device, n=400, shape=(4, 16), seed=5):
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(n, *shape, generator=g) for _ in range(3)] + [torch.randn(n, shape[0], generator=g) for _ in range(2)]
    xs.append(0.5 + torch.rand(1, generator=g))  # AGNN's β
    return [x.to(device).requires_grad_() for x in xs]


def test_reruns_on_cuda_are_bit_identical(cuda):
    graph = dfgnn.Graph.from_edge_index(_edges(6, 400, 400, 8000).to(cuda), num_nodes=400)
    leaves = _leaves(cuda)
    first = _step(graph, *leaves)
    for _ in range(3):
        for a, b in zip(first, _step(graph, *leaves)):
            assert torch.equal(a, b)


def test_a_side_stream_gives_the_default_streams_results(cuda):
    graph = dfgnn.Graph.from_edge_index(_edges(7, 400, 400, 8000).to(cuda), num_nodes=400)
    leaves = _leaves(cuda)
    expected = _step(graph, *leaves)
    side = torch.cuda.Stream(cuda)
    side.wait_stream(torch.cuda.current_stream(cuda))
    with torch.cuda.stream(side):
        got = _step(graph, *leaves)
    torch.cuda.current_stream(cuda).wait_stream(side)
    for a, b in zip(expected, got):
        assert torch.equal(a, b)


def test_cuda_graph_replay_equals_eager(cuda):
    """GT, GAT and AGNN forward and backward captured once: a replay reads the inputs of the
    moment, AGNN's β included (the kernels read it on the device), and equals an eager step."""
    graph = dfgnn.Graph.from_edge_index(_edges(8, 400, 400, 8000).to(cuda), num_nodes=400)
    leaves = _leaves(cuda)
    # Warm-up on a side stream (plans and workspaces are made on the first call), as torch asks.
    side = torch.cuda.Stream(cuda)
    side.wait_stream(torch.cuda.current_stream(cuda))
    with torch.cuda.stream(side):
        eager = _step(graph, *leaves)
    torch.cuda.current_stream(cuda).wait_stream(side)
    captured = torch.cuda.CUDAGraph()
    with torch.cuda.graph(captured):
        static = _step(graph, *leaves)
    new = _leaves(cuda, seed=9)
    with torch.no_grad():
        for leaf, x in zip(leaves, new):
            leaf.copy_(x)
    captured.replay()
    torch.cuda.synchronize(cuda)
    for a, b in zip(_step(graph, *new), static):
        assert torch.equal(a, b)
    assert not all(torch.equal(a, b) for a, b in zip(eager, static)), "the replay read the new inputs"
    # Only β changed: AGNN's output and gradients follow it, GT's and GAT's stay.
    before = [x.clone() for x in static]
    with torch.no_grad():
        leaves[-1].fill_(1.9)
    new[-1] = torch.full_like(new[-1], 1.9).requires_grad_()
    captured.replay()
    torch.cuda.synchronize(cuda)
    for a, b in zip(_step(graph, *new), static):
        assert torch.equal(a, b)
    assert torch.equal(static[0], before[0]) and torch.equal(static[1], before[1])
    assert not torch.equal(static[2], before[2]), "the replay read the new β (AGNN's output)"
    assert not torch.equal(static[-1], before[-1]), "the replay read the new β (dβ)"


class _AgnnNet(torch.nn.Module):
    """An element-wise learnt scale, then dfgnn's AGNNConv with a learnt β (no cuBLAS, whose
    algorithm could differ between the eager and the captured step)."""

    def __init__(self, agnn_conv):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.linspace(0.5, 1.5, 16))
        self.conv = agnn_conv(requires_grad=True)
        with torch.no_grad():
            self.conv.beta.fill_(0.8)

    def forward(self, x, edge_index):
        return self.conv(x * self.scale, edge_index)


def _train_step(net, optimizer, x, edge_index, target):
    out = net(x, edge_index)
    loss = (out - target).square().mean()
    loss.backward()
    optimizer.step()
    return out, loss


def test_a_captured_agnn_training_step_replays_as_eager_steps_with_the_new_beta(cuda):
    """A whole training step (dfgnn.nn.AGNNConv with a learnt β, forward, backward, SGD step)
    captured once and replayed on new batches: each replay reads the β the previous one's step
    wrote, and equals the same eager steps bit for bit."""
    import copy

    pytest.importorskip("torch_geometric")
    import dfgnn.nn

    g = torch.Generator().manual_seed(12)
    edge_index = _edges(12, 300, 300, 3000).to(cuda)
    xs = [torch.randn(300, 16, generator=g).to(cuda) for _ in range(4)]
    target = torch.randn(300, 16, generator=g).to(cuda)
    net = _AgnnNet(dfgnn.nn.AGNNConv).to(cuda)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    static_x = xs[0].clone()
    side = torch.cuda.Stream(cuda)
    side.wait_stream(torch.cuda.current_stream(cuda))
    with torch.cuda.stream(side):  # warm-up: the graph, the plans and the workspace sizes
        for _ in range(2):
            optimizer.zero_grad(set_to_none=True)
            _train_step(net, optimizer, static_x, edge_index, target)
    torch.cuda.current_stream(cuda).wait_stream(side)
    eager_net = copy.deepcopy(net)
    eager_optimizer = torch.optim.SGD(eager_net.parameters(), lr=0.5)
    optimizer.zero_grad(set_to_none=True)
    captured = torch.cuda.CUDAGraph()
    with torch.cuda.graph(captured):
        static_out, static_loss = _train_step(net, optimizer, static_x, edge_index, target)
    betas = [net.conv.beta.detach().clone()]
    for x in xs[1:]:
        static_x.copy_(x)
        captured.replay()
        eager_optimizer.zero_grad(set_to_none=True)
        out, loss = _train_step(eager_net, eager_optimizer, x, edge_index, target)
        torch.cuda.synchronize(cuda)
        assert torch.equal(static_out, out) and torch.equal(static_loss, loss)
        assert torch.equal(net.conv.beta.grad, eager_net.conv.beta.grad)
        for (name, p), q in zip(net.named_parameters(), eager_net.parameters()):
            assert torch.equal(p, q), name
        betas.append(net.conv.beta.detach().clone())
    steps = [float(b - a) for a, b in zip(betas, betas[1:])]
    assert all(step != 0.0 for step in steps), f"every step moved β: {betas}"


def test_tensors_on_a_second_device_run_there(cuda):
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device: the second-device test did not run")
    other = torch.device("cuda", 1)
    edge_index = _edges(10, 300, 300, 3000)
    leaves0 = _leaves(cuda, n=300)
    expected = _step(dfgnn.Graph.from_edge_index(edge_index.to(cuda), num_nodes=300), *leaves0)
    with torch.cuda.device(0):  # the current device is 0; the tensors' own device must be used
        graph = dfgnn.Graph.from_edge_index(edge_index.to(other), num_nodes=300)
        assert graph.device == other
        got = _step(graph, *[x.detach().to(other).requires_grad_() for x in leaves0])
        assert torch.cuda.current_device() == 0, "dfgnn kept torch's current device"
        del graph
        gc.collect()  # dropping a graph binds its device's context too
        assert torch.cuda.current_device() == 0, "dfgnn kept torch's current device"
    for a, b in zip(expected, got):
        assert a.device == cuda and b.device == other
        assert torch.equal(a, b.to(cuda))


def test_wrong_device_dtype_and_shape_are_clear_errors(cuda):
    graph = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]], device=cuda), num_nodes=3)
    q = torch.randn(3, 2, 4, device=cuda)
    with pytest.raises(ValueError, match="the graph on cuda"):
        gt_attention(q.cpu(), q, q, graph)
    cpu_graph = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), num_nodes=3)
    with pytest.raises(ValueError, match="the graph on cpu"):
        gt_attention(q, q, q, cpu_graph)
    with pytest.raises(TypeError, match="float32"):
        gt_attention(q.double(), q.double(), q.double(), graph)
    with pytest.raises(ValueError, match=r"\[3, H, F\]"):
        gt_attention(torch.randn(4, 2, 4, device=cuda), q, q, graph)
    with pytest.raises(ValueError, match=r"el must be \[3, 2\]"):
        gat_attention(q, torch.randn(3, 1, device=cuda), torch.randn(3, 2, device=cuda), graph)
    misaligned = torch.randn(3 * 8 + 1, device=cuda)[1:].view(3, 2, 4)
    with pytest.raises(ValueError, match="aligned"):
        gt_attention(misaligned, q, q, graph)
    with pytest.raises(ValueError, match="beta is on cpu, h on cuda"):
        agnn_attention(q, graph, torch.tensor([1.0]))
    # The context is still healthy.
    torch.cuda.synchronize(cuda)
    assert torch.isfinite(gt_attention(q, q, q, graph)).all()


def _cpu_gt_in_a_child(_):
    graph = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), num_nodes=3)
    q = torch.ones(3, 1, 4)
    return gt_attention(q, q, q, graph)


def test_a_forked_child_of_a_cuda_process_runs_cpu_ops(cuda):
    import multiprocessing

    graph = dfgnn.Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]], device=cuda), num_nodes=3)
    q = torch.ones(3, 1, 4, device=cuda)
    expected = gt_attention(q, q, q, graph).cpu()
    with multiprocessing.get_context("fork").Pool(1) as pool:  # a DataLoader worker, say
        (got,) = pool.map(_cpu_gt_in_a_child, [None])
    assert torch.equal(got, expected)
