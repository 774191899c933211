"""dfgnn: fused attention GNN kernels for PyTorch and PyG.

CPU tensors run on dfgnn's SIMT emulator (the real kernels, checked, slow); CUDA tensors are not
served yet. Importing the package touches no CUDA.

- :class:`dfgnn.Graph`: a graph prepared once (``Graph.from_edge_index``), cached per tensor.
- :mod:`dfgnn.ops`: ``gt_attention``, ``agnn_attention`` (autograd, ``torch.compile``-able).
- :mod:`dfgnn.nn`: ``TransformerConv``, ``AGNNConv``: PyG's layers with the fused kernels
  (imported on demand; needs ``torch_geometric``).
"""

from . import ops
from .graph import Graph

__all__ = ["Graph", "ops"]
