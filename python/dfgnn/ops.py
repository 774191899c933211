"""dfgnn's fused attention as PyTorch ops (``torch.library`` custom ops with autograd).

Each public function checks its arguments and calls a ``dfgnn::`` op; each op's backward is an op
of its own, so ``torch.compile(fullgraph=True)`` sees no graph break. A graph enters an op as its
id (a ``torch.library`` op takes no Python objects): make the :class:`~dfgnn.Graph` outside the
compiled region and keep it alive while its ops run.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from . import _dfgnn
from .graph import Graph, _check_device, _lookup

#: Bytes a tensor's data must be aligned to: the kernels load 16-byte vectors.
ALIGNMENT = 16

__all__ = ["gt_attention", "agnn_attention"]


def _check_features(name: str, x: Tensor, nodes: int, graph: Graph) -> tuple[int, int]:
    """Checks a ``[nodes, H, F]`` float32 feature tensor on the graph's device; returns (H, F)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(x).__name__}")
    _check_device(x, name)
    if x.device != graph.device:
        raise ValueError(f"{name} is on {x.device}, the graph on {graph.device}")
    if x.dtype != torch.float32:
        raise TypeError(f"{name} is {x.dtype}: dfgnn's kernels take float32 (cast with .float())")
    if x.dim() != 3 or x.shape[0] != nodes:
        raise ValueError(f"{name} must be [{nodes}, H, F] for this graph, not {list(x.shape)}")
    heads, feat = x.shape[1], x.shape[2]
    if heads < 1 or feat < 1 or heads * feat >= 2**32:
        raise ValueError(f"{name} has {heads} heads of {feat} features: both must be at least 1 (H·F < 2^32)")
    return heads, feat


def _ready(name: str, x: Tensor) -> Tensor:
    """``x`` contiguous, refused when its data is not 16-byte aligned (a view at an odd offset)."""
    x = x.contiguous()
    if x.numel() > 0 and x.data_ptr() % ALIGNMENT != 0:
        raise ValueError(
            f"{name} starts at an address that is not {ALIGNMENT}-byte aligned (a view at an offset): "
            "pass a copy (.clone())"
        )
    return x


def _empty(x: Tensor) -> Tensor:
    """A fresh contiguous tensor shaped as ``x`` (torch's allocator: aligned)."""
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


# ---------------------------------------------------------------------------------------------
# GT


@torch.library.custom_op("dfgnn::gt_forward", mutates_args=())
def _gt_forward(q: Tensor, k: Tensor, v: Tensor, graph_id: int, scale: float) -> Tensor:
    graph = _lookup(graph_id)
    heads, feat = _check_features("q", q, graph.num_dst, graph)
    for name, x in (("k", k), ("v", v)):
        if _check_features(name, x, graph.num_src, graph) != (heads, feat):
            raise ValueError(f"{name} has {list(x.shape[1:])} heads × features, q has {[heads, feat]}")
    q, k, v = _ready("q", q), _ready("k", k), _ready("v", v)
    out = _empty(q)
    _dfgnn._gt_forward(graph._prepared, heads, feat, scale, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr())
    return out


@_gt_forward.register_fake
def _(q: Tensor, k: Tensor, v: Tensor, graph_id: int, scale: float) -> Tensor:
    return q.new_empty(q.shape)


@torch.library.custom_op("dfgnn::gt_backward", mutates_args=())
def _gt_backward(
    q: Tensor, k: Tensor, v: Tensor, d_out: Tensor, graph_id: int, scale: float
) -> tuple[Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_features("q", q, graph.num_dst, graph)
    _check_features("d_out", d_out, graph.num_dst, graph)
    q, k, v, d_out = _ready("q", q), _ready("k", k), _ready("v", v), _ready("d_out", d_out)
    dq, dk, dv = _empty(q), _empty(k), _empty(v)
    ptrs = (x.data_ptr() for x in (q, k, v, d_out, dq, dk, dv))
    _dfgnn._gt_backward(graph._prepared, heads, feat, scale, *ptrs)
    return dq, dk, dv


@_gt_backward.register_fake
def _(q: Tensor, k: Tensor, v: Tensor, d_out: Tensor, graph_id: int, scale: float) -> tuple[Tensor, Tensor, Tensor]:
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _gt_setup(ctx, inputs, output) -> None:
    q, k, v, graph_id, scale = inputs
    ctx.save_for_backward(q, k, v)
    ctx.graph_id, ctx.scale = graph_id, scale


def _gt_grad(ctx, d_out: Tensor):
    q, k, v = ctx.saved_tensors
    dq, dk, dv = _gt_backward(q, k, v, d_out.contiguous(), ctx.graph_id, ctx.scale)
    return dq, dk, dv, None, None


_gt_forward.register_autograd(_gt_grad, setup_context=_gt_setup)


def gt_attention(q: Tensor, k: Tensor, v: Tensor, graph: Graph, scale: float | None = None) -> Tensor:
    """Graph-transformer attention: ``out_i = Σ_j softmax_j(scale·q_i·k_j)·v_j`` over the edges
    ``j → i`` of ``graph``, per head.

    ``q`` is ``[num_dst, H, F]``, ``k`` and ``v`` are ``[num_src, H, F]``, float32, on the graph's
    device; ``scale`` defaults to ``1/√F``. A destination without edges gets zeros. Differentiable
    in ``q``, ``k`` and ``v``.
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a dfgnn.Graph, not {type(graph).__name__}")
    heads, feat = _check_features("q", q, graph.num_dst, graph)
    for name, x in (("k", k), ("v", v)):
        if _check_features(name, x, graph.num_src, graph) != (heads, feat):
            raise ValueError(f"{name} has {list(x.shape[1:])} heads × features, q has {[heads, feat]}")
    scale = 1.0 / math.sqrt(feat) if scale is None else float(scale)
    if not math.isfinite(scale):
        raise ValueError(f"scale must be finite, not {scale}")
    return _gt_forward(q, k, v, graph.id, scale)


# ---------------------------------------------------------------------------------------------
# AGNN


def _check_beta(beta: Tensor) -> None:
    if beta.numel() != 1 or beta.dtype != torch.float32:
        raise ValueError(f"beta must be one float32 value, not {beta.dtype} of shape {list(beta.shape)}")


@torch.library.custom_op("dfgnn::agnn_forward", mutates_args=())
def _agnn_forward(h: Tensor, beta: Tensor, graph_id: int) -> Tensor:
    graph = _lookup(graph_id)
    heads, feat = _check_features("h", h, graph.num_dst, graph)
    _check_beta(beta)
    h = _ready("h", h)
    out = _empty(h)
    _dfgnn._agnn_forward(graph._prepared, heads, feat, float(beta.item()), h.data_ptr(), out.data_ptr())
    return out


@_agnn_forward.register_fake
def _(h: Tensor, beta: Tensor, graph_id: int) -> Tensor:
    return h.new_empty(h.shape)


@torch.library.custom_op("dfgnn::agnn_backward", mutates_args=())
def _agnn_backward(h: Tensor, beta: Tensor, d_out: Tensor, graph_id: int) -> tuple[Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_features("h", h, graph.num_dst, graph)
    _check_features("d_out", d_out, graph.num_dst, graph)
    _check_beta(beta)
    h, d_out = _ready("h", h), _ready("d_out", d_out)
    dh = _empty(h)
    d_beta = _dfgnn._agnn_backward(
        graph._prepared, heads, feat, float(beta.item()), h.data_ptr(), d_out.data_ptr(), dh.data_ptr()
    )
    return dh, torch.full(beta.shape, d_beta, dtype=beta.dtype, device=beta.device)


@_agnn_backward.register_fake
def _(h: Tensor, beta: Tensor, d_out: Tensor, graph_id: int) -> tuple[Tensor, Tensor]:
    return h.new_empty(h.shape), beta.new_empty(beta.shape)


def _agnn_setup(ctx, inputs, output) -> None:
    h, beta, graph_id = inputs
    ctx.save_for_backward(h, beta)
    ctx.graph_id = graph_id


def _agnn_grad(ctx, d_out: Tensor):
    h, beta = ctx.saved_tensors
    dh, d_beta = _agnn_backward(h, beta, d_out.contiguous(), ctx.graph_id)
    return dh, d_beta, None


_agnn_forward.register_autograd(_agnn_grad, setup_context=_agnn_setup)


def agnn_attention(h: Tensor, graph: Graph, beta: Tensor | float = 1.0) -> Tensor:
    """AGNN attention: ``out_i = Σ_j softmax_j(β·cos(h_i, h_j))·h_j`` over the edges ``j → i``.

    ``h`` is ``[N, F]`` or ``[N, H, F]`` (cosines per head), float32; the graph must have as many
    sources as destinations. ``beta`` is a float or a one-element float32 tensor (differentiable,
    as PyG's ``AGNNConv(requires_grad=True)``). Returns a tensor shaped as ``h``.
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a dfgnn.Graph, not {type(graph).__name__}")
    if graph.num_src != graph.num_dst:
        raise ValueError(f"AGNN needs a graph whose sources are its destinations, not {graph.num_src} → {graph.num_dst}")
    flat = isinstance(h, Tensor) and h.dim() == 2
    h3 = h.unsqueeze(1) if flat else h
    _check_features("h", h3, graph.num_dst, graph)
    if not isinstance(beta, Tensor):
        beta = torch.tensor(float(beta), dtype=torch.float32, device=h.device)
    _check_device(beta, "beta")
    _check_beta(beta)
    out = _agnn_forward(h3, beta, graph.id)
    return out.squeeze(1) if flat else out
