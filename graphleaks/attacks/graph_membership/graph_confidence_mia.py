"""Loss / confidence threshold membership inference over whole graphs.

After Yeom, Giacomelli, Fredrikson, Jha ("Privacy risk in machine learning: analyzing the
connection to overfitting", CSF 2018, https://arxiv.org/abs/1709.01604): a model's loss is
lower on its training records. The score of a graph is its log posterior of the true class
(``loss``, minus the cross-entropy) or, without labels, its largest posterior
(``confidence``, Salem et al. NDSS'19). No shadow model: the decision threshold is either
none (the metrics sweep every threshold) or the ``quantile`` of the scores of the
adversary's population graphs (non-members by construction), chosen without the truth.

Threat model: black box (posteriors), the query graphs' class labels (``loss``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.graph_membership.base import GraphAttack, GraphTargetView
from graphleaks.seeding import Rngs
from graphleaks.threat import ThreatModel


@dataclass(frozen=True)
class GraphConfidenceMIAConfig:
    """Parameters of :class:`GraphConfidenceMIA`.

    Attributes:
        signal: ``loss`` (log posterior of the true class) or ``confidence`` (largest
            posterior, label-free).
        threshold: ``none`` or ``population`` (a quantile of the population's scores).
        quantile: The population quantile used as the threshold.
    """

    signal: str = field(default="loss", metadata={"choices": ("loss", "confidence")})
    threshold: str = field(default="none", metadata={"choices": ("none", "population")})
    quantile: float = field(default=0.9, metadata={"range": (0.0, 1.0)})


class GraphConfidenceMIA(GraphAttack):
    """Threshold on each graph's loss or confidence (Yeom et al. CSF'18)."""

    name = "graph_confidence_mia"
    Config = GraphConfidenceMIAConfig
    config: GraphConfidenceMIAConfig
    threat_model = ThreatModel(label_knowledge=True, defense_knowledge=False)
    paper = "Yeom et al. CSF'18 (loss threshold)"

    def uses_population(self) -> bool:
        """Only the population threshold reads the population."""
        return self.config.threshold == "population"

    def _signal(self, logp: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        if y is None:
            return np.asarray(logp.max(1))
        return np.asarray(logp[np.arange(len(y)), y])

    def _score(self, view: GraphTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        ids = np.asarray(challenge.candidates)
        logp = view.log_posteriors(ids).numpy()
        loss = self.config.signal == "loss"
        scores = self._signal(logp, view.true_labels(ids) if loss else None)
        threshold = None
        notes: tuple[str, ...] = ()
        if self.config.threshold == "population":
            pop = view.population()
            pop_logp = torch.log_softmax(view.population_logits(), dim=1).numpy()
            pop_y = np.asarray([int(g.y) for g in pop]) if loss else None
            pop_scores = self._signal(pop_logp, pop_y)
            threshold = float(np.quantile(pop_scores, self.config.quantile))
            notes = (f"threshold: the {self.config.quantile:g} quantile of {len(pop)} "
                     "population graphs' scores",)
        return AttackScores(scores, threshold=threshold, notes=notes)
