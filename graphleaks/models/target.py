"""A trained target model together with the graph, split and privacy ledger it came from."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.data.ref import DatasetRef
from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.privacy.ledger import PrivacyLedger

GraphView = Literal["target", "full", "partitioned", "zero_hop"]
GRAPH_VIEWS: tuple[str, ...] = ("target", "full", "partitioned", "zero_hop")


def _model_dim(model: nn.Module, name: str) -> int:
    """An input or output width that every graphleaks model stores as an ``int`` attribute.

    torch's stub types any module attribute as a tensor or a submodule; the check makes the
    contract explicit and names a model that breaks it.
    """
    value = getattr(model, name, None)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{type(model).__name__}.{name} must be an int, got {value!r}")
    return int(value)


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
        graph: The original graph (reloaded through ``dataset``, or carried in the bundle).
        split: The membership split.
        seed: The training seed.
        ledger: The privacy ledger.
        defense: Registry name of the defense that trained it (``"none"``).
        defense_config: The defense's configuration.
        released_edges: The graph the defense serves the model with, if not the original.
        features: Node features the model is served with, if the defense changed them.
        public_edges: Edges the defense treats as public and releases as they are (HeteroRR's
            public part); edge attacks score only the other, protected edges.
        dataset: Where the graph came from and how to reload it (a pinned
            :class:`~graphleaks.data.ref.DatasetRef`).
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
    dataset: DatasetRef = field(default_factory=DatasetRef.user)
    utility: dict[str, float] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    _cache: dict[str, list[torch.Tensor]] = field(default_factory=dict, repr=False)
    _edge_cache: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)
    _local: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def num_classes(self) -> int:
        """Width of the output layer."""
        return _model_dim(self.model, "out_dim")

    @property
    def num_features(self) -> int:
        """Feature width the model expects."""
        return _model_dim(self.model, "in_dim")

    def served_features(self) -> torch.Tensor:
        """The node features queries are evaluated with."""
        return self.graph.x if self.features is None else self.features

    def edges(self, view: str = "target") -> torch.Tensor:
        """The edge list of a graph view: the same tensor on every call.

        A stable tensor is what lets the model's normalized-adjacency cache (keyed on the
        edge tensor) serve every query; a fresh partition per call rebuilt it on each
        LinkTeller query (2.8 forward passes' worth per query on Amazon Computers).

        Raises:
            InvalidConfigError: For an unknown view name.
        """
        if view not in self._edge_cache:
            self._edge_cache[view] = self._view_edges(view)
        return self._edge_cache[view]

    def _view_edges(self, view: str) -> torch.Tensor:
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

    def feature_query_rows(
        self,
        x: torch.Tensor,
        rows: np.ndarray,
        *,
        view: str = "target",
        scale_node: int | None = None,
        scale: float = 1.0,
        local: bool = True,
    ) -> torch.Tensor:
        """Logits at ``rows`` when the API is sent ``x``, with row ``scale_node`` scaled.

        One inference-API query (LinkTeller's): the served graph of ``view`` is applied by
        the API, never shown. For GCN stacks the answer is computed by an exact local update
        of the rows the change reaches (:mod:`graphleaks.models._local_update`, float64),
        kept per ``x`` tensor; otherwise (or with ``local=False``) by a full forward pass on
        the stable served graph.

        Args:
            x: The features sent, ``[n, F]``; keep the same tensor across queries.
            rows: Nodes whose logits are returned.
            view: The served graph view.
            scale_node: The node whose features are scaled, or None for ``x`` itself.
            scale: The factor applied to that row.
            local: Allow the local update.

        Returns:
            ``[len(rows), C]`` float64 logits.
        """
        from graphleaks.models import _local_update

        idx = np.asarray(rows, dtype=np.int64)
        if local and not self.model.training and _local_update.supports(self.model):
            engine = self._local_engine(x, view)
            if scale_node is None:
                return torch.from_numpy(engine.logits[idx].copy())
            return torch.from_numpy(engine.scaled_row_logits(int(scale_node), scale, idx))
        if scale_node is None:
            return self.query(x, self.edges(view))[-1][torch.as_tensor(idx)].double()
        # One scratch copy of x per x, its row changed and restored around each query: a
        # fresh clone per query cost a quarter of the forward pass on Amazon Computers.
        entry = self._local.get("scratch")
        if entry is None or entry[0]() is not x or entry[1] != (x._version, tuple(x.shape)):
            import weakref

            entry = (weakref.ref(x), (x._version, tuple(x.shape)), x.clone())
            self._local["scratch"] = entry
        z = entry[2]
        z[scale_node] = x[scale_node] * scale
        try:
            return self.query(z, self.edges(view))[-1][torch.as_tensor(idx)].double()
        finally:
            z[scale_node] = x[scale_node]

    def _local_engine(self, x: torch.Tensor, view: str) -> Any:
        """The local-update engine of ``(x, view)``, rebuilt if ``x`` is another or changed."""
        import weakref

        from graphleaks.models._local_update import LocalFeatureUpdate

        key = (view, x._version, tuple(x.shape))
        entry = self._local.get("engine")
        if entry is None or entry[0]() is not x or entry[1] != key:
            engine = LocalFeatureUpdate(self.model, x, self.edges(view))
            self._local["engine"] = (weakref.ref(x), key, engine)
            return engine
        return entry[2]

    def clear_cache(self) -> None:
        """Forget cached forward passes and graphs (after changing the model or graph)."""
        self._cache.clear()
        self._edge_cache.clear()
        self._local.clear()
