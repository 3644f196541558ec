"""Pair scorers: the link-prediction target kind, ``(x, edge_index, pairs) -> one score per pair``.

A link predictor, a recommender or a knowledge-graph scorer is audited as a *pair scorer*:
anything callable as ``model(x, edge_index, pairs)`` that returns one score per pair. Its
contract is declared, never guessed from the numbers:

``output``
    ``logits`` (any real score, higher = more likely an edge) or ``probabilities`` (in
    [0, 1]; attacks read their logit ``log p − log(1 − p)``, the same ranking).
``pairs_layout``
    ``columns``: ``pairs`` is ``[2, P]`` (PyG's ``edge_label_index``); ``rows``: ``[P, 2]``
    (graphleaks' :class:`~graphleaks.models.link_predictor.LinkPredictor`, whose class
    declares it).
``embedding_layers``
    Names of submodules whose output is ``[num_nodes, d]`` node embeddings, read with
    forward hooks (white-box attacks, e.g. LMIA's embedding similarity). Empty: none exposed.

:meth:`PairScorer.check` probes the model once on three pairs, so that a model of another
kind is refused in one line before any attack runs: one score per node (a node classifier),
several scores per pair, a pair count that does not match (the wrong layout).

A :class:`LinkTarget` is a pair scorer served on a graph: the features, the served graph and
whether the queried pairs are dropped from it before scoring (the protocol choice
``member_edges_in_inference_graph`` of :mod:`graphleaks.data.edge_splits`).

Example:
    >>> import torch
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.models.link_predictor import LinkPredictor, LinkPredictorSpec
    >>> g = tiny_graph()
    >>> model = LinkPredictor(g.num_features, LinkPredictorSpec(embedding_dim=8))
    >>> scorer = PairScorer(model).check(g.x, g.edge_index)
    >>> scorer.interface.pairs_layout, scorer.interface.embedding_layers[-1]
    ('rows', 'embedding')
    >>> scorer.logits(g.x, g.edge_index, np.array([[0, 1], [2, 3]])).shape
    (2,)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from graphleaks.data.pairs import contains, pair_keys, undirected_pairs
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.link_predictor import LinkPredictor, LinkPredictorSpec, link_scores
from graphleaks.models.protocol import set_eval

PAIR_OUTPUTS: tuple[str, ...] = ("logits", "probabilities")
PAIR_LAYOUTS: tuple[str, ...] = ("columns", "rows")
#: Pairs scored per model call for models graphleaks cannot encode once (memory bound).
PAIR_BATCH = 1 << 16
#: Probabilities are clipped to [EPS, 1 − EPS] before their logit, so 0 and 1 stay finite.
PROB_EPS = 1e-12
#: What to do when a model is not a pair scorer.
NOT_PAIR_SCORER = ("a link-prediction target maps (x, edge_index, pairs) to one score per "
                   "pair; audit a node classifier with task='node'")


@dataclass(frozen=True)
class PairScorerInterface:
    """How a pair scorer is called and read.

    Attributes:
        output: ``logits`` or ``probabilities``.
        pairs_layout: ``columns`` (``[2, P]``) or ``rows`` (``[P, 2]``).
        embedding_layers: Submodules whose outputs are node embeddings.
        parameters: Whether the adversary may hold the weights (a ``torch.nn.Module``).
    """

    output: str = field(default="logits", metadata={"choices": PAIR_OUTPUTS})
    pairs_layout: str = field(default="columns", metadata={"choices": PAIR_LAYOUTS})
    embedding_layers: tuple[str, ...] = ()
    parameters: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe record for reports."""
        return {"output": self.output, "pairs_layout": self.pairs_layout,
                "embedding_layers": list(self.embedding_layers),
                "parameters_exposed": self.parameters}


class PairScorer:
    """A model of the pair-scorer protocol with its declared interface.

    Args:
        model: ``model(x, edge_index, pairs)`` returning ``[P]`` (or ``[P, 1]``) scores.
        output: ``logits`` or ``probabilities``.
        pairs_layout: ``columns`` or ``rows``; default: the model's ``pairs_layout``
            attribute, ``rows`` for graphleaks' ``LinkPredictor``, else ``columns``.
        embedding_layers: Submodule names of node embeddings; default: the model's
            ``embedding_layers`` attribute (graphleaks' ``LinkPredictor`` declares its own).
    """

    def __init__(self, model: Callable[..., Any], *, output: str = "logits",
                 pairs_layout: str | None = None,
                 embedding_layers: tuple[str, ...] | list[str] | None = None) -> None:
        self.model = model
        if pairs_layout is None:
            pairs_layout = getattr(model, "pairs_layout", None) or (
                "rows" if isinstance(model, LinkPredictor) else "columns")
        if embedding_layers is None:
            embedding_layers = tuple(getattr(model, "embedding_layers", ()) or ())
        self.interface = PairScorerInterface(
            output=output, pairs_layout=str(pairs_layout),
            embedding_layers=tuple(embedding_layers), parameters=isinstance(model, nn.Module))

    # ------------------------------------------------------------------ validation
    def check(self, x: torch.Tensor, edge_index: torch.Tensor) -> PairScorer:
        """Validate the interface and probe the model once; returns ``self``.

        Raises:
            InvalidConfigError: For an unknown output kind or layout, a layer the model
                lacks, or a model that is not a pair scorer (one score per node, several
                per pair, or a count that does not match the pairs: the wrong layout).
            DataError: If declared probabilities fall outside [0, 1] or a score is not
                finite.
        """
        iface = self.interface
        if iface.output not in PAIR_OUTPUTS:
            raise InvalidConfigError(f"unknown pair-scorer output {iface.output!r}; choose one "
                                     f"of: {', '.join(PAIR_OUTPUTS)}")
        if iface.pairs_layout not in PAIR_LAYOUTS:
            raise InvalidConfigError(f"unknown pairs layout {iface.pairs_layout!r}; choose "
                                     "columns ([2, P], PyG's edge_label_index) or rows ([P, 2])")
        if not callable(self.model):
            raise InvalidConfigError(f"the model ({type(self.model).__name__}) is not callable; "
                                     f"{NOT_PAIR_SCORER}")
        if iface.embedding_layers:
            if not isinstance(self.model, nn.Module):
                raise InvalidConfigError("embedding layers are read with forward hooks on a "
                                         "torch.nn.Module; this model exposes its scores only")
            names = dict(self.model.named_modules())
            missing = [n for n in iface.embedding_layers if n not in names]
            if missing:
                raise InvalidConfigError(
                    f"the model has no submodule {missing[0]!r}; name embedding layers as in "
                    f"model.named_modules(), e.g. {', '.join(list(names)[1:4]) or 'none'}")
        n = int(x.shape[0])
        if n < 2:
            raise DataError("a link-prediction target needs a graph of at least 2 nodes")
        # three pairs: never the node count (a per-node output is told apart from a per-pair
        # one) unless the graph has three nodes, then two
        k = 3 if n != 3 else 2
        probe = np.stack([np.arange(k) % n, (np.arange(k) + 1) % n], axis=1)
        self.logits(x, edge_index, probe)
        return self

    def _raw(self, x: torch.Tensor, edge_index: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
        arg = pairs if self.interface.pairs_layout == "rows" else pairs.t().contiguous()
        with torch.no_grad():
            out = self.model(x, edge_index, arg)
        n, p = int(x.shape[0]), int(pairs.shape[0])
        if not isinstance(out, torch.Tensor):
            raise InvalidConfigError(f"the model returned {type(out).__name__}, not a tensor of "
                                     f"scores; {NOT_PAIR_SCORER}")
        if out.dim() == 2 and out.shape[1] == 1:
            out = out[:, 0]
        if out.dim() >= 1 and out.shape[0] == n and n != p:
            raise InvalidConfigError(
                f"the model returned {tuple(out.shape)} for {p} pairs on {n} nodes: one score "
                f"per node, not per pair; {NOT_PAIR_SCORER}")
        if out.dim() != 1 or out.shape[0] != p:
            other = "rows ([P, 2])" if self.interface.pairs_layout == "columns" else (
                "columns ([2, P])")
            raise InvalidConfigError(
                f"the model returned {tuple(out.shape)} for {p} pairs; a pair scorer returns "
                f"one score per pair (if it takes pairs as {other}, declare "
                f"pairs_layout={other.split()[0]!r}); {NOT_PAIR_SCORER}")
        return out.detach().cpu().double()

    # ------------------------------------------------------------------ scoring
    def logits(self, x: torch.Tensor, edge_index: torch.Tensor,
               pairs: np.ndarray) -> np.ndarray:
        """One logit per row of ``pairs`` (``[P, 2]`` node ids), float64.

        Probabilities are read as their logit (clipped at :data:`PROB_EPS`).

        Raises:
            InvalidConfigError: If the model is not a pair scorer.
            DataError: If scores are not finite or declared probabilities leave [0, 1].
        """
        p = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        set_eval(self.model)  # an exported program's module has no mode to leave
        if isinstance(self.model, LinkPredictor) and self.interface.pairs_layout == "rows":
            raw = torch.from_numpy(link_scores(self.model, x, edge_index, p))
        else:
            t = torch.from_numpy(p).to(x.device)
            raw = (torch.cat([self._raw(x, edge_index, t[i:i + PAIR_BATCH])
                              for i in range(0, len(t), PAIR_BATCH)])
                   if len(t) else torch.empty(0, dtype=torch.float64))
        out = raw.numpy()
        if not np.all(np.isfinite(out)):
            raise DataError("the model's pair scores hold NaN or infinite values; check the "
                            "model and the features")
        if self.interface.output == "probabilities":
            if ((out < 0) | (out > 1)).any():
                raise DataError("the model's scores declared as probabilities leave [0, 1]; "
                                "declare output='logits' if they are logits")
            q = np.clip(out, PROB_EPS, 1 - PROB_EPS)
            out = np.log(q) - np.log1p(-q)
        return out

    def embeddings(self, x: torch.Tensor, edge_index: torch.Tensor, layer: str) -> torch.Tensor:
        """The ``[num_nodes, d]`` output of the named layer, read during one forward pass.

        Raises:
            CapabilityError: If the layer is not exposed, or gave no ``[num_nodes, d]``
                tensor.
        """
        if layer not in self.interface.embedding_layers or not isinstance(self.model,
                                                                           nn.Module):
            raise CapabilityError(f"the model exposes no embedding layer {layer!r}; exposed: "
                                  f"{', '.join(self.interface.embedding_layers) or 'none'}")
        captured: dict[str, Any] = {}

        def hook(_m: nn.Module, _i: Any, out: Any) -> None:
            captured["out"] = out

        handle = dict(self.model.named_modules())[layer].register_forward_hook(hook)
        try:
            # two pairs: an exported program's pair dimension is usually declared min=2
            self._raw(x, edge_index, torch.tensor([[0, 1], [1, 0]], dtype=torch.long,
                                                  device=x.device))
        finally:
            handle.remove()
        emb = captured.get("out")
        n = int(x.shape[0])
        if not isinstance(emb, torch.Tensor) or emb.dim() != 2 or emb.shape[0] != n:
            raise CapabilityError(f"embedding layer {layer!r} gave no [num_nodes, d] tensor in "
                                  "the forward pass; name a submodule that outputs node "
                                  "embeddings")
        return emb.detach().cpu()


@dataclass(frozen=True, eq=False)
class LinkTarget:
    """A pair scorer as it is served: features, served graph, protocol, what is known of it.

    Attributes:
        scorer: The checked :class:`PairScorer`.
        x: Node features.
        edge_index: The served (inference) graph, both directions.
        drop_queried: Whether queried pairs are removed from the served graph before they
            are scored (``member_edges_in_inference_graph=False``).
        spec: graphleaks' :class:`LinkPredictorSpec` of the model when known (its own
            link predictors); None for a user's model (reference models then use a stated
            surrogate).
        name: Dataset name for the report.
        node_type: ``[num_nodes]`` 0 = user, 1 = item for a bipartite graph, else None.
        training: What is known of the training run (for the report's target card).
    """

    scorer: PairScorer
    x: torch.Tensor
    edge_index: torch.Tensor
    drop_queried: bool = False
    spec: LinkPredictorSpec | None = None
    name: str = "graph"
    node_type: np.ndarray | None = None
    training: dict[str, Any] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        """Number of nodes of the served graph."""
        return int(self.x.shape[0])

    def served_graph(self, query: np.ndarray | None = None) -> torch.Tensor:
        """The graph ``query`` is scored on (without the queried pairs when so served)."""
        if query is None or not self.drop_queried or len(query) == 0:
            return self.edge_index
        pairs = undirected_pairs(self.edge_index)
        n = self.num_nodes
        drop = contains(np.unique(pair_keys(query, n)), pair_keys(pairs, n))
        kept = torch.from_numpy(np.ascontiguousarray(pairs[~drop])).t()
        return torch.cat([kept, kept.flip(0)], dim=1).to(self.edge_index.device)

    def logits(self, pairs: np.ndarray) -> np.ndarray:
        """The served model's logit for each pair (one batch: one served graph)."""
        p = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        return self.scorer.logits(self.x, self.served_graph(p), p)

    def embeddings(self, layer: str, query: np.ndarray | None = None) -> torch.Tensor:
        """Node embeddings of ``layer`` on the served graph (for the ``query`` batch)."""
        return self.scorer.embeddings(self.x, self.served_graph(query), layer)


__all__ = ["NOT_PAIR_SCORER", "PAIR_LAYOUTS", "PAIR_OUTPUTS", "LinkTarget", "PairScorer",
           "PairScorerInterface"]
