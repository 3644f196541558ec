"""RMIA: robust membership inference by pairwise likelihood ratios (Zarifzadeh, Liu, Shokri,
ICML 2024, https://arxiv.org/abs/2312.03262), for nodes.

A candidate ``x`` is compared with population nodes ``z`` the adversary knows to be
non-members. With ``p(x|θ)`` the posterior of ``x``'s label under the target θ (evaluated in
the target's query graph) and ``p(x)`` its average over reference models,

.. math::

    LR(x, z) = \\frac{p(x|θ) / p(x)}{p(z|θ) / p(z)}, \\qquad
    \\mathrm{score}(x) = \\Pr_z[LR(x, z) \\ge γ].

* **offline** (1 to 4 references suffice, the paper's point): references train on halves of
  the population only, so every candidate is OUT of every reference and ``p(x)`` is
  extrapolated with the offline correction ``p(x) = ½((1 + a)·p_OUT(x) + (1 − a))``
  (paper Appendix B.2.2). Each ``z`` uses the references it is OUT of, with the same correction.
* **online**: references train on paired complementary halves of ``population ∪
  candidates``; ``p(x)`` and ``p(z)`` average over all references (half IN, half OUT).

Threat model: as LiRA (:mod:`graphleaks.attacks.lira_mia`): black box (posteriors), the query
nodes' labels and features, the query graph's edges, auxiliary data disjoint from the target,
the architecture.

Example:
    >>> from graphleaks.audit.runner import train_target
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.attacks.harness import run_attack
    >>> from graphleaks.models.gnn import ArchitectureSpec
    >>> t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=20))
    >>> r = run_attack(RMIAMIA(num_references=1, ref_epochs=20), t, seed=0)
    >>> r.scores.shape == r.labels.shape and bool(((0 <= r.scores) & (r.scores <= 1)).all())
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphleaks.attacks._references import (
    ReferenceConfig,
    References,
    target_log_true_class,
    train_references,
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
class RMIAMIAConfig(ReferenceConfig):
    """Parameters of :class:`RMIAMIA` (with the reference budget of :class:`ReferenceConfig`).

    Attributes:
        offline_a: The offline correction ``a`` in [0, 1] (1: trust OUT references as they
            are; the paper tunes it per dataset, 0.3 is its usual value).
        gamma: Threshold γ on the pairwise likelihood ratio (paper: 1 or slightly above).
        num_population: Number of population nodes ``z`` compared against (all if fewer).
    """

    offline_a: float = field(default=0.3, metadata={"range": (0.0, 1.0)})
    gamma: float = field(default=1.0, metadata={"range": (0.0, None), "closed": "neither"})
    num_population: int = field(default=1000, metadata={"range": (1, 1_000_000)})


def offline_marginal(p_out: np.ndarray, a: float) -> np.ndarray:
    """RMIA's offline estimate of ``p(x)`` from the mean OUT probability (App. B.2.2)."""
    return 0.5 * ((1.0 + a) * p_out + (1.0 - a))


def pairwise_scores(ratio_x: np.ndarray, ratio_z: np.ndarray, gamma: float) -> np.ndarray:
    """``Pr_z[ratio_x / ratio_z >= γ]`` for every x, by sorting the z ratios once."""
    zs = np.sort(ratio_z)
    return np.searchsorted(zs, ratio_x / gamma, side="right") / len(zs)


def _marginal(refs: References, nodes: np.ndarray, log_p: np.ndarray, *, online: bool,
              a: float) -> tuple[np.ndarray, np.ndarray]:
    """``p(node)`` over references, and which nodes have any usable reference."""
    p = np.exp(log_p)
    if online:
        return p.mean(0), np.ones(len(nodes), dtype=bool)
    out = ~refs.inside(nodes)
    cnt = out.sum(0)
    p_out = np.where(out, p, 0.0).sum(0) / np.maximum(cnt, 1)
    return offline_marginal(p_out, a), cnt > 0


class RMIAMIA(Attack):
    """RMIA (offline/online) with reference GNNs queried in the target's query graph."""

    name = "rmia_mia"
    task = Task.MEMBERSHIP
    requires = frozenset({Output.POSTERIORS})
    threat_model = LiRAMIA.threat_model
    Config = RMIAMIAConfig

    def unused_fields(self) -> dict[str, str]:
        """``offline_a`` is read only offline (recorded None, refused if set)."""
        if self.config.variant == "online":
            return {"offline_a": "the online variant has IN references; offline_a corrects "
                                 "the offline variant's OUT-only marginal"}
        return {}

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        online = cfg.variant == "online"
        cands = np.asarray(challenge.candidates, dtype=np.int64)
        labels = target.true_labels(cands)
        refs = train_references(target, cands, labels, num=cfg.num_references, online=online,
                                max_epochs=cfg.ref_epochs, rngs=rngs)
        pop = refs.population
        if len(pop) > cfg.num_population:
            pop = np.sort(rngs.child("z").numpy.choice(pop, cfg.num_population, replace=False))
        px, _ = _marginal(refs, cands, refs.log_true_class(cands), online=online,
                          a=cfg.offline_a)
        pz, usable = _marginal(refs, pop, refs.log_true_class(pop), online=online,
                               a=cfg.offline_a)
        if not usable.any():
            raise RuntimeError("no population node is OUT of a reference model")
        ptx = np.exp(target_log_true_class(target, cands, labels))
        ptz = np.exp(target_log_true_class(target, pop, refs.labels[pop]))
        ratio_x = ptx / np.maximum(px, 1e-300)
        ratio_z = (ptz / np.maximum(pz, 1e-300))[usable]
        scores = pairwise_scores(ratio_x, ratio_z, cfg.gamma)
        return AttackScores(scores, notes=(
            f"RMIA {cfg.variant}, {cfg.num_references} reference model(s) (<= {cfg.ref_epochs} "
            f"epochs), {int(usable.sum())} population nodes z, gamma={cfg.gamma:g}"
            + (f", offline a={cfg.offline_a:g}" if not online else "")
            + "; references queried in the target's query graph", *refs.notes))
