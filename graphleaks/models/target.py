"""A trained target model together with the graph, split and privacy ledger it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.privacy.ledger import PrivacyLedger

GraphView = Literal["target", "full", "partitioned", "zero_hop"]
GRAPH_VIEWS: tuple[str, ...] = ("target", "full", "partitioned", "zero_hop")


@dataclass
class TrainedTarget:
    """A trained node classifier and everything needed to query and audit it.

    Graph views name the graph a query node is evaluated in:

    * ``target``: the graph the model is served with, i.e. the one it was trained with under
      the split's protocol (partitioned for inductive, full for transductive), or the
      defense's released graph;
    * ``full``: the whole original graph;
    * ``partitioned``: each node in the subgraph induced by its own split part;
    * ``zero_hop``: no edges at all.

    Attributes:
        model: The module, in eval mode; ``model(x, edge_index)`` gives logits and
            ``model.embed(x, edge_index)`` every layer's output.
        spec: Architecture and training hyperparameters.
        graph: The original graph (not saved in bundles; reloaded from its dataset spec).
        split: The membership split.
        seed: The training seed.
        ledger: The privacy ledger.
        defense: Registry name of the defense that trained it (``"none"``).
        defense_config: The defense's configuration.
        released_edges: The graph the defense serves the model with, if not the original.
        features: Node features the model is served with, if the defense changed them.
        public_edges: Edges the defense treats as public and releases as they are (HeteroRR's
            public part); edge attacks score only the other, protected edges.
        dataset: How to reload the graph (``{"name": "cora"}`` or file paths).
        utility: Accuracy and F1 on train/val/test.
        training: Facts about training (epochs, best epoch).
    """

    model: nn.Module
    spec: ArchitectureSpec
    graph: Data
    split: MembershipSplit
    seed: int
    ledger: PrivacyLedger
    defense: str = "none"
    defense_config: dict[str, Any] = field(default_factory=dict)
    released_edges: torch.Tensor | None = None
    features: torch.Tensor | None = None
    public_edges: torch.Tensor | None = None
    dataset: dict[str, Any] = field(default_factory=dict)
    utility: dict[str, float] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    _cache: dict[str, list[torch.Tensor]] = field(default_factory=dict, repr=False)

    @property
    def num_classes(self) -> int:
        """Width of the output layer."""
        return int(self.model.out_dim)

    @property
    def num_features(self) -> int:
        """Feature width the model expects."""
        return int(self.model.in_dim)

    def served_features(self) -> torch.Tensor:
        """The node features queries are evaluated with."""
        return self.graph.x if self.features is None else self.features

    def edges(self, view: str = "target") -> torch.Tensor:
        """The edge list of a graph view.

        Raises:
            InvalidConfigError: For an unknown view name.
        """
        if view == "target":
            if self.released_edges is not None:
                return self.released_edges
            return self.split.training_edges(self.graph.edge_index)
        if view == "full":
            return self.graph.edge_index
        if view == "partitioned":
            return self.split.partitioned_edges(self.graph.edge_index)
        if view == "zero_hop":
            return torch.empty(2, 0, dtype=torch.long)
        raise InvalidConfigError(
            f"unknown graph view {view!r}; choose one of: {', '.join(GRAPH_VIEWS)}"
        )

    @torch.no_grad()
    def query(self, x: torch.Tensor, edge_index: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's output on an arbitrary graph (what a white-box adversary computes)."""
        self.model.eval()
        param = next(self.model.parameters(), None)
        device = param.device if param is not None else torch.device("cpu")
        x, edge_index = x.to(device), edge_index.to(device)
        embed = getattr(self.model, "embed", None)
        outs = [self.model(x, edge_index)] if embed is None else list(embed(x, edge_index))
        return [o.cpu() for o in outs]

    def _layers(self, view: str) -> list[torch.Tensor]:
        if view not in self._cache:
            self._cache[view] = self.query(self.served_features(), self.edges(view))
        return self._cache[view]

    def logits(self, nodes: np.ndarray | None = None, *, view: str = "target") -> torch.Tensor:
        """Logits of ``nodes`` (all nodes if None) evaluated in graph ``view``."""
        out = self._layers(view)[-1]
        return out if nodes is None else out[torch.as_tensor(nodes, dtype=torch.long)]

    def posteriors(self, nodes: np.ndarray | None = None, *, view: str = "target") -> torch.Tensor:
        """Softmax posteriors of ``nodes`` evaluated in graph ``view``."""
        return torch.softmax(self.logits(nodes, view=view), dim=1)

    def embeddings(
        self, nodes: np.ndarray | None = None, *, view: str = "target", layer: int = 0
    ) -> torch.Tensor:
        """Output of layer ``layer`` (0 = first hidden layer, -1 = logits)."""
        layers = self._layers(view)
        if not -len(layers) <= layer < len(layers):
            raise InvalidConfigError(
                f"layer {layer} does not exist; the model has {len(layers)} layers"
            )
        out = layers[layer]
        return out if nodes is None else out[torch.as_tensor(nodes, dtype=torch.long)]

    def clear_cache(self) -> None:
        """Forget cached forward passes (after changing the model or graph)."""
        self._cache.clear()
