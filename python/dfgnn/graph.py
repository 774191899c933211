"""Graphs prepared once for dfgnn's kernels, cached per ``edge_index`` tensor."""

from __future__ import annotations

import itertools
import weakref

import torch
from torch import Tensor

from . import _dfgnn

#: The most nodes on a side, and edges, that the kernels index (32-bit ids, one value reserved).
MAX_INDEX = 2**32 - 2

_ids = itertools.count(1)
#: Live graphs by id: the ops take a graph as its id (``torch.library`` ops take no objects).
_live: weakref.WeakValueDictionary[int, Graph] = weakref.WeakValueDictionary()
#: Graphs by ``id(edge_index)``: (weak reference to the tensor, its version, sizes, graph).
#: (Only the latest graph of a tensor is kept.)
_cache: dict[int, tuple[weakref.ref, int, tuple[tuple[int, int], bool], Graph]] = {}


def _check_device(t: Tensor, what: str) -> None:
    if t.device.type not in ("cpu", "cuda"):
        raise ValueError(f"{what} is on {t.device}: dfgnn runs CUDA tensors and CPU ones (on its emulator)")


def _device_index(device: torch.device) -> int | None:
    """The CUDA device index of ``device`` (``None`` for the CPU), never a default device."""
    if device.type != "cuda":
        return None
    return device.index if device.index is not None else torch.cuda.current_device()


class Graph:
    """A graph on dfgnn's kernels: CSR by destination (PyG's ``edge_index[1]``), its CSC, and the
    permutation from CSR slots to the original edge order (:attr:`edge_perm`).

    Make one with :meth:`from_edge_index`; it is immutable.
    """

    def __init__(self, prepared: _dfgnn.PreparedGraph, device: torch.device, edge_index: Tensor, edge_perm: Tensor):
        self._prepared = prepared
        self.device = device
        #: ``[2, E]`` int64 on the graph's device: the edges the graph holds, in their original
        #: order (with ``add_self_loops``, the kept edges followed by one loop per node, as PyG's
        #: ``GATConv`` makes them): the order of :func:`dfgnn.ops.attention_weights`.
        self.edge_index = edge_index
        #: Workspace bytes per op and shape, measured on first use.
        self._workspace: dict[tuple, int] = {}
        #: ``[E]`` int64: the original index of the edge in each CSR slot (a stable sort by
        #: destination, so edges of one destination keep their order; with ``add_self_loops``, the
        #: index among the kept edges followed by the loops).
        self.edge_perm = edge_perm
        self.id = next(_ids)
        _live[self.id] = self

    @property
    def num_src(self) -> int:
        """Source nodes (``edge_index[0]`` ranges over them)."""
        return self._prepared.num_src

    @property
    def num_dst(self) -> int:
        """Destination nodes (``edge_index[1]`` ranges over them)."""
        return self._prepared.num_dst

    @property
    def num_edges(self) -> int:
        """Edges (duplicates and self loops count as they are)."""
        return self._prepared.num_edges

    @property
    def device_bytes(self) -> int:
        """Bytes of the prepared graph's arrays (CSR, CSC, permutation) on its device, allocated
        by the extension, outside PyTorch's caching allocator (``torch.cuda.max_memory_allocated``
        does not count them; the planned ops' work lists are not counted here either)."""
        return self._prepared.device_bytes

    def __repr__(self) -> str:
        return f"dfgnn.Graph(num_src={self.num_src}, num_dst={self.num_dst}, num_edges={self.num_edges}, device={self.device})"

    @staticmethod
    def from_edge_index(
        edge_index: Tensor, num_nodes: int | tuple[int, int] | None = None, add_self_loops: bool = False
    ) -> Graph:
        """The graph of PyG's ``edge_index`` (``[2, E]``, sources in row 0, destinations in row 1;
        a PyG ``EdgeIndex`` works too).

        ``num_nodes`` is one count for a graph whose sources are its destinations, or
        ``(num_src, num_dst)`` for a bipartite one (PyG's ``size``); by default the sparse size of an
        ``EdgeIndex``, else the largest index plus one.

        ``add_self_loops=True`` drops the self loops of ``edge_index`` and adds one per node, as PyG's
        ``AGNNConv`` and ``GATConv`` do (the graph must not be bipartite).

        The graph lives on ``edge_index``'s device (a CUDA device, or the CPU for the emulator);
        preparing it sorts there (stable) and builds the CSR, CSC and plans once, waiting for the
        device (do it before capturing a CUDA graph). The result is cached per tensor (its
        identity and version, never its address), so a layer that gets the same ``edge_index``
        every step prepares it once; editing the tensor in place prepares it anew.
        """
        if not isinstance(edge_index, Tensor):
            raise TypeError(f"edge_index must be a torch.Tensor, not {type(edge_index).__name__}")
        sizes = _sizes(edge_index, num_nodes)
        if add_self_loops and sizes[0] != sizes[1]:
            raise ValueError(f"self loops on a bipartite graph ({sizes[0]} sources, {sizes[1]} destinations)")
        key = id(edge_index)
        hit = _cache.get(key)
        what = (sizes, add_self_loops)
        if hit is not None and hit[0]() is edge_index and hit[1] == edge_index._version and hit[2] == what:
            return hit[3]
        graph = _prepare(edge_index, sizes, add_self_loops)
        if key not in _cache:
            weakref.finalize(edge_index, _cache.pop, key, None)
        _cache[key] = (weakref.ref(edge_index), edge_index._version, what, graph)
        return graph


def _sizes(edge_index: Tensor, num_nodes: int | tuple[int, int] | None) -> tuple[int, int]:
    """``(num_src, num_dst)`` from ``num_nodes`` or the edges."""
    if num_nodes is None:
        sparse_size = getattr(edge_index, "sparse_size", None)
        sizes = sparse_size() if callable(sparse_size) else (None, None)
        if None in sizes:
            top = int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0
            sizes = tuple(top if s is None else s for s in sizes)
        num_nodes = sizes
    if isinstance(num_nodes, int):
        num_nodes = (num_nodes, num_nodes)
    if not (isinstance(num_nodes, tuple | list) and len(num_nodes) == 2 and all(isinstance(n, int) for n in num_nodes)):
        raise TypeError(f"num_nodes must be an int or a pair (num_src, num_dst) of ints, not {num_nodes!r}")
    for n in num_nodes:
        if not 0 <= n <= MAX_INDEX:
            raise ValueError(f"{n} nodes: dfgnn takes 0 to {MAX_INDEX} nodes on each side")
    return (int(num_nodes[0]), int(num_nodes[1]))


def _prepare(edge_index: Tensor, sizes: tuple[int, int], add_self_loops: bool) -> Graph:
    """Checks ``edge_index`` and prepares its graph (a stable sort by destination)."""
    _check_device(edge_index, "edge_index")
    if edge_index.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"edge_index must hold int64 or int32 node indices, not {edge_index.dtype}")
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must be [2, E], not {list(edge_index.shape)}")
    num_src, num_dst = sizes
    num_edges = edge_index.shape[1]
    if num_edges > MAX_INDEX:
        raise ValueError(f"{num_edges} edges: dfgnn takes at most {MAX_INDEX}")
    if callable(getattr(edge_index, "as_tensor", None)):  # PyG's EdgeIndex wraps a plain tensor
        edge_index = edge_index.as_tensor()
    if type(edge_index) is not Tensor:
        raise TypeError(f"edge_index of type {type(edge_index).__name__}: pass a plain torch.Tensor")
    edges = edge_index.to(torch.int64)
    src, dst = edges[0], edges[1]
    for name, index, count in (("source", src, num_src), ("destination", dst, num_dst)):
        if num_edges > 0 and (int(index.min()) < 0 or int(index.max()) >= count):
            bad = int(index[(index < 0) | (index >= count)][0])
            raise ValueError(f"{name} node {bad} in edge_index is out of range [0, {count})")
    if add_self_loops:
        kept = src != dst
        loops = torch.arange(num_dst, dtype=torch.int64, device=src.device)
        src, dst = torch.cat([src[kept], loops]), torch.cat([dst[kept], loops])
        if src.numel() > MAX_INDEX:
            raise ValueError(f"{src.numel()} edges with the self loops: dfgnn takes at most {MAX_INDEX}")
    # On the edges' device (stable: edges of one destination keep their order, and so do results).
    edge_perm = torch.argsort(dst, stable=True)
    counts = torch.bincount(dst, minlength=num_dst)
    # The CSR goes to the extension in host memory (it builds the CSC and the plans there).
    columns = src[edge_perm].cpu().contiguous()
    offsets = torch.zeros(num_dst + 1, dtype=torch.int64)
    torch.cumsum(counts.cpu(), 0, out=offsets[1:])
    device = edge_index.device
    index = _device_index(device)
    args = (index, num_dst, num_src, offsets.data_ptr(), columns.data_ptr(), columns.numel())
    if index is None:
        prepared = _dfgnn.PreparedGraph(*args)
    else:
        device = torch.device("cuda", index)
        with torch.cuda.device(device):  # the extension binds the device's context: keep torch's current device
            prepared = _dfgnn.PreparedGraph(*args)
    return Graph(prepared, device, torch.stack([src, dst]), edge_perm)


def _lookup(graph_id: int) -> Graph:
    """The live graph ``graph_id``."""
    graph = _live.get(graph_id)
    if graph is None:
        raise ValueError(f"dfgnn graph {graph_id} no longer exists (keep the Graph alive while its ops run)")
    return graph
