"""The record of a graph-classification dataset: :class:`GraphSet`, its check and fingerprint.

A graph set is a list of small graphs, each a PyG :class:`~torch_geometric.data.Data` with
node features ``x`` (float ``[n, F]``, the same ``F`` for every graph), an undirected
``edge_index`` (``[2, E]``, both directions listed, local ids ``0..n-1``), optional edge
features ``edge_attr`` (``[E, D]``) and one class id ``y`` (a ``[1]`` long tensor). Every
reader (:mod:`~graphleaks.data.graphsets.motifs`, :mod:`~graphleaks.data.graphsets.tu`,
:mod:`~graphleaks.data.graphsets.molecules`) builds its graphs and hands them to
:func:`check_graphs`, so a model or a trainer can rely on these shapes.

The privacy unit of graph classification is one graph (a molecule): membership means "this
graph was in the training set".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import torch
from torch_geometric.data import Data

from graphleaks._limits import MAX_CATEGORIES, MAX_GRAPHS
from graphleaks.errors import DataError


@dataclass(frozen=True)
class GraphSet:
    """A labelled set of graphs for graph classification.

    Build one with a reader (``motif_graphs``, ``read_tu_folder``, ``read_smiles``,
    ``read_sdf``, ``load_solubility``) or :meth:`from_graphs`, which checks the graphs.

    Attributes:
        graphs: The graphs, each with ``x``, ``edge_index``, optional ``edge_attr`` and a
            ``[1]`` class id ``y``.
        class_names: Name of each class id (``class_names[k]`` for ``y == k``).
        source: A short label of where the set came from (reports, messages).
        smiles: The canonical SMILES of each molecule, for molecule sets.
        names: A name per graph (an SDF title, a record id), when the source has one.
        skipped: How many records of the source were invalid and skipped
            (``on_invalid="skip"``); 0 otherwise.
    """

    graphs: tuple[Data, ...]
    class_names: tuple[str, ...]
    source: str = "graph set"
    smiles: tuple[str, ...] | None = None
    names: tuple[str, ...] | None = None
    skipped: int = 0
    # hashing every graph is costly and the record is frozen: the first hash is kept here
    _fingerprint: list[str] = field(default_factory=list, init=False, repr=False,
                                    compare=False)

    @classmethod
    def from_graphs(cls, graphs: Sequence[Data], class_names: Sequence[str], *,
                    source: str = "graph set", smiles: Sequence[str] | None = None,
                    names: Sequence[str] | None = None, skipped: int = 0) -> GraphSet:
        """A checked graph set (see :func:`check_graphs`).

        Raises:
            DataError: Naming the first bad graph (by index) and the problem.
        """
        checked = check_graphs(graphs, len(class_names), source=source)
        for what, values in (("smiles", smiles), ("names", names)):
            if values is not None and len(values) != len(checked):
                raise DataError(f"{source}: {len(values)} {what} for {len(checked)} graphs; "
                                f"give one per graph")
        return cls(checked, tuple(str(c) for c in class_names), source,
                   None if smiles is None else tuple(smiles),
                   None if names is None else tuple(names), int(skipped))

    def __len__(self) -> int:
        return len(self.graphs)

    def __iter__(self) -> Iterator[Data]:
        return iter(self.graphs)

    def __getitem__(self, index: int) -> Data:
        return self.graphs[index]

    @property
    def num_classes(self) -> int:
        """Number of classes (the length of :attr:`class_names`)."""
        return len(self.class_names)

    @property
    def num_features(self) -> int:
        """Node feature width, shared by every graph."""
        return int(self.graphs[0].x.shape[1])

    @property
    def num_edge_features(self) -> int:
        """Edge feature width (0 when the graphs carry no ``edge_attr``)."""
        attr = getattr(self.graphs[0], "edge_attr", None)
        return 0 if attr is None else int(attr.shape[1])

    @property
    def y(self) -> torch.Tensor:
        """The class id of every graph, ``[num_graphs]`` long."""
        return torch.cat([g.y.view(-1) for g in self.graphs])

    def class_counts(self) -> list[int]:
        """How many graphs each class holds."""
        return torch.bincount(self.y, minlength=self.num_classes).tolist()

    def subset(self, indices: Sequence[int] | torch.Tensor) -> GraphSet:
        """The graphs at ``indices`` (in that order), with their SMILES and names."""
        idx = [int(i) for i in (indices.tolist() if isinstance(indices, torch.Tensor)
                                else indices)]

        def pick(t: tuple[str, ...] | None) -> tuple[str, ...] | None:
            return None if t is None else tuple(t[i] for i in idx)

        return GraphSet(tuple(self.graphs[i] for i in idx), self.class_names, self.source,
                        pick(self.smiles), pick(self.names), self.skipped)

    def fingerprint(self) -> str:
        """A short content hash of every graph's features, edges, edge features and label.

        Two sets with the same fingerprint hold the same graphs in the same order; a record
        of the set (``GraphSetRef``) pins it so that reloading a different set is refused.
        """
        if not self._fingerprint:
            h = hashlib.sha256(f"graphs:{len(self.graphs)}:classes:{self.num_classes}".encode())
            for g in self.graphs:
                for name in ("x", "edge_index", "edge_attr", "y"):
                    value = getattr(g, name, None)
                    if value is None:
                        h.update(f"{name}:none".encode())
                        continue
                    arr = value.detach().cpu().contiguous().numpy()
                    h.update(f"{name}:{arr.dtype}:{arr.shape}".encode())
                    h.update(arr.tobytes())
            self._fingerprint.append(h.hexdigest()[:16])
        return self._fingerprint[0]


def check_graphs(graphs: Sequence[Data], num_classes: int, *,
                 source: str = "graph set") -> tuple[Data, ...]:
    """Validate graphs for graph classification and return them with canonical dtypes.

    Each graph needs at least one node, finite float features of one shared width, an
    ``edge_index`` of shape ``[2, E]`` with ids in ``0..n-1`` (a graph may have no edges:
    a single-atom molecule), edge features with one row per edge if any graph has them,
    and one class id in ``0..num_classes-1``. Messages name the graph by its index, never
    a value read from a file.

    Raises:
        DataError: Naming the first problem found and what to do about it.
    """
    if not graphs:
        raise DataError(f"{source}: the graph set holds no graphs")
    if len(graphs) > MAX_GRAPHS:
        raise DataError(f"{source}: {len(graphs)} graphs, over the limit of {MAX_GRAPHS}")
    if not 2 <= num_classes <= MAX_CATEGORIES:
        raise DataError(f"{source}: graph classification needs 2 to {MAX_CATEGORIES} classes, "
                        f"got {num_classes}; check the label column")
    out: list[Data] = []
    width: int | None = None
    edge_width: int | None = None
    for i, g in enumerate(graphs):
        where = f"{source}: graph {i}"
        x = getattr(g, "x", None)
        if x is None:
            raise DataError(f"{where} has no node features")
        x = torch.as_tensor(x)
        if x.dim() != 2 or x.shape[1] == 0:
            raise DataError(f"{where}: node features must be a [nodes, features] matrix with "
                            "at least one column")
        if x.shape[0] == 0:
            raise DataError(f"{where} is empty (no nodes); drop it or fix the source")
        width = int(x.shape[1]) if width is None else width
        if x.shape[1] != width:
            raise DataError(f"{where} has {x.shape[1]} feature columns, graph 0 has {width}; "
                            "every graph needs the same features")
        x = x.float()
        if not torch.isfinite(x).all():
            raise DataError(f"{where}: node features contain NaN or inf; clean them first")
        n = int(x.shape[0])
        ei = getattr(g, "edge_index", None)
        ei = torch.empty(2, 0, dtype=torch.long) if ei is None else torch.as_tensor(ei).long()
        if ei.dim() != 2 or ei.shape[0] != 2:
            raise DataError(f"{where}: edge_index must have shape [2, E]")
        if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
            raise DataError(f"{where}: an edge refers to a node outside the graph; node ids "
                            "are 0-based within each graph")
        attr = getattr(g, "edge_attr", None)
        has_attr = attr is not None
        if edge_width is None:
            edge_width = int(torch.as_tensor(attr).shape[-1]) if has_attr else 0
        if has_attr:
            attr = torch.as_tensor(attr).float()
            if attr.dim() != 2 or attr.shape[0] != ei.shape[1] or attr.shape[1] != edge_width:
                raise DataError(f"{where}: edge features must be one row of {edge_width} "
                                "values per edge")
        elif edge_width:
            raise DataError(f"{where} has no edge features, graph 0 has; give them for all")
        y = getattr(g, "y", None)
        if y is None:
            raise DataError(f"{where} has no class label")
        y = torch.as_tensor(y).view(-1)
        if y.numel() != 1 or y.is_floating_point() or not 0 <= int(y) < num_classes:
            raise DataError(f"{where}: the label must be one class id in 0..{num_classes - 1}")
        d = Data(x=x, edge_index=ei, y=y.long(), num_nodes=n)
        if has_attr:
            d.edge_attr = attr
        out.append(d)
    return tuple(out)
