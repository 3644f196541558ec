"""BASE: the Bayes-optimal membership score, made practical (Lassila, Östman, Öhman,
Koskinen, "Practical Bayes-optimal membership inference attacks", NeurIPS 2025,
https://arxiv.org/abs/2505.24089), for nodes.

Under a Gibbs-posterior model of training, the Bayes-optimal log-odds that node ``x`` is a
member is the log-likelihood of its label under the target minus the log of its *average*
likelihood over models trained without knowing whether ``x`` is in (paper, Eq. BASE):

.. math::

    s(x) = \\log p(y_x | x, θ) - a \\cdot \\log \\frac{1}{K}\\sum_{k} p(y_x | x, θ_k)
           + \\log\\frac{π}{1 - π}.

* **online** (``a = 1``): the K references are trained on halves of ``population ∪
  candidates``, so each candidate is IN half of them;
* **offline**: references see the population only (all OUT); the paper scales the OUT
  log-mean by ``a < 1`` to compensate for the missing IN models. The authors' audit tunes
  ``a`` on a simulated target unless it is configured (``tune_scale=True`` does that, see
  :mod:`graphleaks.attacks._references`); 0.7, the default here, is their fallback.

The score is returned as log-odds (the paper applies a sigmoid; ranking is the same, and log
odds do not saturate). Queries are evaluated in the target's query graph, as for LiRA; the
authors query 0-hop (``--query-graph zero_hop`` gives that). G-BASE
(:mod:`graphleaks.attacks.gbase_mia`) adds the neighbours' membership.

Example:
    >>> from graphleaks.audit.runner import train_target
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.attacks.harness import run_attack
    >>> from graphleaks.models.gnn import ArchitectureSpec
    >>> t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=20))
    >>> r = run_attack(BASEMIA(num_references=2, ref_epochs=20), t, seed=0)
    >>> r.scores.shape == r.labels.shape
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from graphleaks.attacks._references import (
    ReferenceConfig,
    References,
    log_mean_exp,
    masked_log_mean_exp,
    scale_fields,
    simulated_offline,
    target_log_true_class,
    train_references,
    tune_scale,
)
from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    Challenge,
    Output,
    TargetView,
    Task,
)
from graphleaks.attacks.lira_mia import LiRAMIA
from graphleaks.seeding import Rngs


@dataclass(frozen=True)
class BASEMIAConfig(ReferenceConfig):
    """Parameters of :class:`BASEMIA` (with the reference budget of :class:`ReferenceConfig`).

    Attributes:
        offline_scale: The factor ``a`` on the OUT log-mean in the offline variant.
        prior: Prior membership probability π (shifts scores; ranking unchanged).
        tune_scale: Offline with 3 or more references only: choose ``a`` by the
            simulated-target AUC, as the authors' audit does; ``offline_scale`` is then
            unused.
    """

    offline_scale: float = field(default=0.7, metadata={"range": (0.0, 1.0)})
    prior: float = field(default=0.5, metadata={"range": (0.0, 1.0), "closed": "neither"})
    tune_scale: bool = False


def simulated_base_scale(refs: References) -> tuple[float, float]:
    """Tune BASE's offline ``a`` on reference 0 as a simulated target over the population.

    Returns:
        The chosen ``a`` and its simulated AUC.
    """
    pop = refs.population
    lp = refs.log_true_class(pop)
    members, out = simulated_offline(refs, pop)
    keep = out.any(0)  # a node every other reference trained on has no offline reference
    lt, lr = lp[0][keep], masked_log_mean_exp(lp[2:][:, keep], out[:, keep])
    return tune_scale(lambda a: lt - a * lr, members[keep].astype(np.int64))


class BASEMIA(Attack):
    """BASE (offline/online), see the module docstring."""

    name = "base_mia"
    task = Task.MEMBERSHIP
    requires = frozenset({Output.POSTERIORS})
    threat_model = LiRAMIA.threat_model
    Config = BASEMIAConfig

    def unused_fields(self) -> dict[str, str]:
        """``offline_scale`` is read only offline and untuned, ``tune_scale`` only offline with
        3 or more references (recorded None, refused if set)."""
        cfg = self.config
        return scale_fields(cfg.variant, cfg.num_references, cfg.tune_scale)

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        online = cfg.variant == "online"
        cands = np.asarray(challenge.candidates, dtype=np.int64)
        labels = target.true_labels(cands)
        refs = train_references(target, cands, labels, num=cfg.num_references, online=online,
                                max_epochs=cfg.ref_epochs, rngs=rngs)
        log_ref = log_mean_exp(refs.log_true_class(cands), axis=0)
        scale, how = (1.0, "") if online else (cfg.offline_scale, "")
        if "tune_scale" not in self.unused_fields() and cfg.tune_scale:
            scale, sim_auc = simulated_base_scale(refs)
            how = f" (tuned: simulated-target AUC {sim_auc:.3f})"
        scores = (target_log_true_class(target, cands, labels) - scale * log_ref
                  + math.log(cfg.prior / (1.0 - cfg.prior)))
        return AttackScores(scores, threshold=0.0, notes=(
            f"BASE {cfg.variant}, {cfg.num_references} reference model(s) (<= {cfg.ref_epochs} "
            f"epochs), scale a={scale:g}{how}, prior {cfg.prior:g}; log-odds, threshold 0 = "
            "posterior membership probability 1/2", *refs.notes))
