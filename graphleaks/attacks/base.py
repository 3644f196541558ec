"""The Attack interface, threat models, the adversary's view of a target, and results.

Scores always mean "higher = more likely positive" (member, edge, attribute value). An attack
never sees the ground truth: the harness builds a :class:`Challenge` whose truth is attached
to the result only after scoring. Metrics are computed from results in
:mod:`graphleaks.metrics`, never here.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import subgraph

from graphleaks._plugin import EmptyConfig as _PluginEmptyConfig
from graphleaks._plugin import Plugin
from graphleaks._registry import Registry
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.seeding import Rngs

# The report vocabulary lives in a torch-free module, so that reading a report never imports
# torch; every name stays importable from here.
from graphleaks.threat import (
    ALL_OUTPUTS,
    GRAPH_VIEWS,
    THREAT_MODEL_CHOICES,  # noqa: F401
    Access,  # noqa: F401
    GraphKnowledge,  # noqa: F401
    GraphView,  # noqa: F401
    Output,
    ShadowData,  # noqa: F401
    Task,
    ThreatModel,
)

if TYPE_CHECKING:  # pragma: no cover
    from graphleaks.attacks._references import ReferencePool
    from graphleaks.attacks._shadow import KnownMechanism, ShadowPool
    from graphleaks.attacks.capabilities import Capability


class TargetView:
    """What an attack may touch of a :class:`TrainedTarget`, as its threat model allows.

    Every accessor raises :class:`CapabilityError` when the threat model does not grant it.

    Args:
        target: The trained target.
        threat_model: The attack's threat model.
        exposed: What the deployment exposes at all (a bundle may expose only labels).
        view: The graph view queries are evaluated in (see :class:`TrainedTarget`).
        attack: Name used in error messages.
        shadows: The audit run's shared shadow models
            (:class:`graphleaks.attacks._shadow.ShadowPool`), or None outside an audit.
        references: The audit run's shared offline reference models
            (:class:`graphleaks.attacks._references.ReferencePool`), or None outside an audit.
    """

    def __init__(
        self,
        target: TrainedTarget,
        threat_model: ThreatModel,
        *,
        exposed: frozenset[Output] = ALL_OUTPUTS,
        view: str = "target",
        attack: str = "attack",
        shadows: ShadowPool | None = None,
        references: ReferencePool | None = None,
    ) -> None:
        if view not in GRAPH_VIEWS:
            raise InvalidConfigError(
                f"unknown query graph {view!r}; choose one of: {', '.join(GRAPH_VIEWS)}"
            )
        self._target = target
        self.threat_model = threat_model
        self.outputs = frozenset(threat_model.outputs) & frozenset(exposed)
        self.view = view
        self._attack = attack
        self.shadows = shadows
        self.references = references

    def require(self, *outputs: Output) -> None:
        """Raise :class:`CapabilityError` unless every output is granted."""
        missing = [o for o in outputs if o not in self.outputs]
        if missing:
            granted = ", ".join(sorted(o.value.upper() for o in self.outputs)) or "nothing"
            raise CapabilityError(
                f"{self._attack} requires {', '.join(o.value.upper() for o in missing)}; the "
                f"threat model and bundle allow {{{granted}}}"
            )

    def _knowledge(self, flag: bool, what: str) -> None:
        if not flag:
            raise CapabilityError(f"{self._attack} requires knowledge of {what}, which its "
                                  "threat model does not grant")

    @property
    def num_nodes(self) -> int:
        """Number of nodes of the target's graph (public: node ids are the query interface)."""
        return int(self._target.graph.num_nodes)

    @property
    def num_classes(self) -> int:
        """Number of output classes (visible in any posterior vector)."""
        return self._target.num_classes

    def posteriors(self, nodes: np.ndarray) -> torch.Tensor:
        """Posterior vectors of ``nodes`` in the query graph."""
        self.require(Output.POSTERIORS)
        return self._target.posteriors(nodes, view=self.view)

    def logits(self, nodes: np.ndarray) -> torch.Tensor:
        """Logits of ``nodes`` in the query graph."""
        self.require(Output.LOGITS)
        return self._target.logits(nodes, view=self.view)

    def predicted_labels(self, nodes: np.ndarray) -> torch.Tensor:
        """Hard labels of ``nodes`` (the weakest black-box output)."""
        if not self.outputs & {Output.LABELS, Output.POSTERIORS, Output.LOGITS}:
            self.require(Output.LABELS)
        return self._target.logits(nodes, view=self.view).argmax(1)

    def embeddings(self, nodes: np.ndarray, *, layer: int = 0) -> torch.Tensor:
        """Intermediate embeddings (white box)."""
        self.require(Output.EMBEDDINGS)
        return self._target.embeddings(nodes, view=self.view, layer=layer)

    def query(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Logits for arbitrary features on an arbitrary graph (an inference API)."""
        self.require(Output.FEATURE_QUERIES)
        return self._target.query(x, edge_index)[-1]

    def query_labels(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Hard labels for submitted features and graph (a label-only inference API).

        Only the argmax leaves the API, so LABELS suffices (label-only attacks).
        """
        self.require(Output.LABELS)
        return self._target.query(x, edge_index)[-1].argmax(1)

    def query_features(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of every node when the inference API is sent features ``x``.

        The API evaluates them on the graph it serves (the query graph), which the adversary
        does not see: this is LinkTeller's threat model.
        """
        self.require(Output.FEATURE_QUERIES)
        return self._target.query(x, self._target.edges(self.view))[-1]

    def query_features_rows(
        self,
        x: torch.Tensor,
        rows: np.ndarray,
        *,
        scale_node: int | None = None,
        scale: float = 1.0,
        local: bool = True,
    ) -> torch.Tensor:
        """One API query: logits at ``rows`` for features ``x`` with one row scaled.

        The same answer as ``query_features`` with ``x[scale_node] *= scale`` (float64), for
        LinkTeller's one query per node. The harness, which serves the graph, may compute it
        by an exact local update (``local``); the adversary learns only the answer.
        """
        self.require(Output.FEATURE_QUERIES)
        return self._target.feature_query_rows(x, rows, view=self.view, scale_node=scale_node,
                                               scale=scale, local=local)

    def parameters(self) -> torch.nn.Module:
        """The model itself (white box)."""
        self.require(Output.PARAMETERS)
        return self._target.model

    def true_labels(self, nodes: np.ndarray) -> torch.Tensor:
        """True labels of the query nodes, if the adversary knows them."""
        self._knowledge(self.threat_model.label_knowledge, "the query nodes' labels")
        return self._target.graph.y[torch.as_tensor(nodes, dtype=torch.long)]

    def features(self, nodes: np.ndarray | None = None) -> torch.Tensor:
        """Node features, if the adversary knows them."""
        self._knowledge(self.threat_model.feature_knowledge, "node features")
        x = self._target.served_features()
        return x if nodes is None else x[torch.as_tensor(nodes, dtype=torch.long)]

    def query_edges(self) -> torch.Tensor:
        """Edges of the query graph, if the adversary knows the graph."""
        self._knowledge(self.threat_model.graph_knowledge == "full", "the full graph")
        return self._target.edges(self.view)

    def architecture(self) -> ArchitectureSpec:
        """The target's architecture and training hyperparameters."""
        self._knowledge(self.threat_model.architecture_knowledge, "the target's architecture")
        return self._target.spec

    def mechanism(self) -> KnownMechanism | None:
        """The target's defense as the adversary knows it, or None.

        None for an undefended target or when the threat model is defense-unaware
        (``defense_knowledge=False``).
        """
        from graphleaks.attacks._shadow import KnownMechanism

        if not self.threat_model.defense_knowledge:
            return None
        return KnownMechanism.of(self._target)

    def population(self) -> tuple[Data, np.ndarray]:
        """The adversary's auxiliary graph: nodes disjoint from all the target used.

        The graph carries the dataset name of the target's graph (``name``) and, when the
        threat model grants defense knowledge, the target's mechanism (``mechanism``), so
        :func:`graphleaks.attacks._shadow.train_shadow` trains shadows through the defense.

        Returns:
            The subgraph induced by the auxiliary nodes (relabelled ``0..m-1``, with features
            and labels) and the original ids of its nodes.
        """
        self._knowledge(self.threat_model.shadow_data != "none", "auxiliary (shadow) data")
        aux = np.asarray(self._target.split.aux)
        g = self._target.graph
        idx = torch.as_tensor(aux, dtype=torch.long)
        ei, _ = subgraph(idx, g.edge_index, relabel_nodes=True, num_nodes=g.num_nodes)
        pop = Data(x=g.x[idx], edge_index=ei, y=g.y[idx], num_nodes=len(aux))
        name = getattr(g, "name", None)
        if isinstance(name, str):
            pop.name = name
        pop.mechanism = self.mechanism()
        return pop, aux


@dataclass(frozen=True)
class Challenge:
    """What must be scored, without the truth: it never holds the labels it is scored against.

    The harness (:func:`graphleaks.attacks.harness.sample_challenge`) draws it per task from
    the attack's :class:`ChallengeSpec`, keeps the truth, and attaches it to the
    :class:`AttackResult` only after ``_score`` has returned.

    Attributes:
        task: The inference task.
        candidates: Node ids (``[n]``) or node pairs (``[n, 2]``) to score.
        hints: Side knowledge the threat model grants, e.g. a few known members, known edges,
            the attribute values of the known nodes.
        notes: How the challenge was drawn, when the report should say so.
    """

    task: Task
    candidates: np.ndarray
    hints: dict[str, np.ndarray] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


# ----------------------------------------------------------------- challenge specifications
# What an attack declares about the challenge it needs: sizes and which hints, never code
# that touches the truth. The harness owns one sampler per spec type (attacks/harness.py).


@dataclass(frozen=True)
class MembershipSpec:
    """Members (training nodes) against held-out non-members.

    Attributes:
        balanced: Subsample the larger side so both sides have the same size.
        max_per_class: Cap on each side's size (after balancing).
        n_known: None: no hints. An int: that many members and non-members are drawn first
            and given as hints ``known_members``/``known_nonmembers`` (never scored), and the
            rest is balanced.
    """

    task: ClassVar[Task] = Task.MEMBERSHIP
    balanced: bool = True
    max_per_class: int | None = None
    n_known: int | None = None


@dataclass(frozen=True)
class HeldOutPairsSpec:
    """He et al.'s pairs: private edges and as many non-edges; a known head, a scored tail.

    Attributes:
        eval_fraction: Share of the pairs scored (the tail).
        known_fraction: Share of the pairs given as hints ``known_pairs``/``known_labels``
            (the head; capped so it never overlaps the tail).
        max_eval_pairs: Cap on scored positives (and as many negatives).
        known_pairs: Whether the head is given at all (needs partial graph knowledge).
    """

    task: ClassVar[Task] = Task.LINK
    eval_fraction: float = 0.1
    known_fraction: float = 0.0
    max_eval_pairs: int | None = None
    known_pairs: bool = False


@dataclass(frozen=True)
class KnownEdgesSpec:
    """A share of the private edges as the hint ``known_edges``; the rest + non-edges scored.

    Attributes:
        known_fraction: Share of the edges given as hints (at least 2).
        max_eval_pairs: Cap on scored positives (and as many negatives).
    """

    task: ClassVar[Task] = Task.LINK
    known_fraction: float = 0.3
    max_eval_pairs: int | None = None


@dataclass(frozen=True)
class NodePairsSpec:
    """All pairs among a node sample (LinkTeller's protocol).

    Attributes:
        n_nodes: Nodes sampled.
        sample_type: ``uniform``, ``low_degree`` or ``high_degree`` (degree in the private
            graph, as the original protocol samples).
        degree_low: Low end of the degree band for the degree-restricted samples.
        degree_high: High end of that band.
        sampler: ``random`` (the original: ``n_nodes`` uniform nodes of the band),
            ``edge_seeded`` (the endpoints of random private edges inside the band, then
            uniform nodes of the band) or ``auto`` (``random`` when the random sample is
            expected to hold at least
            :data:`~graphleaks.attacks._pairs.AUTO_MIN_EXPECTED_POSITIVES` edges, else
            ``edge_seeded``), after growing the uniform sample up to
            :data:`~graphleaks.attacks._pairs.AUTO_MAX_GROWTH` times (within ``max_pairs``)
            to reach that expectation; an unlucky uniform draw with fewer than the verdict's
            grading minimum of edges is redrawn edge-seeded. The challenge's notes say which
            ran, with its counts.
        seed_share: Share of an edge-seeded sample drawn as seed-edge endpoints
            (``round(seed_share · n_nodes / 2)`` edges, at least 1; with ``auto`` at least
            the grading minimum).
        max_pairs: Most candidate pairs a grown sample may hold (None: no limit).
    """

    task: ClassVar[Task] = Task.LINK
    n_nodes: int = 100
    sample_type: str = "uniform"
    degree_low: int = 1
    degree_high: int = 1_000_000
    sampler: str = "random"
    seed_share: float = 0.5
    max_pairs: int | None = None


@dataclass(frozen=True)
class SubgraphPairsSpec:
    """All pairs inside BFS subgraphs of the private graph (TIA's protocol); hint ``subgraph``.

    Attributes:
        n_subgraphs: Subgraphs requested.
        subgraph_size: Nodes per subgraph.
        min_size: Smallest subgraph kept.
    """

    task: ClassVar[Task] = Task.LINK
    n_subgraphs: int = 1
    subgraph_size: int = 50
    min_size: int = 10


@dataclass(frozen=True)
class EmbeddingRelease:
    """How the data holder publishes node embeddings (DeepWalk/node2vec on its graph).

    ``max_walk_tokens`` (None: no budget) caps the skip-gram corpus, ``num_nodes ·
    walks_per_node · walk_length`` tokens: see :func:`walk_budget`.
    """

    embedder: str = "deepwalk"
    dimensions: int = 64
    walk_length: int = 40
    walks_per_node: int = 10
    window: int = 5
    epochs: int = 1
    p: float = 1.0
    q: float = 1.0
    max_walk_tokens: int | None = None


def walk_budget(num_nodes: int, walks_per_node: int, walk_length: int,
                max_tokens: int | None, *, window: int) -> tuple[int, int]:
    """``(walks_per_node, walk_length)`` that fit a skip-gram corpus of ``max_tokens`` tokens.

    Walks per node are lowered first (down to one walk from every node, so every node keeps
    a vector), then the walk length, down to ``2 · window`` (below that the skip-gram window
    no longer fits in a walk). A corpus that fits is returned unchanged, and so is the floor
    itself when even it exceeds the budget.
    """
    if max_tokens is None or num_nodes * walks_per_node * walk_length <= max_tokens:
        return walks_per_node, walk_length
    walks = max(1, max_tokens // (num_nodes * walk_length))
    if walks > 1:
        return walks, walk_length
    floor = min(walk_length, 2 * window)
    return 1, max(floor, min(walk_length, max_tokens // num_nodes))


@dataclass(frozen=True, eq=False)
class AttributeSpec:
    """Known nodes with their attribute as hints; all other nodes scored.

    Attributes:
        aux_frac: Share of nodes whose attribute the adversary knows.
        attribute: Attribute values ``[num_nodes]`` (the graph's ``y`` when None).
        release: The data holder's embedding release to simulate (hint
            ``released_embeddings``), or None.
        released: Released embeddings ``[num_nodes, d]`` given instead of simulating them.
    """

    task: ClassVar[Task] = Task.ATTRIBUTE
    aux_frac: float = 0.3
    attribute: np.ndarray | None = None
    release: EmbeddingRelease | None = None
    released: np.ndarray | None = None


ChallengeSpec = (MembershipSpec | HeldOutPairsSpec | KnownEdgesSpec | NodePairsSpec
                 | SubgraphPairsSpec | AttributeSpec)


@dataclass(frozen=True)
class AttackScores:
    """What ``_score`` returns.

    Attributes:
        values: One score per candidate (or ``repeat`` per candidate, contiguous).
        threshold: The attack's own decision threshold, chosen without the evaluation labels.
        repeat: Scores per candidate (only the original code's bug reproductions use > 1).
        notes: Caveats to show in the report.
    """

    values: np.ndarray
    threshold: float | None = None
    repeat: int = 1
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttackResult:
    """The scores of one attack run, with the truth attached by the harness. Data only.

    Attributes:
        attack: Registry name.
        task: The inference task.
        scores: One float per scored item; higher = more likely positive.
        labels: The truth for each score (0/1 for binary tasks).
        candidates: What was scored.
        threshold: The attack's decision threshold, if it chose one without the labels.
        threat_model: The threat model it ran under.
        config: Its configuration.
        seed: The seed it ran with.
        runtime_s: Wall time of scoring.
        query_graph: The graph view queries were evaluated in.
        compat_flags: Names of compatibility flags that were on.
        notes: Caveats.
        train_labels: For attribute inference, the attribute values the adversary trained on
            (they define the majority-class baseline).
    """

    attack: str
    task: Task
    scores: np.ndarray
    labels: np.ndarray
    candidates: np.ndarray
    threshold: float | None
    threat_model: ThreatModel
    config: dict[str, Any]
    seed: int
    runtime_s: float
    query_graph: str = "target"
    compat_flags: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    train_labels: np.ndarray | None = None


registry: Registry[type[Attack]] = Registry("attack")

#: Kept importable from here; the one definition lives in :mod:`graphleaks._plugin`.
EmptyConfig = _PluginEmptyConfig


class Attack(Plugin, ABC):
    """Base class of every attack: a subclass implements ``_score`` only.

    Registration, ``Config``, keyword overrides, validation and the report's config record
    come from :class:`graphleaks._plugin.Plugin`, shared with defenses.

    Attributes:
        name: Registry name (equals the module stem).
        task: What it infers.
        requires: Outputs it reads; checked before it runs.
        threat_model: The threat model it is designed for.
        Config: Frozen dataclass of parameters, constraints in field metadata.
    """

    _registry = registry
    task: ClassVar[Task]
    requires: ClassVar[frozenset[Output]] = frozenset()
    threat_model: ClassVar[ThreatModel] = ThreatModel()
    def needs(self) -> frozenset[Capability]:
        """What this attack, as configured, needs from a target (see :mod:`.capabilities`).

        By default the outputs it ``requires`` plus the knowledge its threat model grants;
        an attack whose configuration can do without some of it overrides this.
        """
        from graphleaks.attacks.capabilities import derived_needs

        return derived_needs(self.requires, self.threat_model)

    def score(self, target: TargetView, challenge: Challenge, *, seed: int) -> AttackScores:
        """Validate, check capabilities and score the candidates of a truth-free challenge.

        The harness (:func:`graphleaks.attacks.harness.run_attack`) times this call and
        attaches the truth it kept to the :class:`AttackResult`.

        Raises:
            InvalidConfigError: If the config is invalid or the task differs.
            CapabilityError: If the view does not grant what the attack requires.
            RuntimeError: If the scores do not match the candidates or are not finite.
        """
        self.validate()
        if challenge.task != self.task:
            raise InvalidConfigError(f"{self.name} solves {self.task.value}, not "
                                     f"{challenge.task.value}")
        target.require(*sorted(self.requires, key=lambda o: o.value))
        out = self._score(target, challenge, Rngs.from_seed(seed, self.name))
        if not isinstance(out, AttackScores):
            out = AttackScores(np.asarray(out))
        scores = np.asarray(out.values, dtype=np.float64).reshape(-1)
        n = len(challenge.candidates)
        if scores.shape[0] != n * out.repeat:
            raise RuntimeError(f"{self.name} returned {scores.shape[0]} scores for {n} candidates")
        if not np.all(np.isfinite(scores)):
            raise RuntimeError(f"{self.name} returned non-finite scores")
        return dataclasses.replace(out, values=scores)

    def check_scale(self, num_nodes: int, num_edges: int) -> None:
        """Refuse, before any work, a graph too large for a step that cannot be linear.

        Attacks whose cost is quadratic in a configured size (LinkTeller's pairs) override
        this and raise :class:`InvalidConfigError` naming the limit and an estimate. The
        default accepts every size.

        Args:
            num_nodes: Nodes of the graph to be audited.
            num_edges: Directed edges of that graph.
        """
        del num_nodes, num_edges  # every size is accepted unless overridden

    def feature_queries(self, num_nodes: int) -> int:
        """Inference-API queries with chosen features this attack makes on a graph of
        ``num_nodes`` nodes (0 by default): with the target's measured cost per query, the
        audit estimates the attack's cost before it runs."""
        del num_nodes
        return 0

    def query_cost(self, num_nodes: int, num_edges: int) -> int:
        """Inference-API queries this attack makes on a graph of that size, run alone.

        The unit is one request of ``docs/endpoint-protocol.md``: one read of the served
        graph's outputs (every node at once), one feature query, or one submitted graph. An
        audit against an endpoint plans its budget with it before the first query; queries
        the audit answers from outputs it already holds are not made, so the plan is an upper
        bound. By default: one read if the attack reads outputs, plus its
        :meth:`feature_queries`; attacks that submit graphs override it.

        Args:
            num_nodes: Nodes of the served graph.
            num_edges: Its directed edges.
        """
        del num_edges
        reads = {Output.LABELS, Output.POSTERIORS, Output.LOGITS, Output.EMBEDDINGS}
        return int(bool(self.requires & reads)) + self.feature_queries(num_nodes)

    def local_queries(self) -> bool:
        """Whether its feature queries use the exact local update where the model allows."""
        return True

    def with_query_budget(self, max_queries: int) -> Attack | None:
        """A copy making at most ``max_queries`` feature queries, or None if it cannot
        shrink that far (the default: an attack without a query budget)."""
        del max_queries
        return None

    def challenge_spec(self) -> ChallengeSpec:
        """What challenge this attack is scored on; the harness samples it and keeps the truth.

        Membership attacks get members vs held-out non-members, balanced, by default. Attacks
        of other tasks override this with their protocol's spec (sizes from their config).
        """
        if self.task != Task.MEMBERSHIP:
            raise NotImplementedError(f"{self.name} must define challenge_spec")
        return MembershipSpec()

    @abstractmethod
    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        """Score ``challenge.candidates``; higher = more likely positive.

        ``challenge`` holds no truth: only the candidates, the hints the threat model grants
        and notes.
        """
