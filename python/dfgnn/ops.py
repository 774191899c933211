"""dfgnn's fused attention as PyTorch ops (``torch.library`` custom ops with autograd).

Each public function checks its arguments and calls a ``dfgnn::`` op; each op's backward is an op
of its own, so ``torch.compile(fullgraph=True)`` sees no graph break. A graph enters an op as its
id (a ``torch.library`` op takes no Python objects): make the :class:`~dfgnn.Graph` outside the
compiled region and keep it alive while its ops run.

On CUDA an op queues its kernels on ``torch.cuda.current_stream(device)`` (read on every call) of
the tensors' device and returns without waiting; its outputs and its workspace are ``torch.empty``
tensors on that stream, so torch's caching allocator owns all memory. The first call of an op
and shape on a graph plans it and measures its workspace (make that call before capturing a CUDA
graph; captured replays then equal eager runs). GT's, GAT's and GATv2's forwards save the per-row
softmax state (``lse``, ``stats``) for their backwards, which do not run the forward again; GAT's
and GATv2's attention dropout saves only its seed (the backward regenerates the mask). AGNN's
backward runs its forward again; its β is read by the kernels from its tensor and dβ written into
a ``torch.empty`` one (no ``.item()``: no op waits for the device, and every op can be captured).
"""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor

from . import _dfgnn
from .graph import Graph, _check_device, _lookup

#: Bytes a tensor's data must be aligned to: the kernels load 16-byte vectors.
ALIGNMENT = 16

__all__ = [
    "gt_attention",
    "gat_attention",
    "gat_attention_from_features",
    "gatv2_attention",
    "agnn_attention",
    "attention_weights",
    "dropout_mask",
]


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


def _empty(x: Tensor, *shape: int) -> Tensor:
    """A fresh contiguous float32 tensor on ``x``'s device, shaped as ``x`` or as ``shape`` (torch's
    allocator: aligned)."""
    return torch.empty(shape or x.shape, dtype=torch.float32, device=x.device)


def _call(graph: Graph, entry, key: tuple, *args, mode: object = None):
    """Runs the extension's ``entry(prepared, *key, stream, workspace, *args)`` as one call: on
    the device's current stream, with a workspace from ``torch.empty`` measured once per op,
    shape and ``mode`` (``key`` is (heads, features) and the op's parameter, if it has one; the
    size does not depend on the parameter; ``mode`` names what else it depends on, e.g. whether
    GAT's forward saves its positive part).
    On CUDA the graph's device is made current for the call (and the previous one restored)."""
    if graph.device.type != "cuda":
        return _call_on(graph, None, entry, key, mode, *args)
    with torch.cuda.device(graph.device):
        return _call_on(graph, torch.cuda.current_stream(graph.device).cuda_stream, entry, key, mode, *args)


def _call_on(graph: Graph, stream: int | None, entry, key: tuple, mode: object, *args):
    shape_key = (entry.__name__, *key[:2]) if mode is None else (entry.__name__, *key[:2], mode)
    size = graph._workspace.get(shape_key)
    if size is None:
        size = entry(graph._prepared, *key, stream, None, *args)
        graph._workspace[shape_key] = size
    workspace = torch.empty(size, dtype=torch.uint8, device=graph.device)
    return entry(graph._prepared, *key, stream, (workspace.data_ptr(), size), *args)


def _ptrs(*xs: Tensor) -> tuple[int, ...]:
    return tuple(x.data_ptr() for x in xs)


def _check_scores(name: str, x: Tensor, nodes: int, heads: int, graph: Graph) -> None:
    """Checks a ``[nodes, H]`` float32 node-score tensor on the graph's device."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(x).__name__}")
    _check_device(x, name)
    if x.device != graph.device:
        raise ValueError(f"{name} is on {x.device}, the graph on {graph.device}")
    if x.dtype != torch.float32:
        raise TypeError(f"{name} is {x.dtype}: dfgnn's kernels take float32 (cast with .float())")
    if list(x.shape) != [nodes, heads]:
        raise ValueError(f"{name} must be [{nodes}, {heads}] for this graph and heads, not {list(x.shape)}")


# ---------------------------------------------------------------------------------------------
# Attention dropout


def _check_dropout(p: float) -> float:
    p = float(p)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout must be in [0, 1), not {p}")
    return p


def _draw_seed(p: float, seed: Tensor | int | None) -> Optional[Tensor]:
    """The mask's seed as a one-element int64 CPU tensor (``None`` without dropout): ``seed`` as
    given, or drawn from torch's default CPU generator (``torch.randint``), so that a run under
    ``torch.manual_seed`` is reproducible and every call draws a new mask."""
    if p == 0.0:
        return None
    if seed is None:
        return torch.randint(0, 2**63 - 1, (), dtype=torch.int64)
    if isinstance(seed, Tensor):
        if seed.numel() != 1 or seed.dtype != torch.int64 or seed.device.type != "cpu":
            raise ValueError(f"seed must be one int64 value on the CPU, not {seed.dtype} {list(seed.shape)} on {seed.device}")
        return seed.reshape(())
    bits = int(seed) % 2**64  # the seed's 64 bits, held as int64
    return torch.tensor(bits - 2**64 if bits >= 2**63 else bits, dtype=torch.int64)


def _dropout_arg(p: float, seed: Optional[Tensor]) -> tuple[float, int]:
    """``(p, seed)`` for the extension (the seed's 64 bits as an unsigned integer)."""
    if p == 0.0 or seed is None:
        return 0.0, 0
    return p, int(seed.item()) % 2**64


def _leaky_call(negative_slope: float, dropout: float, seed: Tensor | int | None) -> tuple[float, float, Optional[Tensor]]:
    """A LeakyReLU model's call options (GAT, GATv2): the slope (finite), the dropout probability
    and the mask's seed (:func:`_draw_seed`)."""
    slope = float(negative_slope)
    if not math.isfinite(slope):
        raise ValueError(f"negative_slope must be finite, not {slope}")
    p = _check_dropout(dropout)
    return slope, p, _draw_seed(p, seed)


def dropout_mask(graph: Graph, p: float, seed: Tensor | int, heads: int) -> Tensor:
    """The attention-dropout mask the kernels apply under probability ``p`` and ``seed``: ``[E, H]``
    bool, True where edge ``e`` (in the order of ``graph.edge_index``) keeps head ``h``, from the
    kernels' own Philox-4x32-10 of (seed, the edge's CSR slot, head). A kept weight is scaled by
    ``1 / (1 − p)``. For checking the ops (they regenerate the mask and store none); computed on
    the CPU."""
    p = _check_dropout(p)
    seed_t = _draw_seed(p, seed)
    _, seed_u = _dropout_arg(p, seed_t)
    raw = _dfgnn._dropout_keep(p, seed_u, graph.num_edges, int(heads))
    flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw else torch.zeros(0, dtype=torch.uint8)
    csr = flat.to(torch.bool).view(graph.num_edges, int(heads))
    mask = torch.empty_like(csr)
    mask[graph.edge_perm.cpu()] = csr
    return mask.to(graph.device)


# ---------------------------------------------------------------------------------------------
# GT


def _check_gt(q: Tensor, k: Tensor, v: Tensor, graph: Graph) -> tuple[int, int]:
    heads, feat = _check_features("q", q, graph.num_dst, graph)
    for name, x in (("k", k), ("v", v)):
        if _check_features(name, x, graph.num_src, graph) != (heads, feat):
            raise ValueError(f"{name} has {list(x.shape[1:])} heads × features, q has {[heads, feat]}")
    return heads, feat


def _saved_like(x: Tensor, nodes: int, heads: int, feat: int) -> tuple[Tensor, Tensor, Tensor]:
    """Fresh ``out`` ``[nodes, H, F]``, ``lse`` ``[nodes, H]`` and ``stats`` ``[nodes, H, 2]``."""
    return _empty(x, nodes, heads, feat), _empty(x, nodes, heads), _empty(x, nodes, heads, 2)


@torch.library.custom_op("dfgnn::gt_forward", mutates_args=())
def _gt_forward(
    q: Tensor, k: Tensor, v: Tensor, graph_id: int, scale: float, dropout: float, seed: Optional[Tensor]
) -> tuple[Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_gt(q, k, v, graph)
    q, k, v = _ready("q", q), _ready("k", k), _ready("v", v)
    saved = _saved_like(q, graph.num_dst, heads, feat)
    _call(graph, _dfgnn._gt_forward, (heads, feat, scale), _ptrs(q, k, v), _dropout_arg(dropout, seed), _ptrs(*saved))
    return saved


@_gt_forward.register_fake
def _(
    q: Tensor, k: Tensor, v: Tensor, graph_id: int, scale: float, dropout: float, seed: Optional[Tensor]
) -> tuple[Tensor, Tensor, Tensor]:
    n, h, f = q.shape
    return q.new_empty(n, h, f), q.new_empty(n, h), q.new_empty(n, h, 2)


@torch.library.custom_op("dfgnn::gt_backward", mutates_args=())
def _gt_backward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    out: Tensor,
    lse: Tensor,
    stats: Tensor,
    d_out: Tensor,
    graph_id: int,
    scale: float,
    dropout: float,
    seed: Optional[Tensor],
) -> tuple[Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_gt(q, k, v, graph)
    _check_features("d_out", d_out, graph.num_dst, graph)
    q, k, v, d_out = _ready("q", q), _ready("k", k), _ready("v", v), _ready("d_out", d_out)
    saved = _ready("out", out), _ready("lse", lse), _ready("stats", stats)
    dq, dk, dv = _empty(q), _empty(k), _empty(v)
    _call(
        graph,
        _dfgnn._gt_backward,
        (heads, feat, scale),
        _ptrs(q, k, v),
        _dropout_arg(dropout, seed),
        _ptrs(*saved),
        d_out.data_ptr(),
        _ptrs(dq, dk, dv),
    )
    return dq, dk, dv


@_gt_backward.register_fake
def _(
    q, k, v, out, lse, stats, d_out, graph_id: int, scale: float, dropout: float, seed: Optional[Tensor]
) -> tuple[Tensor, Tensor, Tensor]:
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _gt_setup(ctx, inputs, output) -> None:
    q, k, v, graph_id, scale, dropout, seed = inputs
    out, lse, stats = output
    ctx.save_for_backward(q, k, v, out, lse, stats, seed)
    ctx.graph_id, ctx.scale, ctx.dropout = graph_id, scale, dropout
    # The autograd graph keeps the dfgnn Graph alive until the backward has run: a layer may
    # have made it from a temporary edge_index (`conv(x, edge_index.cuda())`).
    ctx.graph = _lookup(graph_id)
    ctx.mark_non_differentiable(lse, stats)


def _gt_grad(ctx, d_out: Tensor, _d_lse, _d_stats):
    q, k, v, out, lse, stats, seed = ctx.saved_tensors
    dq, dk, dv = _gt_backward(q, k, v, out, lse, stats, d_out.contiguous(), ctx.graph_id, ctx.scale, ctx.dropout, seed)
    return dq, dk, dv, None, None, None, None


_gt_forward.register_autograd(_gt_grad, setup_context=_gt_setup)


def gt_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    graph: Graph,
    scale: float | None = None,
    dropout: float = 0.0,
    seed: Tensor | int | None = None,
) -> Tensor:
    """Graph-transformer attention: ``out_i = Σ_j softmax_j(scale·q_i·k_j)·v_j`` over the edges
    ``j → i`` of ``graph``, per head.

    ``q`` is ``[num_dst, H, F]``, ``k`` and ``v`` are ``[num_src, H, F]``, float32, on the graph's
    device; ``scale`` defaults to ``1/√F``. A destination without edges gets zeros. Differentiable
    in ``q``, ``k`` and ``v``. ``dropout`` and ``seed``: attention dropout as in
    :func:`gat_attention` (PyG's ``TransformerConv(dropout=…)`` in training).
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a dfgnn.Graph, not {type(graph).__name__}")
    _, feat = _check_gt(q, k, v, graph)
    scale = 1.0 / math.sqrt(feat) if scale is None else float(scale)
    if not math.isfinite(scale):
        raise ValueError(f"scale must be finite, not {scale}")
    p = _check_dropout(dropout)
    return _gt_forward(q, k, v, graph.id, scale, p, _draw_seed(p, seed))[0]


# ---------------------------------------------------------------------------------------------
# GAT


def _check_gat(h: Tensor, el: Tensor, er: Tensor, graph: Graph) -> tuple[int, int]:
    heads, feat = _check_features("h", h, graph.num_src, graph)
    _check_scores("el", el, graph.num_dst, heads, graph)
    _check_scores("er", er, graph.num_src, heads, graph)
    return heads, feat


@torch.library.custom_op("dfgnn::gat_forward", mutates_args=())
def _gat_forward(
    h: Tensor,
    el: Tensor,
    er: Tensor,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
    train: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_gat(h, el, er, graph)
    h, el, er = _ready("h", h), _ready("el", el), _ready("er", er)
    saved = _saved_like(h, graph.num_dst, heads, feat)
    saves = _gat_saves_part(graph, heads, feat, slope, train)
    part = _gat_part_like(h, graph.num_dst, heads, feat, saves)
    _call(
        graph,
        _dfgnn._gat_forward,
        (heads, feat, slope),
        _ptrs(h, el, er),
        _dropout_arg(dropout, seed),
        _ptrs(*saved),
        _ptrs(*part) if saves else None,
        mode=saves,
    )
    return (*saved, *part)


def _gat_saves_part(graph: Graph, heads: int, feat: int, slope: float, train: bool) -> bool:
    """Whether a GAT forward saves the positive part for its backward: for training (``train``),
    where the op's plan sums it (graphs of several edges per row; elsewhere the backward's row
    pass gathers, and a part would be memory for nothing)."""
    return train and _dfgnn._gat_saves_part(graph._prepared, heads, feat, slope)


def _gat_part_like(x: Tensor, nodes: int, heads: int, feat: int, saves: bool) -> tuple[Tensor, Tensor]:
    """The positive part a forward saves for its backward (``o⁺`` ``[nodes, H, F]``, ``α⁺``
    ``[nodes, H]``: the row pass then reads no neighbour) where ``saves``; else empty."""
    if not saves:
        return _empty(x, 0), _empty(x, 0)
    return _empty(x, nodes, heads, feat), _empty(x, nodes, heads)


@_gat_forward.register_fake
def _(
    h: Tensor,
    el: Tensor,
    er: Tensor,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
    train: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    n, heads = el.shape
    saves = _gat_saves_part(_lookup(graph_id), heads, h.shape[2], slope, train)
    part = (h.new_empty(n, heads, h.shape[2]), h.new_empty(n, heads)) if saves else (h.new_empty(0), h.new_empty(0))
    return h.new_empty(n, heads, h.shape[2]), h.new_empty(n, heads), h.new_empty(n, heads, 2), *part


@torch.library.custom_op("dfgnn::gat_backward", mutates_args=())
def _gat_backward(
    h: Tensor,
    el: Tensor,
    er: Tensor,
    out: Tensor,
    lse: Tensor,
    stats: Tensor,
    part_out: Tensor,
    part_weight: Tensor,
    d_out: Tensor,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
) -> tuple[Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_gat(h, el, er, graph)
    _check_features("d_out", d_out, graph.num_dst, graph)
    h, el, er, d_out = _ready("h", h), _ready("el", el), _ready("er", er), _ready("d_out", d_out)
    saved = _ready("out", out), _ready("lse", lse), _ready("stats", stats)
    part = _saved_part(part_out, part_weight)
    dh, d_el, d_er = _empty(h), _empty(el), _empty(er)
    _call(
        graph,
        _dfgnn._gat_backward,
        (heads, feat, slope),
        _ptrs(h, el, er),
        _dropout_arg(dropout, seed),
        _ptrs(*saved),
        part,
        d_out.data_ptr(),
        _ptrs(dh, d_el, d_er),
        mode=part is not None,
    )
    return dh, d_el, d_er


@_gat_backward.register_fake
def _(
    h,
    el,
    er,
    out,
    lse,
    stats,
    part_out,
    part_weight,
    d_out,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
) -> tuple[Tensor, Tensor, Tensor]:
    return h.new_empty(h.shape), el.new_empty(el.shape), er.new_empty(er.shape)


def _gat_setup(ctx, inputs, output) -> None:
    h, el, er, graph_id, slope, dropout, seed, _train = inputs
    out, lse, stats, part_out, part_weight = output
    # The backward regenerates the forward's mask from the same seed (saved, never redrawn).
    ctx.save_for_backward(h, el, er, out, lse, stats, part_out, part_weight, seed)
    ctx.graph_id, ctx.slope, ctx.dropout = graph_id, slope, dropout
    # The autograd graph keeps the dfgnn Graph alive until the backward has run: a layer may
    # have made it from a temporary edge_index (`conv(x, edge_index.cuda())`).
    ctx.graph = _lookup(graph_id)
    ctx.mark_non_differentiable(lse, stats, part_out, part_weight)


def _gat_grad(ctx, d_out: Tensor, _d_lse, _d_stats, _d_part_out, _d_part_weight):
    h, el, er, out, lse, stats, part_out, part_weight, seed = ctx.saved_tensors
    saved = (out, lse, stats, part_out, part_weight)
    dh, d_el, d_er = _gat_backward(
        h, el, er, *saved, d_out.contiguous(), ctx.graph_id, ctx.slope, ctx.dropout, seed
    )
    return dh, d_el, d_er, None, None, None, None, None


_gat_forward.register_autograd(_gat_grad, setup_context=_gat_setup)


def gat_attention(
    h: Tensor,
    el: Tensor,
    er: Tensor,
    graph: Graph,
    negative_slope: float = 0.2,
    return_attention_weights: bool = False,
    dropout: float = 0.0,
    seed: Tensor | int | None = None,
) -> Tensor | tuple[Tensor, Tensor]:
    """GAT attention: ``out_i = Σ_j softmax_j(LeakyReLU(el_i + er_j))·h_j`` over the edges
    ``j → i`` of ``graph``, per head.

    ``h`` is ``[num_src, H, F]`` (the projected source features), ``el`` ``[num_dst, H]`` and ``er``
    ``[num_src, H]`` the destination and source scores (PyG's ``alpha_dst`` and ``alpha_src``:
    ``(x·att).sum(-1)``), float32 on the graph's device. Differentiable in all three.

    ``dropout`` is attention dropout (PyG's ``GATConv(dropout=…)`` in training): each edge's
    weight of each head is dropped with that probability and the kept ones scaled by
    ``1 / (1 − dropout)``, after the softmax. The mask comes from ``seed`` (an int or a one-element
    int64 CPU tensor; by default drawn from torch's CPU generator on every call, so runs under
    ``torch.manual_seed`` repeat); the backward regenerates it (:func:`dropout_mask` gives it).
    Pass ``dropout=0`` outside training.

    With ``return_attention_weights``, also returns α ``[E, H]`` in the order of
    ``graph.edge_index`` (:func:`attention_weights`, with the dropout mask applied as PyG's; not
    differentiable).
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a dfgnn.Graph, not {type(graph).__name__}")
    _check_gat(h, el, er, graph)
    slope, p, seed_t = _leaky_call(negative_slope, dropout, seed)
    # A forward for training also saves the positive part, from which the backward's row pass
    # reads no neighbour (one more [num_dst, H, F] saved per layer).
    train = torch.is_grad_enabled() and (h.requires_grad or el.requires_grad or er.requires_grad)
    out, lse, *_ = _gat_forward(h, el, er, graph.id, slope, p, seed_t, train)
    if not return_attention_weights:
        return out
    return out, _gat_weights(el, er, lse, graph, slope, p, seed_t)


def _check_gat_nodes(h: Tensor, h_dst: Optional[Tensor], a_dst: Tensor, a_src: Tensor, graph: Graph) -> tuple[int, int]:
    heads, feat = _check_features("h", h, graph.num_src, graph)
    if h_dst is None:
        if graph.num_dst != graph.num_src:
            raise ValueError(
                f"h_dst is needed on a bipartite graph ({graph.num_src} sources, {graph.num_dst} destinations)"
            )
    elif _check_features("h_dst", h_dst, graph.num_dst, graph) != (heads, feat):
        raise ValueError(f"h_dst has {list(h_dst.shape[1:])} heads × features, h has {[heads, feat]}")
    for name, a in (("a_dst", a_dst), ("a_src", a_src)):
        if not isinstance(a, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, not {type(a).__name__}")
        _check_device(a, name)
        if a.device != graph.device:
            raise ValueError(f"{name} is on {a.device}, the graph on {graph.device}")
        if a.dtype != torch.float32:
            raise TypeError(f"{name} is {a.dtype}: dfgnn's kernels take float32 (cast with .float())")
        if list(a.shape) != [heads, feat]:
            raise ValueError(f"{name} must be [{heads}, {feat}] (heads × features), not {list(a.shape)}")
    return heads, feat


def _gat_node_ptrs(h: Tensor, h_dst: Optional[Tensor], a_dst: Tensor, a_src: Tensor) -> tuple:
    return h.data_ptr(), None if h_dst is None else h_dst.data_ptr(), a_dst.data_ptr(), a_src.data_ptr()


@torch.library.custom_op("dfgnn::gat_nodes_forward", mutates_args=())
def _gat_nodes_forward(
    h: Tensor,
    h_dst: Optional[Tensor],
    a_dst: Tensor,
    a_src: Tensor,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
    train: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_gat_nodes(h, h_dst, a_dst, a_src, graph)
    h, a_dst, a_src = _ready("h", h), _ready("a_dst", a_dst), _ready("a_src", a_src)
    h_dst = None if h_dst is None else _ready("h_dst", h_dst)
    saved = _saved_like(h, graph.num_dst, heads, feat)
    saves = _gat_saves_part(graph, heads, feat, slope, train)
    part = _gat_part_like(h, graph.num_dst, heads, feat, saves)
    scores = _empty(h, graph.num_dst, heads), _empty(h, graph.num_src, heads)
    _call(
        graph,
        _dfgnn._gat_nodes_forward,
        (heads, feat, slope),
        _gat_node_ptrs(h, h_dst, a_dst, a_src),
        _dropout_arg(dropout, seed),
        _ptrs(*saved),
        _ptrs(*part) if saves else None,
        _ptrs(*scores),
        mode=(saves, h_dst is not None),
    )
    return (*saved, *part, *scores)


@_gat_nodes_forward.register_fake
def _(
    h: Tensor,
    h_dst: Optional[Tensor],
    a_dst: Tensor,
    a_src: Tensor,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
    train: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    n, (heads, feat) = (h if h_dst is None else h_dst).shape[0], a_dst.shape
    saves = _gat_saves_part(_lookup(graph_id), heads, feat, slope, train)
    part = (h.new_empty(n, heads, feat), h.new_empty(n, heads)) if saves else (h.new_empty(0), h.new_empty(0))
    saved = h.new_empty(n, heads, feat), h.new_empty(n, heads), h.new_empty(n, heads, 2)
    return (*saved, *part, h.new_empty(n, heads), h.new_empty(h.shape[0], heads))


@torch.library.custom_op("dfgnn::gat_nodes_backward", mutates_args=())
def _gat_nodes_backward(
    h: Tensor,
    h_dst: Optional[Tensor],
    a_dst: Tensor,
    a_src: Tensor,
    out: Tensor,
    lse: Tensor,
    stats: Tensor,
    part_out: Tensor,
    part_weight: Tensor,
    el: Tensor,
    er: Tensor,
    d_out: Tensor,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_gat_nodes(h, h_dst, a_dst, a_src, graph)
    _check_features("d_out", d_out, graph.num_dst, graph)
    h, a_dst, a_src, d_out = _ready("h", h), _ready("a_dst", a_dst), _ready("a_src", a_src), _ready("d_out", d_out)
    h_dst = None if h_dst is None else _ready("h_dst", h_dst)
    saved = _ready("out", out), _ready("lse", lse), _ready("stats", stats)
    scores = _ready("el", el), _ready("er", er)
    part = _saved_part(part_out, part_weight)
    dh, da_dst, da_src = _empty(h), _empty(a_dst), _empty(a_src)
    dh_dst = _empty(h, 0) if h_dst is None else _empty(h_dst)
    _call(
        graph,
        _dfgnn._gat_nodes_backward,
        (heads, feat, slope),
        _gat_node_ptrs(h, h_dst, a_dst, a_src),
        _dropout_arg(dropout, seed),
        _ptrs(*saved),
        part,
        _ptrs(*scores),
        d_out.data_ptr(),
        _gat_node_ptrs(dh, None if h_dst is None else dh_dst, da_dst, da_src),
        mode=(part is not None, h_dst is not None),
    )
    return dh, dh_dst, da_dst, da_src


@_gat_nodes_backward.register_fake
def _(
    h,
    h_dst,
    a_dst,
    a_src,
    out,
    lse,
    stats,
    part_out,
    part_weight,
    el,
    er,
    d_out,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    dh_dst = h.new_empty(0) if h_dst is None else h_dst.new_empty(h_dst.shape)
    return h.new_empty(h.shape), dh_dst, a_dst.new_empty(a_dst.shape), a_src.new_empty(a_src.shape)


def _gat_nodes_setup(ctx, inputs, output) -> None:
    h, h_dst, a_dst, a_src, graph_id, slope, dropout, seed, _train = inputs
    out, lse, stats, part_out, part_weight, el, er = output
    # The backward regenerates the forward's mask from the same seed (saved, never redrawn).
    ctx.save_for_backward(h, h_dst, a_dst, a_src, out, lse, stats, part_out, part_weight, el, er, seed)
    ctx.graph_id, ctx.slope, ctx.dropout = graph_id, slope, dropout
    # As in `_gat_setup`: the autograd graph keeps the dfgnn Graph alive until the backward.
    ctx.graph = _lookup(graph_id)
    ctx.mark_non_differentiable(lse, stats, part_out, part_weight, el, er)


def _gat_nodes_grad(ctx, d_out: Tensor, _d_lse, _d_stats, _d_part_out, _d_part_weight, _d_el, _d_er):
    h, h_dst, a_dst, a_src, *saved, seed = ctx.saved_tensors
    dh, dh_dst, da_dst, da_src = _gat_nodes_backward(
        h, h_dst, a_dst, a_src, *saved, d_out.contiguous(), ctx.graph_id, ctx.slope, ctx.dropout, seed
    )
    return dh, None if h_dst is None else dh_dst, da_dst, da_src, None, None, None, None, None


_gat_nodes_forward.register_autograd(_gat_nodes_grad, setup_context=_gat_nodes_setup)


def gat_attention_from_features(
    h: Tensor,
    a_dst: Tensor,
    a_src: Tensor,
    graph: Graph,
    h_dst: Optional[Tensor] = None,
    negative_slope: float = 0.2,
    return_attention_weights: bool = False,
    dropout: float = 0.0,
    seed: Tensor | int | None = None,
) -> Tensor | tuple[Tensor, Tensor]:
    """GAT attention from the features: :func:`gat_attention` with the node scores
    ``el = (h_dst·a_dst).sum(-1)`` and ``er = (h·a_src).sum(-1)`` computed by dfgnn's kernels,
    and their backward fused into the attention's (no ``[N, H, F]`` temporaries, and ``h``'s
    gradient summed in place).

    ``h`` is ``[num_src, H, F]``; ``h_dst`` ``[num_dst, H, F]``, or ``None`` on a square graph
    whose destinations are the sources (both scores then come from one read of ``h``); ``a_dst``
    and ``a_src`` hold ``H·F`` float32 values (PyG's ``att_dst``, ``att_src``: ``[1, H, F]``),
    viewed as ``[H, F]``. Differentiable in ``h``, ``h_dst``, ``a_dst`` and ``a_src``. Dropout,
    the seed and the attention weights are as :func:`gat_attention`'s.
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a dfgnn.Graph, not {type(graph).__name__}")
    heads, feat = _check_features("h", h, graph.num_src, graph)
    if h_dst is h:
        h_dst = None
    a_dst, a_src = (
        a.reshape(heads, feat) if isinstance(a, Tensor) and a.numel() == heads * feat else a for a in (a_dst, a_src)
    )
    _check_gat_nodes(h, h_dst, a_dst, a_src, graph)
    slope, p, seed_t = _leaky_call(negative_slope, dropout, seed)
    inputs = (h, h_dst, a_dst, a_src)
    # As gat_attention: a forward for training also saves the positive part.
    train = torch.is_grad_enabled() and any(x is not None and x.requires_grad for x in inputs)
    out, lse, _stats, _part_out, _part_weight, el, er = _gat_nodes_forward(
        h, h_dst, a_dst, a_src, graph.id, slope, p, seed_t, train
    )
    if not return_attention_weights:
        return out
    return out, _gat_weights(el, er, lse, graph, slope, p, seed_t)


def _saved_part(part_out: Tensor, part_weight: Tensor) -> Optional[tuple[int, int]]:
    """The addresses of the positive part a GAT forward saved, or ``None`` where it saved none."""
    if part_out.numel() == 0:
        return None
    return _ptrs(_ready("part_out", part_out), _ready("part_weight", part_weight))


def _gat_weights(el: Tensor, er: Tensor, lse: Tensor, graph: Graph, slope: float, p: float, seed: Optional[Tensor]) -> Tensor:
    """GAT's α ``[E, H]`` in the order of ``graph.edge_index`` from the node scores and the
    forward's log-sum-exp, dropped and rescaled by the forward's mask (``seed``) as PyG's."""
    src, dst = graph.edge_index[0], graph.edge_index[1]
    scores = torch.nn.functional.leaky_relu(el.detach()[dst] + er.detach()[src], slope)
    alpha = attention_weights(scores, lse, graph)
    if seed is not None:
        alpha = alpha * dropout_mask(graph, p, seed, el.shape[1]).to(alpha.dtype) / (1.0 - p)
    return alpha


def attention_weights(scores: Tensor, lse: Tensor, graph: Graph) -> Tensor:
    """α ``[E, H]`` from the edge scores ``[E, H]`` (in the order of ``graph.edge_index``) and the
    per-destination log-sum-exp ``[num_dst, H]`` an op's forward saved: ``α_e = exp(s_e − lse_dst(e))``
    (PyG's ``return_attention_weights``). Not differentiable (computed from detached tensors)."""
    if scores.dim() != 2 or scores.shape[0] != graph.num_edges:
        raise ValueError(f"scores must be [{graph.num_edges}, H], not {list(scores.shape)}")
    if lse.dim() != 2 or list(lse.shape) != [graph.num_dst, scores.shape[1]]:
        raise ValueError(f"lse must be [{graph.num_dst}, {scores.shape[1]}], not {list(lse.shape)}")
    with torch.no_grad():
        return torch.exp(scores.detach() - lse.detach()[graph.edge_index[1]])


# ---------------------------------------------------------------------------------------------
# GATv2


def _check_gatv2(xl: Tensor, xr: Tensor, a: Tensor, graph: Graph) -> tuple[int, int]:
    heads, feat = _check_features("xl", xl, graph.num_src, graph)
    if _check_features("xr", xr, graph.num_dst, graph) != (heads, feat):
        raise ValueError(f"xr has {list(xr.shape[1:])} heads × features, xl has {[heads, feat]}")
    if not isinstance(a, Tensor):
        raise TypeError(f"a must be a torch.Tensor, not {type(a).__name__}")
    _check_device(a, "a")
    if a.device != graph.device:
        raise ValueError(f"a is on {a.device}, the graph on {graph.device}")
    if a.dtype != torch.float32:
        raise TypeError(f"a is {a.dtype}: dfgnn's kernels take float32 (cast with .float())")
    if list(a.shape) != [heads, feat]:
        raise ValueError(f"a must be [{heads}, {feat}] (heads × features), not {list(a.shape)}")
    return heads, feat


@torch.library.custom_op("dfgnn::gatv2_forward", mutates_args=())
def _gatv2_forward(
    xl: Tensor, xr: Tensor, a: Tensor, graph_id: int, slope: float, dropout: float, seed: Optional[Tensor]
) -> tuple[Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_gatv2(xl, xr, a, graph)
    xl, xr, a = _ready("xl", xl), _ready("xr", xr), _ready("a", a)
    saved = _saved_like(xl, graph.num_dst, heads, feat)
    _call(graph, _dfgnn._gatv2_forward, (heads, feat, slope), _ptrs(xl, xr, a), _dropout_arg(dropout, seed), _ptrs(*saved))
    return saved


@_gatv2_forward.register_fake
def _(
    xl: Tensor, xr: Tensor, a: Tensor, graph_id: int, slope: float, dropout: float, seed: Optional[Tensor]
) -> tuple[Tensor, Tensor, Tensor]:
    n, heads, feat = xr.shape
    return xr.new_empty(n, heads, feat), xr.new_empty(n, heads), xr.new_empty(n, heads, 2)


@torch.library.custom_op("dfgnn::gatv2_backward", mutates_args=())
def _gatv2_backward(
    xl: Tensor,
    xr: Tensor,
    a: Tensor,
    out: Tensor,
    lse: Tensor,
    stats: Tensor,
    d_out: Tensor,
    graph_id: int,
    slope: float,
    dropout: float,
    seed: Optional[Tensor],
) -> tuple[Tensor, Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_gatv2(xl, xr, a, graph)
    _check_features("d_out", d_out, graph.num_dst, graph)
    xl, xr, a, d_out = _ready("xl", xl), _ready("xr", xr), _ready("a", a), _ready("d_out", d_out)
    saved = _ready("out", out), _ready("lse", lse), _ready("stats", stats)
    dxl, dxr, da = _empty(xl), _empty(xr), _empty(a)
    _call(
        graph,
        _dfgnn._gatv2_backward,
        (heads, feat, slope),
        _ptrs(xl, xr, a),
        _dropout_arg(dropout, seed),
        _ptrs(*saved),
        d_out.data_ptr(),
        _ptrs(dxl, dxr, da),
    )
    return dxl, dxr, da


@_gatv2_backward.register_fake
def _(
    xl, xr, a, out, lse, stats, d_out, graph_id: int, slope: float, dropout: float, seed: Optional[Tensor]
) -> tuple[Tensor, Tensor, Tensor]:
    return xl.new_empty(xl.shape), xr.new_empty(xr.shape), a.new_empty(a.shape)


def _gatv2_setup(ctx, inputs, output) -> None:
    xl, xr, a, graph_id, slope, dropout, seed = inputs
    out, lse, stats = output
    ctx.save_for_backward(xl, xr, a, out, lse, stats, seed)
    ctx.graph_id, ctx.slope, ctx.dropout = graph_id, slope, dropout
    # The autograd graph keeps the dfgnn Graph alive until the backward has run: a layer may
    # have made it from a temporary edge_index (`conv(x, edge_index.cuda())`).
    ctx.graph = _lookup(graph_id)
    ctx.mark_non_differentiable(lse, stats)


def _gatv2_grad(ctx, d_out: Tensor, _d_lse, _d_stats):
    xl, xr, a, out, lse, stats, seed = ctx.saved_tensors
    dxl, dxr, da = _gatv2_backward(
        xl, xr, a, out, lse, stats, d_out.contiguous(), ctx.graph_id, ctx.slope, ctx.dropout, seed
    )
    return dxl, dxr, da, None, None, None, None


_gatv2_forward.register_autograd(_gatv2_grad, setup_context=_gatv2_setup)


def gatv2_attention(
    xl: Tensor,
    xr: Tensor,
    a: Tensor,
    graph: Graph,
    negative_slope: float = 0.2,
    dropout: float = 0.0,
    seed: Tensor | int | None = None,
    return_attention_weights: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """GATv2 attention (PyG's ``GATv2Conv``): ``out_i = Σ_j softmax_j(⟨a, LeakyReLU(xl_j + xr_i)⟩)·xl_j``
    over the edges ``j → i`` of ``graph``, per head.

    ``xl`` is ``[num_src, H, F]`` (the sources' transform, scored and aggregated), ``xr``
    ``[num_dst, H, F]`` (the destinations'), ``a`` ``[H, F]`` (PyG's ``att`` without its leading
    1), float32 on the graph's device. Differentiable in all three. ``dropout`` and ``seed`` as in
    :func:`gat_attention`. With ``return_attention_weights``, also returns α ``[E, H]`` in the
    order of ``graph.edge_index`` (dropped as PyG's; not differentiable).
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a dfgnn.Graph, not {type(graph).__name__}")
    heads, _ = _check_gatv2(xl, xr, a, graph)
    slope, p, seed_t = _leaky_call(negative_slope, dropout, seed)
    out, lse, _ = _gatv2_forward(xl, xr, a, graph.id, slope, p, seed_t)
    if not return_attention_weights:
        return out
    src, dst = graph.edge_index[0], graph.edge_index[1]
    with torch.no_grad():
        z = torch.nn.functional.leaky_relu(xl.detach()[src] + xr.detach()[dst], slope)
        scores = (z * a.detach()).sum(-1)
    alpha = attention_weights(scores, lse, graph)
    if seed_t is not None:
        alpha = alpha * dropout_mask(graph, p, seed_t, heads).to(alpha.dtype) / (1.0 - p)
    return out, alpha


# ---------------------------------------------------------------------------------------------
# AGNN


def _check_beta(beta: Tensor, h: Tensor) -> None:
    """β must be one float32 value on ``h``'s device (the kernels read it there)."""
    if beta.numel() != 1 or beta.dtype != torch.float32:
        raise ValueError(f"beta must be one float32 value, not {beta.dtype} of shape {list(beta.shape)}")
    if beta.device != h.device:
        raise ValueError(f"beta is on {beta.device}, h on {h.device}: pass beta on h's device")


def _beta_ready(beta: Tensor) -> Tensor:
    """β as a one-element tensor whose data the kernels can read: itself, or (a view at an offset
    that is not 16-byte aligned) a copy, made on the device's stream (no host wait)."""
    beta = beta.reshape(1)
    return beta if beta.data_ptr() % ALIGNMENT == 0 else beta.clone()


@torch.library.custom_op("dfgnn::agnn_forward", mutates_args=())
def _agnn_forward(h: Tensor, beta: Tensor, graph_id: int) -> Tensor:
    graph = _lookup(graph_id)
    heads, feat = _check_features("h", h, graph.num_dst, graph)
    _check_beta(beta, h)
    h, beta = _ready("h", h), _beta_ready(beta)
    out = _empty(h)
    # β goes in by address: the kernels read it, the host never does (no wait; a captured CUDA
    # graph reads the β of each replay).
    _call(graph, _dfgnn._agnn_forward, (heads, feat), h.data_ptr(), beta.data_ptr(), out.data_ptr())
    return out


@_agnn_forward.register_fake
def _(h: Tensor, beta: Tensor, graph_id: int) -> Tensor:
    return h.new_empty(h.shape)


@torch.library.custom_op("dfgnn::agnn_backward", mutates_args=())
def _agnn_backward(h: Tensor, beta: Tensor, d_out: Tensor, graph_id: int) -> tuple[Tensor, Tensor]:
    graph = _lookup(graph_id)
    heads, feat = _check_features("h", h, graph.num_dst, graph)
    _check_features("d_out", d_out, graph.num_dst, graph)
    _check_beta(beta, h)
    h, d_out, beta_data = _ready("h", h), _ready("d_out", d_out), _beta_ready(beta)
    dh = _empty(h)
    # dβ is summed on the device, in a fixed order, into this tensor.
    d_beta = torch.empty(beta.shape, dtype=beta.dtype, device=beta.device)
    _call(
        graph,
        _dfgnn._agnn_backward,
        (heads, feat),
        _ptrs(h, beta_data),
        d_out.data_ptr(),
        _ptrs(dh, d_beta),
    )
    return dh, d_beta


@_agnn_backward.register_fake
def _(h: Tensor, beta: Tensor, d_out: Tensor, graph_id: int) -> tuple[Tensor, Tensor]:
    return h.new_empty(h.shape), beta.new_empty(beta.shape)


def _agnn_setup(ctx, inputs, output) -> None:
    h, beta, graph_id = inputs
    ctx.save_for_backward(h, beta)
    ctx.graph_id = graph_id
    # The autograd graph keeps the dfgnn Graph alive until the backward has run: a layer may
    # have made it from a temporary edge_index (`conv(x, edge_index.cuda())`).
    ctx.graph = _lookup(graph_id)


def _agnn_grad(ctx, d_out: Tensor):
    h, beta = ctx.saved_tensors
    dh, d_beta = _agnn_backward(h, beta, d_out.contiguous(), ctx.graph_id)
    return dh, d_beta, None


_agnn_forward.register_autograd(_agnn_grad, setup_context=_agnn_setup)


def agnn_attention(h: Tensor, graph: Graph, beta: Tensor | float = 1.0) -> Tensor:
    """AGNN attention: ``out_i = Σ_j softmax_j(β·cos(h_i, h_j))·h_j`` over the edges ``j → i``.

    ``h`` is ``[N, F]`` or ``[N, H, F]`` (cosines per head), float32; the graph must have as many
    sources as destinations. ``beta`` is a finite float or a one-element float32 tensor on ``h``'s
    device (differentiable, as PyG's ``AGNNConv(requires_grad=True)``). Returns a tensor shaped as
    ``h``.

    The kernels read a tensor β in device memory and write dβ there (summed on the device in a
    fixed order): the host never waits, and a captured CUDA graph reads the β of each replay, so a
    training step that updates β can be captured. Being on the device, a tensor β is not checked
    for finiteness (that would need a wait): a NaN or infinite β gives NaN outputs and gradients
    (on the fused schedules; the baseline ones, which serve shapes the fused kernels cannot hold,
    take a row of NaN scores for an empty one and give zeros), never an error or a fault.
    """
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a dfgnn.Graph, not {type(graph).__name__}")
    if graph.num_src != graph.num_dst:
        raise ValueError(f"AGNN needs a graph whose sources are its destinations, not {graph.num_src} → {graph.num_dst}")
    flat = isinstance(h, Tensor) and h.dim() == 2
    h3 = h.unsqueeze(1) if flat else h
    _check_features("h", h3, graph.num_dst, graph)
    if not isinstance(beta, Tensor):
        value = float(beta)
        if not math.isfinite(value):
            raise ValueError(f"beta must be finite, not {value}")
        # A fill on the device (no host-to-device copy, so a CUDA graph can capture it).
        beta = torch.full((), value, dtype=torch.float32, device=h.device)
    _check_device(beta, "beta")
    _check_beta(beta, h3)
    out = _agnn_forward(h3, beta, graph.id)
    return out.squeeze(1) if flat else out
