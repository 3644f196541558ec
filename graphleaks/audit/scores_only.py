"""Scores-only audits: audit a model that cannot leave its environment from its exported scores.

The owner exports per-node posteriors (or logits, or log-probabilities) and true labels of
member and non-member nodes (the graph counterpart of TF Privacy's ``AttackInputData``).
:class:`ScoresTarget` serves exactly those rows through :class:`ScoresView`, a
:class:`~graphleaks.attacks.base.TargetView` whose other accessors (features, graph, queries,
embeddings, auxiliary data, architecture) raise :class:`CapabilityError`. Every registered
attack whose declared needs these scores meet runs unchanged, through the same challenge
sampling, metrics (:func:`graphleaks.audit.runner.evaluate_result`) and report files as an
audit of a graphleaks-trained target; the others are listed with what they miss.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from graphleaks._progress import progress
from graphleaks.attacks.base import Attack, Output, TargetView, ThreatModel
from graphleaks.attacks.capabilities import (
    Capability,
    narrowed_threat_model,
    partition,
    require_all,
)
from graphleaks.attacks.harness import sample_challenge, score_labelled
from graphleaks.audit.runner import (
    AuditRun,
    evaluate_result,
    scored_or_skipped,
    trivial_baseline,
    with_slices,
)
from graphleaks.audit.suite import DEFAULT_SUITE, Suite, build_attack, get_suite
from graphleaks.data.node_sets import check_membership
from graphleaks.data.score_files import NodeScores, check_scores
from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import CapabilityError, DataError
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.report.report import REPORT_SCHEMA_VERSION, AttackReport, AuditReport, TargetSummary
from graphleaks.report.scores import CandidateTable, most_exposed
from graphleaks.seeding import derive_seed
from graphleaks.versions import library_versions

#: How a scores-only target is named in skip reasons and refusals.
TARGET_KIND = "a scores-only target"

#: Attack settings that make an attack runnable from scores alone, applied unless the user
#: sets the field: the confidence MIA's shadow calibration needs auxiliary data and the
#: architecture, so it takes its label-free median threshold instead (stated in its notes).
SCORES_ONLY_DEFAULTS: dict[str, dict[str, Any]] = {"confidence_mia": {"threshold": "median"}}


@dataclass(frozen=True)
class ScoresTarget:
    """Exported scores of a model, with the membership split they were exported for.

    Attributes:
        scores: The validated scores, labels and node ids.
        split: Members as ``train``, non-members as ``test`` (``val`` and ``aux`` empty),
            over node ids ``0..max id``.
    """

    scores: NodeScores
    split: MembershipSplit

    @property
    def num_nodes(self) -> int:
        """One more than the largest scored node id (ids index the user's graph)."""
        return int(self.scores.node_ids.max()) + 1

    @property
    def num_classes(self) -> int:
        """Number of score columns."""
        return self.scores.num_classes

    def capabilities(self) -> frozenset[Capability]:
        """What the export offers: its output kind, posteriors, predicted and true labels."""
        caps = {Capability.POSTERIORS, Capability.LABELS, Capability.TRUE_LABELS}
        if self.scores.output != "probabilities":
            # log-probabilities are logits normalised by a per-row constant: softmax is equal
            caps.add(Capability.LOGITS)
        return frozenset(caps)

    def outputs(self) -> frozenset[Output]:
        """The :class:`Output` part of :meth:`capabilities`."""
        values = {o.value for o in Output}
        return frozenset(Output(c.value) for c in self.capabilities() if c.value in values)

    def rows(self, nodes: np.ndarray) -> np.ndarray:
        """Row of each node id in the score matrix.

        Raises:
            CapabilityError: If a node has no exported score.
        """
        ids = self.scores.node_ids
        order = np.argsort(ids, kind="stable")
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        pos = np.searchsorted(ids, nodes, sorter=order)
        pos = np.clip(pos, 0, len(ids) - 1)
        rows = order[pos]
        missing = ids[rows] != nodes
        if missing.any():
            # the node is not quoted: ids come from the user's files
            raise CapabilityError(f"{int(missing.sum())} requested node(s) have no exported "
                                  "score; a scores-only target answers only for the exported "
                                  "nodes")
        return rows

    def logits(self, nodes: np.ndarray) -> torch.Tensor:
        """The exported logits (or log-probabilities) of ``nodes``."""
        if self.scores.output == "probabilities":
            raise CapabilityError("the export holds probabilities, not logits")
        return torch.from_numpy(np.ascontiguousarray(self.scores.scores[self.rows(nodes)]))

    def posteriors(self, nodes: np.ndarray) -> torch.Tensor:
        """Posteriors of ``nodes``: as exported, or the softmax of exported logits."""
        if self.scores.output == "probabilities":
            return torch.from_numpy(np.ascontiguousarray(self.scores.scores[self.rows(nodes)]))
        # the same softmax a graphleaks target applies to its logits
        return torch.softmax(self.logits(nodes), dim=1)

    def true_labels(self, nodes: np.ndarray) -> torch.Tensor:
        """The exported true labels of ``nodes``."""
        return torch.from_numpy(self.scores.labels[self.rows(nodes)])

    def fingerprint(self) -> str:
        """SHA-256 (16 hex digits) of the ids, labels, scores and split."""
        h = hashlib.sha256()
        for arr in (self.scores.node_ids, self.scores.labels, self.scores.scores,
                    self.split.train, self.split.test):
            h.update(np.ascontiguousarray(arr).tobytes())
        h.update(self.scores.output.encode())
        return h.hexdigest()[:16]


class ScoresView(TargetView):
    """What an attack may touch of a :class:`ScoresTarget`: the exported rows, nothing else.

    Accessors for features, the graph, queries, embeddings, parameters, auxiliary data and
    the architecture raise :class:`CapabilityError` naming what a scores-only target lacks.
    """

    def __init__(self, target: ScoresTarget, threat_model: ThreatModel, *,
                 attack: str = "attack") -> None:
        # TargetView's state, without a TrainedTarget behind it
        self._scores_target = target
        self.threat_model = threat_model
        self.outputs = frozenset(threat_model.outputs) & target.outputs()
        self.view = "target"
        self._attack = attack

    def _lacks(self, what: Capability) -> CapabilityError:
        return CapabilityError(f"{self._attack} needs {what.value.upper()}, which "
                               f"{TARGET_KIND} does not offer (it holds only exported scores)")

    @property
    def num_nodes(self) -> int:  # noqa: D102 - see TargetView
        return self._scores_target.num_nodes

    @property
    def num_classes(self) -> int:  # noqa: D102
        return self._scores_target.num_classes

    def posteriors(self, nodes: np.ndarray) -> torch.Tensor:  # noqa: D102
        self.require(Output.POSTERIORS)
        return self._scores_target.posteriors(nodes)

    def logits(self, nodes: np.ndarray) -> torch.Tensor:  # noqa: D102
        self.require(Output.LOGITS)
        return self._scores_target.logits(nodes)

    def predicted_labels(self, nodes: np.ndarray) -> torch.Tensor:  # noqa: D102
        if not self.outputs & {Output.LABELS, Output.POSTERIORS, Output.LOGITS}:
            self.require(Output.LABELS)
        return self._scores_target.posteriors(nodes).argmax(1)

    def true_labels(self, nodes: np.ndarray) -> torch.Tensor:  # noqa: D102
        self._knowledge(self.threat_model.label_knowledge, "the query nodes' labels")
        return self._scores_target.true_labels(nodes)

    def embeddings(self, nodes: np.ndarray, *, layer: int = 0) -> torch.Tensor:  # noqa: D102
        raise self._lacks(Capability.EMBEDDINGS)

    def query(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:  # noqa: D102
        raise self._lacks(Capability.FEATURE_QUERIES)

    def query_labels(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:  # noqa: D102
        raise self._lacks(Capability.FEATURE_QUERIES)

    def query_features(self, x: torch.Tensor) -> torch.Tensor:  # noqa: D102
        raise self._lacks(Capability.FEATURE_QUERIES)

    def query_features_rows(self, x: torch.Tensor, rows: np.ndarray, **_: Any) -> torch.Tensor:  # noqa: D102
        raise self._lacks(Capability.FEATURE_QUERIES)

    def parameters(self) -> torch.nn.Module:  # noqa: D102
        raise self._lacks(Capability.PARAMETERS)

    def features(self, nodes: np.ndarray | None = None) -> torch.Tensor:  # noqa: D102
        raise self._lacks(Capability.FEATURES)

    def query_edges(self) -> torch.Tensor:  # noqa: D102
        raise self._lacks(Capability.GRAPH)

    def architecture(self) -> Any:  # noqa: D102
        raise self._lacks(Capability.ARCHITECTURE)

    def mechanism(self) -> None:  # noqa: D102 - the target's defense is unknown
        return None

    def population(self) -> Any:  # noqa: D102
        raise self._lacks(Capability.REFERENCE_MODELS)


def _as_ids(nodes: Any, node_scores: NodeScores, what: str) -> np.ndarray:
    """Node ids as the export numbers them: string ids are looked up in its id table."""
    arr = np.asarray(nodes)
    if arr.dtype.kind not in "USO" or arr.size == 0:
        return arr
    table = node_scores.id_table
    if table is None:
        raise DataError(f"{what} ids are strings but {node_scores.source} names its nodes by "
                        "integers; give the integer ids")
    out = [table.get(str(v)) for v in arr.reshape(-1).tolist()]
    if None in out:
        # the position, never the id: messages do not quote what a file holds
        raise DataError(f"{out.count(None)} {what} node(s) have no score row in "
                        f"{node_scores.source} (the first is entry {out.index(None) + 1})")
    return np.asarray(out, dtype=np.int64)


def scores_target(
    node_scores: NodeScores, members: np.ndarray, non_members: np.ndarray | None = None
) -> ScoresTarget:
    """A :class:`ScoresTarget` for validated scores and the member / non-member ids.

    Args:
        node_scores: From :func:`check_scores` or :func:`load_scores`.
        members: Member (training) node ids; each must have a score row.
        non_members: Non-member node ids; default every scored node that is not a member.

    Raises:
        DataError: If the sets are empty, overlap, or name a node without a score row.
    """
    ids = node_scores.node_ids
    m = _as_ids(members, node_scores, "member")
    if non_members is not None:
        non_members = _as_ids(non_members, node_scores, "non-member")
    if m.ndim == 1 and m.dtype.kind == "b":
        raise DataError("members must be node ids, not a boolean mask; pass "
                        "numpy.flatnonzero(mask)")
    if non_members is None:
        nm = np.setdiff1d(ids, m)
    else:
        nm = np.asarray(non_members)
    n = int(ids.max()) + 1
    # types, emptiness, duplicates, overlap; the range check is "has a score row" below
    check_membership(m, nm, 2**62)
    for name, arr in (("member", m), ("non-member", nm)):
        unscored = ~np.isin(arr, ids)
        if unscored.any():
            # the position in the set, never the id: messages do not quote what a file holds
            raise DataError(f"{int(unscored.sum())} {name} node(s) have no score row in "
                            f"{node_scores.source} (the first is entry "
                            f"{int(np.flatnonzero(unscored)[0]) + 1} of the {name} ids); export "
                            f"a score for every {name} or drop them from the {name} set")
    split = MembershipSplit(kind="scores_only", num_nodes=n,
                            train=np.sort(m.astype(np.int64)), val=np.zeros(0, np.int64),
                            test=np.sort(nm.astype(np.int64)), aux=np.zeros(0, np.int64),
                            seed=-1)
    return ScoresTarget(node_scores, split)


def audit_scores(
    scores: np.ndarray | NodeScores,
    labels: np.ndarray | None = None,
    members: np.ndarray | None = None,
    non_members: np.ndarray | None = None,
    *,
    output: str = "probabilities",
    node_ids: np.ndarray | None = None,
    attacks: Sequence[Attack | str] | None = None,
    seed: int = 0,
    n_bootstrap: int | None = None,
    suite: str | Suite = DEFAULT_SUITE,
) -> AuditReport:
    """Audit a model from its exported per-node scores.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> p = rng.dirichlet(np.ones(3), size=40)
        >>> y = p.argmax(1)
        >>> r = audit_scores(p, y, members=np.arange(20), n_bootstrap=50)
        >>> r.attacks[0].attack
        'confidence_mia'

    Args:
        scores: ``[n, C]`` scores (or validated :class:`NodeScores`, then ``labels``,
            ``output`` and ``node_ids`` are taken from it).
        labels: ``[n]`` true labels in ``0..C-1``.
        members: Member node ids (ids as in ``node_ids``).
        non_members: Non-member node ids; default every scored node that is not a member.
        output: ``probabilities``, ``logits`` or ``log_probabilities``.
        node_ids: The node id of each score row (default ``0..n-1``).
        attacks: Attack objects or registry names; default every registered attack whose
            needs the scores meet (the others are listed in ``config["skipped_attacks"]``).
            A named attack whose needs are unmet is refused before any work.
        seed: Root seed of challenges, attacks and bootstrap intervals (the same derivation
            as :func:`graphleaks.audit.runner.run_audit`, so a graphleaks target audited with
            the same seed and split gets the same scores).
        n_bootstrap: Bootstrap replicates per interval (default: the suite's).
        suite: Budgets: ``quick``, ``standard`` or ``thorough``.

    Raises:
        DataError: For invalid scores, labels, ids or member sets.
        CapabilityError: For a named attack the scores cannot serve.
    """
    return audit_scores_run(scores, labels, members, non_members, output=output,
                            node_ids=node_ids, attacks=attacks, seed=seed,
                            n_bootstrap=n_bootstrap, suite=suite).report


def audit_scores_run(
    scores: np.ndarray | NodeScores,
    labels: np.ndarray | None = None,
    members: np.ndarray | None = None,
    non_members: np.ndarray | None = None,
    *,
    output: str = "probabilities",
    node_ids: np.ndarray | None = None,
    attacks: Sequence[Attack | str] | None = None,
    seed: int = 0,
    n_bootstrap: int | None = None,
    suite: str | Suite = DEFAULT_SUITE,
    config: dict[str, Any] | None = None,
    params: dict[str, dict[str, Any]] | None = None,
) -> AuditRun:
    """:func:`audit_scores`, keeping every candidate's score (for ``scores.csv``).

    ``config`` is recorded in the report; ``params`` are per-attack config overrides (the
    CLI's ``--param``), applied on top of the suite and the scores-only defaults.
    """
    if isinstance(scores, NodeScores):
        ns = scores
    else:
        if labels is None:
            raise DataError("audit_scores needs the true labels of the scored nodes")
        ns = check_scores(np.asarray(scores), np.asarray(labels), node_ids=node_ids,
                          output=output, source="scores")
    if members is None:
        raise DataError("audit_scores needs the member node ids (members=...)")
    target = scores_target(ns, np.asarray(members),
                           None if non_members is None else np.asarray(non_members))
    the_suite = get_suite(suite)
    n_boot = the_suite.n_bootstrap if n_bootstrap is None else n_bootstrap
    attack_objs, default = scores_only_attacks(attacks, the_suite, params or {})
    offered = target.capabilities()
    if default:
        attack_objs, skipped = partition(attack_objs, offered, TARGET_KIND)
    else:
        require_all(attack_objs, offered, TARGET_KIND)  # before any work
        skipped = {}
    reports: list[AttackReport] = []
    tables: list[CandidateTable] = []
    for attack in progress(attack_objs, desc="attacks"):
        run_seed = derive_seed(seed, "run", attack.name)  # as audit_with_scores derives it
        challenge = sample_challenge(attack, target,  # type: ignore[arg-type]
                                     seed=derive_seed(run_seed, "challenge"))
        tm = dataclasses.replace(narrowed_threat_model(attack.threat_model, attack.needs()),
                                 defense_knowledge=False)
        view = ScoresView(target, tm, attack=attack.name)
        result = scored_or_skipped(
            attack, functools.partial(score_labelled, attack, view, challenge,
                                      seed=derive_seed(run_seed, "attack", attack.name)),
            default=default, skipped=skipped)
        if result is None:
            continue
        metrics = evaluate_result(result, n_bootstrap=n_boot,
                                  seed=derive_seed(seed, "bootstrap", attack.name),
                                  claimed_delta=0.0, ledger=None)
        exposure: dict[str, Any] = {}
        table = _candidate_table(result, target)
        if table is not None:
            tables.append(table)
            masks = {f"class={c}": np.asarray(table.cls == c)
                     for c in sorted(set(table.cls.tolist()))}
            metrics = with_slices(result, metrics, masks, n_bootstrap=n_boot,
                                  seed=derive_seed(seed, "slices", attack.name))
            exposure["most_exposed"] = most_exposed(table)
        reports.append(AttackReport(
            attack=attack.name, task=result.task.value,
            threat_model=result.threat_model, config=result.config,
            compat_flags=list(result.compat_flags),
            notes=list(result.notes) + ["scores-only audit: the target's exported scores; the "
                                        "graph, features and architecture were not available"],
            query_graph="exported scores", metrics=metrics,
            baseline=trivial_baseline(result.labels, result.train_labels, result.task),
            runtime_s=result.runtime_s, exposure=exposure,
        ))
    cfg = dict(config or {})
    cfg.setdefault("suite", the_suite.name)
    cfg["scores_only"] = {"output": ns.output, "source": ns.source,
                          "capabilities": sorted(c.value for c in offered),
                          "defaults": SCORES_ONLY_DEFAULTS}
    if skipped:
        cfg["skipped_attacks"] = skipped
    report = AuditReport(
        schema_version=REPORT_SCHEMA_VERSION, seed=seed, target=_summary(target),
        ledger=dataclasses.replace(PrivacyLedger.non_private(), notes=(
            "scores-only audit: the target's privacy claim is unknown",)),
        attacks=reports, config=cfg, versions=library_versions(),
    )
    return AuditRun(report, tuple(tables))


def scores_only_attacks(
    attacks: Sequence[Attack | str] | None, suite: Suite,
    params: dict[str, dict[str, Any]],
) -> tuple[list[Attack], bool]:
    """The attacks to try, and whether they are the default (whole-registry) list.

    Names are built with the suite's budgets, then :data:`SCORES_ONLY_DEFAULTS`, then the
    user's ``params``; attack objects are used as given.
    """
    from graphleaks.attacks import registry

    def build(name: str) -> Attack:
        cls = registry.get(name)
        fields = {f.name for f in dataclasses.fields(cls.Config)}
        base = {k: v for k, v in SCORES_ONLY_DEFAULTS.get(cls.name, {}).items() if k in fields}
        return build_attack(cls.name, suite, {**base, **params.get(cls.name, {})})

    if attacks is None:
        return [build(n) for n in registry], True
    return [a if isinstance(a, Attack) else build(a) for a in attacks], False


def _candidate_table(result: Any, target: ScoresTarget) -> CandidateTable | None:
    """Candidates with their class and part; degree is unknown without the graph (-1)."""
    cand = np.asarray(result.candidates)
    if len(result.scores) != len(cand) or cand.ndim != 1:
        return None
    idx = cand.astype(np.int64)
    cls = target.true_labels(idx).numpy().astype(object)
    part = np.where(np.isin(idx, target.split.train), "train", "test").astype(object)
    names = target.scores.names
    table = None
    if names is not None:  # row i is node i: the user's string id of every row
        table = np.asarray(names, dtype=object)
    return CandidateTable(result.attack, result.task.value, idx, result.scores, result.labels,
                          np.full(len(idx), -1, dtype=np.int64), cls, part, names=table)


def _summary(target: ScoresTarget) -> TargetSummary:
    """What was audited: the export, its sizes and the model's accuracy on it."""
    from graphleaks.metrics.multiclass import accuracy

    ns = target.scores
    utility: dict[str, float] = {}
    for part in ("train", "test"):
        nodes = getattr(target.split, part)
        rows = target.rows(nodes)
        utility[f"{part}_accuracy"] = accuracy(ns.labels[rows], ns.scores[rows].argmax(1))
    return TargetSummary(
        architecture={"arch": "unknown (scores only)"}, defense="unknown",
        defense_config={}, dataset={"name": f"{ns.output} exported for {len(ns.node_ids)} nodes "
                                            "(graph not given)",
                                    "kind": "scores_only", "source": ns.source,
                                    "output": ns.output},
        fingerprint=target.fingerprint(), num_nodes=len(ns.node_ids),
        num_edges=0, protocol="scores_only",
        split_sizes={"train": len(target.split.train), "val": 0,
                     "test": len(target.split.test), "aux": 0},
        utility=utility, training={"note": "trained outside graphleaks; graph not available "
                                           "(num_edges 0 means unknown)"},
    )
