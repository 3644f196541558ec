"""Edge-level LiRA: a per-pair likelihood ratio against reference link predictors.

The likelihood-ratio attack of Carlini et al. ("Membership Inference Attacks From First
Principles", IEEE S&P 2022, https://arxiv.org/abs/2112.03570) with the pair as the unit: the
statistic φ of a pair is the model's logit for it, already on a logit scale (Carlini et al.
logit-scale the confidence to make it Gaussian). Reference link predictors train on random
halves of the candidate edges (:mod:`._references`):

* **online** (default): each candidate is IN half of the references and OUT of the other
  half; per-pair Gaussians ``N(μ_in, σ_in)`` and ``N(μ_out, σ_out)`` are fitted and the score
  is ``log N(φ; μ_in, σ_in) − log N(φ; μ_out, σ_out)``;
* **offline**: every reference is OUT; the score is ``(φ − μ_out) / σ_out``.

The Gaussian statistics are the node attack's (:mod:`graphleaks.attacks.lira_mia`): a pooled
standard deviation by default (Carlini et al.'s choice below ~64 references).

Threat model: black box (pair scores), the candidate pairs and the public rest of the graph
(``graph_knowledge="partial"``), node features, the architecture (or a stated surrogate).
References are plain link predictors: a defended target's mechanism is not repeated in them
(defense-unaware; stated in the notes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.edge_membership._references import EdgeReferences, train_edge_references
from graphleaks.attacks.edge_membership.base import EdgeAttack, LinkTargetView
from graphleaks.attacks.lira_mia import _gauss_logpdf, _masked_moments
from graphleaks.errors import InvalidConfigError
from graphleaks.seeding import Rngs, derive_seed
from graphleaks.threat import Output, ThreatModel


@dataclass(frozen=True)
class EdgeLiRAConfig:
    """Parameters of :class:`EdgeLiRA` (and of :class:`~.edge_rmia.EdgeRMIA`'s references).

    Attributes:
        variant: ``online`` (IN and OUT references) or ``offline`` (OUT only).
        num_references: Reference link predictors (online needs at least 2).
        ref_epochs: Cap on each reference's training epochs.
        fixed_variance: One pooled standard deviation instead of per-pair ones.
    """

    variant: str = field(default="online", metadata={"choices": ("online", "offline")})
    num_references: int = field(default=8, metadata={"range": (1, 1024)})
    ref_epochs: int = field(default=100, metadata={"range": (1, 100_000)})
    fixed_variance: bool = True

    def check(self) -> None:
        """Online references need every candidate IN and OUT of some reference.

        Raises:
            InvalidConfigError: Naming ``num_references`` and its valid range.
        """
        if self.variant == "online" and self.num_references < 2:
            raise InvalidConfigError(
                "The num_references parameter of an online edge attack must be in [2, 1024]. "
                f"Got {self.num_references!r} instead.")


def edge_references(attack: str, target: LinkTargetView, challenge: Challenge, *, num: int,
                    online: bool, ref_epochs: int, seed: int) -> EdgeReferences:
    """The challenge's references: the audit's shared pool, else trained here."""
    cands = np.asarray(challenge.candidates, dtype=np.int64)
    known = np.asarray(challenge.hints.get("known_edges", np.empty((0, 2))),
                       dtype=np.int64).reshape(-1, 2)
    if target.references is not None:
        return target.references.get(target, cands, known, num=num, online=online,
                                     ref_epochs=ref_epochs)
    return train_edge_references(target, cands, known, num=num, online=online,
                                 ref_epochs=ref_epochs, seed=derive_seed(seed, attack))


class EdgeLiRA(EdgeAttack):
    """Edge-level LiRA (online/offline) with reference link predictors.

    Example:
        >>> EdgeLiRA(variant="offline", num_references=1).config.variant
        'offline'
    """

    name = "edge_lira"
    requires = frozenset({Output.LOGITS})
    threat_model = ThreatModel(
        access="blackbox", outputs=frozenset({Output.LOGITS}), graph_knowledge="partial",
        feature_knowledge=True, shadow_data="same_distribution", architecture_knowledge=True,
        defense_knowledge=False)
    paper = "LiRA, Carlini et al. IEEE S&P 2022, per edge"
    Config = EdgeLiRAConfig

    def trains_references(self) -> bool:
        """It trains reference link predictors."""
        return True

    def _score(self, target: LinkTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        online = cfg.variant == "online"
        pairs = np.asarray(challenge.candidates, dtype=np.int64)
        phi = target.pair_logits(pairs)
        refs = edge_references(self.name, target, challenge, num=cfg.num_references,
                               online=online, ref_epochs=cfg.ref_epochs, seed=rngs.seed)
        phis = refs.logits(target.features(), pairs, drop_queried=target.drops_queried_pairs)
        pooled = cfg.fixed_variance or cfg.num_references == 1
        mu_out, sd_out = _masked_moments(phis, ~refs.inside, pooled)
        if online:
            mu_in, sd_in = _masked_moments(phis, refs.inside, pooled)
            scores = _gauss_logpdf(phi, mu_in, sd_in) - _gauss_logpdf(phi, mu_out, sd_out)
        else:
            scores = (phi - mu_out) / sd_out
        return AttackScores(np.nan_to_num(scores, nan=0.0, posinf=1e6, neginf=-1e6), notes=(
            f"edge LiRA {cfg.variant}, statistic: the pair's logit, "
            f"{'pooled' if pooled else 'per-pair'} variance", *refs.notes,
            "references are plain link predictors (defense-unaware)"))
