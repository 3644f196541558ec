"""LiRA over whole graphs: references trained on random halves of the candidate graphs.

After Carlini, Chien, Nasr, Song, Terzis, Tramèr ("Membership inference attacks from first
principles", IEEE S&P 2022, https://arxiv.org/abs/2112.03570). ``num_references`` copies of
the target's architecture train on paired complementary halves of the candidate graphs, so
each candidate is IN exactly half of them. Each reference gives a sample of the statistic φ
of every candidate (the node version's :func:`~graphleaks.attacks.lira_mia.lira_statistic`:
logit-scaled true-class confidence, or the hinge); per candidate a Gaussian is fitted to its
OUT samples (``offline``: score ``(φ_target - μ_out) / σ_out``) or to its IN and OUT samples
(``online``: ``log N(φ; μ_in, σ_in) - log N(φ; μ_out, σ_out)``). One pooled standard
deviation by default (Carlini et al.'s choice with few references). The statistics are the
node version's own (:mod:`graphleaks.attacks.lira_mia`), not copies.

Threat model: black box (posteriors), the candidate graphs and their class labels, the
target's architecture.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.graph_membership._references import (
    GraphReferenceConfig,
    reference_log_posteriors,
)
from graphleaks.attacks.graph_membership.base import GraphAttack, GraphTargetView
from graphleaks.attacks.lira_mia import _gauss_logpdf, _masked_moments, lira_statistic
from graphleaks.seeding import Rngs
from graphleaks.threat import ThreatModel


@dataclass(frozen=True)
class GraphLiRAMIAConfig(GraphReferenceConfig):
    """Parameters of :class:`GraphLiRAMIA` (with the reference budget).

    Attributes:
        statistic: ``logit`` (logit-scaled true-class confidence) or ``hinge``.
        fixed_variance: One pooled standard deviation instead of one per candidate.
    """

    statistic: str = field(default="logit", metadata={"choices": ("logit", "hinge")})
    fixed_variance: bool = True


class GraphLiRAMIA(GraphAttack):
    """LiRA (Carlini et al. S&P'22), offline or online, over whole graphs."""

    name = "graph_lira_mia"
    Config = GraphLiRAMIAConfig
    config: GraphLiRAMIAConfig
    threat_model = ThreatModel(label_knowledge=True, architecture_knowledge=True,
                               defense_knowledge=False)
    paper = "Carlini et al. S&P'22 (LiRA)"

    def _score(self, view: GraphTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        ids = np.asarray(challenge.candidates, dtype=np.int64)
        labels = torch.as_tensor(view.true_labels(ids))
        models, inside = view.references.get(view, ids, cfg.num_references, cfg.ref_epochs)
        logp = reference_log_posteriors(models, view.graphs(ids))
        phis = np.stack([lira_statistic(torch.from_numpy(np.exp(lp)), labels,
                                        kind=cfg.statistic) for lp in logp])
        phi_t = lira_statistic(view.posteriors(ids), labels, kind=cfg.statistic)
        mu_out, sd_out = _masked_moments(phis, ~inside, cfg.fixed_variance)
        if cfg.variant == "offline":
            scores = (phi_t - mu_out) / sd_out
        else:
            mu_in, sd_in = _masked_moments(phis, inside, cfg.fixed_variance)
            scores = _gauss_logpdf(phi_t, mu_in, sd_in) - _gauss_logpdf(phi_t, mu_out, sd_out)
        return AttackScores(scores, notes=(
            f"LiRA {cfg.variant}, {cfg.num_references} reference classifiers on random halves "
            f"of the {len(ids)} candidate graphs ({cfg.ref_epochs} epochs each), statistic "
            f"{cfg.statistic}",))
