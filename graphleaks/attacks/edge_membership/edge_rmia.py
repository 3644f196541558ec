"""Edge-level RMIA: pairwise likelihood ratios against population pairs.

RMIA (Zarifzadeh, Liu, Shokri, "Low-Cost High-Power Membership Inference Attacks", ICML
2024, https://arxiv.org/abs/2312.03262) with the pair as the unit. ``p(x|θ)`` is the
target's edge probability ``σ(logit)`` for candidate pair ``x``; ``p(x)`` its average over
reference link predictors (:mod:`._references`: online, every reference; offline, the OUT
mean with the paper's correction ``½((1 + a)·p_OUT + (1 − a))``). Population pairs ``z`` are
uniform random pairs that are neither candidates nor known edges (non-members of the target
and of every reference, up to the rare unknown edge), and

.. math::

    \\mathrm{score}(x) = \\Pr_z\\Big[\\frac{p(x|θ) / p(x)}{p(z|θ) / p(z)} \\ge γ\\Big].

The ratio and offline-marginal code is the node attack's (:mod:`graphleaks.attacks.rmia_mia`).

Threat model: as edge LiRA (:mod:`.edge_lira`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.edge_membership.base import EdgeAttack, LinkTargetView
from graphleaks.attacks.edge_membership.edge_lira import EdgeLiRA, EdgeLiRAConfig, edge_references
from graphleaks.attacks.rmia_mia import offline_marginal, pairwise_scores
from graphleaks.data.pairs import pair_keys, sample_non_edges
from graphleaks.seeding import Rngs
from graphleaks.threat import Output


@dataclass(frozen=True)
class EdgeRMIAConfig(EdgeLiRAConfig):
    """Parameters of :class:`EdgeRMIA` (with the reference budget of edge LiRA).

    Attributes:
        offline_a: The offline correction ``a`` in [0, 1] (offline only).
        gamma: Threshold γ on the pairwise likelihood ratio.
        num_population: Population pairs ``z``.
    """

    offline_a: float = field(default=0.3, metadata={"range": (0.0, 1.0)})
    gamma: float = field(default=1.0, metadata={"range": (0.0, None), "closed": "neither"})
    num_population: int = field(default=1000, metadata={"range": (1, 1_000_000)})


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * v))  # overflow-free σ


class EdgeRMIA(EdgeAttack):
    """Edge-level RMIA (online/offline) with reference link predictors."""

    name = "edge_rmia"
    requires = frozenset({Output.LOGITS})
    threat_model = EdgeLiRA.threat_model
    paper = "RMIA, Zarifzadeh et al. ICML 2024, per edge"
    Config = EdgeRMIAConfig

    def trains_references(self) -> bool:
        """It trains reference link predictors."""
        return True

    def unused_fields(self) -> dict[str, str]:
        """``offline_a`` is read only offline (recorded None, refused if set)."""
        if self.config.variant == "online":
            return {"offline_a": "the online variant has IN references; offline_a corrects "
                                 "the offline variant's OUT-only marginal"}
        return {}

    def _score(self, target: LinkTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        online = cfg.variant == "online"
        cands = np.asarray(challenge.candidates, dtype=np.int64)
        known = np.asarray(challenge.hints.get("known_edges", np.empty((0, 2))),
                           dtype=np.int64).reshape(-1, 2)
        n = target.num_nodes
        avoid = np.unique(np.concatenate([pair_keys(cands, n), pair_keys(known, n)]))
        z = sample_non_edges(min(cfg.num_population, max(1, len(cands))), n, avoid,
                             rngs.child("z").numpy)
        refs = edge_references(self.name, target, challenge, num=cfg.num_references,
                               online=online, ref_epochs=cfg.ref_epochs, seed=rngs.seed)
        x = target.features()
        drop = target.drops_queried_pairs
        p_ref_x = _sigmoid(refs.logits(x, cands, drop_queried=drop))
        p_ref_z = _sigmoid(refs.logits(x, z, drop_queried=drop))
        if online:
            px, pz = p_ref_x.mean(0), p_ref_z.mean(0)
        else:
            px = offline_marginal(p_ref_x.mean(0), cfg.offline_a)
            pz = offline_marginal(p_ref_z.mean(0), cfg.offline_a)
        ptx = _sigmoid(target.pair_logits(cands))
        ptz = _sigmoid(target.pair_logits(z))
        ratio_x = ptx / np.maximum(px, 1e-300)
        ratio_z = ptz / np.maximum(pz, 1e-300)
        scores = pairwise_scores(ratio_x, ratio_z, cfg.gamma)
        return AttackScores(scores, notes=(
            f"edge RMIA {cfg.variant}, {len(z)} population pairs z (uniform pairs that are "
            f"neither candidates nor known edges), gamma={cfg.gamma:g}"
            + (f", offline a={cfg.offline_a:g}" if not online else ""), *refs.notes,
            "references are plain link predictors (defense-unaware)"))
