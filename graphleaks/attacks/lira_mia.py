"""Likelihood-ratio membership inference, LiRA (Carlini et al. 2022), for nodes.

Reference models of the target's architecture are trained on random halves of a population
graph. Each reference is queried on the candidates **in the target's query graph** (the
node's k-hop neighbourhood as the target sees it, attacks.md §1.7), giving per-candidate
samples of a statistic φ: the logit-scaled true-class confidence ``log p_y - log(1 - p_y)``
(or the hinge ``log p_y - max_{c≠y} log p_c``). A Gaussian is fitted per candidate:

* **offline** (default): references train on halves of the adversary's population only
  (:meth:`TargetView.population`, disjoint from the target), so every sample is an OUT sample;
  the score is the z-score ``(φ_target - μ_out) / σ_out`` (monotone in Carlini's one-sided
  p-value, without its saturation at the top).
* **online**: references train on halves of ``population ∪ candidates`` (paired
  complementary halves, so each candidate is IN exactly half the references), inside the
  query graph; the score is ``log N(φ; μ_in, σ_in) - log N(φ; μ_out, σ_out)``. This needs the
  candidates' labels and features and the query graph's edges, which the threat model grants.

References are cheap: full-batch, no early stopping, at most ``ref_epochs`` epochs.

Threat model: black box (posteriors), the query nodes' labels and features, the query graph's
edges (``graph_knowledge="full"``), auxiliary data disjoint from the target, the architecture.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch_geometric.utils import subgraph

from graphleaks._executor import LOCAL
from graphleaks.attacks._shadow import KnownMechanism, mechanism_note, train_on_nodes
from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    Challenge,
    Output,
    TargetView,
    Task,
    ThreatModel,
)
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.seeding import Rngs, derive_seed


@dataclass(frozen=True)
class LiRAMIAConfig:
    """Parameters of :class:`LiRAMIA`.

    Attributes:
        variant: ``offline`` (population-only references) or ``online``.
        num_references: Number of reference models (at least 8 recommended). Offline LiRA
            works from 1: with one reference there is no per-node spread, so it uses a global
            variance (see :func:`_masked_moments`); online needs 2.
        statistic: ``logit`` (logit-scaled true-class confidence) or ``hinge``.
        ref_epochs: Cap on the references' training epochs (the target's spec otherwise).
        fixed_variance: Use one pooled standard deviation instead of per-node ones (better
            with fewer than ~64 references, Carlini et al.).
    """

    variant: str = field(default="offline", metadata={"choices": ("offline", "online")})
    num_references: int = field(default=8, metadata={"range": (1, 1024)})
    statistic: str = field(default="logit", metadata={"choices": ("logit", "hinge")})
    ref_epochs: int = field(default=50, metadata={"range": (1, 100_000)})
    fixed_variance: bool = True

    def check(self) -> None:
        """Online LiRA needs every candidate IN and OUT of some reference (2 or more).

        Raises:
            InvalidConfigError: Naming ``num_references`` and its valid range.
        """
        if self.variant == "online" and self.num_references < 2:
            raise InvalidConfigError(
                "The num_references parameter of LiRAMIA must be in [2, 1024] for the online "
                f"variant. Got {self.num_references!r} instead.")


def lira_statistic(posteriors: torch.Tensor, labels: torch.Tensor, *, kind: str) -> np.ndarray:
    """φ of each row: logit-scaled true-class confidence or hinge, from posteriors.

    Computed in log space (``log p`` clamped at 1e-300) so confident rows stay finite.
    """
    logp = torch.log(posteriors.double().clamp_min(1e-300))
    idx = labels.view(-1, 1).long()
    true = logp.gather(1, idx).view(-1)
    others = logp.scatter(1, idx, float("-inf"))
    if kind == "hinge":
        rest = others.max(dim=1).values
    else:
        rest = torch.logsumexp(others, dim=1)
    return (true - rest).numpy()


def _gauss_logpdf(x: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    return -0.5 * ((x - mu) / sd) ** 2 - np.log(sd)


class LiRAMIA(Attack):
    """LiRA (offline/online) with reference GNNs queried in the target's query graph.

    Example:
        >>> from graphleaks.audit.runner import train_target
        >>> from graphleaks.data import tiny_graph
        >>> from graphleaks.attacks.harness import run_attack
        >>> from graphleaks.models.gnn import ArchitectureSpec
        >>> t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=20))
        >>> r = run_attack(LiRAMIA(num_references=4, ref_epochs=20), t, seed=0)
        >>> r.scores.shape == r.labels.shape
        True
    """

    name = "lira_mia"
    task = Task.MEMBERSHIP
    requires = frozenset({Output.POSTERIORS})
    threat_model = ThreatModel(
        access="blackbox", outputs=frozenset({Output.POSTERIORS}), graph_knowledge="full",
        feature_knowledge=True, label_knowledge=True, shadow_data="disjoint_subgraph",
        architecture_knowledge=True,
    )
    Config = LiRAMIAConfig

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        cands = np.asarray(challenge.candidates, dtype=np.int64)
        labels = target.true_labels(cands)
        phi_target = lira_statistic(target.posteriors(cands), labels, kind=cfg.statistic)
        spec = target.architecture()
        x_query = target.features()
        e_query = target.query_edges()
        population, aux = target.population()
        n_ref = cfg.num_references
        phis = np.empty((n_ref, len(cands)))
        inside = np.zeros((n_ref, len(cands)), dtype=bool)
        rng = rngs.numpy
        # Online references train on the served (already privatised) query features, which
        # cannot go through the defense a second time: they stay defense-unaware.
        mechanism = target.mechanism() if cfg.variant == "offline" else None
        name = getattr(population, "name", None) if "name" in population else None

        # in an audit, the run's executor trains the references (here or on a Ray cluster)
        executor = LOCAL if target.references is None else target.references.executor
        if cfg.variant == "offline":
            halves = _paired_halves(population.num_nodes, n_ref, rng)
            train_graph = (population.x, population.edge_index, population.y)
        else:
            universe = np.unique(np.concatenate([np.asarray(aux), cands]))
            y_all = torch.zeros(target.num_nodes, dtype=torch.long)
            y_all[torch.as_tensor(aux, dtype=torch.long)] = population.y
            y_all[torch.as_tensor(cands)] = labels
            halves = [universe[local]
                      for local in _paired_halves(len(universe), n_ref, rng)]
            train_graph = (x_query, e_query, y_all)
        shared = _LiraShared(*train_graph, x_query=x_query, e_query=e_query, cands=cands,
                             labels=labels, spec=spec, num_classes=target.num_classes,
                             mechanism=mechanism, name=name, ref_epochs=cfg.ref_epochs,
                             statistic=cfg.statistic)
        items = [(members, derive_seed(rngs.seed, "reference", i))
                 for i, members in enumerate(halves)]
        for i, phi in enumerate(executor.map(_lira_reference_phi, items, shared=shared,
                                             desc="reference models")):
            phis[i] = phi
        if cfg.variant == "online":
            pos = {int(v): j for j, v in enumerate(cands)}
            for i, members in enumerate(halves):
                for v in members:
                    j = pos.get(int(v))
                    if j is not None:
                        inside[i, j] = True

        out_mask = ~inside
        # One reference leaves no per-node spread: a global variance is the only choice.
        pooled = cfg.fixed_variance or n_ref == 1
        mu_out, sd_out = _masked_moments(phis, out_mask, pooled)
        notes = [
            f"LiRA {cfg.variant}, {n_ref} reference models (<= {cfg.ref_epochs} epochs), "
            f"statistic {cfg.statistic}, {'global' if pooled else 'per-node'} "
            "variance; references queried in the target's query graph",
            mechanism_note(mechanism, "reference models"),
        ]
        if cfg.variant == "offline":
            scores = (phi_target - mu_out) / sd_out
        else:
            mu_in, sd_in = _masked_moments(phis, inside, cfg.fixed_variance)
            scores = (_gauss_logpdf(phi_target, mu_in, sd_in)
                      - _gauss_logpdf(phi_target, mu_out, sd_out))
            notes.append("online references trained on halves of population ∪ candidates "
                         "(each candidate IN exactly half of them)")
        return AttackScores(np.nan_to_num(scores, nan=0.0, posinf=1e6, neginf=-1e6),
                            notes=tuple(notes))


@dataclass(frozen=True)
class _LiraShared:
    """What every LiRA reference trains and is queried from, but its members and seed
    (one object, so a Ray executor puts it in the object store once)."""

    x: torch.Tensor
    edge_index: torch.Tensor
    y: torch.Tensor
    x_query: torch.Tensor
    e_query: torch.Tensor
    cands: np.ndarray
    labels: torch.Tensor
    spec: ArchitectureSpec
    num_classes: int
    mechanism: KnownMechanism | None
    name: str | None
    ref_epochs: int
    statistic: str


def _lira_reference_phi(shared: _LiraShared, item: tuple[np.ndarray, int]) -> np.ndarray:
    """Train one reference inductively on the subgraph induced by its members and return
    its LiRA statistic on the candidates, queried in the target's query graph.

    The subgraph is relabelled so training only touches the members' rows.
    """
    members, seed = item
    idx = torch.as_tensor(members, dtype=torch.long)
    ei, _ = subgraph(idx, shared.edge_index, relabel_nodes=True, num_nodes=shared.x.shape[0])
    local = np.arange(len(members))
    model = train_on_nodes(shared.x[idx], ei, shared.y[idx], local, shared.spec,
                           shared.num_classes, max_epochs=shared.ref_epochs, seed=seed,
                           mechanism=shared.mechanism, name=shared.name)
    with torch.no_grad():
        logits = model(shared.x_query, shared.e_query)[
            torch.as_tensor(shared.cands, dtype=torch.long)]
        post = torch.softmax(logits.float(), dim=1)
        return lira_statistic(post, shared.labels, kind=shared.statistic)


def _paired_halves(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``k`` random halves of ``range(n)``, in complementary pairs."""
    out: list[np.ndarray] = []
    while len(out) < k:
        perm = rng.permutation(n)
        out.append(np.sort(perm[: n // 2]))
        if len(out) < k:
            out.append(np.sort(perm[n // 2:]))
    return out


def _masked_moments(phis: np.ndarray, mask: np.ndarray,
                    fixed_variance: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per-node mean and standard deviation of ``phis`` over the rows where ``mask``.

    ``fixed_variance``: one global standard deviation, the within-node spread pooled over
    nodes (Carlini et al.'s choice for few references). When no node has two observations
    (a single reference) there is no within-node spread to pool; the global scale is then
    the spread of the observations across nodes, a conservative stand-in (it also contains
    the between-node variance). A global scale never changes the offline ranking.
    """
    cnt = mask.sum(0)
    safe = np.maximum(cnt, 1)
    mu = np.where(mask, phis, 0.0).sum(0) / safe
    resid = np.where(mask, phis - mu, 0.0)
    if fixed_variance:
        dof = int(cnt.sum()) - int((cnt > 0).sum())
        if dof > 0:
            sd_global = np.sqrt((resid ** 2).sum() / dof)
        else:
            seen = phis[mask]
            sd_global = float(seen.std(ddof=1)) if seen.size > 1 else 1.0
        sd = np.full(phis.shape[1], sd_global)
    else:
        sd = np.sqrt((resid ** 2).sum(0) / np.maximum(cnt - 1, 1))
    return mu, np.maximum(sd, 1e-6)
