"""dfgnn: fused attention GNN kernels for PyTorch and PyG.

CUDA tensors run on their own device, on torch's current stream, in memory from torch's caching
allocator; CPU tensors run on dfgnn's SIMT emulator (the real kernels, checked, slow). Importing
the package touches no CUDA.

- :class:`dfgnn.Graph`: a graph prepared once (``Graph.from_edge_index``), cached per tensor.
- :mod:`dfgnn.ops`: ``gt_attention``, ``gat_attention``, ``gatv2_attention`` (both GATs with
  fused attention dropout), ``agnn_attention``, ``attention_weights``, ``dropout_mask`` (autograd,
  ``torch.compile``-able).
- :mod:`dfgnn.datasets`: molecules (MOSES, SMILES strings) as batched graphs for PyG-style models.
- :mod:`dfgnn.nn`: ``TransformerConv``, ``GATConv``, ``GATv2Conv``, ``AGNNConv``: PyG's layers with the fused kernels
  (imported on demand; needs ``torch_geometric``).
"""

from . import datasets, ops
from .graph import Graph

__all__ = ["Graph", "datasets", "ops"]
