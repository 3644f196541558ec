"""Confidence-threshold membership inference (Duddu et al. 2020, after Song et al. 2019).

A member tends to receive a higher posterior for its true class than a non-member. The score
of a node is its posterior of the true class; the decision threshold is calibrated on a shadow
model the adversary trains on its own auxiliary nodes, so the evaluation labels are never used
to choose it.

Threat model: black box (posteriors), the query nodes' true labels, auxiliary data disjoint
from the target's, and the target's architecture (for the shadow calibration only).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import torch

from graphleaks.attacks._shadow import mechanism_note, mechanism_of, shadow_for
from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    Challenge,
    Output,
    TargetView,
    Task,
    ThreatModel,
)
from graphleaks.attacks.capabilities import Capability
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.binary import best_balanced_accuracy
from graphleaks.seeding import Rngs


@dataclass(frozen=True)
class ConfidenceMIAConfig:
    """Parameters of :class:`ConfidenceMIA`.

    Attributes:
        score: ``true_class`` (posterior of the true label) or ``max`` (largest posterior,
            for an adversary who does not know the labels).
        threshold: ``shadow`` calibrates the decision threshold on a shadow model;
            ``median`` takes the median of the candidates' own scores (label-free: no shadow
            model and no membership truth, for scores-only audits); ``none`` reports
            threshold-free metrics only.
        compat_duddu_label_indexing: Reproduce the original GraphLeaks code, which indexed the
            posterior row with a one-hot vector (attacks.md §1.4, P1-1): each node yields C
            scores, p₀ repeated C−1 times and p₁ once, whatever its label.
    """

    score: Literal["true_class", "max"] = field(
        default="true_class", metadata={"choices": ("true_class", "max")})
    threshold: Literal["shadow", "median", "none"] = field(
        default="shadow", metadata={"choices": ("shadow", "median", "none")})
    compat_duddu_label_indexing: bool = False

    def check(self) -> None:
        """Cross-field rule: the compat mode scores without the label, so ``score='max'``
        (a choice about the label) would be silently ignored there."""
        if self.compat_duddu_label_indexing and self.score != "true_class":
            raise InvalidConfigError(
                "The score parameter of ConfidenceMIA has no effect with "
                "compat_duddu_label_indexing=true (the bug mode ignores labels). Got "
                f"{self.score!r}; drop one of the two.")


def confidence_scores(posteriors: torch.Tensor, labels: torch.Tensor | None) -> np.ndarray:
    """Posterior of the true class (or the maximum posterior when ``labels`` is None)."""
    if labels is None:
        return posteriors.max(dim=1).values.numpy().astype(np.float64)
    return posteriors.gather(1, labels.view(-1, 1)).view(-1).numpy().astype(np.float64)


class ConfidenceMIA(Attack):
    """Membership inference by thresholding the target's confidence.

    Example:
        >>> from graphleaks.audit.runner import train_target
        >>> from graphleaks.data import tiny_graph
        >>> from graphleaks.attacks.harness import run_attack
        >>> t = train_target(tiny_graph(), seed=0)
        >>> r = run_attack(ConfidenceMIA(threshold="none"), t, seed=0)
        >>> r.scores.shape == r.labels.shape
        True
    """

    name = "confidence_mia"
    task = Task.MEMBERSHIP
    requires = frozenset({Output.POSTERIORS})
    threat_model = ThreatModel(
        access="blackbox", outputs=frozenset({Output.POSTERIORS}), label_knowledge=True,
        shadow_data="disjoint_subgraph", architecture_knowledge=True,
    )
    Config = ConfidenceMIAConfig

    def needs(self) -> frozenset[Capability]:
        """Posteriors always; true labels for ``true_class``; shadow data only to calibrate."""
        needs = {Capability.POSTERIORS}
        if self.config.compat_duddu_label_indexing:  # the bug reproduction reads nothing else
            return frozenset(needs)
        if self.config.score == "true_class":
            needs.add(Capability.TRUE_LABELS)
        if self.config.threshold == "shadow":
            needs |= {Capability.REFERENCE_MODELS, Capability.ARCHITECTURE,
                      Capability.FEATURES}
        return frozenset(needs)

    def get_config(self) -> ConfidenceMIAConfig:
        """The config as it runs: the compat mode calibrates no threshold (``'none'``)."""
        if self.config.compat_duddu_label_indexing:
            return replace(self.config, threshold="none")
        return self.config

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        nodes = challenge.candidates
        post = target.posteriors(nodes)
        if cfg.compat_duddu_label_indexing:
            # Bug reproduction: posterior[row, onehot_row] picks p0 for every 0 entry and p1
            # for the single 1 entry, so the label is ignored (attacks.md §1.4 P1-1).
            c = post.shape[1]
            p0, p1 = post[:, :1].numpy(), post[:, 1:2].numpy()
            scores = np.hstack([p1, np.repeat(p0, c - 1, axis=1)])
            return AttackScores(scores.reshape(-1).astype(np.float64), repeat=c,
                                notes=("compat: GraphLeaks one-hot indexing bug reproduced; "
                                       "scores ignore the true label; no threshold is "
                                       "calibrated (recorded as threshold='none')",))
        labels = target.true_labels(nodes) if cfg.score == "true_class" else None
        scores = confidence_scores(post, labels)
        threshold = None
        notes: tuple[str, ...] = ()
        if cfg.threshold == "shadow":
            threshold, shadow_notes = self._shadow_threshold(target, rngs)
            notes = ("decision threshold calibrated on a shadow model trained on auxiliary "
                     "nodes; evaluation labels unused", *shadow_notes)
        elif cfg.threshold == "median":
            # A function of the pooled scores alone, never of the membership truth: guessing
            # the top half members, as one-run auditing guesses its top-k (Steinke, Nasr &
            # Jagielski 2023), so the ε lower bound at it needs no separate calibration data.
            threshold = float(np.median(scores))
            notes = ("decision threshold: the median of the candidates' scores, i.e. the top "
                     "half guessed members (label-free: no shadow model, no membership truth "
                     "used)",)
        return AttackScores(scores, threshold=threshold, notes=notes)

    def _shadow_threshold(self, target: TargetView, rngs: Rngs
                          ) -> tuple[float, tuple[str, ...]]:
        population, _ = target.population()
        shadow, shared = shadow_for(target, population, target.num_classes, 0,
                                    own_seed=rngs.child("shadow").seed)
        nodes = np.concatenate([shadow.members, shadow.nonmembers])
        truth = np.r_[np.ones(len(shadow.members)), np.zeros(len(shadow.nonmembers))]
        post = torch.softmax(shadow.logits(nodes), dim=1)
        labels = population.y[torch.as_tensor(nodes)] if self.config.score == "true_class" else None
        _, threshold = best_balanced_accuracy(confidence_scores(post, labels), truth)
        note = mechanism_note(mechanism_of(population), "calibration shadow")
        return float(threshold), (note,) if shared is None else (note, shared)
