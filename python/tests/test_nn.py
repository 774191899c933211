"""Drop-in parity of dfgnn.nn's layers with PyG's: same state_dict, outputs and gradients."""

from __future__ import annotations

import copy
import gc
import os
import warnings

import pytest
import torch
from conftest import assert_tolerance, parity

pyg = pytest.importorskip("torch_geometric.nn")
import dfgnn.nn  # noqa: E402


def _graph(seed, num_src, num_dst, num_edges):
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randint(0, num_src, (num_edges,), generator=g), torch.randint(0, num_dst, (num_edges,), generator=g)])


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(heads=1),
        dict(heads=3, concat=False),
        dict(heads=2, beta=True),
        dict(heads=2, root_weight=False, bias=False),
    ],
    ids=["one-head", "mean-of-3-heads", "beta", "no-root-no-bias"],
)
def test_transformer_conv_matches_pyg(kwargs):
    edge_index = _graph(1, 20, 20, 90)
    x = torch.randn(20, 6, generator=torch.Generator().manual_seed(2))
    parity(
        lambda: pyg.TransformerConv(6, 5, **kwargs).eval(),
        lambda: dfgnn.nn.TransformerConv(6, 5, fallback="error", **kwargs).eval(),
        [x],
        edge_index,
    )


def test_transformer_conv_matches_pyg_on_a_bipartite_graph():
    edge_index = _graph(3, 12, 7, 40)
    g = torch.Generator().manual_seed(4)
    x_src, x_dst = torch.randn(12, 6, generator=g), torch.randn(7, 3, generator=g)
    parity(
        lambda: pyg.TransformerConv((6, 3), 4, heads=2).eval(),
        lambda: dfgnn.nn.TransformerConv((6, 3), 4, heads=2, fallback="error").eval(),
        [x_src, x_dst],
        edge_index,
    )


GAT_CASES = [
    dict(heads=1),
    dict(heads=3, concat=False),
    dict(heads=8, negative_slope=0.1, residual=True),
    dict(heads=2, add_self_loops=False, bias=False),
]
GAT_IDS = ["one-head", "mean-of-3-heads", "8-heads-residual", "no-loops-no-bias"]


@pytest.mark.parametrize("kwargs", GAT_CASES, ids=GAT_IDS)
def test_gat_conv_matches_pyg(kwargs):
    edge_index = torch.cat([_graph(11, 30, 30, 120), torch.tensor([[3, 3, 4], [3, 3, 9]])], 1)  # loops, duplicates
    x = torch.randn(30, 7, generator=torch.Generator().manual_seed(12))
    parity(
        lambda: pyg.GATConv(7, 5, **kwargs).eval(),
        lambda: dfgnn.nn.GATConv(7, 5, fallback="error", **kwargs).eval(),
        [x],
        edge_index,
    )


@pytest.mark.parametrize("in_channels", [(6, 4), 6], ids=["separate-weights", "shared-weights"])
def test_gat_conv_matches_pyg_on_a_bipartite_graph(in_channels):
    edge_index = _graph(13, 12, 7, 40)
    g = torch.Generator().manual_seed(14)
    x_src, x_dst = torch.randn(12, 6, generator=g), torch.randn(7, in_channels[1] if isinstance(in_channels, tuple) else 6, generator=g)
    parity(
        lambda: pyg.GATConv(in_channels, 4, heads=2, add_self_loops=False).eval(),
        lambda: dfgnn.nn.GATConv(in_channels, 4, heads=2, add_self_loops=False, fallback="error").eval(),
        [x_src, x_dst],
        edge_index,
    )


def test_gat_conv_attention_weights_match_pygs():
    edge_index = torch.cat([_graph(15, 20, 20, 80), torch.tensor([[2, 5], [2, 5]])], 1)
    x = torch.randn(20, 6, generator=torch.Generator().manual_seed(16), dtype=torch.float64)
    base = pyg.GATConv(6, 3, heads=4).eval()
    layer = dfgnn.nn.GATConv(6, 3, heads=4, fallback="error").eval()
    layer.load_state_dict(base.state_dict())
    out, (ei, alpha) = layer(x.float(), edge_index, return_attention_weights=True)
    ref_out, (ref_ei, ref_alpha) = base.double()(x, edge_index, return_attention_weights=True)
    naive_out, (_, naive_alpha) = base.float()(x.float(), edge_index, return_attention_weights=True)
    assert torch.equal(ei, ref_ei), "the edges with their loops, in PyG's order"
    assert_tolerance("out", out.detach(), naive_out.detach(), ref_out.detach())
    assert_tolerance("alpha", alpha, naive_alpha.detach(), ref_alpha.detach())


def test_gat_conv_runs_attention_dropout_fused_in_training():
    edge_index = _graph(17, 10, 10, 30)
    x = torch.randn(10, 4)
    layer = dfgnn.nn.GATConv(4, 4, heads=2, dropout=0.6, fallback="error")
    torch.manual_seed(1)
    first = layer.train()(x, edge_index)
    torch.manual_seed(1)
    assert torch.equal(first, layer(x, edge_index)), "reproducible under torch.manual_seed"
    assert not torch.equal(first, layer(x, edge_index)), "a new mask per call"
    base = pyg.GATConv(4, 4, heads=2, dropout=0.6).eval()
    base.load_state_dict(layer.state_dict())
    assert torch.allclose(layer.eval()(x, edge_index), base(x, edge_index), atol=1e-5), "no dropout in eval"
    with pytest.raises(NotImplementedError, match="edge features"):
        dfgnn.nn.GATConv(4, 4, edge_dim=3, fallback="error").eval()(x, edge_index, torch.randn(30, 3))
    edge_attr = torch.randn(30, 3)
    lenient, reference = dfgnn.nn.GATConv(4, 4, edge_dim=3).eval(), pyg.GATConv(4, 4, edge_dim=3).eval()
    lenient.load_state_dict(reference.state_dict())
    with pytest.warns(UserWarning, match="edge features"):
        assert torch.equal(lenient(x, edge_index, edge_attr), reference(x, edge_index, edge_attr))


@pytest.mark.parametrize("kind", ["GATConv", "GATv2Conv", "TransformerConv"])
def test_attention_dropout_matches_pyg_with_the_same_mask(monkeypatch, kind):
    """PyG's layer in f64 with its attention dropout replaced by dfgnn's mask, against dfgnn's
    layer in training: the output and every gradient."""
    edge_index = torch.cat([_graph(20, 25, 25, 100), torch.tensor([[3, 3], [3, 3]])], 1)
    x = torch.randn(25, 6, generator=torch.Generator().manual_seed(21))
    p, heads = 0.4, 3
    fused = getattr(dfgnn.nn, kind)(6, 5, heads=heads, dropout=p, fallback="error").train()
    base = getattr(pyg, kind)(6, 5, heads=heads, dropout=p)
    base.load_state_dict(fused.state_dict())
    graph = dfgnn.Graph.from_edge_index(edge_index, num_nodes=25, add_self_loops=kind != "TransformerConv")
    torch.manual_seed(2)
    seed = torch.randint(0, 2**63 - 1, (), dtype=torch.int64)
    factors = dfgnn.ops.dropout_mask(graph, p, seed, heads).double() / (1 - p)

    def masked_dropout(alpha, p=0.5, training=True, **_):
        return alpha * factors.to(alpha.dtype) if training and p > 0 else alpha

    results = {}
    for kind, layer, dtype in (("ref", copy.deepcopy(base).double(), torch.float64), ("naive", base, torch.float32), ("fused", fused, torch.float32)):
        layer.train()
        xs = x.to(dtype).clone().requires_grad_()
        torch.manual_seed(2)
        if kind == "fused":
            out = layer(xs, edge_index)
        else:
            with monkeypatch.context() as patch:  # PyG's layer calls F.dropout on α
                patch.setattr(torch.nn.functional, "dropout", masked_dropout)
                out = layer(xs, edge_index)
        out.backward(torch.ones_like(out))
        grads = {f"d{n}": q.grad for n, q in layer.named_parameters()}
        results[kind] = {"out": out.detach(), "dx": xs.grad, **grads}
    for name, reference in results["ref"].items():
        assert_tolerance(name, results["fused"][name], results["naive"][name], reference)


GATV2_CASES = [
    dict(heads=1),
    dict(heads=3, concat=False),
    dict(heads=8, negative_slope=0.1, residual=True),
    dict(heads=2, add_self_loops=False, bias=False),
    dict(heads=2, share_weights=True),
]
GATV2_IDS = ["one-head", "mean-of-3-heads", "8-heads-residual", "no-loops-no-bias", "shared-weights"]


@pytest.mark.parametrize("kwargs", GATV2_CASES, ids=GATV2_IDS)
def test_gatv2_conv_matches_pyg(kwargs):
    edge_index = torch.cat([_graph(31, 30, 30, 120), torch.tensor([[3, 3, 4], [3, 3, 9]])], 1)  # loops, duplicates
    x = torch.randn(30, 7, generator=torch.Generator().manual_seed(32))
    parity(
        lambda: pyg.GATv2Conv(7, 5, **kwargs).eval(),
        lambda: dfgnn.nn.GATv2Conv(7, 5, fallback="error", **kwargs).eval(),
        [x],
        edge_index,
    )


@pytest.mark.parametrize("kwargs", [dict(), dict(share_weights=True)], ids=["separate-weights", "shared-weights"])
def test_gatv2_conv_matches_pyg_on_a_bipartite_graph(kwargs):
    edge_index = _graph(33, 12, 7, 40)
    g = torch.Generator().manual_seed(34)
    x_src, x_dst = torch.randn(12, 6, generator=g), torch.randn(7, 6, generator=g)
    parity(
        lambda: pyg.GATv2Conv(6, 4, heads=2, add_self_loops=False, **kwargs).eval(),
        lambda: dfgnn.nn.GATv2Conv(6, 4, heads=2, add_self_loops=False, fallback="error", **kwargs).eval(),
        [x_src, x_dst],
        edge_index,
    )


def test_gatv2_conv_attention_weights_match_pygs_and_edge_features_fall_back():
    edge_index = torch.cat([_graph(35, 20, 20, 80), torch.tensor([[2, 5], [2, 5]])], 1)
    x = torch.randn(20, 6, generator=torch.Generator().manual_seed(36), dtype=torch.float64)
    base = pyg.GATv2Conv(6, 3, heads=4).eval()
    layer = dfgnn.nn.GATv2Conv(6, 3, heads=4, fallback="error").eval()
    layer.load_state_dict(base.state_dict())
    out, (ei, alpha) = layer(x.float(), edge_index, return_attention_weights=True)
    ref_out, (ref_ei, ref_alpha) = base.double()(x, edge_index, return_attention_weights=True)
    naive_out, (_, naive_alpha) = base.float()(x.float(), edge_index, return_attention_weights=True)
    assert torch.equal(ei, ref_ei), "the edges with their loops, in PyG's order"
    assert_tolerance("out", out.detach(), naive_out.detach(), ref_out.detach())
    assert_tolerance("alpha", alpha, naive_alpha.detach(), ref_alpha.detach())
    edge_attr = torch.randn(edge_index.shape[1], 3)
    strict = dfgnn.nn.GATv2Conv(6, 3, edge_dim=3, fallback="error").eval()
    with pytest.raises(NotImplementedError, match="edge features"):
        strict(x.float(), edge_index, edge_attr)
    lenient = dfgnn.nn.GATv2Conv(6, 3, edge_dim=3).eval()
    reference = pyg.GATv2Conv(6, 3, edge_dim=3).eval()
    lenient.load_state_dict(reference.state_dict())
    with pytest.warns(UserWarning, match="edge features"):
        fell_back = lenient(x.float(), edge_index, edge_attr)
    assert torch.equal(fell_back, reference(x.float(), edge_index, edge_attr))


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("add_self_loops", [True, False])
def test_agnn_conv_matches_pyg(requires_grad, add_self_loops):
    edge_index = _graph(5, 25, 25, 100)
    x = torch.randn(25, 7, generator=torch.Generator().manual_seed(6))

    def init(layer):
        if requires_grad:
            layer.beta.data.fill_(1.4)
        return layer.eval()

    kwargs = dict(requires_grad=requires_grad, add_self_loops=add_self_loops)
    parity(
        lambda: init(pyg.AGNNConv(**kwargs)),
        lambda: init(dfgnn.nn.AGNNConv(fallback="error", **kwargs)),
        [x],
        edge_index,
    )


def test_unserved_options_fall_back_to_pyg_as_asked():
    edge_index = _graph(7, 10, 10, 30)
    x = torch.randn(10, 4)
    edge_attr = torch.randn(30, 3)
    base = pyg.TransformerConv(4, 4, edge_dim=3).eval()
    layer = dfgnn.nn.TransformerConv(4, 4, edge_dim=3).eval()
    layer.load_state_dict(base.state_dict())
    with pytest.warns(UserWarning, match="edge features"):
        out = layer(x, edge_index, edge_attr)
    assert torch.equal(out, base(x, edge_index, edge_attr))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layer(x, edge_index, edge_attr)  # warns once per layer
    strict = dfgnn.nn.TransformerConv(4, 4, fallback="error").eval()
    with pytest.raises(NotImplementedError, match="return_attention_weights"):
        strict(x, edge_index, return_attention_weights=True)
    with pytest.raises(NotImplementedError, match="float64"):
        strict(x.double(), edge_index)
    with pytest.raises(ValueError, match="fallback"):
        dfgnn.nn.AGNNConv(fallback="sometimes")


def test_convert_swaps_pyg_layers_in_place():
    model = torch.nn.Sequential()
    model.append(pyg.TransformerConv(4, 4))
    model.append(pyg.AGNNConv())
    model.append(pyg.GATConv(4, 2, heads=2))
    model.append(torch.nn.Linear(4, 4))
    model.append(pyg.GATv2Conv(4, 2, heads=2))
    params = [p for p in model.parameters()]
    dfgnn.nn.convert(model, fallback="error")
    assert type(model[0]) is dfgnn.nn.TransformerConv and type(model[1]) is dfgnn.nn.AGNNConv
    assert type(model[2]) is dfgnn.nn.GATConv and type(model[3]) is torch.nn.Linear
    assert type(model[4]) is dfgnn.nn.GATv2Conv
    assert all(a is b for a, b in zip(model.parameters(), params, strict=True))
    edge_index = _graph(8, 6, 6, 20)
    x = torch.randn(6, 4)
    assert model[2](model[1](model[0](x, edge_index), edge_index), edge_index).shape == (6, 4)
    assert model[4](x, edge_index).shape == (6, 4)


def test_a_converted_layer_still_falls_back_to_pyg():
    edge_index = _graph(9, 8, 8, 25)
    x = torch.randn(8, 4)
    base = pyg.TransformerConv(4, 3, heads=2).eval()
    layer = dfgnn.nn.convert(copy.deepcopy(base), fallback="silent")
    out, (ei, alpha) = layer(x, edge_index, return_attention_weights=True)
    expected, (_, expected_alpha) = base(x, edge_index, return_attention_weights=True)
    assert torch.equal(out, expected) and torch.equal(alpha, expected_alpha)
    assert torch.allclose(layer(x, edge_index), expected, atol=1e-5)


@pytest.mark.parametrize("kwargs", GAT_CASES[:3], ids=GAT_IDS[:3])
def test_gat_conv_on_cuda_matches_pyg(kwargs):
    if not torch.cuda.is_available():
        reason = "no CUDA device: the CUDA parity test did not run"
        if os.environ.get("DFGNN_REQUIRE_CUDA") == "1":
            pytest.fail(reason + " (DFGNN_REQUIRE_CUDA=1)")
        pytest.skip(reason)
    edge_index = _graph(18, 300, 300, 3000)
    x = torch.randn(300, 16, generator=torch.Generator().manual_seed(19))
    parity(
        lambda: pyg.GATConv(16, 8, **kwargs).eval(),
        lambda: dfgnn.nn.GATConv(16, 8, fallback="error", **kwargs).eval(),
        [x],
        edge_index,
        device="cuda",
    )


@pytest.mark.parametrize("kwargs", GATV2_CASES[:3], ids=GATV2_IDS[:3])
def test_gatv2_conv_on_cuda_matches_pyg(kwargs):
    if not torch.cuda.is_available():
        reason = "no CUDA device: the CUDA parity test did not run"
        if os.environ.get("DFGNN_REQUIRE_CUDA") == "1":
            pytest.fail(reason + " (DFGNN_REQUIRE_CUDA=1)")
        pytest.skip(reason)
    edge_index = _graph(37, 300, 300, 3000)
    x = torch.randn(300, 16, generator=torch.Generator().manual_seed(38))
    parity(
        lambda: pyg.GATv2Conv(16, 8, **kwargs).eval(),
        lambda: dfgnn.nn.GATv2Conv(16, 8, fallback="error", **kwargs).eval(),
        [x],
        edge_index,
        device="cuda",
    )


@pytest.mark.parametrize("layer", ["TransformerConv", "GATConv", "GATv2Conv", "AGNNConv"])
def test_a_layer_on_a_temporary_edge_index_keeps_its_graph_for_the_backward(layer):
    # `conv(x, edge_index.cuda())` makes the graph from a tensor nobody else holds; the autograd
    # graph must keep it alive until the backward has run.
    x = torch.randn(50, 16, generator=torch.Generator().manual_seed(3), requires_grad=True)
    conv = {
        "TransformerConv": lambda: dfgnn.nn.TransformerConv(16, 8, heads=2),
        "GATConv": lambda: dfgnn.nn.GATConv(16, 8, heads=2),
        "GATv2Conv": lambda: dfgnn.nn.GATv2Conv(16, 8, heads=2),
        "AGNNConv": lambda: dfgnn.nn.AGNNConv(requires_grad=True),
    }[layer]()
    out = conv(x, _graph(4, 50, 50, 400).clone())
    gc.collect()
    out.square().sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()
