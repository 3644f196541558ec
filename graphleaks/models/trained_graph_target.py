"""A trained graph classifier with the graph set, membership split and ledger it came from.

The graph-classification counterpart of :class:`~graphleaks.models.target.TrainedTarget`.
One graph is one record: *members* are the graphs the model trained on, *non-members* graphs
of the same set it never saw (the audit's negatives), and *val* graphs (neither) serve early
stopping only. Indices are positions in the target's :class:`GraphSet`.

Example:
    >>> split = GraphSplit.draw(20, train_frac=0.5, val_frac=0.1, seed=0)
    >>> len(split.members), len(split.val), len(split.non_members)
    (10, 2, 8)
    >>> GraphSplit.from_dict(split.to_dict(), num_graphs=20) == split
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from graphleaks.data.graphsets.record import GraphSet
from graphleaks.data.graphsets.ref import GraphSetRef
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics.multiclass import accuracy
from graphleaks.models.graph_classifier import GraphClassifierSpec, predict_graph_logits
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.seeding import derive_seed

#: The parts of a graph split, in the order they are stored.
GRAPH_SPLIT_PARTS = ("members", "val", "non_members")


def _as_index(values: Any, what: str, num_graphs: int) -> np.ndarray:
    """Graph ids as a sorted-free int64 vector, each in ``0..num_graphs-1``."""
    if not isinstance(values, (list, tuple, np.ndarray)):
        raise DataError(f"graph split: {what} must be a list of graph ids")
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in values):
        raise DataError(f"graph split: {what} must hold integer graph ids")
    arr = np.asarray(values, dtype=np.int64).reshape(-1)
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= num_graphs):
        raise DataError(f"graph split: a graph id in {what} is outside 0..{num_graphs - 1}; "
                        "the split does not belong to this graph set")
    return arr


@dataclass(frozen=True, eq=False)
class GraphSplit:
    """Who trains a graph classifier: member, validation and non-member graph ids.

    Attributes:
        num_graphs: Size of the graph set the ids index.
        members: Training graphs (the audit's positives).
        val: Early-stopping graphs (never trained on, never audited).
        non_members: Graphs the model never saw (the audit's negatives).
        seed: The seed it was drawn with (-1 for a split given by hand).
    """

    num_graphs: int
    members: np.ndarray
    val: np.ndarray
    non_members: np.ndarray
    seed: int = -1

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphSplit):
            return NotImplemented
        return (self.num_graphs == other.num_graphs and self.seed == other.seed
                and all(np.array_equal(getattr(self, p), getattr(other, p))
                        for p in GRAPH_SPLIT_PARTS))

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def draw(cls, num_graphs: int, *, train_frac: float = 0.5, val_frac: float = 0.1,
             seed: int) -> GraphSplit:
        """A seeded random split: ``train_frac`` members, ``val_frac`` val, the rest out.

        Raises:
            InvalidConfigError: If the fractions leave no member or no non-member.
        """
        if not (0.0 < train_frac < 1.0 and 0.0 <= val_frac < 1.0
                and train_frac + val_frac < 1.0):
            raise InvalidConfigError(
                f"The train_frac and val_frac parameters of a graph split must be in (0, 1) "
                f"and [0, 1) with a sum below 1. Got {train_frac!r} and {val_frac!r} instead.")
        n_mem = int(round(train_frac * num_graphs))
        n_val = int(round(val_frac * num_graphs))
        if n_mem < 1 or num_graphs - n_mem - n_val < 1:
            raise InvalidConfigError(f"a graph split of {num_graphs} graphs with train_frac "
                                     f"{train_frac:g} leaves no member or no non-member; "
                                     "use more graphs")
        perm = np.random.default_rng(derive_seed(seed, "graph_split")).permutation(num_graphs)
        return cls(num_graphs, np.sort(perm[:n_mem]), np.sort(perm[n_mem:n_mem + n_val]),
                   np.sort(perm[n_mem + n_val:]), int(seed))

    @classmethod
    def given(cls, num_graphs: int, members: Sequence[int] | np.ndarray,
              non_members: Sequence[int] | np.ndarray,
              val: Sequence[int] | np.ndarray = ()) -> GraphSplit:
        """A split given by hand, checked like :meth:`from_dict`."""
        return cls.from_dict({"num_graphs": num_graphs, "members": list(map(int, members)),
                              "val": list(map(int, val)),
                              "non_members": list(map(int, non_members))},
                             num_graphs=num_graphs)

    def to_dict(self) -> dict[str, Any]:
        """A JSON record, read back by :meth:`from_dict`."""
        out: dict[str, Any] = {"num_graphs": self.num_graphs, "seed": self.seed}
        out.update({p: getattr(self, p).tolist() for p in GRAPH_SPLIT_PARTS})
        return out

    @classmethod
    def from_dict(cls, raw: Any, *, num_graphs: int | None = None) -> GraphSplit:
        """Read a record written by :meth:`to_dict` (it may come from an untrusted file).

        Raises:
            DataError: For a malformed record, ids out of range, overlapping parts, no
                member or no non-member, or a size other than ``num_graphs``.
        """
        if not isinstance(raw, Mapping):
            raise DataError("graph split: the record must be a JSON object")
        n = raw.get("num_graphs")
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise DataError("graph split: num_graphs must be an integer >= 2")
        if num_graphs is not None and n != num_graphs:
            raise DataError(f"graph split is for {n} graphs, the graph set has {num_graphs}")
        seed = raw.get("seed", -1)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise DataError("graph split: seed must be an integer")
        parts = [_as_index(raw.get(p, []), p, n) for p in GRAPH_SPLIT_PARTS]
        joined = np.concatenate(parts)
        if len(np.unique(joined)) != len(joined):
            raise DataError("graph split: a graph id appears twice (parts must be disjoint)")
        if not len(parts[0]) or not len(parts[2]):
            raise DataError("graph split: needs at least one member and one non-member")
        return cls(n, parts[0], parts[1], parts[2], seed)


class _Hook:
    """Records the output of the module it is registered on (the pooled embedding)."""

    def __init__(self) -> None:
        self.rows: list[torch.Tensor] = []

    def __call__(self, module: nn.Module, args: Any, output: torch.Tensor) -> None:
        self.rows.append(output.detach())


@dataclass(frozen=True)
class TrainedGraphTarget:
    """A trained graph classifier and everything needed to query and audit it.

    Attributes:
        model: The module, in eval mode: ``model(x, edge_index, batch, num_graphs)`` gives
            one row of logits per graph.
        spec: Architecture and training hyperparameters.
        graphs: The graph set the split indexes (members, val and non-members).
        split: Which graphs trained the model.
        seed: The training seed.
        ledger: The privacy ledger, in the ``graph`` unit for a private target.
        dataset: Where the graph set came from and how to reload it (pinned); None for a
            set built in memory.
        defense: Registry name of the graph defense that trained it (``none``, ``dp_sgd``).
        defense_config: The defense's configuration.
        utility: ``train_accuracy`` (members), ``test_accuracy`` (non-members),
            ``val_accuracy`` when there are val graphs, and ``majority_baseline`` (accuracy
            on non-members of always answering the members' most frequent class).
        training: Facts about training (epochs, steps, noise multiplier, timings).
    """

    #: The task a bundle records for this kind of target.
    task: ClassVar[str] = "graph"

    model: nn.Module
    spec: GraphClassifierSpec
    graphs: GraphSet
    split: GraphSplit
    seed: int
    ledger: PrivacyLedger
    dataset: GraphSetRef | None = None
    defense: str = "none"
    defense_config: dict[str, Any] = field(default_factory=dict)
    utility: dict[str, float] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)

    @property
    def num_classes(self) -> int:
        """Number of classes of the graph set."""
        return self.graphs.num_classes

    @property
    def num_features(self) -> int:
        """Node feature width the model expects."""
        return self.graphs.num_features

    def _graphs(self, indices: Sequence[int] | np.ndarray | None) -> list[Any]:
        if indices is None:
            return list(self.graphs.graphs)
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= len(self.graphs)):
            raise DataError(f"a graph id is outside 0..{len(self.graphs) - 1}; ids index the "
                            "target's graph set")
        return [self.graphs.graphs[int(i)] for i in idx]

    def logits(self, indices: Sequence[int] | np.ndarray | None = None) -> torch.Tensor:
        """Logits of the graphs at ``indices`` (all graphs if None), ``[len, C]``."""
        return predict_graph_logits(self.model, self._graphs(indices))

    def posteriors(self, indices: Sequence[int] | np.ndarray | None = None) -> torch.Tensor:
        """Softmax posteriors of the graphs at ``indices``."""
        return torch.softmax(self.logits(indices), dim=1)

    @torch.no_grad()
    def embeddings(self, indices: Sequence[int] | np.ndarray | None = None) -> torch.Tensor:
        """Pooled graph embeddings (the output of the model's ``pool`` layer).

        Raises:
            InvalidConfigError: If the model has no module named ``pool``.
        """
        layer = dict(self.model.named_modules()).get(
            getattr(self.model, "embedding_layer", "pool"))
        if layer is None:
            raise InvalidConfigError("the graph classifier has no pooling layer named 'pool' "
                                     "to read graph embeddings from")
        hook = _Hook()
        handle = layer.register_forward_hook(hook)
        try:
            self.logits(indices)
        finally:
            handle.remove()
        return torch.cat(hook.rows) if hook.rows else torch.empty(0)


def graph_utility(model: nn.Module, graphs: GraphSet, split: GraphSplit) -> dict[str, float]:
    """Accuracy on members, val and non-members, and the majority-class baseline.

    Every figure goes through :func:`graphleaks.metrics.multiclass.accuracy`.
    """
    y = graphs.y.numpy()
    pred = predict_graph_logits(model, graphs.graphs).argmax(1).numpy()
    out: dict[str, float] = {}
    for key, part in (("train_accuracy", split.members), ("val_accuracy", split.val),
                      ("test_accuracy", split.non_members)):
        if len(part):
            out[key] = accuracy(y[part], pred[part])
    majority = int(np.bincount(y[split.members], minlength=graphs.num_classes).argmax())
    out["majority_baseline"] = accuracy(y[split.non_members],
                                        np.full(len(split.non_members), majority))
    return out
