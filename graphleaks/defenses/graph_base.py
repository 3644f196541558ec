"""The graph-classification Defense interface: train a graph classifier, state its claim.

Graph classification has its own defenses (one graph is one sample), kept in their own
registry, :data:`graph_registry`, so a node defense is never offered for a graph set nor the
other way round. A concrete subclass sets ``name``, ``privacy_unit`` and a frozen ``Config``
and implements ``_fit``; defining it registers it. :class:`NoGraphDefense` (``none``) is the
non-private baseline, :class:`~graphleaks.defenses.graph_dp_sgd.GraphDPSGD` (``dp_sgd``)
per-graph DP-SGD.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from torch import nn
from torch_geometric.data import Data

from graphleaks._plugin import EmptyConfig, Plugin
from graphleaks._registry import Registry
from graphleaks._validation import validate
from graphleaks.data.graphsets.record import GraphSet
from graphleaks.data.graphsets.ref import GraphSetRef
from graphleaks.errors import DataError
from graphleaks.models.graph_classifier import GraphClassifierSpec, fit_graph_classifier
from graphleaks.models.trained_graph_target import GraphSplit, TrainedGraphTarget, graph_utility
from graphleaks.privacy.ledger import PrivacyLedger, PrivacyUnit
from graphleaks.seeding import derive_seed

graph_registry: Registry[type[GraphDefense]] = Registry("graph defense")


@dataclass(frozen=True)
class GraphFit:
    """What a graph defense's training produced.

    Attributes:
        model: The trained classifier, in eval mode.
        ledger: Its privacy ledger.
        training: Facts about training (epochs, steps, noise, timings).
    """

    model: nn.Module
    ledger: PrivacyLedger
    training: dict[str, Any]


class GraphDefense(Plugin, ABC):
    """Trains a graph classifier under a privacy mechanism.

    Attributes:
        name: Registry name (in :data:`graph_registry`).
        privacy_unit: The neighbouring relation its guarantee is stated for.
        Config: Frozen dataclass of parameters.
    """

    _registry = graph_registry
    privacy_unit: ClassVar[PrivacyUnit]

    def fit(self, graphs: GraphSet, split: GraphSplit, *, model: GraphClassifierSpec,
            seed: int, dataset: GraphSetRef | None = None) -> TrainedGraphTarget:
        """Train a classifier on the member graphs of ``split`` and return the target.

        Args:
            graphs: The graph set the split indexes.
            split: Members (trained on), val (early stopping only) and non-members.
            model: Architecture and training hyperparameters.
            seed: Seed of every random choice.
            dataset: Where the set came from (pinned to ``graphs`` here); None for a set
                built in memory.

        Raises:
            InvalidConfigError: If the defense config or the architecture is invalid.
            DataError: If the split does not belong to the graph set.
        """
        self.validate()
        validate(model)
        if split.num_graphs != len(graphs):
            raise DataError(f"the graph split is for {split.num_graphs} graphs, the graph set "
                            f"has {len(graphs)}")
        train = [graphs.graphs[int(i)] for i in split.members]
        val = [graphs.graphs[int(i)] for i in split.val]
        fitted = self._fit(train, val, model, graphs.num_features, graphs.num_classes, seed)
        fitted.model.eval()
        return TrainedGraphTarget(
            model=fitted.model, spec=model, graphs=graphs, split=split, seed=seed,
            ledger=fitted.ledger, dataset=dataset.pinned(graphs) if dataset else None,
            defense=self.name, defense_config=self.config_record(unused_as_none=False),
            utility=graph_utility(fitted.model, graphs, split), training=fitted.training)

    @abstractmethod
    def _fit(self, train: list[Data], val: list[Data], spec: GraphClassifierSpec,
             num_features: int, num_classes: int, seed: int) -> GraphFit:
        """Train on ``train`` (config, spec and split already checked)."""


class NoGraphDefense(GraphDefense):
    """No defense: the graph classifier trained plainly, early stopping on val (ε = ∞).

    Example:
        >>> from graphleaks.data.graphsets import motif_graphs
        >>> gs = motif_graphs(20, seed=0)
        >>> t = NoGraphDefense().fit(gs, GraphSplit.draw(20, seed=0), seed=0,
        ...                          model=GraphClassifierSpec(hidden=8, epochs=3))
        >>> t.ledger.is_private, sorted(t.utility)
        (False, ['majority_baseline', 'test_accuracy', 'train_accuracy', 'val_accuracy'])
    """

    name = "none"
    privacy_unit = PrivacyUnit.NONE
    Config = EmptyConfig

    def _fit(self, train: list[Data], val: list[Data], spec: GraphClassifierSpec,
             num_features: int, num_classes: int, seed: int) -> GraphFit:
        model, log = fit_graph_classifier(spec, train, num_classes, seed=seed,
                                          val=val or None)
        return GraphFit(model, PrivacyLedger.non_private(),
                        {"epochs_run": log.epochs_run, "best_epoch": log.best_epoch})


def train_graph_target(
    graphs: GraphSet, *, defense: str | GraphDefense = "none",
    defense_params: dict[str, Any] | None = None, spec: GraphClassifierSpec | None = None,
    split: GraphSplit | None = None, train_frac: float = 0.5, val_frac: float = 0.1,
    dataset: GraphSetRef | None = None, seed: int,
) -> TrainedGraphTarget:
    """Draw a graph split (unless given) and train a target with a graph defense.

    Args:
        graphs: The graph set.
        defense: Registry name (``none``, ``dp_sgd``) or instance.
        defense_params: Config overrides of a defense given by name.
        spec: Architecture and training hyperparameters (default GIN).
        split: Members/val/non-members; drawn with ``train_frac``/``val_frac`` if None.
        train_frac: Fraction of graphs that are members.
        val_frac: Fraction of graphs kept for early stopping.
        dataset: The set's record, stored in the target (and its bundle).
        seed: Root seed: the split (``split``) and training (``target``) derive from it.

    Raises:
        InvalidConfigError: For an unknown defense or an invalid parameter.
    """
    d = defense if isinstance(defense, GraphDefense) else \
        graph_registry.get(defense)(**(defense_params or {}))
    d.validate()  # before the split is drawn or anything is trained
    spec = validate(spec or GraphClassifierSpec())
    split = split or GraphSplit.draw(len(graphs), train_frac=train_frac, val_frac=val_frac,
                                     seed=derive_seed(seed, "split"))
    return d.fit(graphs, split, model=spec, seed=derive_seed(seed, "target"), dataset=dataset)
