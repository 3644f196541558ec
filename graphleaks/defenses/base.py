"""The Defense interface: a defense trains a target and states its privacy claim.

A concrete subclass sets ``name``, ``privacy_unit`` and a frozen ``Config`` dataclass, and
implements ``_fit``. Defining the class registers it (``graphleaks list defenses``).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks._plugin import EmptyConfig as _PluginEmptyConfig
from graphleaks._plugin import Plugin
from graphleaks._registry import Registry
from graphleaks._validation import validate
from graphleaks.data.graph import check_graph, num_classes
from graphleaks.data.ref import DatasetRef
from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.gnn import GNN, ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.privacy.ledger import PrivacyUnit

registry: Registry[type[Defense]] = Registry("defense")


#: Kept importable from here; the one definition lives in :mod:`graphleaks._plugin`.
EmptyConfig = _PluginEmptyConfig


class Defense(Plugin, ABC):
    """Trains a target model under a privacy mechanism.

    Registration, ``Config``, keyword overrides, validation and the report's config record
    come from :class:`graphleaks._plugin.Plugin`, shared with attacks.

    Attributes:
        name: Registry name.
        privacy_unit: The neighbouring relation its guarantee is stated for.
        Config: Frozen dataclass of parameters.
    """

    _registry = registry
    privacy_unit: ClassVar[PrivacyUnit]

    def check_scale(self, num_nodes: int, num_edges: int) -> None:
        """Refuse, before any work, a graph too large for a step that cannot be linear.

        Defenses with an ``O(n²)`` step (an exact dense release) override this and raise
        :class:`InvalidConfigError` naming the limit and an estimate; the default accepts
        every size.

        Args:
            num_nodes: Nodes of the graph.
            num_edges: Directed edges of the graph.
        """
        del num_nodes, num_edges  # every size is accepted unless overridden

    def fit(
        self, graph: Data, split: MembershipSplit, *, model: ArchitectureSpec, seed: int,
        dataset: DatasetRef | Mapping[str, Any] | None = None, device: str = "cpu",
    ) -> TrainedTarget:
        """Train a target on ``graph`` with ``split`` and return it with its ledger.

        Args:
            graph: The graph (validated here).
            split: Who trains the target.
            model: Architecture and training hyperparameters.
            seed: Seed of every random choice.
            dataset: Where the graph came from, to reload it later (stored in the bundle;
                a mapping is read as a dataset record, None means a graph in memory).
            device: Torch device to train on; the returned target lives on the CPU.

        Raises:
            InvalidConfigError: If the defense or architecture config is invalid.
            DataError: If the graph is malformed or does not match the split.
        """
        self.validate()
        validate(model)
        ref = DatasetRef.coerce(dataset)  # a bad record is refused before any training
        graph = check_graph(graph)
        if split.num_nodes != graph.num_nodes:
            raise DataError(f"split was drawn for {split.num_nodes} nodes but the graph has "
                            f"{graph.num_nodes}")
        num_classes(graph)
        dev = resolve_device(device)
        # Data.to moves in place, so train on a copy and keep the caller's graph on the CPU.
        target = self._fit(graph if dev.type == "cpu" else graph.clone().to(dev), split, model,
                           seed)
        target.model.cpu()

        def cpu(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.cpu()

        # TrainedTarget is frozen: the finished record is a new one (with fresh caches)
        target = dataclasses.replace(
            target, graph=graph, released_edges=cpu(target.released_edges),
            features=cpu(target.features), public_edges=cpu(target.public_edges),
            dataset=ref.pinned(graph), defense=self.name,
            # Every value, so bundles and defense-aware shadows can rebuild the defense;
            # the report nulls the fields the mode ignores (see reported_config).
            defense_config=self.config_record(unused_as_none=False))
        return dataclasses.replace(target, utility=utility(target))

    @abstractmethod
    def _fit(
        self, graph: Data, split: MembershipSplit, spec: ArchitectureSpec, seed: int
    ) -> TrainedTarget:
        """Train the target (config and graph already validated)."""

    @classmethod
    def on_load(cls, target: TrainedTarget) -> None:
        """Restore serving state a bundle does not store (nothing by default)."""
        return None

    @classmethod
    def build_model(
        cls, in_dim: int, out_dim: int, spec: ArchitectureSpec, config: dict[str, Any]
    ) -> nn.Module:
        """An untrained module of the right shape, used to load saved weights."""
        return GNN(in_dim, out_dim, spec)


def reported_config(defense: str, config: dict[str, Any]) -> dict[str, Any]:
    """A target's defense config as a report states it: fields its mode ignores are None.

    Args:
        defense: Registry name of the defense.
        config: The full record the target carries (``TrainedTarget.defense_config``).
    """
    try:
        return dict(registry.get(defense)(**config).config_record())
    except (InvalidConfigError, TypeError):  # a record this version cannot rebuild
        return dict(config)


def resolve_device(device: str) -> torch.device:
    """Parse a device name, refusing one torch cannot use here.

    Raises:
        InvalidConfigError: For an unknown device or CUDA without a visible GPU.
    """
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise InvalidConfigError(f"unknown device {device!r}; use cpu or cuda[:N]") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidConfigError(f"device {device!r} requested but torch sees no CUDA GPU; "
                                 "use --device cpu")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise InvalidConfigError(f"device {device!r} does not exist; torch sees "
                                 f"{torch.cuda.device_count()} GPU(s)")
    return dev


def utility(target: TrainedTarget) -> dict[str, float]:
    """Accuracy and micro/macro-F1 of the target on its train, val and test nodes."""
    from graphleaks.metrics.multiclass import accuracy, f1_macro, f1_micro

    y = target.graph.y.numpy()
    pred = target.logits(view="target").argmax(1).numpy()
    out: dict[str, float] = {}
    for part in ("train", "val", "test"):
        nodes = getattr(target.split, part)
        if len(nodes) == 0:
            continue
        out[f"{part}_accuracy"] = accuracy(y[nodes], pred[nodes])
        out[f"{part}_f1_micro"] = f1_micro(y[nodes], pred[nodes])
        out[f"{part}_f1_macro"] = f1_macro(y[nodes], pred[nodes])
    return out
