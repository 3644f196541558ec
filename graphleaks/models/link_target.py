"""A trained link predictor together with the graph, edge split and ledger it came from.

The link-task counterpart of :class:`~graphleaks.models.target.TrainedTarget`. The private
unit is an edge: the split's member edges are the training positives and the only edges the
target passes messages over. A defense may replace that message-passing graph by a released,
perturbed one (EdgeRand, LapGraph: ``released_edges``) or replace the node features by a
released noisy aggregation (GAP-EDP: ``features``); the target is then *served* with what
was released, never with the private member graph.

Example:
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.data.edge_splits import EdgeMembershipSplit
    >>> from graphleaks.models.link_predictor import LinkPredictorSpec, fit_link_predictor
    >>> g = tiny_graph()
    >>> split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    >>> spec = LinkPredictorSpec(hidden=(8,), embedding_dim=8, epochs=3)
    >>> model, _ = fit_link_predictor(g.x, split, spec, seed=0)
    >>> from graphleaks.privacy.ledger import PrivacyLedger
    >>> t = TrainedLinkTarget(model=model, spec=spec, graph=g, split=split, seed=0,
    ...                       ledger=PrivacyLedger.non_private())
    >>> t.task, t.score_pairs([[0, 1], [2, 3]]).shape
    ('link', (2,))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks._validation import validate
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.data.ref import DatasetRef
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.binary import auc
from graphleaks.models.link_predictor import LinkPredictor, LinkPredictorSpec, link_scores
from graphleaks.privacy.ledger import PrivacyLedger

#: The task name bundles, reports and the command line use for pair-scoring targets.
LINK_TASK = "link"


def link_spec_from_dict(record: dict[str, Any]) -> LinkPredictorSpec:
    """A validated :class:`LinkPredictorSpec` from :meth:`LinkPredictorSpec.to_dict`.

    Raises:
        InvalidConfigError: For unknown fields or out-of-range values.
    """
    if not isinstance(record, dict):
        raise InvalidConfigError("a link predictor architecture must be a JSON object")
    fields = set(LinkPredictorSpec.__dataclass_fields__)
    unknown = sorted(set(record) - fields)
    if unknown:
        raise InvalidConfigError(f"unknown link predictor field {str(unknown[0])[:40]!r}")
    values = dict(record)
    if "hidden" in values:
        hidden = values["hidden"]
        if not isinstance(hidden, (list, tuple)):
            raise InvalidConfigError("the hidden field of a link predictor must be a list")
        values["hidden"] = tuple(hidden)
    try:
        spec = LinkPredictorSpec(**values)
    except TypeError as exc:
        raise InvalidConfigError(f"invalid link predictor architecture: {exc}") from None
    return validate(spec)


@dataclass(frozen=True)
class TrainedLinkTarget:
    """A trained pair scorer and everything needed to query and audit it.

    Attributes:
        model: The :class:`LinkPredictor`, in eval mode; ``model(x, edge_index, pairs)``
            gives one logit per pair.
        spec: Architecture and training hyperparameters.
        graph: The original graph (all its edges: members and non-members alike).
        split: The edge-membership split (members are the private training edges).
        seed: The training seed.
        ledger: The privacy ledger, unit ``edge`` for the edge defenses.
        defense: Name of the link defense that trained it (``"none"``).
        defense_config: The defense's configuration.
        released_edges: The graph the defense released in place of the member graph, both
            directions (``[2, 2E]``); the target passes messages over it in training and
            serving. None: the split's own inference graph.
        features: Node features the model is served with, if the defense released its own
            (GAP-EDP's noisy aggregates). None: ``graph.x``.
        dataset: Where the graph came from (a pinned :class:`DatasetRef`).
        utility: ``val_auc`` and ``test_auc`` (held-out edges against held-out non-edges).
        training: Facts about training (epochs, the released graph's size, the sampler run).
    """

    task: ClassVar[str] = LINK_TASK

    model: nn.Module
    spec: LinkPredictorSpec
    graph: Data
    split: EdgeMembershipSplit
    seed: int
    ledger: PrivacyLedger
    defense: str = "none"
    defense_config: dict[str, Any] = field(default_factory=dict)
    released_edges: torch.Tensor | None = None
    features: torch.Tensor | None = None
    dataset: DatasetRef = field(default_factory=DatasetRef.user)
    utility: dict[str, float] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)

    @property
    def num_features(self) -> int:
        """Width of the features the model reads."""
        return int(self.served_features().shape[1])

    def served_features(self) -> torch.Tensor:
        """The node features queries are evaluated with."""
        return self.graph.x if self.features is None else self.features

    def served_edges(self, query: npt.ArrayLike | None = None) -> torch.Tensor:
        """The message-passing graph a batch of ``query`` pairs is scored on.

        The released graph when the defense released one (with the inductive split's
        context edges, which are not training data), else the split's inference graph (whose
        protocol decides whether queried member edges stay in it).
        """
        if self.released_edges is None:
            return self.split.inference_edge_index(query)
        ctx = self.split.context_edges
        if len(ctx) == 0:
            return self.released_edges
        c = torch.from_numpy(np.ascontiguousarray(ctx, dtype=np.int64)).t()
        return torch.cat([self.released_edges, c, c.flip(0)], dim=1)

    def score_pairs(self, pairs: npt.ArrayLike) -> np.ndarray:
        """The target's logits for ``[P, 2]`` pairs, float64, scored on the served graph.

        Raises:
            InvalidConfigError: If ``pairs`` is not ``[P, 2]`` node ids of the graph.
        """
        p = np.asarray(pairs, dtype=np.int64)
        if p.ndim != 2 or p.shape[1] != 2:
            raise InvalidConfigError("pairs must be a [P, 2] array of node ids")
        n = int(self.graph.num_nodes)
        if p.size and (int(p.min()) < 0 or int(p.max()) >= n):
            raise InvalidConfigError(f"pairs name nodes outside 0..{n - 1}")
        return link_scores(self.model, self.served_features(), self.served_edges(p), p)

    @torch.no_grad()
    def embeddings(self, nodes: npt.ArrayLike | None = None) -> torch.Tensor:
        """Final node embeddings (the ``embedding`` tap) on the served graph."""
        if not isinstance(self.model, LinkPredictor):
            raise InvalidConfigError("embeddings need a graphleaks LinkPredictor")
        self.model.eval()
        z = self.model.encode(self.served_features(), self.served_edges())
        return z if nodes is None else z[torch.as_tensor(np.asarray(nodes), dtype=torch.long)]


def link_utility(target: TrainedLinkTarget) -> dict[str, float]:
    """Validation and test link AUC of ``target`` (the figures its record carries).

    Test: held-out edges against held-out non-edges; validation: validation edges against
    validation non-edges; both scored on the served graph.
    """
    s = target.split
    out: dict[str, float] = {}
    for name, pos, neg in (("val_auc", s.val_edges, s.val_non_edges),
                           ("test_auc", s.held_out_edges, s.held_out_non_edges)):
        if len(pos) == 0 or len(neg) == 0:
            continue
        pairs = np.concatenate([pos, neg])
        labels = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
        out[name] = auc(target.score_pairs(pairs), labels)
    return out


__all__ = ["LINK_TASK", "TrainedLinkTarget", "link_spec_from_dict", "link_utility"]
