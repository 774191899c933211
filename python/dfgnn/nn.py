"""PyG's attention layers on dfgnn's fused kernels: same constructor, ``state_dict`` and results.

Each layer subclasses PyG's and replaces only the attention (message, softmax, aggregation). What
the kernels cannot serve yet falls back to PyG's own ``forward``, as ``fallback`` says: ``"warn"``
(once per layer, the default), ``"error"`` or ``"silent"``. :func:`convert` swaps the PyG layers of
a model in place. Needs ``torch_geometric``.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor, nn
from torch_geometric.nn import MessagePassing
from torch_geometric.nn import conv as pyg

from .graph import Graph
from .ops import agnn_attention, gat_attention_from_features, gatv2_attention, gt_attention

__all__ = ["TransformerConv", "GATConv", "GATv2Conv", "AGNNConv", "convert"]

_FALLBACKS = ("warn", "error", "silent")


def _generic_propagate(self, edge_index, size=None, **kwargs):
    """PyG's generic ``propagate``, for the fallback path. PyG compiles a ``propagate`` per class
    from the ``propagate(...)`` call in the class's ``forward``; dfgnn's ``forward`` has none, and
    a ``propagate`` in the class's own namespace keeps PyG from compiling one that takes the wrong
    arguments."""
    return MessagePassing.propagate(self, edge_index, size=size, **kwargs)


def _generic_edge_updater(self, edge_index, size=None, **kwargs):
    """PyG's generic ``edge_updater``, for the fallback path of the GAT layers (PyG compiles one
    per class from the class's ``forward``, as it does ``propagate``)."""
    return MessagePassing.edge_updater(self, edge_index, size=size, **kwargs)


class _Fused:
    """The fallback policy shared by dfgnn's layers."""

    def _set_fallback(self, fallback: str) -> None:
        if fallback not in _FALLBACKS:
            raise ValueError(f"fallback must be one of {_FALLBACKS}, not {fallback!r}")
        self.fallback = fallback
        self._warned = False

    def _unserved(self, x: Tensor, edge_index, extra: list[str]) -> list[str]:
        """Why the fused kernels cannot run this call (empty when they can)."""
        reasons = list(extra)
        if not isinstance(edge_index, Tensor) or edge_index.layout != torch.strided:
            reasons.append("a sparse adjacency (pass edge_index as a [2, E] tensor)")
        if x.dtype != torch.float32:
            reasons.append(f"{x.dtype} features (the kernels take float32)")
        if x.device.type not in ("cpu", "cuda"):
            reasons.append(f"tensors on {x.device} (dfgnn runs CUDA and CPU tensors)")
        return reasons

    def _fall_back(self, reasons: list[str]) -> None:
        message = f"dfgnn.nn.{type(self).__name__} runs PyG's own path: {'; '.join(reasons)}"
        if self.fallback == "error":
            raise NotImplementedError(message)
        if self.fallback == "warn" and not self._warned:
            self._warned = True
            warnings.warn(message, stacklevel=3)


class TransformerConv(_Fused, pyg.TransformerConv):
    """PyG's :class:`~torch_geometric.nn.conv.TransformerConv` with dfgnn's GT attention.

    Served: heads, concat, beta, root weight, bias, bipartite inputs, attention dropout in
    training (fused; dfgnn's mask, seeded from torch's CPU generator on every call, not PyG's
    bits). PyG's path: ``edge_dim``, ``return_attention_weights``, sparse adjacencies.
    """

    propagate = _generic_propagate

    def __init__(self, *args, fallback: str = "warn", **kwargs):
        super().__init__(*args, **kwargs)
        self._set_fallback(fallback)

    def forward(self, x, edge_index, edge_attr=None, return_attention_weights=None):
        x_src, x_dst = (x, x) if isinstance(x, Tensor) else x
        extra = []
        if self.lin_edge is not None or edge_attr is not None:
            extra.append("edge features (edge_dim)")
        if return_attention_weights is not None:
            extra.append("return_attention_weights")
        reasons = self._unserved(x_dst, edge_index, extra) + self._unserved(x_src, edge_index, [])
        if reasons:
            self._fall_back(sorted(set(reasons)))
            return super().forward(x, edge_index, edge_attr, return_attention_weights)
        H, C = self.heads, self.out_channels
        graph = Graph.from_edge_index(edge_index, num_nodes=(x_src.size(0), x_dst.size(0)))
        query = self.lin_query(x_dst).view(-1, H, C)
        key = self.lin_key(x_src).view(-1, H, C)
        value = self.lin_value(x_src).view(-1, H, C)
        out = gt_attention(query, key, value, graph, dropout=self.dropout if self.training else 0.0)
        out = out.reshape(-1, H * C) if self.concat else out.mean(dim=1)
        if self.root_weight:
            x_r = self.lin_skip(x_dst)
            if self.lin_beta is not None:
                beta = self.lin_beta(torch.cat([out, x_r, out - x_r], dim=-1)).sigmoid()
                out = beta * x_r + (1 - beta) * out
            else:
                out = out + x_r
        return out


class GATConv(_Fused, pyg.GATConv):
    """PyG's :class:`~torch_geometric.nn.conv.GATConv` with dfgnn's GAT attention.

    Served: heads, concat, negative slope, self loops (removed and re-added, as PyG does), bias,
    residual, shared or separate source/destination weights, bipartite inputs (without self
    loops), attention dropout in training (fused: the mask from dfgnn's Philox stream, seeded from
    torch's CPU generator on every call, so it is not PyG's mask), ``return_attention_weights``
    (α in the order of the edges with their loops, as PyG's, dropped as PyG's; not
    differentiable). PyG's path: ``edge_dim``, an explicit ``size``, a pair without destination
    features, sparse adjacencies.
    """

    propagate = _generic_propagate
    edge_updater = _generic_edge_updater

    def __init__(self, *args, fallback: str = "warn", **kwargs):
        super().__init__(*args, **kwargs)
        self._set_fallback(fallback)

    def forward(self, x, edge_index, edge_attr=None, size=None, return_attention_weights=None):
        pair = not isinstance(x, Tensor)
        x_src, x_dst = x if pair else (x, x)
        extra = []
        if self.lin_edge is not None or edge_attr is not None:
            extra.append("edge features (edge_dim)")
        if size is not None:
            extra.append("an explicit size")
        if x_dst is None:
            extra.append("a pair without destination features")
        elif pair and self.add_self_loops and x_src.size(0) != x_dst.size(0):
            extra.append("self loops on a bipartite graph")
        reasons = self._unserved(x_src, edge_index, extra)
        if x_dst is not None:
            reasons += self._unserved(x_dst, edge_index, [])
        if reasons:
            self._fall_back(sorted(set(reasons)))
            return super().forward(x, edge_index, edge_attr, size, return_attention_weights)
        H, C = self.heads, self.out_channels
        res = self.res(x_dst) if self.res is not None else None
        if self.lin is not None:
            h_src = self.lin(x_src).view(-1, H, C)
            h_dst = self.lin(x_dst).view(-1, H, C) if pair else h_src
        else:
            h_src, h_dst = self.lin_src(x_src).view(-1, H, C), self.lin_dst(x_dst).view(-1, H, C)
        graph = Graph.from_edge_index(
            edge_index, num_nodes=(x_src.size(0), x_dst.size(0)), add_self_loops=self.add_self_loops
        )
        weights = bool(return_attention_weights)
        p = self.dropout if self.training else 0.0
        # The node scores (h·att).sum(-1) and their backward run in dfgnn's kernels too.
        result = gat_attention_from_features(
            h_src,
            self.att_dst,
            self.att_src,
            graph,
            h_dst=h_dst,
            negative_slope=self.negative_slope,
            return_attention_weights=weights,
            dropout=p,
        )
        out, alpha = result if weights else (result, None)
        out = out.reshape(-1, H * C) if self.concat else out.mean(dim=1)
        if res is not None:
            out = out + res
        if self.bias is not None:
            out = out + self.bias
        if weights:
            return out, (graph.edge_index, alpha)
        return out


class GATv2Conv(_Fused, pyg.GATv2Conv):
    """PyG's :class:`~torch_geometric.nn.conv.GATv2Conv` with dfgnn's GATv2 attention.

    Served: heads, concat, negative slope, self loops (removed and re-added, as PyG does), bias,
    residual, shared or separate weights, bipartite inputs (without self loops), attention
    dropout in training (fused; dfgnn's mask, seeded from torch's CPU generator on every call,
    not PyG's bits), ``return_attention_weights`` (α in the order of the edges with their loops,
    as PyG's, dropped as PyG's; not differentiable). PyG's path: ``edge_dim``, a pair without
    destination features, sparse adjacencies.
    """

    propagate = _generic_propagate
    edge_updater = _generic_edge_updater

    def __init__(self, *args, fallback: str = "warn", **kwargs):
        super().__init__(*args, **kwargs)
        self._set_fallback(fallback)

    def forward(self, x, edge_index, edge_attr=None, return_attention_weights=None):
        pair = not isinstance(x, Tensor)
        x_src, x_dst = x if pair else (x, x)
        extra = []
        if self.lin_edge is not None or edge_attr is not None:
            extra.append("edge features (edge_dim)")
        if x_dst is None:
            extra.append("a pair without destination features")
        elif pair and self.add_self_loops and x_src.size(0) != x_dst.size(0):
            extra.append("self loops on a bipartite graph")
        reasons = self._unserved(x_src, edge_index, extra)
        if x_dst is not None:
            reasons += self._unserved(x_dst, edge_index, [])
        if reasons:
            self._fall_back(sorted(set(reasons)))
            return super().forward(x, edge_index, edge_attr, return_attention_weights)
        H, C = self.heads, self.out_channels
        res = self.res(x_dst) if self.res is not None else None
        x_l = self.lin_l(x_src).view(-1, H, C)
        x_r = x_l if self.share_weights and not pair else self.lin_r(x_dst).view(-1, H, C)
        graph = Graph.from_edge_index(
            edge_index, num_nodes=(x_src.size(0), x_dst.size(0)), add_self_loops=self.add_self_loops
        )
        weights = bool(return_attention_weights)
        p = self.dropout if self.training else 0.0
        a = self.att.reshape(H, C)
        result = gatv2_attention(x_l, x_r, a, graph, self.negative_slope, dropout=p, return_attention_weights=weights)
        out, alpha = result if weights else (result, None)
        out = out.reshape(-1, H * C) if self.concat else out.mean(dim=1)
        if res is not None:
            out = out + res
        if self.bias is not None:
            out = out + self.bias
        if weights:
            return out, (graph.edge_index, alpha)
        return out


class AGNNConv(_Fused, pyg.AGNNConv):
    """PyG's :class:`~torch_geometric.nn.conv.AGNNConv` with dfgnn's AGNN attention (β learnt or
    fixed, self loops added or not). PyG's path: sparse adjacencies."""

    propagate = _generic_propagate

    def __init__(self, *args, fallback: str = "warn", **kwargs):
        super().__init__(*args, **kwargs)
        self._set_fallback(fallback)

    def forward(self, x: Tensor, edge_index) -> Tensor:
        reasons = self._unserved(x, edge_index, [] if x.dim() == 2 else [f"{x.dim()}-d features"])
        if reasons:
            self._fall_back(reasons)
            return super().forward(x, edge_index)
        graph = Graph.from_edge_index(edge_index, num_nodes=x.size(0), add_self_loops=self.add_self_loops)
        return agnn_attention(x, graph, self.beta)


#: PyG's layer → dfgnn's.
_REPLACEMENTS: dict[type, type] = {
    pyg.TransformerConv: TransformerConv,
    pyg.GATConv: GATConv,
    pyg.GATv2Conv: GATv2Conv,
    pyg.AGNNConv: AGNNConv,
}


def convert(model: nn.Module, fallback: str = "warn") -> nn.Module:
    """Swaps every PyG layer of ``model`` that dfgnn serves for dfgnn's, in place (parameters,
    buffers and hooks stay), and returns ``model``."""
    for module in model.modules():
        replacement = _REPLACEMENTS.get(type(module))
        if replacement is not None:
            module.__class__ = replacement
            module._set_fallback(fallback)
    return model
