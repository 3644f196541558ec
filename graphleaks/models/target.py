"""A trained target model together with the graph, split and privacy ledger it came from."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks.data.ref import DatasetRef
from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.protocol import (
    ModelInterface,
    check_query_shape,
    forward_layers,
    set_eval,
)
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.threat import GRAPH_VIEWS as GRAPH_VIEWS
from graphleaks.threat import GraphView as GraphView


class _Caches:
    """Forward passes and graphs a target remembers; kept beside the frozen record."""

    def __init__(self) -> None:
        self.layers: dict[str, list[torch.Tensor]] = {}
        self.edges: dict[str, torch.Tensor] = {}
        self.local: dict[str, Any] = {}


@dataclass(frozen=True)
class TrainedTarget:
    """A trained node classifier and everything needed to query and audit it.

    A frozen record: change a field with :func:`dataclasses.replace`, which gives the new
    record fresh caches. Any model of the target-model protocol
    (:mod:`graphleaks.models.protocol`) can be one; ``interface`` says how its outputs and
    embedding layers are read.

    Graph views name the graph a query node is evaluated in:

    * ``target``: the graph the model is served with, i.e. the one it was trained with under
      the split's protocol (partitioned for inductive, full for transductive), or the
      defense's released graph;
    * ``full``: the whole original graph;
    * ``partitioned``: each node in the subgraph induced by its own split part;
    * ``zero_hop``: no edges at all.

    Attributes:
        model: The module, in eval mode; ``model(x, edge_index)`` gives one output row per
            node, of the kind ``interface.output`` declares.
        spec: Architecture and training hyperparameters (of the shadow and reference models
            the adversary trains, for a model graphleaks did not build).
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
        interface: Output kind and named embedding layers (default: logits, and the layers
            the model's class declares in ``embedding_layers``).
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
    interface: ModelInterface | None = None
    _caches: _Caches = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Caches are per record: dataclasses.replace builds a new record with empty ones.
        object.__setattr__(self, "_caches", _Caches())
        if self.interface is None:
            object.__setattr__(self, "interface", ModelInterface.of(self.model))

    @property
    def iface(self) -> ModelInterface:
        """The model's interface (never None after construction)."""
        assert self.interface is not None
        return self.interface

    @property
    def num_classes(self) -> int:
        """Width of the output layer."""
        out_dim = getattr(self.model, "out_dim", None)
        if isinstance(out_dim, int):
            return out_dim
        return int(self._layers("target")[-1].shape[1])

    @property
    def num_features(self) -> int:
        """Feature width the model expects."""
        in_dim = getattr(self.model, "in_dim", None)
        return in_dim if isinstance(in_dim, int) else int(self.served_features().shape[1])

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
        cache = self._caches.edges
        if view not in cache:
            cache[view] = self._view_edges(view)
        return cache[view]

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
        """Every declared embedding layer's output, then the logits, on an arbitrary graph.

        One path for every model: the declared layers are read with forward hooks
        (:func:`graphleaks.models.protocol.forward_layers`); outputs declared as
        probabilities are returned as their logarithm, whose softmax is the posterior.
        """
        model = self.model
        # a static-shape export fails deep inside its guards: say why, and how to re-export
        check_query_shape(model, int(x.shape[0]), int(edge_index.shape[1]))
        if isinstance(model, nn.Module):
            set_eval(model)
            param = next(model.parameters(), None)
            device = param.device if param is not None else torch.device("cpu")
            x, edge_index = x.to(device), edge_index.to(device)
        return [o.cpu() for o in forward_layers(model, self.iface, x, edge_index)]

    def _layers(self, view: str) -> list[torch.Tensor]:
        cache = self._caches.layers
        if view not in cache:
            cache[view] = self.query(self.served_features(), self.edges(view))
        return cache[view]

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
        """Output of layer ``layer`` (0 = first declared embedding layer, -1 = logits).

        Raises:
            CapabilityError: If the model declares no embedding layer and ``layer`` is not
                -1 (the logits are never served in place of an embedding).
            InvalidConfigError: If the layer does not exist.
        """
        if not self.iface.embedding_layers and layer != -1:
            raise CapabilityError(
                f"embedding layer {layer} is not exposed: the model declares no embedding "
                "layers (name them with embedding_layers=('conv1',), read by forward hooks)")
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
        if (local and isinstance(self.model, nn.Module) and not self.model.training
                and self.iface.output == "logits" and _local_update.supports(self.model)):
            engine = self._local_engine(x, view)
            if scale_node is None:
                return torch.from_numpy(engine.logits[idx].copy())
            return torch.from_numpy(engine.scaled_row_logits(int(scale_node), scale, idx))
        model64 = self._float64_model() if local else None
        if model64 is not None:
            # A model without the exact local update answers the ``local`` API in float64:
            # finite differences of 1e-4 are below float32 resolution.
            out = self._answer64(model64, x, view, idx, scale_node, scale)
            if out is not None:
                return out
        if scale_node is None:
            return self._answer(x, view, idx)
        z = self._scratch(x, "scratch", x.dtype)
        z[scale_node] = x[scale_node] * scale
        try:
            return self._answer(z, view, idx)
        finally:
            z[scale_node] = x[scale_node]

    def _scratch(self, x: torch.Tensor, key: str, dtype: torch.dtype) -> torch.Tensor:
        """One scratch copy of ``x`` (as ``dtype``) per ``x`` tensor, whose rows the queries
        change and restore: a fresh copy per query cost a quarter of the forward pass on
        Amazon Computers, and the float64 cast of Cora's features 40 % of a float64 query."""
        import weakref

        entry = self._caches.local.get(key)
        if entry is None or entry[0]() is not x or entry[1] != (x._version, tuple(x.shape)):
            entry = (weakref.ref(x), (x._version, tuple(x.shape)),
                     x.detach().to(dtype=dtype, copy=True))
            self._caches.local[key] = entry
        return entry[2]

    def _answer64(self, model64: Any, x: torch.Tensor, view: str, idx: np.ndarray,
                  scale_node: int | None, scale: float) -> torch.Tensor | None:
        """Float64 logits at ``idx`` for ``x`` with row ``scale_node`` scaled, or None when
        the model cannot run in float64.

        The same numbers as a float64 forward of ``x`` scaled in its own dtype and then cast:
        the scaled row is computed in ``x``'s dtype, and only that row is cast.
        """
        z64 = self._scratch(x, "scratch64", torch.float64)
        if scale_node is not None:
            z64[scale_node] = (x[scale_node] * scale).to(torch.float64)
        # Only the logits are read: embedding-layer hooks would be set and removed per query.
        iface = dataclasses.replace(self.iface, embedding_layers=())
        try:
            with torch.no_grad():
                out = forward_layers(model64, iface, z64, self.edges(view))
            return out[-1][torch.as_tensor(idx)].double()
        except Exception:  # noqa: BLE001 - a model that cannot run in float64
            self._caches.local["f64"] = False
            return None
        finally:
            if scale_node is not None:
                z64[scale_node] = x[scale_node].to(torch.float64)

    def _answer(self, z: torch.Tensor, view: str, idx: np.ndarray) -> torch.Tensor:
        """Logits at ``idx`` for features ``z``, at the model's own precision."""
        return self.query(z, self.edges(view))[-1][torch.as_tensor(idx)].double()

    def _float64_model(self) -> Any:
        """A float64 copy of the model (cached), or None when it cannot be made."""
        entry = self._caches.local.get("f64")
        if entry is None:
            entry = False
            # A model that accounts its releases (GAP's guarded noisy aggregation) answers
            # every query itself: a copy would charge a copied guard and replay its noise.
            if (isinstance(self.model, nn.Module)
                    and getattr(self.model, "release_guard", None) is None):
                import copy

                try:
                    entry = copy.deepcopy(self.model).double()
                    set_eval(entry)
                except Exception:  # noqa: BLE001 - e.g. a module that refuses deepcopy
                    entry = False
            self._caches.local["f64"] = entry
        return entry or None

    def _local_engine(self, x: torch.Tensor, view: str) -> Any:
        """The local-update engine of ``(x, view)``, rebuilt if ``x`` is another or changed."""
        import weakref

        from graphleaks.models._local_update import LocalFeatureUpdate

        key = (view, x._version, tuple(x.shape))
        entry = self._caches.local.get("engine")
        if entry is None or entry[0]() is not x or entry[1] != key:
            engine = LocalFeatureUpdate(self.model, x, self.edges(view))
            self._caches.local["engine"] = (weakref.ref(x), key, engine)
            return engine
        return entry[2]

    def clear_cache(self) -> None:
        """Forget cached forward passes and graphs (after changing the model or graph)."""
        object.__setattr__(self, "_caches", _Caches())  # the side object, not the record
