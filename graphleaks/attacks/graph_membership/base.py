"""Membership inference over whole graphs: the attack base, the adversary's view, the harness.

Each graph is one record (graph classification; privacy unit ``graph``). An attack scores
candidate graph ids, higher = more likely a member, through :class:`GraphTargetView`, which
grants only what the attack's threat model allows and never the membership itself: the
view holds the target, whose member ids only the harness (:func:`run_graph_attack`) reads,
to attach the truth to the :class:`~graphleaks.attacks.base.AttackResult` after scoring.
The candidates reach ``_score`` in a seeded random order, so their order carries no truth.

Graph attacks have their own registry (:data:`graph_registry`): they need a graph
classifier, and the node audit's default run over :data:`graphleaks.attacks.registry` must
never pick them up. ``graphleaks list attacks`` shows both, each with its task.
"""

from __future__ import annotations

import dataclasses
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Data

from graphleaks._plugin import Plugin
from graphleaks._registry import Registry
from graphleaks.attacks.base import AttackResult, AttackScores, Challenge
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.models.graph_target import GraphCopies, GraphQueries
from graphleaks.seeding import Rngs, derive_seed
from graphleaks.threat import ALL_OUTPUTS, Output, Task, ThreatModel

graph_registry: Registry[type[GraphAttack]] = Registry("graph attack")

#: Fewest population graphs an attack that trains shadow models needs.
MIN_POPULATION = 10


class GraphReferencePool:
    """Reference classifiers trained on random halves of the candidates, shared in one audit.

    LiRA and RMIA over graphs both train ``k`` copies of the target's architecture on
    paired complementary halves of the candidate graphs (each candidate is IN exactly half
    of them); one pool per audit trains them once for both.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._pool: dict[tuple[int, int, int], tuple[list[nn.Module], np.ndarray]] = {}

    def get(self, view: GraphTargetView, candidates: np.ndarray, k: int,
            epochs: int) -> tuple[list[nn.Module], np.ndarray]:
        """``k`` trained references and ``inside`` (``[k, n]``: reference j trained on
        candidate i), for ``candidates`` in their given order."""
        from graphleaks.attacks.lira_mia import _paired_halves

        ids = np.sort(np.asarray(candidates, dtype=np.int64))
        # keyed by the candidate *set*: each attack sees its own order, the pool is shared
        key = (hash(ids.tobytes()), int(k), int(epochs))
        if key not in self._pool:
            copies = view.copies()
            graphs = view.graphs(ids)
            labels = view.true_labels(ids)
            rng = np.random.default_rng(derive_seed(self.seed, "halves", k))
            halves = _paired_halves(len(ids), k, rng)
            inside = np.zeros((k, len(ids)), dtype=bool)
            models = []
            for j, half in enumerate(halves):
                inside[j, half] = True
                train = [_with_label(graphs[i], int(labels[i])) for i in half]
                models.append(copies.train(train, epochs=epochs,
                                           seed=derive_seed(self.seed, "reference", k, j)))
            self._pool[key] = (models, inside)
        models, inside = self._pool[key]
        return models, inside[:, np.searchsorted(ids, candidates)]


def _with_label(g: Data, y: int) -> Data:
    out = Data(x=g.x, edge_index=g.edge_index, y=torch.tensor([y]), num_nodes=g.num_nodes)
    return out


class GraphTargetView:
    """What a graph attack may touch of a graph target, as its threat model allows.

    The target is a :class:`~graphleaks.models.graph_target.GraphTarget` (a model) or a
    scores-only target (:class:`graphleaks.audit.graph_audit.GraphScoresTarget`).

    Args:
        target: The graph classifier under audit.
        threat_model: The attack's threat model.
        exposed: What the deployment exposes at all.
        attack: Name used in error messages.
        references: The audit's shared reference pool (None: the view makes its own).
    """

    def __init__(self, target: GraphQueries, threat_model: ThreatModel, *,
                 exposed: frozenset[Output] = ALL_OUTPUTS, attack: str = "attack",
                 references: GraphReferencePool | None = None, seed: int = 0) -> None:
        self._target = target
        self.threat_model = threat_model
        self.outputs = frozenset(threat_model.outputs) & frozenset(exposed)
        self._attack = attack
        self.references = references or GraphReferencePool(derive_seed(seed, "references"))

    def require(self, *outputs: Output) -> None:
        """Raise :class:`CapabilityError` unless every output is granted."""
        missing = [o for o in outputs if o not in self.outputs]
        if missing:
            granted = ", ".join(sorted(o.value.upper() for o in self.outputs)) or "nothing"
            raise CapabilityError(f"{self._attack} requires "
                                  f"{', '.join(o.value.upper() for o in missing)}; the threat "
                                  f"model and model allow {{{granted}}}")

    def _knowledge(self, flag: bool, what: str) -> None:
        if not flag:
            raise CapabilityError(f"{self._attack} requires knowledge of {what}, which its "
                                  "threat model does not grant")

    @property
    def num_graphs(self) -> int:
        """Graphs in the audited set (ids are the query interface)."""
        return self._target.num_graphs

    @property
    def num_classes(self) -> int:
        """Output classes."""
        return self._target.num_classes

    def log_posteriors(self, ids: np.ndarray) -> torch.Tensor:
        """Log posterior vectors of graphs ``ids`` (float64)."""
        self.require(Output.POSTERIORS)
        return torch.log_softmax(self._target.logits_of(ids), dim=1)

    def posteriors(self, ids: np.ndarray) -> torch.Tensor:
        """Posterior vectors of graphs ``ids`` (float64)."""
        return self.log_posteriors(ids).exp()

    def logits(self, ids: np.ndarray) -> torch.Tensor:
        """Logits of graphs ``ids`` (only for a model that outputs logits)."""
        self.require(Output.LOGITS)
        return self._target.logits_of(ids)

    def query_labels(self, graphs: Sequence[Data]) -> torch.Tensor:
        """Predicted labels of submitted graphs (a label-only inference API)."""
        self.require(Output.LABELS)
        return self._target.query(graphs).argmax(1)

    def graph_embeddings(self, ids: np.ndarray) -> torch.Tensor:
        """Pooled graph embeddings (white box, a named layer)."""
        self.require(Output.EMBEDDINGS)
        return self._target.embeddings_of(ids)

    def graphs(self, ids: np.ndarray) -> list[Data]:
        """The candidate graphs themselves (features and structure, without labels)."""
        self._knowledge(self.threat_model.feature_knowledge, "the query graphs' features")
        return self._target.graphs_of(ids)

    def true_labels(self, ids: np.ndarray) -> np.ndarray:
        """Class labels of graphs ``ids`` (not their membership)."""
        self._knowledge(self.threat_model.label_knowledge, "the query graphs' class labels")
        return self._target.labels_of(ids)

    def population(self) -> list[Data]:
        """The adversary's auxiliary graphs, with labels, disjoint from every candidate."""
        self._knowledge(self.threat_model.shadow_data != "none", "auxiliary (shadow) graphs")
        pop = self._target.population
        if len(pop) < MIN_POPULATION:
            raise CapabilityError(f"{self._attack} needs an auxiliary population of at least "
                                  f"{MIN_POPULATION} graphs (neither member nor non-member, "
                                  f"or population=); {len(pop)} given")
        return self._target.population_graphs()

    def population_logits(self) -> torch.Tensor:
        """The target's logits on the population graphs (for RMIA's ``z`` samples)."""
        self.require(Output.POSTERIORS)
        self.population()  # the same knowledge check
        return self._target.logits_of(self._target.population)

    def copies(self) -> GraphCopies:
        """How to build and train fresh copies of the target's architecture."""
        self._knowledge(self.threat_model.architecture_knowledge, "the target's architecture")
        return self._target.copies


class GraphAttack(Plugin, ABC):
    """Base class of every graph-membership attack: a subclass implements ``_score`` only.

    Attributes:
        name: Registry name (equals the module stem).
        task: Always :attr:`Task.GRAPH_MEMBERSHIP`.
        requires: Outputs it reads; checked before it runs.
        threat_model: The threat model it is designed for.
        paper: The paper it follows (shown in ``graphleaks list attacks``).
    """

    _registry = graph_registry
    task: ClassVar[Task] = Task.GRAPH_MEMBERSHIP
    requires: ClassVar[frozenset[Output]] = frozenset({Output.POSTERIORS})
    threat_model: ClassVar[ThreatModel] = ThreatModel(label_knowledge=True,
                                                      defense_knowledge=False)
    paper: ClassVar[str] = ""

    def uses_population(self) -> bool:
        """Whether it trains on the adversary's population (skipped without one)."""
        return self.threat_model.shadow_data != "none"

    def score(self, view: GraphTargetView, challenge: Challenge, *, seed: int) -> AttackScores:
        """Validate, check capabilities and score a truth-free challenge.

        Raises:
            InvalidConfigError: If the config is invalid or the task differs.
            CapabilityError: If the view does not grant what the attack requires.
            RuntimeError: If the scores do not match the candidates or are not finite.
        """
        self.validate()
        if challenge.task != self.task:
            raise InvalidConfigError(f"{self.name} solves {self.task.value}, not "
                                     f"{challenge.task.value}")
        view.require(*sorted(self.requires, key=lambda o: o.value))
        out = self._score(view, challenge, Rngs.from_seed(seed, self.name))
        scores = np.asarray(out.values, dtype=np.float64).reshape(-1)
        if scores.shape[0] != len(challenge.candidates):
            raise RuntimeError(f"{self.name} returned {scores.shape[0]} scores for "
                               f"{len(challenge.candidates)} candidates")
        if not np.all(np.isfinite(scores)):
            raise RuntimeError(f"{self.name} returned non-finite scores")
        return dataclasses.replace(out, values=scores)

    @abstractmethod
    def _score(self, view: GraphTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        """Score ``challenge.candidates`` (graph ids); higher = more likely a member."""


def run_graph_attack(attack: GraphAttack, target: GraphQueries, *, seed: int,
                     exposed: frozenset[Output] = ALL_OUTPUTS,
                     references: GraphReferencePool | None = None) -> AttackResult:
    """Score every member and non-member graph and attach the truth after scoring.

    The candidates are the members and non-members in a seeded random order (their order
    carries no truth); the labels are attached to the result only once ``_score`` returned.
    """
    ids = np.concatenate([target.members, target.non_members]).astype(np.int64)
    truth = np.concatenate([np.ones(len(target.members)), np.zeros(len(target.non_members))])
    order = np.random.default_rng(derive_seed(seed, "candidates")).permutation(len(ids))
    ids, truth = ids[order], truth[order]
    view = GraphTargetView(target, attack.threat_model, exposed=exposed, attack=attack.name,
                           references=references, seed=seed)
    challenge = Challenge(task=Task.GRAPH_MEMBERSHIP, candidates=ids)
    start = time.perf_counter()
    out = attack.score(view, challenge, seed=seed)
    runtime = time.perf_counter() - start
    return AttackResult(
        attack=attack.name, task=Task.GRAPH_MEMBERSHIP, scores=out.values, labels=truth,
        candidates=ids, threshold=out.threshold, threat_model=attack.threat_model,
        config=attack.config_record(), seed=seed, runtime_s=runtime, query_graph="graphs",
        compat_flags=attack.compat_flags(), notes=out.notes)


__all__ = ["MIN_POPULATION", "GraphAttack", "GraphReferencePool", "GraphTargetView",
           "graph_registry", "run_graph_attack"]
