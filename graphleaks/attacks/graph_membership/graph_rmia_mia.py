"""RMIA over whole graphs, with LiRA's references (random halves of the candidate graphs).

After Zarifzadeh, Liu, Mahloujifar, Shokri ("Low-cost high-power membership inference
attacks", ICML 2024, https://arxiv.org/abs/2312.03262). For a candidate ``x`` the ratio
``p(x|θ) / p(x)`` compares the target's true-class probability with its mean over the
reference classifiers (``online``: all of them; ``offline``: those that did not train on
``x``, corrected by ``a`` as the paper's App. B.2.2, through the node version's
:func:`~graphleaks.attacks.rmia_mia.offline_marginal`); the score is the share of
population graphs ``z`` whose ratio it beats by ``γ``
(:func:`~graphleaks.attacks.rmia_mia.pairwise_scores`). ``z`` are the adversary's population
graphs (OUT of every reference) when it has at least ``MIN_POPULATION`` of them, else the
candidates themselves (stated in the notes).

Threat model: black box (posteriors), the candidate graphs and their class labels, the
target's architecture; population graphs when available.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.graph_membership._references import (
    GraphReferenceConfig,
    reference_log_posteriors,
    true_class,
)
from graphleaks.attacks.graph_membership.base import GraphAttack, GraphTargetView
from graphleaks.attacks.rmia_mia import offline_marginal, pairwise_scores
from graphleaks.errors import CapabilityError
from graphleaks.seeding import Rngs
from graphleaks.threat import ThreatModel


@dataclass(frozen=True)
class GraphRMIAMIAConfig(GraphReferenceConfig):
    """Parameters of :class:`GraphRMIAMIA` (with the reference budget).

    Attributes:
        offline_a: The offline correction ``a`` in [0, 1] (the paper's usual 0.3).
        gamma: Threshold γ on the pairwise likelihood ratio.
        num_population: Most population graphs ``z`` compared against.
    """

    offline_a: float = field(default=0.3, metadata={"range": (0.0, 1.0)})
    gamma: float = field(default=1.0, metadata={"range": (0.0, None), "closed": "neither"})
    num_population: int = field(default=1000, metadata={"range": (1, 1_000_000)})


class GraphRMIAMIA(GraphAttack):
    """RMIA (Zarifzadeh et al. ICML'24), offline or online, over whole graphs."""

    name = "graph_rmia_mia"
    Config = GraphRMIAMIAConfig
    config: GraphRMIAMIAConfig
    threat_model = ThreatModel(label_knowledge=True, architecture_knowledge=True,
                               shadow_data="same_distribution", defense_knowledge=False)
    paper = "Zarifzadeh et al. ICML'24 (RMIA)"

    def uses_population(self) -> bool:
        """Population graphs are optional: without them ``z`` are the candidates."""
        return False

    def _marginal(self, logp_true: np.ndarray, out: np.ndarray) -> np.ndarray:
        p = np.exp(logp_true)
        if self.config.variant == "online":
            return np.asarray(p.mean(0))
        p_out = np.where(out, p, 0.0).sum(0) / np.maximum(out.sum(0), 1)
        return offline_marginal(p_out, self.config.offline_a)

    def _score(self, view: GraphTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        ids = np.asarray(challenge.candidates, dtype=np.int64)
        y = view.true_labels(ids)
        models, inside = view.references.get(view, ids, cfg.num_references, cfg.ref_epochs)
        ref_x = true_class(reference_log_posteriors(models, view.graphs(ids)), y)
        px = self._marginal(ref_x, ~inside)
        ptx = np.exp(true_class(view.log_posteriors(ids).numpy(), y))
        ratio_x = ptx / np.maximum(px, 1e-300)
        try:
            pop = view.population()
        except CapabilityError:
            pop = []
        if pop:
            keep = np.arange(len(pop))
            if len(pop) > cfg.num_population:
                keep = np.sort(rngs.numpy.choice(len(pop), cfg.num_population, replace=False))
                pop = [pop[int(i)] for i in keep]
            zy = np.asarray([int(g.y) for g in pop])
            ref_z = true_class(reference_log_posteriors(models, pop), zy)
            pz = self._marginal(ref_z, np.ones_like(ref_z, dtype=bool))
            logits = view.population_logits()[torch.as_tensor(keep)]
            ptz = np.exp(true_class(torch.log_softmax(logits, dim=1).numpy(), zy))
            ratio_z = ptz / np.maximum(pz, 1e-300)
            where = f"{len(pop)} population graphs z"
        else:
            ratio_z = ratio_x
            where = "z = the candidates themselves (no population graphs)"
        scores = pairwise_scores(ratio_x, ratio_z, cfg.gamma)
        return AttackScores(scores, notes=(
            f"RMIA {cfg.variant}, {cfg.num_references} reference classifiers on random halves "
            f"of the {len(ids)} candidate graphs ({cfg.ref_epochs} epochs each), {where}, "
            f"gamma={cfg.gamma:g}" + (f", offline a={cfg.offline_a:g}"
                                      if cfg.variant == "offline" else ""),))
