"""Edge-membership attacks on link predictors: their base class, registry and target view.

The private unit is an edge: "was this pair a training edge of the link predictor?". A
challenge holds candidate pairs ``[K, 2]`` (member edges and non-members: held-out edges and
non-edges) and, as the hint ``known_edges``, the served graph's edges that are not
candidates (the adversary's partial knowledge of the graph). The truth stays with
:mod:`graphleaks.attacks.edge_membership.harness`, as for node attacks.

These attacks have their own registry (:data:`edge_registry`): they score pair scorers
(:class:`~graphleaks.models.pair_scorer.LinkTarget`), not node classifiers, so the node
audit, its suites and contracts never run them. ``graphleaks list attacks`` lists both, each
with the target kind it audits (``node`` or ``link``). Their task is
:attr:`~graphleaks.threat.Task.EDGE_MEMBERSHIP`: ε lower bounds are in the edge unit.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch

from graphleaks._plugin import Plugin
from graphleaks._registry import Registry
from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.models.link_predictor import LinkPredictorSpec
from graphleaks.models.pair_scorer import LinkTarget
from graphleaks.seeding import Rngs
from graphleaks.threat import ALL_OUTPUTS, Output, Task, ThreatModel

if TYPE_CHECKING:  # pragma: no cover
    from graphleaks.attacks.edge_membership._references import EdgeReferencePool

#: The target kind these attacks audit (``graphleaks list attacks`` shows it).
TARGET_KIND = "link"

#: Reference architecture for a user's model whose architecture graphleaks does not know:
#: the classic two-layer GCN graph autoencoder (Kipf & Welling 2016), narrowed for cost.
SURROGATE_SPEC = LinkPredictorSpec.gae(hidden=(64,), embedding_dim=32, epochs=100)

edge_registry: Registry[type[EdgeAttack]] = Registry("edge-membership attack")


class LinkTargetView:
    """What an edge attack may touch of a :class:`LinkTarget`, as its threat model allows.

    Args:
        target: The served link predictor.
        threat_model: The attack's threat model.
        exposed: What the deployment exposes at all.
        attack: Name used in error messages.
        references: The audit's shared reference models, or None (the attack trains its own).
    """

    def __init__(self, target: LinkTarget, threat_model: ThreatModel, *,
                 exposed: frozenset[Output] = ALL_OUTPUTS, attack: str = "attack",
                 references: EdgeReferencePool | None = None) -> None:
        self._target = target
        self.threat_model = threat_model
        self.outputs = frozenset(threat_model.outputs) & frozenset(exposed)
        self._attack = attack
        self.references = references

    def require(self, *outputs: Output) -> None:
        """Raise :class:`CapabilityError` unless every output is granted."""
        missing = [o for o in outputs if o not in self.outputs]
        if missing:
            granted = ", ".join(sorted(o.value.upper() for o in self.outputs)) or "nothing"
            raise CapabilityError(
                f"{self._attack} requires {', '.join(o.value.upper() for o in missing)}; the "
                f"threat model and the model allow {{{granted}}}")

    def _knowledge(self, flag: bool, what: str) -> None:
        if not flag:
            raise CapabilityError(f"{self._attack} requires knowledge of {what}, which its "
                                  "threat model does not grant")

    @property
    def num_nodes(self) -> int:
        """Number of nodes (node ids are the query interface)."""
        return self._target.num_nodes

    @property
    def drops_queried_pairs(self) -> bool:
        """The public serving protocol: queried pairs are removed from the served graph."""
        return self._target.drop_queried

    def pair_logits(self, pairs: np.ndarray) -> np.ndarray:
        """The target's logit for each pair (one query batch)."""
        self.require(Output.LOGITS)
        return self._target.logits(pairs)

    @property
    def embedding_layers(self) -> tuple[str, ...]:
        """Names of the node-embedding layers the model exposes."""
        return self._target.scorer.interface.embedding_layers

    def embeddings(self, layer: str, query: np.ndarray | None = None) -> torch.Tensor:
        """Node embeddings of ``layer`` on the served graph (white box)."""
        self.require(Output.EMBEDDINGS)
        return self._target.embeddings(layer, query)

    def features(self) -> torch.Tensor:
        """Node features, if the adversary knows them."""
        self._knowledge(self.threat_model.feature_knowledge, "node features")
        return self._target.x

    def architecture(self) -> tuple[LinkPredictorSpec, str]:
        """The architecture references train with, and where it comes from.

        The target's own spec for graphleaks' link predictors; else :data:`SURROGATE_SPEC`,
        stated as a surrogate.
        """
        self._knowledge(self.threat_model.architecture_knowledge, "the target's architecture")
        if self._target.spec is not None:
            return self._target.spec, "the target's architecture"
        return SURROGATE_SPEC, ("surrogate: graphleaks' two-layer GCN GAE (the model's "
                                "architecture is unknown)")


class EdgeAttack(Plugin, ABC):
    """Base class of an edge-membership attack: a subclass implements ``_score`` only.

    Attributes:
        name: Registry name (equals the module stem).
        task: :attr:`Task.EDGE_MEMBERSHIP`.
        target_kind: ``link``.
        requires: Outputs it reads; checked before it runs.
        threat_model: The threat model it is designed for.
        paper: The paper it implements (title, venue, link).
    """

    _registry = edge_registry
    task: ClassVar[Task] = Task.EDGE_MEMBERSHIP
    target_kind: ClassVar[str] = TARGET_KIND
    requires: ClassVar[frozenset[Output]] = frozenset()
    threat_model: ClassVar[ThreatModel] = ThreatModel()
    paper: ClassVar[str] = ""

    def needs(self) -> frozenset[Any]:
        """What it needs from a target (as node attacks declare it)."""
        from graphleaks.attacks.capabilities import derived_needs

        return derived_needs(self.requires, self.threat_model)

    def trains_references(self) -> bool:
        """Whether it trains reference link predictors (an audit shares them)."""
        return False

    def score(self, target: LinkTargetView, challenge: Challenge, *, seed: int) -> AttackScores:
        """Validate, check what the view grants and score a truth-free challenge.

        Raises:
            InvalidConfigError: If the config is invalid or the challenge is not of pairs.
            CapabilityError: If the view does not grant what the attack requires.
            RuntimeError: If the scores do not match the candidates or are not finite.
        """
        self.validate()
        cands = np.asarray(challenge.candidates)
        if challenge.task != self.task or cands.ndim != 2 or cands.shape[1] != 2:
            raise InvalidConfigError(f"{self.name} scores candidate pairs [K, 2] of an "
                                     "edge-membership challenge")
        target.require(*sorted(self.requires, key=lambda o: o.value))
        out = self._score(target, challenge, Rngs.from_seed(seed, self.name))
        scores = np.asarray(out.values, dtype=np.float64).reshape(-1)
        if scores.shape[0] != len(cands):
            raise RuntimeError(f"{self.name} returned {scores.shape[0]} scores for "
                               f"{len(cands)} candidates")
        if not np.all(np.isfinite(scores)):
            raise RuntimeError(f"{self.name} returned non-finite scores")
        return dataclasses.replace(out, values=scores)

    @abstractmethod
    def _score(self, target: LinkTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        """Score ``challenge.candidates`` (pairs); higher = more likely a member edge."""


def edge_attack_names() -> list[str]:
    """Every registered edge-membership attack."""
    return edge_registry.names()


__all__ = ["SURROGATE_SPEC", "TARGET_KIND", "EdgeAttack", "LinkTargetView", "edge_attack_names",
           "edge_registry"]
