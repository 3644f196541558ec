"""Reference models for the likelihood-ratio MIAs (RMIA, BASE, G-BASE).

LiRA, RMIA and BASE all compare the target with reference models of the same architecture
trained on data the adversary controls. This module trains them once, in the two standard
regimes, and evaluates them in the target's query graph (attacks.md §1.7):

* **offline**: references train on random halves of the adversary's population (disjoint
  from the target), so every candidate is OUT of every reference;
* **online**: references train on paired complementary halves of ``population ∪ candidates``,
  so each candidate is IN exactly half of them (which needs the candidates' labels).

Within one audit, offline references come from the run's :class:`ReferencePool`, so RMIA, BASE
and G-BASE share each model; outside an audit every attack trains its own. LiRA keeps its own
offline references: the quick and standard suites cap them at other epochs (15 and 30, not 50),
so no model would be shared there, and its plain references train on the clean population
graph, not on the served features and query edges restricted to the population.

The offline BASE and G-BASE scale ``a`` can be tuned as the authors' audit does
(``mia_audit.tune_attack_hyperparams`` in ``MarcusLassila/MIA-audit-GNN``, which sets it
whenever the configuration does not): reference 0 plays a simulated target whose members the
adversary knows (half of the population), references 2..K−1 play its references (reference 1,
the complement of 0, is left out as the authors leave it out), and ``a`` is the value of
:data:`SCALE_GRID` with the highest simulated AUC (the authors' objective; they search [0, 1]
with optuna, a grid is the deterministic equivalent).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data
from torch_geometric.utils import subgraph

from graphleaks._executor import LOCAL, Executor
from graphleaks.attacks._shadow import (
    KnownMechanism,
    mechanism_key,
    mechanism_note,
    train_on_nodes,
)
from graphleaks.attacks.base import TargetView
from graphleaks.attacks.lira_mia import _paired_halves
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.seeding import Rngs, derive_seed


@dataclass(frozen=True)
class ReferenceConfig:
    """The reference-model budget shared by RMIA, BASE and G-BASE configs.

    Attributes:
        variant: ``offline`` (population-only references) or ``online``.
        num_references: The reference-model budget (offline works from 1; online needs 2).
        ref_epochs: Cap on the references' training epochs.
    """

    variant: str = field(default="offline", metadata={"choices": ("offline", "online")})
    num_references: int = field(default=2, metadata={"range": (1, 1024)})
    ref_epochs: int = field(default=50, metadata={"range": (1, 100_000)})

    def check(self) -> None:
        """Online references must put every candidate IN and OUT at least once (2 or more).

        Raises:
            InvalidConfigError: Naming ``num_references`` and its valid range.
        """
        if self.variant == "online" and self.num_references < 2:
            owner = type(self).__name__.removesuffix("Config")
            raise InvalidConfigError(
                f"The num_references parameter of {owner} must be in [2, 1024] for the "
                f"online variant. Got {self.num_references!r} instead.")


@dataclass(frozen=True)
class References:
    """Trained reference models and who trained each.

    Attributes:
        models: The reference models (eval mode).
        members: Global node ids each reference trained on.
        population: Global ids of the adversary's population nodes.
        x: Features of the query graph (what references are evaluated with).
        edges: Edges of the query graph.
        labels: Labels the adversary knows (population and candidates), indexed globally.
        training_note: How the references were trained (for the attack's notes).
        shared_note: Set when the references came from the audit's :class:`ReferencePool`.
    """

    models: tuple[nn.Module, ...]
    members: tuple[np.ndarray, ...]
    population: np.ndarray
    x: torch.Tensor
    edges: torch.Tensor
    labels: torch.Tensor
    training_note: str = ""
    shared_note: str | None = None

    @property
    def notes(self) -> tuple[str, ...]:
        """The notes an attack adds about its references (training, and sharing if pooled)."""
        return (self.training_note,) + (() if self.shared_note is None else (self.shared_note,))

    def inside(self, nodes: np.ndarray) -> np.ndarray:
        """``[num_refs, len(nodes)]`` mask: whether each reference trained on each node."""
        return np.stack([np.isin(nodes, m) for m in self.members])

    @torch.no_grad()
    def log_true_class(self, nodes: np.ndarray) -> np.ndarray:
        """``[num_refs, len(nodes)]`` log posterior of each node's label under each reference."""
        idx = torch.as_tensor(nodes, dtype=torch.long)
        y = self.labels[idx].view(-1, 1)
        out = [torch.log_softmax(m(self.x, self.edges)[idx].double(), 1).gather(1, y).view(-1)
               for m in self.models]
        return torch.stack(out).numpy()


def train_references(
    target: TargetView, candidates: np.ndarray, candidate_labels: torch.Tensor, *,
    num: int, online: bool, max_epochs: int, rngs: Rngs,
) -> References:
    """Train ``num`` references inductively, each on the subgraph induced by its members.

    Args:
        target: The adversary's view (population, architecture, features, query graph).
        candidates: Global ids of the nodes to be scored.
        candidate_labels: Their labels (the threat model grants them).
        num: Number of references (the attack's reference-model budget).
        online: Whether candidates may be IN references (see the module docstring).
        max_epochs: Cap on each reference's training epochs.
        rngs: The attack's random streams.
    """
    spec = target.architecture()
    x = target.features()
    edges = target.query_edges()
    population, aux = target.population()
    aux = np.asarray(aux, dtype=np.int64)
    labels = torch.zeros(target.num_nodes, dtype=torch.long)
    labels[torch.as_tensor(aux)] = population.y
    labels[torch.as_tensor(candidates, dtype=torch.long)] = candidate_labels
    universe = np.unique(np.concatenate([aux, candidates])) if online else aux
    # Offline references train through the target's defense (same mechanism and ε, their own
    # noise) on the population's clean data, which the defense privatises itself. Online
    # references also train on candidates, whose clean data the adversary does not have:
    # they stay defense-unaware, as LiRA's online references do.
    mechanism = None if online else target.mechanism()
    name = getattr(population, "name", None) if "name" in population else None
    sources = _Sources(population, aux, x, edges, labels, spec, target.num_classes, mechanism,
                       name, max_epochs, target.num_nodes)
    note = mechanism_note(mechanism, "reference models")
    pool = target.references
    if pool is not None and not online:
        # offline references depend on nothing of the candidates: the audit's pool trains
        # each once for every attack (online ones train on candidates and are never pooled)
        models, members = pool.get(sources, num)
        return References(models=models, members=members, population=aux, x=x, edges=edges,
                          labels=labels, training_note=note, shared_note=SHARED_NOTE)
    halves = _paired_halves(len(universe), num, rngs.child("references").numpy)
    # in an audit its executor trains them (here or on a Ray cluster), seeds as drawn here
    executor = LOCAL if pool is None else pool.executor
    trained = executor.map(_train_reference, [
        (universe[local], local, derive_seed(rngs.seed, "reference", i))
        for i, local in enumerate(halves)], shared=sources)
    return References(models=tuple(trained), members=tuple(universe[h] for h in halves),
                      population=aux, x=x, edges=edges, labels=labels, training_note=note)


def _train_reference(sources: _Sources, item: tuple[np.ndarray, np.ndarray, int]) -> nn.Module:
    """One reference of an :meth:`Executor.map` (module level, so Ray pickles it by name)."""
    nodes, local, seed = item
    return sources.train(nodes, local, seed)


@dataclass(frozen=True)
class _Sources:
    """Everything one offline or online reference is trained from, but its members and seed."""

    population: Data
    aux: np.ndarray
    x: torch.Tensor
    edges: torch.Tensor
    labels: torch.Tensor
    spec: ArchitectureSpec
    num_classes: int
    mechanism: KnownMechanism | None
    name: str | None
    max_epochs: int
    num_nodes: int

    def train(self, nodes: np.ndarray, local: np.ndarray, seed: int) -> nn.Module:
        """A reference on global ``nodes`` (``local``: their positions in the universe)."""
        if self.mechanism is not None:
            pidx = torch.as_tensor(local, dtype=torch.long)  # offline: universe is the population
            ei, _ = subgraph(pidx, self.population.edge_index, relabel_nodes=True,
                             num_nodes=self.population.num_nodes)
            return train_on_nodes(self.population.x[pidx], ei, self.population.y[pidx],
                                  np.arange(len(nodes)), self.spec, self.num_classes,
                                  max_epochs=self.max_epochs, seed=seed,
                                  mechanism=self.mechanism, name=self.name)
        idx = torch.as_tensor(nodes, dtype=torch.long)
        # Each reference sees only its members' induced subgraph, as the inductive target does.
        ei, _ = subgraph(idx, self.edges, relabel_nodes=True, num_nodes=self.num_nodes)
        return train_on_nodes(self.x[idx], ei, self.labels[idx], np.arange(len(nodes)),
                              self.spec, self.num_classes, max_epochs=self.max_epochs,
                              seed=seed)

    def key(self) -> tuple[Any, ...]:
        """Everything that determines an offline reference but its pair index."""
        from graphleaks.data.graph import fingerprint

        h = hashlib.sha256()
        # the aux ids, the query graph's features and edges the references train in
        for arr in (self.aux, self.x.detach().contiguous().numpy(),
                    self.edges.detach().contiguous().numpy(),
                    self.labels[torch.as_tensor(self.aux)].numpy()):
            h.update(f"{arr.dtype}:{arr.shape}".encode())
            h.update(np.ascontiguousarray(arr).tobytes())
        return (fingerprint(self.population), self.population.num_nodes, self.name,
                h.hexdigest()[:16], mechanism_key(self.mechanism),
                repr(self.spec), self.num_classes, self.max_epochs)


SHARED_NOTE = ("offline reference models shared within the audit: pair j's complementary "
               "halves and seeds come from the audit's reference stream, each model trained "
               "once for every attack with the same reference configuration")


class ReferencePool:
    """Offline reference models shared by the attacks of one audit run (owned by the run).

    RMIA, BASE and G-BASE train offline references with :func:`train_references` on halves
    of the same population; each used to draw its halves and seeds from its own attack seed,
    so one audit trained the same kind of model once per attack. In a pool, pair ``j``'s two
    complementary halves come from ``derive_seed(pool seed, "pair", j)`` and reference ``i``
    (half ``i % 2`` of pair ``i // 2``) trains on seed ``derive_seed(pool seed, "reference",
    i)``, once per key of everything that determines it (see :meth:`_Sources.key`). An attack
    with ``num_references = 2k`` uses pairs ``0..k-1``; an odd budget ``2k + 1`` adds pair
    ``k``'s first half only. References 0 and 1 are always complementary halves, as BASE and
    G-BASE's simulated-target tuning requires. Seeds do not depend on which attacks run, so
    an attack's result is the same alone as beside others.

    Args:
        seed: Seed of the pool's reference stream.
        executor: Where the references train (:data:`~graphleaks._executor.LOCAL` by
            default; a Ray executor fans them out over a cluster with the same seeds).
    """

    def __init__(self, seed: int, executor: Executor = LOCAL) -> None:
        self.seed = int(seed)
        self.executor = executor
        self._models: dict[tuple[Any, ...], tuple[nn.Module, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self._models)

    def halves(self, n: int, pair: int) -> tuple[np.ndarray, np.ndarray]:
        """Pair ``pair``'s complementary halves of ``range(n)`` (sorted local positions)."""
        perm = np.random.default_rng(derive_seed(self.seed, "pair", pair)).permutation(n)
        return np.sort(perm[: n // 2]), np.sort(perm[n // 2:])

    def get(self, sources: _Sources, num: int
            ) -> tuple[tuple[nn.Module, ...], tuple[np.ndarray, ...]]:
        """References ``0..num-1`` for this configuration, each trained on first use."""
        base = sources.key()
        missing = [i for i in range(num) if (*base, i) not in self._models]
        items = []
        for i in missing:
            local = self.halves(len(sources.aux), i // 2)[i % 2]
            items.append((sources.aux[local], local, derive_seed(self.seed, "reference", i)))
        trained = self.executor.map(_train_reference, items, shared=sources,
                                    desc="reference models")
        for i, item, model in zip(missing, items, trained, strict=True):
            self._models[(*base, i)] = (model, item[0])
        models, members = [], []
        for i in range(num):
            model, nodes = self._models[(*base, i)]
            models.append(model)
            members.append(nodes)
        return tuple(models), tuple(members)


def target_log_true_class(target: TargetView, nodes: np.ndarray,
                          labels: torch.Tensor) -> np.ndarray:
    """Log posterior of each node's label under the target (in its query graph)."""
    post = target.posteriors(nodes).double()
    return torch.log(post.gather(1, labels.view(-1, 1).long()).view(-1).clamp_min(1e-300)).numpy()


def log_mean_exp(a: np.ndarray, axis: int = 0) -> np.ndarray:
    """``log(mean(exp(a)))`` along ``axis``, stably."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.squeeze(m, axis) + np.log(np.mean(np.exp(a - m), axis=axis))


SCALE_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(21))
"""Values of the offline scale ``a`` tried when tuning (the authors search [0, 1])."""

SIM_TARGET, SIM_COMPLEMENT = 0, 1
"""The reference playing the simulated target, and its complementary half (left out)."""


def masked_log_mean_exp(a: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``log mean exp`` over the rows where ``mask`` (``-inf`` where a column has none)."""
    masked = np.where(mask, a, -np.inf)
    m = np.max(masked, axis=0)
    m = np.where(np.isfinite(m), m, 0.0)
    count = mask.sum(0)
    # A column with no reference would be log 0 − log 0 (NaN): it is -inf, as documented.
    with np.errstate(divide="ignore"):
        total = np.log(np.sum(np.exp(masked - m), axis=0))
    return np.where(count > 0, m + total - np.log(np.maximum(count, 1)), -np.inf)


def simulated_offline(refs: References, nodes: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Membership of ``nodes`` in the simulated target, and which references may score them.

    Returns:
        ``members`` (whether reference 0 trained on each node) and ``out`` (``[K−2, n]``:
        whether each of references 2..K−1 did *not*, the offline references of that node).
    """
    inside = refs.inside(nodes)
    return inside[SIM_TARGET], ~inside[SIM_COMPLEMENT + 1:]


def tune_scale(score_at: Callable[[float], np.ndarray], members: np.ndarray,
               grid: tuple[float, ...] = SCALE_GRID) -> tuple[float, float]:
    """The ``a`` of ``grid`` whose simulated scores have the highest AUC (the first on ties).

    Args:
        score_at: Simulated-target scores for a given ``a``.
        members: The simulated truth (1 = member of the simulated target).
        grid: Candidate values.

    Returns:
        The chosen ``a`` and its simulated AUC.
    """
    from graphleaks.metrics import auc

    best, best_auc = grid[0], -1.0
    for a in grid:
        value = auc(score_at(a), members)
        if value > best_auc:
            best, best_auc = a, value
    return best, best_auc


MIN_TUNING_REFERENCES = 3
"""A simulated target, its complement (left out) and at least one reference of its own."""


def scale_fields(variant: str, num_references: int, tune_scale: bool) -> dict[str, str]:
    """Which of ``offline_scale`` / ``tune_scale`` a BASE or G-BASE mode does not read."""
    if variant == "online":
        return {"offline_scale": "the online variant scales by 1; offline_scale is the "
                                 "offline variant's",
                "tune_scale": "the online variant scales by 1; there is nothing to tune"}
    if num_references < MIN_TUNING_REFERENCES:
        return {"tune_scale": f"tuning needs num_references in [{MIN_TUNING_REFERENCES}, 1024] "
                              "(a simulated target with references of its own)"}
    if tune_scale:
        return {"offline_scale": "tune_scale chooses a on a simulated target"}
    return {}
