"""Molecules as batched graphs for PyG-style models, read by dfgnn's own SMILES reader (no RDKit).

- :func:`moses`: the MOSES molecule sets (the ``.csv.gz`` files of the PyPI package ``molsets``
  0.3.1, in ``moses/dataset/data``; nothing is downloaded).
- :func:`from_smiles`: SMILES strings.

Both return :class:`Molecules`: the molecules packed block-diagonally, as PyG batches them
(``x``, ``edge_index``, ``batch``, ``ptr``), plus the atoms' raw attributes and the bonds'
orders. :meth:`Molecules.batches` cuts them into mini-batches; :meth:`Molecules.to_pyg` gives a
``torch_geometric.data.Batch``.

The reader (``dfgnn-graphs``' ``smiles``) keeps the atoms and bonds as written: hydrogens are
atoms only when written as ``[H]``, and :attr:`Molecules.hydrogens` counts only those written
inside brackets (``[nH]`` has 1, ``C`` has 0: implicit hydrogens are not inferred).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

import torch
from torch import Tensor

from . import _dfgnn

__all__ = ["ATOM_TYPES", "BOND_ORDERS", "NUM_ATOM_FEATURES", "SPLITS", "Molecules", "from_smiles", "moses"]

#: The MOSES splits (``<split>.csv.gz``).
SPLITS = ("train", "test", "test_scaffolds")

#: The atom types of :attr:`Molecules.atom_type`: the elements of MOSES (its filter keeps
#: molecules of these only), then ``"other"`` for any other element or the wildcard ``*``.
ATOM_TYPES = ("C", "N", "O", "F", "S", "Cl", "Br", "H", "other")
_ATOMIC_NUMBERS = (6, 7, 8, 9, 16, 17, 35, 1)

#: The bond orders of :attr:`Molecules.bond_order`.
BOND_ORDERS = ("single", "double", "triple", "quadruple", "aromatic")

#: The columns of :attr:`Molecules.x`: the atom type one-hot, aromatic, formal charge, bracket
#: hydrogens.
NUM_ATOM_FEATURES = len(ATOM_TYPES) + 3

#: Atomic number (0 for ``*``, up to 118) -> index in :data:`ATOM_TYPES`.
_TYPE_OF_NUMBER = torch.full((119,), len(ATOM_TYPES) - 1, dtype=torch.int64)
_TYPE_OF_NUMBER[list(_ATOMIC_NUMBERS)] = torch.arange(len(_ATOMIC_NUMBERS))


@dataclass(frozen=True)
class Molecules:
    """Molecules packed into one block-diagonal graph (PyG's batching), in order.

    Node ``i`` is an atom, of molecule ``batch[i]``; molecule ``g`` has atoms
    ``ptr[g]:ptr[g + 1]`` and edges ``edge_ptr[g]:edge_ptr[g + 1]``. Every bond is two edges, one
    each way; each molecule's edges are sorted by destination (``edge_index[1]``), then source.
    All tensors are on one device.
    """

    #: ``[N]`` int64: the atomic number (``H`` 1, ``C`` 6, ...; 0 for ``*``).
    atomic_number: Tensor
    #: ``[N]`` bool: written aromatic (lowercase).
    aromatic: Tensor
    #: ``[N]`` int64: the formal charge.
    charge: Tensor
    #: ``[N]`` int64: hydrogens written inside the atom's brackets (not implicit ones).
    hydrogens: Tensor
    #: ``[2, E]`` int64: sources in row 0, destinations in row 1 (PyG's convention).
    edge_index: Tensor
    #: ``[E]`` int64: each edge's bond order, an index into :data:`BOND_ORDERS`.
    bond_order: Tensor
    #: ``[N]`` int64: each atom's molecule.
    batch: Tensor
    #: ``[G + 1]`` int64: where each molecule's atoms start.
    ptr: Tensor
    #: ``[G + 1]`` int64: where each molecule's edges start.
    edge_ptr: Tensor

    @property
    def num_graphs(self) -> int:
        """Molecules."""
        return self.ptr.numel() - 1

    @property
    def num_nodes(self) -> int:
        """Atoms."""
        return self.atomic_number.numel()

    @property
    def num_edges(self) -> int:
        """Edges (twice the bonds)."""
        return self.edge_index.shape[1]

    def __len__(self) -> int:
        return self.num_graphs

    @property
    def atom_type(self) -> Tensor:
        """``[N]`` int64: each atom's index in :data:`ATOM_TYPES`."""
        return _TYPE_OF_NUMBER.to(self.atomic_number.device)[self.atomic_number]

    @property
    def x(self) -> Tensor:
        """``[N, NUM_ATOM_FEATURES]`` float32 node features: the atom type one-hot
        (:data:`ATOM_TYPES`), aromatic (0/1), formal charge, bracket hydrogens."""
        one_hot = torch.nn.functional.one_hot(self.atom_type, len(ATOM_TYPES))
        extra = torch.stack([self.aromatic.to(torch.int64), self.charge, self.hydrogens], dim=1)
        return torch.cat([one_hot, extra], dim=1).to(torch.float32)

    def __getitem__(self, index: slice) -> Molecules:
        """The molecules ``index`` (a slice of step 1) as a set of their own (copies)."""
        if not isinstance(index, slice):
            raise TypeError(f"Molecules take a slice (molecules[a:b]), not {type(index).__name__}")
        start, stop, step = index.indices(self.num_graphs)
        if step != 1:
            raise ValueError(f"Molecules take slices of step 1, not {step}")
        stop = max(start, stop)
        first, last = int(self.ptr[start]), int(self.ptr[stop])
        first_edge, last_edge = int(self.edge_ptr[start]), int(self.edge_ptr[stop])
        atoms = slice(first, last)
        return Molecules(
            atomic_number=self.atomic_number[atoms].clone(),
            aromatic=self.aromatic[atoms].clone(),
            charge=self.charge[atoms].clone(),
            hydrogens=self.hydrogens[atoms].clone(),
            edge_index=self.edge_index[:, first_edge:last_edge] - first,
            bond_order=self.bond_order[first_edge:last_edge].clone(),
            batch=self.batch[atoms] - start,
            ptr=self.ptr[start : stop + 1] - first,
            edge_ptr=self.edge_ptr[start : stop + 1] - first_edge,
        )

    def batches(self, size: int) -> list[Molecules]:
        """Consecutive mini-batches of ``size`` molecules (the last may be smaller)."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"batch size must be a positive int, not {size!r}")
        return [self[start : start + size] for start in range(0, self.num_graphs, size)]

    def to(self, device) -> Molecules:
        """The same molecules with every tensor on ``device``."""
        return Molecules(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def to_pyg(self):
        """A ``torch_geometric.data.Batch`` with ``x``, ``edge_index``, ``edge_attr`` (the bond
        order), ``atom_type``, ``batch`` and ``ptr``. Needs ``torch_geometric``."""
        from torch_geometric.data import Batch

        return Batch(
            x=self.x,
            edge_index=self.edge_index,
            edge_attr=self.bond_order,
            atom_type=self.atom_type,
            batch=self.batch,
            ptr=self.ptr,
        )


def _molecules(arrays: dict[str, bytearray]) -> Molecules:
    """The extension's arrays (native-endian bytes) as tensors, viewed without a copy."""

    def view(name: str, dtype: torch.dtype) -> Tensor:
        raw = arrays[name]
        return torch.frombuffer(raw, dtype=dtype) if len(raw) else torch.empty(0, dtype=dtype)

    ptr = view("atom_ptr", torch.int64)
    counts = ptr[1:] - ptr[:-1]
    return Molecules(
        atomic_number=view("atomic_number", torch.uint8).to(torch.int64),
        aromatic=view("aromatic", torch.uint8).to(torch.bool),
        charge=view("charge", torch.int8).to(torch.int64),
        hydrogens=view("hydrogens", torch.uint8).to(torch.int64),
        edge_index=torch.stack([view("src", torch.int64), view("dst", torch.int64)]),
        bond_order=view("bond_order", torch.uint8).to(torch.int64),
        batch=torch.repeat_interleave(torch.arange(counts.numel()), counts),
        ptr=ptr,
        edge_ptr=view("edge_ptr", torch.int64),
    )


def moses(split: str = "train", count: int | None = None, dir: str | os.PathLike | None = None) -> Molecules:
    """The first ``count`` molecules (all with ``None``) of the MOSES split ``split``
    (:data:`SPLITS`: ``train`` has 1,584,663 molecules, ``test`` 176,074, ``test_scaffolds``
    176,225), from ``dir`` (by default ``$DFGNN_MOSES_DIR``): the folder holding molsets'
    ``<split>.csv.gz`` files.

    Raises ``FileNotFoundError`` for a missing folder or file, ``ValueError`` for an unknown
    split, a ``count`` below 1 or above the file's molecules, or a molecule that does not parse
    (named by file and line), ``OSError`` for an unreadable file.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown MOSES split {split!r}: one of {SPLITS}")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
        raise TypeError(f"count must be an int or None, not {type(count).__name__}")
    if count is not None and count < 1:
        raise ValueError(f"count must be at least 1 (None for every molecule), not {count}")
    if dir is None:
        dir = os.environ.get("DFGNN_MOSES_DIR")
        if not dir:
            raise FileNotFoundError(
                "no MOSES folder: pass dir= or set DFGNN_MOSES_DIR to the folder of molsets' *.csv.gz "
                "(`pip download --no-deps molsets==0.3.1`, then unzip its moses/dataset/data/*.csv.gz; "
                "dfgnn's scripts/fetch-moses.sh does both)"
            )
    if not os.path.isdir(dir):
        raise FileNotFoundError(f"MOSES folder {os.fspath(dir)!r} does not exist (or is not a folder)")
    molecules = _molecules(_dfgnn._moses_molecules(os.fspath(dir), split, count))
    if count is not None and molecules.num_graphs < count:
        raise ValueError(f"{split}.csv.gz in {os.fspath(dir)!r} holds {molecules.num_graphs} molecules, fewer than count={count}")
    return molecules


def from_smiles(smiles: list[str] | tuple[str, ...]) -> Molecules:
    """The molecules of SMILES strings, in order. Raises ``ValueError`` for an empty list or a
    string that does not parse (named by its index and position)."""
    if isinstance(smiles, str):
        raise TypeError("from_smiles takes a list of SMILES strings, not one string")
    smiles = list(smiles)
    if not smiles:
        raise ValueError("from_smiles needs at least one SMILES string")
    for k, s in enumerate(smiles):
        if not isinstance(s, str):
            raise TypeError(f"smiles[{k}] is a {type(s).__name__}, not a str")
    return _molecules(_dfgnn._smiles_molecules(smiles))
