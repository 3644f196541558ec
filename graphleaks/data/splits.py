"""Membership splits: frozen, seeded, saved records of who trained the target.

Nodes are partitioned into four disjoint parts:

* ``train``: the target's training nodes, the **members**;
* ``val``: nodes used for early stopping (neither members nor non-member candidates);
* ``test``: held-out nodes the target never trained on, the **non-member** candidates;
* ``aux``: the adversary's population: nodes disjoint from everything the target used, from
  which shadow and reference models are trained.

In the *inductive* protocol (Duddu et al., attacks.md §1) the target trains on the subgraph
induced by its training nodes; edges between parts are dropped, so each node is seen in the
subgraph induced by its own part. In the *transductive* protocol the target trains on the full
graph with the loss restricted to ``train``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from graphleaks._limits import read_json_bounded
from graphleaks._validation import validate
from graphleaks.data.graph import induced_edges
from graphleaks.errors import DataError

SplitKind = Literal["inductive", "transductive"]
PART_NAMES = ("train", "val", "test", "aux")


@dataclass(frozen=True)
class SplitConfig:
    """How to draw a membership split.

    Attributes:
        kind: ``"inductive"`` (default, the protocol without neighbourhood leakage between
            members and non-members) or ``"transductive"``.
        train_frac: Fraction of nodes that train the target (members).
        val_frac: Fraction used for early stopping.
        test_frac: Fraction held out as non-member candidates.
    """

    kind: str = field(default="inductive", metadata={"choices": ("inductive", "transductive")})
    train_frac: float = field(default=0.2, metadata={"range": (0.0, 1.0), "closed": "neither"})
    val_frac: float = field(default=0.1, metadata={"range": (0.0, 1.0), "closed": "left"})
    test_frac: float = field(default=0.2, metadata={"range": (0.0, 1.0), "closed": "neither"})

    def check(self) -> None:
        """Cross-field rule: the fractions may not exceed 1."""
        from graphleaks.errors import InvalidConfigError

        total = self.train_frac + self.val_frac + self.test_frac
        if total > 1.0 + 1e-9:
            raise InvalidConfigError(
                f"SplitConfig fractions must sum to at most 1; train+val+test = {total:.3f}"
            )


@dataclass(frozen=True)
class MembershipSplit:
    """A frozen partition of the nodes into train / val / test / aux.

    Attributes:
        kind: ``"inductive"`` or ``"transductive"``.
        num_nodes: Number of nodes of the graph it was drawn for.
        train: Member node ids, sorted.
        val: Early-stopping node ids, sorted.
        test: Non-member candidate ids, sorted.
        aux: Adversary population ids, sorted.
        seed: The seed it was drawn with.
    """

    kind: str
    num_nodes: int
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    aux: np.ndarray
    seed: int

    @classmethod
    def draw(
        cls, num_nodes: int, config: SplitConfig | None = None, *, seed: int
    ) -> MembershipSplit:
        """Draw a split uniformly at random.

        Members are a uniformly random subset of the candidates, which the empirical ε lower
        bound requires.

        Example:
            >>> s = MembershipSplit.draw(100, seed=0)
            >>> len(s.train), len(s.val), len(s.test), len(s.aux)
            (20, 10, 20, 50)
        """
        config = validate(config or SplitConfig())
        rng = np.random.default_rng(seed)
        perm = rng.permutation(num_nodes)
        n_train = max(1, int(round(config.train_frac * num_nodes)))
        n_val = int(round(config.val_frac * num_nodes))
        n_test = min(int(round(config.test_frac * num_nodes)), num_nodes - n_train - n_val)
        if n_test < 1:
            raise DataError(f"graph has {num_nodes} nodes, too few for the requested split")
        cuts = np.cumsum([n_train, n_val, n_test])
        parts = np.split(perm, cuts)
        return cls(
            kind=config.kind,
            num_nodes=num_nodes,
            train=np.sort(parts[0]),
            val=np.sort(parts[1]),
            test=np.sort(parts[2]),
            aux=np.sort(parts[3]),
            seed=seed,
        )

    @property
    def members(self) -> np.ndarray:
        """The nodes the target trained on."""
        return self.train

    @property
    def nonmembers(self) -> np.ndarray:
        """Held-out candidates the target never trained on."""
        return self.test

    def part_ids(self) -> np.ndarray:
        """One part id per node: 0 train, 1 val, 2 test, 3 aux."""
        parts = np.full(self.num_nodes, -1, dtype=np.int64)
        for i, name in enumerate(PART_NAMES):
            parts[getattr(self, name)] = i
        return parts

    def partitioned_edges(self, edge_index: torch.Tensor) -> torch.Tensor:
        """Edges inside a part: each node sees the subgraph induced by its own part."""
        return induced_edges(edge_index, self.part_ids())

    def training_edges(self, edge_index: torch.Tensor) -> torch.Tensor:
        """The edges the target is trained with under this split's protocol."""
        if self.kind == "inductive":
            return self.partitioned_edges(edge_index)
        return edge_index

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe record."""
        out: dict[str, Any] = {"kind": self.kind, "num_nodes": self.num_nodes, "seed": self.seed}
        for name in PART_NAMES:
            out[name] = getattr(self, name).tolist()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MembershipSplit:
        """Inverse of :meth:`to_dict`, validating that the parts are disjoint and in range.

        Raises:
            DataError: If the record is malformed.
        """
        try:
            num_nodes = int(data["num_nodes"])
            arrays = {n: np.asarray(data[n], dtype=np.int64) for n in PART_NAMES}
            kind = str(data["kind"])
            seed = int(data["seed"])
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            # the field, never its value: the record may come from a hostile file
            what = f"field {exc.args[0]!r} is missing" if isinstance(exc, KeyError) else \
                "a field has the wrong type"
            raise DataError(f"malformed split record: {what}") from None
        if kind not in ("inductive", "transductive"):
            raise DataError("malformed split record: unknown kind (expected inductive or "
                            "transductive)")
        allids = np.concatenate(list(arrays.values()))
        if allids.size and (allids.min() < 0 or allids.max() >= num_nodes):
            raise DataError("malformed split record: node id out of range")
        if len(np.unique(allids)) != len(allids):
            raise DataError("malformed split record: parts overlap")
        return cls(kind=kind, num_nodes=num_nodes, seed=seed, **arrays)

    def save(self, path: str | Path) -> None:
        """Write the split as JSON."""
        Path(path).write_text(json.dumps(self.to_dict()))

    @classmethod
    def load(cls, path: str | Path) -> MembershipSplit:
        """Read a split written by :meth:`save`."""
        data = read_json_bounded(Path(path), f"split file {path}")
        if not isinstance(data, dict):
            raise DataError(f"split file {path} is not a split record")
        try:
            return cls.from_dict(data)
        except DataError as exc:
            raise DataError(f"split file {path}: {exc}") from None
