"""The graph-classifier target kind: a model that maps a batch of graphs to one row per graph.

A graph classifier is anything callable as ``model(x, edge_index, batch)`` on graphs placed
side by side (node ids offset, ``batch[i]`` the graph of node ``i``, as PyG's ``Batch``
builds them) that returns ``[num_graphs, C]`` outputs: ``logits``, ``probabilities`` or
``log_probabilities`` (declared, never guessed). It may expose a pooled graph embedding: the
output of a submodule named by ``embedding_layer`` (read with a forward hook), e.g. ``pool``
for graphleaks' own :class:`~graphleaks.models.graph_classifier.GraphClassifier`.

:class:`GraphTarget` holds such a model with the graph set it is audited on and the
member / non-member / population graph ids. Attacks never touch it directly: they see it
through :class:`graphleaks.attacks.graph_membership.base.GraphTargetView`, which keeps the
truth (which graphs are members) out of their reach. The privacy unit is one graph.

A model that returns one row per *node* (a node classifier, or a graph classifier that
forgot its pooling) is refused in one line, before any attack runs.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.data.graphsets.record import GraphSet
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.graph_classifier import (
    GraphClassifier,
    GraphClassifierSpec,
    train_graph_classifier,
)
from graphleaks.models.protocol import OUTPUT_KINDS, as_logits, reset_copy, set_eval
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.seeding import derive_seed, torch_seeded

#: Graphs per forward pass when the audit queries a model.
QUERY_BATCH = 256
#: Where copies for shadow and reference models come from (recorded in the report).
COPY_SPEC = "graphleaks spec (the target's own GraphClassifierSpec)"
COPY_FACTORY = "model_factory (fresh copies of the model's own class)"
COPY_RESET = "reset deep copies of the model (every reset_parameters)"
COPY_SURROGATE = ("surrogate graphleaks GIN (the model could not be copied: pass "
                  "model_factory)")


@dataclass(frozen=True)
class GraphModelInterface:
    """How a graph classifier is read.

    Attributes:
        output: ``logits``, ``probabilities`` (rows sum to 1) or ``log_probabilities``.
        embedding_layer: Name of the submodule whose output is the pooled graph embedding
            (``[num_graphs, d]``), or None: the model exposes no embedding.
        parameters: Whether the adversary may hold the weights.
    """

    output: str = "logits"
    embedding_layer: str | None = None
    parameters: bool = True

    def check(self, model: Any) -> None:
        """Validate the fields against ``model``.

        Raises:
            InvalidConfigError: For an unknown output kind or a layer the model lacks.
        """
        if self.output not in OUTPUT_KINDS:
            raise InvalidConfigError(f"unknown model output {str(self.output)[:40]!r}; choose "
                                     f"one of: {', '.join(OUTPUT_KINDS)}")
        if self.embedding_layer is not None:
            names = dict(model.named_modules()) if isinstance(model, nn.Module) else {}
            if not isinstance(self.embedding_layer, str) or self.embedding_layer not in names:
                raise InvalidConfigError(
                    "embedding_layer must name a submodule of the model (see "
                    "model.named_modules()), e.g. 'pool' for graphleaks' GraphClassifier")


@dataclass(frozen=True)
class GraphCopies:
    """How fresh, untrained copies of the target's architecture are made and trained.

    Attributes:
        factory: Returns one untrained model (called under a seeded torch RNG).
        output: The copies' output kind (the target's, or ``logits`` for a surrogate).
        source: Where the copies come from (one of the ``COPY_*`` texts).
        spec: Optimiser, batch size and epochs of their training (epochs capped by the
            attack that trains them).
    """

    factory: Callable[[], nn.Module]
    output: str
    source: str
    spec: GraphClassifierSpec

    def train(self, graphs: Sequence[Data], *, epochs: int, seed: int) -> nn.Module:
        """A fresh copy trained on ``graphs`` for ``epochs`` epochs (no early stopping)."""
        with torch_seeded(derive_seed(seed, "init")):
            inner = self.factory()
        adapter = _LogitAdapter(inner, self.output)
        spec = dataclasses.replace(self.spec, epochs=int(epochs), patience=0)
        train_graph_classifier(adapter, list(graphs), spec=spec, seed=derive_seed(seed, "train"))
        set_eval(inner)
        return adapter


class _LogitAdapter(nn.Module):
    """A graph classifier called as graphleaks' trainer calls one, returning logits."""

    def __init__(self, inner: nn.Module, output: str) -> None:
        super().__init__()
        self.inner = inner
        self.output = output

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor,
                num_graphs: int | None = None) -> torch.Tensor:
        """Logits ``[num_graphs, C]`` (the inner model's output made logits)."""
        del num_graphs  # the inner model counts graphs from ``batch``
        out: torch.Tensor = self.inner(x, edge_index, batch)
        return as_logits(out, self.output)


class GraphQueries(Protocol):
    """What the adversary's view reads of a graph target (a model, or exported scores)."""

    members: np.ndarray
    non_members: np.ndarray
    population: np.ndarray

    @property
    def num_graphs(self) -> int:
        """Graph ids are ``0..num_graphs-1``."""

    @property
    def num_classes(self) -> int:
        """Output width."""

    @property
    def copies(self) -> GraphCopies:
        """How to train copies of the architecture (raises CapabilityError if unknown)."""

    def logits_of(self, ids: np.ndarray) -> torch.Tensor:
        """Logits of graphs ``ids``."""

    def query(self, graphs: Sequence[Data]) -> torch.Tensor:
        """Logits of submitted graphs."""

    def embeddings_of(self, ids: np.ndarray) -> torch.Tensor:
        """Pooled embeddings of graphs ``ids``."""

    def labels_of(self, ids: np.ndarray) -> np.ndarray:
        """Class labels of graphs ``ids``."""

    def graphs_of(self, ids: np.ndarray) -> list[Data]:
        """Graphs ``ids`` without labels."""

    def population_graphs(self) -> list[Data]:
        """The population graphs with labels."""


@dataclass
class GraphTarget:
    """A graph classifier under audit, its graph set and the membership of each graph.

    Attributes:
        model: ``model(x, edge_index, batch) -> [num_graphs, C]``.
        graphs: The graph set (members, non-members, population and the owner's rest).
        members: Graph ids the model trained on (sorted).
        non_members: Graph ids it never trained on (sorted).
        population: The adversary's auxiliary graph ids (sorted), disjoint from both.
        interface: Output kind, embedding layer, exposed weights.
        copy_maker: How shadow and reference models are built.
        ledger: The model's privacy ledger (non-private for a model trained elsewhere).
        seed: Recorded seed.
        model_class: Class name for the report.
    """

    model: Any
    graphs: GraphSet
    members: np.ndarray
    non_members: np.ndarray
    population: np.ndarray
    interface: GraphModelInterface
    copy_maker: GraphCopies
    ledger: PrivacyLedger = field(default_factory=PrivacyLedger.non_private)
    seed: int = 0
    model_class: str = ""
    _cache: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)

    @property
    def num_graphs(self) -> int:
        """Graphs in the set."""
        return len(self.graphs)

    @property
    def num_classes(self) -> int:
        """Classes of the set (the width of every output row)."""
        return self.graphs.num_classes

    @property
    def copies(self) -> GraphCopies:
        """How shadow and reference models are built."""
        return self.copy_maker

    def forward(self, graphs: Sequence[Data], *, layer: bool = False) -> torch.Tensor:
        """Outputs (as logits) of ``graphs``, or the embedding layer's output with ``layer``."""
        rows = []
        for start in range(0, len(graphs), QUERY_BATCH):
            rows.append(_forward(self.model, self.interface, graphs[start:start + QUERY_BATCH],
                                 layer=layer))
        if not rows:
            return torch.empty(0, self.num_classes)
        return torch.cat(rows)

    def logits_of(self, ids: np.ndarray) -> torch.Tensor:
        """Logits (or a vector whose softmax is the posterior) of graphs ``ids``, float64."""
        if "all" not in self._cache:  # every graph once: attacks query the same graphs again
            self._cache["all"] = self.forward(list(self.graphs.graphs)).double()
        return self._cache["all"][torch.as_tensor(np.asarray(ids), dtype=torch.long)]

    def query(self, graphs: Sequence[Data]) -> torch.Tensor:
        """Logits of arbitrary graphs (perturbed copies), float64."""
        return self.forward(graphs).double()

    def labels_of(self, ids: np.ndarray) -> np.ndarray:
        """Class labels of graphs ``ids``."""
        return np.asarray(self.graphs.y.numpy()[np.asarray(ids, dtype=np.int64)],
                          dtype=np.int64)

    def graphs_of(self, ids: np.ndarray) -> list[Data]:
        """Graphs ``ids`` without their labels (features and structure)."""
        gs = self.graphs
        return [Data(x=gs[int(i)].x, edge_index=gs[int(i)].edge_index,
                     num_nodes=gs[int(i)].num_nodes) for i in np.asarray(ids)]

    def population_graphs(self) -> list[Data]:
        """The population graphs, with labels."""
        return [self.graphs[int(i)] for i in self.population]

    def embeddings_of(self, ids: np.ndarray) -> torch.Tensor:
        """Pooled graph embeddings of graphs ``ids``.

        Raises:
            CapabilityError: If the model names no embedding layer.
        """
        if self.interface.embedding_layer is None:
            raise CapabilityError("the graph classifier names no embedding layer; pass "
                                  "embedding_layer='pool' (a submodule whose output is the "
                                  "pooled graph embedding)")
        return self.forward([self.graphs[int(i)] for i in np.asarray(ids)], layer=True)


def batch_graphs(graphs: Sequence[Data]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x, edge_index, batch)`` of graphs side by side; labels are not needed (queries of
    perturbed or unlabelled graphs)."""
    sizes = torch.tensor([int(g.num_nodes) for g in graphs])
    offsets = torch.cumsum(sizes, 0) - sizes
    x = torch.cat([g.x for g in graphs], dim=0)
    edge_index = torch.cat([g.edge_index + int(off) for g, off in zip(graphs, offsets,
                                                                         strict=True)], dim=1)
    return x, edge_index, torch.repeat_interleave(torch.arange(len(graphs)), sizes)


@torch.no_grad()
def copy_logits(model: nn.Module, graphs: Sequence[Data]) -> torch.Tensor:
    """Logits of a trained copy (:meth:`GraphCopies.train`) on graphs with or without labels."""
    model.eval()
    rows = [model(*batch_graphs(graphs[s:s + QUERY_BATCH]))
            for s in range(0, len(graphs), QUERY_BATCH)]
    return torch.cat(rows)


def _forward(model: Any, iface: GraphModelInterface, graphs: Sequence[Data], *,
             layer: bool = False) -> torch.Tensor:
    x, edge_index, batch = batch_graphs(graphs)
    captured: list[Any] = []
    handle = None
    if layer and iface.embedding_layer is not None:
        module = dict(model.named_modules())[iface.embedding_layer]
        handle = module.register_forward_hook(lambda _m, _i, out: captured.append(out))
    try:
        with torch.no_grad():
            out = model(x, edge_index, batch)
    finally:
        if handle is not None:
            handle.remove()
    n_graphs, n_nodes = len(graphs), int(x.shape[0])
    if isinstance(out, torch.Tensor) and out.dim() == 2 and out.shape[0] == n_nodes \
            and n_nodes != n_graphs:
        raise DataError(
            f"the model returns one row per node ({n_nodes} rows for {n_graphs} graphs), not "
            "one per graph; a graph classifier must pool node states per graph, e.g. "
            "torch_geometric.nn.global_mean_pool(h, batch), before its output layer")
    if not isinstance(out, torch.Tensor) or out.dim() != 2 or out.shape[0] != n_graphs:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise DataError(f"the model returned {shape} for a batch of {n_graphs} graphs; it must "
                        "return one [num_graphs, num_classes] tensor for (x, edge_index, "
                        "batch)")
    if layer:
        emb = captured[-1] if captured else None
        if not isinstance(emb, torch.Tensor) or emb.dim() != 2 or emb.shape[0] != n_graphs:
            raise CapabilityError(f"embedding layer {iface.embedding_layer!r} gave no "
                                  "[num_graphs, d] tensor; name the pooling module")
        return emb.detach().double()
    return as_logits(out.detach(), iface.output)


def check_graph_outputs(target: GraphTarget) -> None:
    """Query every graph once and refuse outputs that cannot be a graph classifier's.

    Raises:
        DataError: One row per node, a width other than the number of classes, NaN/inf, or
            declared probabilities that do not sum to 1.
    """
    out = target.forward(list(target.graphs.graphs))
    c = target.num_classes
    if out.shape[1] != c:
        raise DataError(f"the model outputs {out.shape[1]} columns but the graph set has {c} "
                        "classes; give the graph labels the model was trained on")
    if bool(torch.isnan(out).any()) or (target.interface.output == "logits"
                                        and not bool(torch.isfinite(out).all())):
        raise DataError("the model's outputs hold NaN or infinite values; check the model and "
                        "the node features")
    if target.interface.output != "logits":
        sums = out.double().exp().sum(1)  # both kinds are log-probabilities by now
        if not bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-3)):
            raise DataError(f"the model's outputs declared as {target.interface.output} do not "
                            "sum to 1 per graph; pass the right output kind (logits, "
                            "probabilities, log_probabilities)")
    target._cache["all"] = out.double()


def graph_copies(model: Any, output: str, num_features: int, num_classes: int,
                 model_factory: Callable[[], nn.Module] | None = None) -> GraphCopies:
    """How to build untrained copies of ``model`` for shadow and reference models.

    graphleaks' own classifier is rebuilt from its spec; otherwise ``model_factory``; else a
    reset deep copy (when every parameter has a ``reset_parameters``); else a surrogate GIN.
    """
    if model_factory is None and isinstance(model, GraphClassifier):
        spec = model.spec

        def own() -> nn.Module:
            # the caller seeds the torch RNG per copy (GraphCopies.train)
            return GraphClassifier(num_features, num_classes, spec)

        return GraphCopies(own, "logits", COPY_SPEC, spec)
    default = GraphClassifierSpec()
    if model_factory is not None:
        return GraphCopies(model_factory, output, COPY_FACTORY, default)
    if isinstance(model, nn.Module) and reset_copy(model) is not None:
        template = copy.deepcopy(model)

        def fresh() -> nn.Module:
            out = reset_copy(template)
            assert out is not None  # checked above, on the same template
            return out

        return GraphCopies(fresh, output, COPY_RESET, default)

    def surrogate() -> nn.Module:
        return GraphClassifier(num_features, num_classes, default)

    return GraphCopies(surrogate, "logits", COPY_SURROGATE, default)


__all__ = ["COPY_FACTORY", "COPY_RESET", "COPY_SPEC", "COPY_SURROGATE", "GraphCopies",
           "GraphModelInterface", "GraphQueries", "GraphTarget", "batch_graphs",
           "check_graph_outputs", "copy_logits", "graph_copies"]
