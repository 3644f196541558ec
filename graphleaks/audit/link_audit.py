"""Audit a pair scorer (a link predictor, a recommender): what it leaks about its training edges.

``graphleaks.audit_model(model, data, members=edges, non_members=pairs, task="link")`` lands
here (:func:`audit_link_model`). The model maps ``(x, edge_index, pairs)`` to one score per
pair (:mod:`graphleaks.models.pair_scorer`); members are its training edges, non-members
pairs it never trained on (held-out edges and/or non-edges). Every edge-membership attack the
model's exposure allows runs (:mod:`graphleaks.attacks.edge_membership`); the report states
the protocol that decides what the figures mean:

* whether member edges are in the graph the model is served with (measured on the served
  graph, and whether queried pairs are dropped before scoring);
* how non-members were sampled (as the caller states it, or by graphleaks' own split);
* transductive or inductive (measured: whether the non-members' endpoints touch the
  training graph).

Bad input (pairs naming nodes outside the graph, self-loops or duplicates among the members,
member and non-member pairs that overlap, a model that is not a pair scorer) is refused in
one line (:class:`DataError` / :class:`InvalidConfigError`) before any attack runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks._progress import progress
from graphleaks.attacks.base import AttackResult
from graphleaks.attacks.edge_membership import EdgeAttack, edge_registry
from graphleaks.attacks.edge_membership._references import EdgeReferencePool
from graphleaks.attacks.edge_membership.harness import edge_challenge, run_edge_attack
from graphleaks.audit.runner import AuditRun, evaluate_result, trivial_baseline, with_slices
from graphleaks.audit.suite import Suite, get_suite
from graphleaks.data.edge_splits import (
    HELD_OUT_EDGE,
    HELD_OUT_NON_EDGE,
    EdgeMembershipSplit,
    _as_pairs,
)
from graphleaks.data.pair_score_files import PairScores
from graphleaks.data.pairs import contains, edge_keys, pair_keys, undirected_pairs
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.link_predictor import LinkPredictor, LinkPredictorSpec, held_out_link_auc
from graphleaks.models.pair_scorer import LinkTarget, PairScorer
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.report.edge_scores import (
    edge_candidate_table,
    edge_slice_masks,
    public_degree,
)
from graphleaks.report.report import (
    REPORT_SCHEMA_VERSION,
    AttackReport,
    AuditReport,
    TargetSummary,
    json_safe,
)
from graphleaks.report.scores import CandidateTable, most_exposed
from graphleaks.seeding import derive_seed
from graphleaks.threat import Output
from graphleaks.versions import library_versions

#: Reference budgets of the edge attacks per suite (fields of their configs).
LINK_SUITE_BUDGETS: dict[str, dict[str, Any]] = {
    "quick": {"num_references": 2, "ref_epochs": 30},
    "standard": {"num_references": 4, "ref_epochs": 100},
    "thorough": {"num_references": 16, "ref_epochs": 200},
}
#: Non-member sampling a caller may state (``unknown``: not stated).
NON_MEMBER_SAMPLINGS = ("uniform", "degree_matched", "unknown")
#: Candidate kind codes: member, held-out edge, held-out non-edge, non-member (unknown kind).
MEMBER_KIND, NON_MEMBER_KIND = 0, 3


def as_edge_array(values: Any, what: str, num_nodes: int, source: str) -> np.ndarray:
    """A pair list as validated ``[K, 2]`` int64 (``[2, K]`` edge-index layouts accepted).

    Raises:
        DataError: One line naming the list and the row: a node outside the graph, a
            self-loop, a duplicate pair, a value that is not an integer node id.
    """
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise DataError(f"{source}: {what} are not an array of node-id pairs; give [K, 2] "
                        "(or PyG's [2, K]) integers") from None
    if arr.ndim == 2 and arr.shape[0] == 2 and arr.shape[1] != 2:
        arr = arr.T  # PyG's edge_index layout
    return _as_pairs(arr, what, source, num_nodes)


def check_edge_sets(members: Any, non_members: Any, num_nodes: int, *,
                    source: str = "audit_model") -> tuple[np.ndarray, np.ndarray]:
    """Validated member edges and non-member pairs, disjoint (as undirected pairs).

    Raises:
        DataError: For an empty list, a bad row, or a pair in both lists.
    """
    m = as_edge_array(members, "member edges", num_nodes, source)
    nm = as_edge_array(non_members, "non-member pairs", num_nodes, source)
    if len(m) == 0 or len(nm) == 0:
        empty = "member edges" if len(m) == 0 else "non-member pairs"
        raise DataError(f"{source}: {empty} are empty; an edge-membership audit needs both "
                        "member edges and non-member pairs")
    hit = contains(np.unique(pair_keys(m, num_nodes)), pair_keys(nm, num_nodes))
    if hit.any():
        raise DataError(f"{source}: row {int(np.flatnonzero(hit)[0])} of the non-member pairs "
                        "is also a member edge; a pair is either a member or a non-member, "
                        "never both")
    return m, nm


def link_graph(data: Any) -> Data:
    """``data`` as a PyG ``Data`` with float features and an edge index (labels not needed).

    Raises:
        DataError: If the features or edges are missing or malformed.
    """
    if not isinstance(data, Data):
        raise DataError(f"data must be a torch_geometric Data with x and edge_index, not "
                        f"{type(data).__name__}")
    x, ei = getattr(data, "x", None), getattr(data, "edge_index", None)
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or not x.is_floating_point():
        raise DataError("data.x must be a [num_nodes, num_features] float tensor of node "
                        "features")
    n = int(x.shape[0])
    if not isinstance(ei, torch.Tensor) or ei.dim() != 2 or ei.shape[0] != 2 \
            or ei.is_floating_point():
        raise DataError("data.edge_index must be a [2, num_edges] integer tensor")
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
        raise DataError(f"data.edge_index names nodes outside 0..{n - 1}; the features have "
                        f"{n} rows")
    out = Data(x=x.detach().cpu(), edge_index=ei.detach().cpu().long(), num_nodes=n)
    for key in ("name", "node_type"):
        if key in data:
            out[key] = data[key]
    return out


def link_target(
    model: Any, graph: Data, *, output: str = "logits", pairs_layout: str | None = None,
    embedding_layers: Sequence[str] | None = None, served_edge_index: Any = None,
    drop_queried: bool = False, spec: LinkPredictorSpec | None = None,
) -> LinkTarget:
    """Wrap and probe ``model`` as a served pair scorer on ``graph``.

    Raises:
        InvalidConfigError: If the model is not a pair scorer, or its interface is invalid.
        DataError: For a graph without features or edges, or invalid scores.
    """
    x = getattr(graph, "x", None)
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise DataError("data has no node features x ([num_nodes, d]); a link predictor's "
                        "audit needs the features it is served with")
    ei = graph.edge_index if served_edge_index is None else torch.as_tensor(served_edge_index)
    if ei.dim() != 2 or ei.shape[0] != 2:
        raise DataError("the served graph must be an edge_index of shape [2, E]")
    n = int(x.shape[0])
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
        raise DataError(f"the served graph names a node outside 0..{n - 1}; node ids must "
                        "index the features' rows")
    pairs = undirected_pairs(ei.long())
    t = torch.from_numpy(np.ascontiguousarray(pairs)).t()
    served = torch.cat([t, t.flip(0)], dim=1) if len(pairs) else ei.long()
    if spec is None and isinstance(model, LinkPredictor):
        spec = model.spec
    scorer = PairScorer(model, output=output, pairs_layout=pairs_layout,
                        embedding_layers=None if embedding_layers is None
                        else tuple(embedding_layers)).check(x, served)
    node_type = getattr(graph, "node_type", None) if "node_type" in graph else None
    return LinkTarget(scorer, x, served, drop_queried=drop_queried, spec=spec,
                      name=str(getattr(graph, "name", "") or "graph"),
                      node_type=None if node_type is None else np.asarray(node_type))


def edge_protocol(target: LinkTarget, members: np.ndarray, non_members: np.ndarray, *,
                  non_member_sampling: str = "unknown", kind: str | None = None,
                  drawn: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The protocol record: what the served graph holds and how non-members came about.

    ``drawn`` is graphleaks' own split record (:meth:`EdgeMembershipSplit.record`), when
    the split is graphleaks'.
    """
    n = target.num_nodes
    served = edge_keys(target.edge_index, n)
    in_graph = int(contains(served, pair_keys(members, n)).sum())
    nm_in_graph = int(contains(served, pair_keys(non_members, n)).sum())
    train_nodes = np.zeros(n, dtype=bool)
    train_nodes[members.ravel()] = True
    touching = train_nodes[non_members].any(axis=1)
    measured_kind = ("transductive" if touching.all() else
                     "inductive" if not touching.any() else "mixed")
    kept = ("all" if in_graph == len(members) else "none" if in_graph == 0 else
            f"{in_graph} of {len(members)}")
    out: dict[str, Any] = {
        "unit": "edge",
        "kind": kind or measured_kind,
        "kind_measured": (f"{measured_kind}: {int(touching.sum())} of {len(non_members)} "
                          "non-member pairs touch a node of a member edge"),
        "member_edges_in_inference_graph": kept,
        "queried_pairs_dropped_before_scoring": target.drop_queried,
        "non_member_pairs_in_served_graph": nm_in_graph,
        "non_member_sampling": non_member_sampling if non_member_sampling != "unknown"
        else "not stated",
        "counts": {"members": len(members), "non_members": len(non_members),
                   "served_edges": len(served)},
    }
    if drawn is not None:
        out["split"] = dict(drawn)
        if "non_member_sampler" in drawn:  # which sampler ran, in words (bipartite or not)
            out["non_member_sampler"] = drawn["non_member_sampler"]
    return out


def _suite_budget(attack: str, suite: Suite) -> dict[str, Any]:
    fields = {f.name for f in dataclasses.fields(edge_registry.get(attack).Config)}
    return {k: v for k, v in LINK_SUITE_BUDGETS.get(suite.name, {}).items() if k in fields}


def build_edge_attacks(
    attacks: Sequence[EdgeAttack | str] | None, suite: Suite,
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[list[EdgeAttack], bool]:
    """Edge attacks by name (suite budgets, then ``params``) or as given; and whether the
    list is the default one (every registered edge attack)."""
    params = params or {}

    def build(name: str) -> EdgeAttack:
        cls = edge_registry.get(name)
        attack = cls(**{**_suite_budget(cls.name, suite), **dict(params.get(cls.name, {}))})
        attack.validate()
        return attack

    if attacks is None:
        return [build(n) for n in edge_registry.names()], True
    return [a if isinstance(a, EdgeAttack) else build(a) for a in attacks], False


def exposure_of(target: LinkTarget) -> frozenset[Output]:
    """What the served model exposes: pair logits, embeddings if named, weights if a module."""
    iface = target.scorer.interface
    out = {Output.LOGITS}
    if iface.embedding_layers:
        out.add(Output.EMBEDDINGS)
    if iface.parameters:
        out.add(Output.PARAMETERS)
    return frozenset(out)


def _fingerprint(target: LinkTarget, members: np.ndarray, non_members: np.ndarray) -> str:
    h = hashlib.sha256()
    for arr in (target.x.detach().cpu().contiguous().numpy(),
                target.edge_index.cpu().numpy(), members, non_members):
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()[:16]


def _mode_label(spec: LinkPredictorSpec) -> str:
    # the target card (Markdown, HTML) names a scalable mode: it is another model
    return (f", {spec.propagation} propagation steps precomputed once per graph"
            if spec.propagation_mode == "precomputed" else "")


def audit_link_target(
    target: LinkTarget, members: np.ndarray, non_members: np.ndarray, *,
    kinds: np.ndarray | None = None, protocol: Mapping[str, Any] | None = None,
    attacks: Sequence[EdgeAttack | str] | None = None, seed: int = 0,
    suite: str | Suite = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    config: Mapping[str, Any] | None = None, utility: Mapping[str, float] | None = None,
    max_per_class: int | None = None, model_label: str | None = None,
    ledger: PrivacyLedger | None = None, training: Mapping[str, Any] | None = None,
    graph_known: bool = True,
) -> AuditRun:
    """Run the edge attacks on a served pair scorer; the report and the per-pair tables.

    Args:
        target: The served pair scorer (:func:`link_target`).
        members: Validated member edges ``[M, 2]``.
        non_members: Validated non-member pairs ``[K, 2]``.
        kinds: Per non-member, :data:`~graphleaks.data.edge_splits.HELD_OUT_EDGE` or
            ``HELD_OUT_NON_EDGE`` when known (slices then compare members with each kind).
        protocol: The protocol record (default: :func:`edge_protocol`).
        attacks: Edge attack names or objects (default: every one the model's exposure
            allows; the others are listed in ``config["skipped_attacks"]``).
        seed: Root seed of the challenge, references, attacks and intervals.
        suite: Budgets (``quick``, ``standard``, ``thorough``).
        n_bootstrap: Bootstrap replicates per interval (default: the suite's).
        params: Per-attack config overrides.
        config: Extra entries for the report's config.
        utility: The model's utility figures (e.g. ``test_link_auc``).
        max_per_class: Cap on members and non-members scored.
        model_label: Names the model on the target card.
        ledger: The model's privacy ledger (default: not private).
        training: What is known of the training run.
        graph_known: False for a scores-only target (no graph: no degree slices).

    Raises:
        CapabilityError: If a named attack needs what the model does not expose.
    """
    the_suite = get_suite(suite)
    n_boot = the_suite.n_bootstrap if n_bootstrap is None else n_bootstrap
    exposed = exposure_of(target)
    attack_objs, default = build_edge_attacks(attacks, the_suite, params)
    skipped: dict[str, str] = {}
    granted = ", ".join(sorted(o.value.upper() for o in exposed))
    for a in list(attack_objs):
        tm = a.threat_model
        if not graph_known and (tm.feature_knowledge or tm.architecture_knowledge
                                or tm.graph_knowledge != "none"):
            why = (f"{a.name} trains reference link predictors, which needs the graph, the "
                   "features and the architecture; a scores-only export gives none of them")
            if not default:
                raise CapabilityError(why)
            skipped[a.name] = why
            attack_objs.remove(a)
            continue
        missing = sorted(o.value.upper() for o in a.requires - exposed)
        if missing:
            why = (f"{a.name} requires {', '.join(missing)}; the model exposes {{{granted}}}"
                   + (" (name a node-embedding layer: embedding_layers=('conv2',))"
                      if "EMBEDDINGS" in missing else ""))
            if not default:
                raise CapabilityError(why)
            skipped[a.name] = why
            attack_objs.remove(a)
    protocol = dict(protocol) if protocol is not None else edge_protocol(
        target, members, non_members)
    full_kinds = np.r_[np.full(len(members), MEMBER_KIND),
                       np.full(len(non_members), NON_MEMBER_KIND) if kinds is None
                       else np.asarray(kinds, dtype=np.int64)]
    challenge, rows = edge_challenge(target, members, non_members,
                                     seed=derive_seed(seed, "edge_challenge"),
                                     max_per_class=max_per_class)
    n_members_scored = int((challenge.truth == 1).sum())
    # rows index the members for the first candidates, then the non-members
    cand_kinds = np.r_[full_kinds[rows[:n_members_scored]],
                       full_kinds[len(members) + rows[n_members_scored:]]]
    cand = np.asarray(challenge.challenge.candidates)
    if graph_known:
        degree = public_degree(challenge.challenge.hints["known_edges"], target.num_nodes)
        masks = edge_slice_masks(cand, degree, cand_kinds, node_type=target.node_type)
    else:  # scores only: no graph, so no degree (-1 in scores.csv) and no degree slices
        degree = np.full(target.num_nodes, -1, dtype=np.int64)
        masks = {}
    references = EdgeReferencePool(derive_seed(seed, "edge_references"))
    reports: list[AttackReport] = []
    tables: list[CandidateTable] = []
    for attack in progress(attack_objs, desc="edge attacks"):
        try:
            result: AttackResult = run_edge_attack(
                attack, target, challenge, seed=derive_seed(seed, "run", attack.name),
                exposed=exposed, references=references)
        except CapabilityError as exc:
            if not default:
                raise
            skipped[attack.name] = str(exc)
            continue
        metrics = evaluate_result(result, n_bootstrap=n_boot,
                                  seed=derive_seed(seed, "bootstrap", attack.name),
                                  claimed_delta=0.0 if ledger is None else ledger.delta,
                                  ledger=ledger)
        table = edge_candidate_table(result, degree, cand_kinds, node_type=target.node_type)
        tables.append(table)
        metrics = with_slices(result, metrics, masks, n_bootstrap=n_boot,
                              seed=derive_seed(seed, "slices", attack.name))
        reports.append(AttackReport(
            attack=attack.name, task=result.task.value, threat_model=result.threat_model,
            config=json_safe(result.config), compat_flags=list(result.compat_flags),
            notes=[*result.notes, f"paper: {attack.paper}"], query_graph=result.query_graph,
            metrics=metrics, baseline=json_safe(trivial_baseline(result.labels, None,
                                                                 result.task)),
            runtime_s=float(result.runtime_s),
            exposure=json_safe({"most_exposed": most_exposed(table)})))
    cfg: dict[str, Any] = {"task": "link", "suite": the_suite.name,
                           "attacks": [a.name for a in attack_objs] if not default
                           else "all applicable", **dict(config or {})}
    cfg["edge_protocol"] = json_safe(protocol)
    cfg["slices_note"] = ("endpoint degrees counted in the served graph without the candidate "
                          "pairs (the public graph)")
    if skipped:
        cfg["skipped_attacks"] = skipped
    iface = target.scorer.interface
    model = target.scorer.model
    cfg["target_model"] = {"model_class": model_label or type(model).__name__,
                           **iface.to_dict(), "kind": "pair scorer"}
    arch = ({"arch": f"link predictor ({target.spec.encoder} encoder, {target.spec.decoder} "
                     f"decoder{_mode_label(target.spec)})", **target.spec.to_dict()}
            if target.spec is not None
            else {"arch": model_label or type(model).__name__, "kind": "pair scorer"})
    summary = TargetSummary(
        architecture=json_safe(arch), defense="none" if ledger is None else ledger.unit.value,
        defense_config={}, dataset={"name": target.name, "kind": "link"},
        fingerprint=_fingerprint(target, members, non_members), num_nodes=target.num_nodes,
        num_edges=int(target.edge_index.shape[1]), protocol=str(protocol.get("kind", "")),
        split_sizes={"members": len(members), "non_members": len(non_members),
                     "members_scored": n_members_scored,
                     "non_members_scored": int(len(rows) - n_members_scored)},
        utility=json_safe(dict(utility or {})), training=json_safe(dict(training or {})),
    )
    report = AuditReport(
        schema_version=REPORT_SCHEMA_VERSION, seed=seed, target=summary,
        ledger=ledger or PrivacyLedger.non_private(), attacks=reports, config=json_safe(cfg),
        versions=library_versions())
    return AuditRun(report, tuple(tables))


def audit_link_model(
    model: Any, data: Any, members: Any, non_members: Any, *, output: str = "logits",
    pairs_layout: str | None = None, embedding_layers: Sequence[str] | None = None,
    served_edge_index: Any = None, drop_queried_pairs: bool = False,
    non_member_sampling: str = "unknown", attacks: Sequence[EdgeAttack | str] | None = None,
    seed: int = 0, suite: str = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None, max_per_class: int | None = None,
) -> AuditRun:
    """Audit a pair scorer of any class, in memory (``audit_model(..., task="link")``).

    Args:
        model: ``model(x, edge_index, pairs)`` returning one score per pair.
        data: A PyG ``Data`` with ``x`` and ``edge_index`` (the served graph unless
            ``served_edge_index``); ``node_type`` (0 user, 1 item) marks a bipartite graph.
        members: The model's training edges, ``[M, 2]`` or ``[2, M]``.
        non_members: Pairs it never trained on (held-out edges, non-edges).
        output: ``logits`` or ``probabilities``.
        pairs_layout: How the model takes pairs: ``columns`` (``[2, P]``) or ``rows``.
        embedding_layers: Submodules whose outputs are node embeddings (LMIA's attacks).
        served_edge_index: The graph the model is served with (default: ``data``'s).
        drop_queried_pairs: Serve each query batch without the queried pairs.
        non_member_sampling: How the non-members were drawn (``uniform``,
            ``degree_matched``), for the report; ``unknown`` if not stated.
        attacks: Edge attack names or objects (default: every applicable one).
        seed: Root seed.
        suite: Budgets.
        n_bootstrap: Bootstrap replicates per interval.
        params: Per-attack config overrides.
        max_per_class: Cap on the members and non-members scored.

    Raises:
        DataError: For pairs outside the graph, self-loops or duplicates, overlapping lists.
        InvalidConfigError: For a model that is not a pair scorer, or an unknown option.
    """
    if non_member_sampling not in NON_MEMBER_SAMPLINGS:
        raise InvalidConfigError(f"non_member_sampling {non_member_sampling!r} is unknown; "
                                 f"choose one of: {', '.join(NON_MEMBER_SAMPLINGS)}")
    graph = link_graph(data)
    n = int(graph.num_nodes)
    m, nm = check_edge_sets(members, non_members, n)
    get_suite(suite)  # an unknown suite before the model runs
    target = link_target(model, graph, output=output, pairs_layout=pairs_layout,
                         embedding_layers=embedding_layers,
                         served_edge_index=served_edge_index, drop_queried=drop_queried_pairs)
    protocol = edge_protocol(target, m, nm, non_member_sampling=non_member_sampling)
    return audit_link_target(target, m, nm, protocol=protocol, attacks=attacks, seed=seed,
                             suite=suite, n_bootstrap=n_bootstrap, params=params,
                             max_per_class=max_per_class,
                             config={"entry": "audit_model(task='link')",
                                     "target_origin": "user model"},
                             training={"note": "trained outside graphleaks"})


class _ExportedScores:
    """A pair scorer answering from an export: the scores the owner's model gave."""

    pairs_layout = "rows"

    def __init__(self, scores: PairScores) -> None:
        self.scores = scores
        self._logits = scores.logits()

    def __call__(self, x: torch.Tensor, edge_index: torch.Tensor,
                 pairs: torch.Tensor) -> torch.Tensor:
        rows = self.scores.lookup(pairs.cpu().numpy(), "queried pairs")
        return torch.from_numpy(self._logits[rows])


def audit_link_scores(
    scores: PairScores, members: Any, non_members: Any, *,
    attacks: Sequence[EdgeAttack | str] | None = None, seed: int = 0,
    suite: str | Suite = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    config: Mapping[str, Any] | None = None, max_per_class: int | None = None,
) -> AuditRun:
    """A scores-only edge-membership audit: exported ``source, target, score`` rows.

    Only attacks that read the pair's score alone can run (the score threshold); those that
    train references need the graph, features and architecture and are listed as skipped.
    The candidates are drawn exactly as the model audit draws them, so the threshold attack's
    scores equal the API path's for the same pairs, seed and exported logits.

    Raises:
        DataError: For bad member/non-member lists (as :func:`check_edge_sets`) or a pair
            without a score in the export.
        CapabilityError: For a named attack that needs more than scores.
    """
    n = int(max(scores.pairs.max(), np.asarray(members).max(initial=0),
                np.asarray(non_members).max(initial=0))) + 1
    m, nm = check_edge_sets(members, non_members, n, source=scores.source)
    scores.lookup(m, "member edges")
    scores.lookup(nm, "non-member pairs")
    scorer = PairScorer(_ExportedScores(scores), pairs_layout="rows")
    empty = torch.empty((2, 0), dtype=torch.long)
    target = LinkTarget(scorer, torch.zeros((n, 1)), empty, name="exported pair scores")
    protocol = {"unit": "edge", "kind": "unknown (scores only)",
                "member_edges_in_inference_graph": "unknown (scores only)",
                "non_member_sampling": "not stated",
                "counts": {"members": len(m), "non_members": len(nm)}}
    cfg = {"scores_only": {"output": scores.output, "source": scores.source},
           **dict(config or {})}
    run = audit_link_target(target, m, nm, protocol=protocol, attacks=attacks, seed=seed,
                            suite=suite, n_bootstrap=n_bootstrap, params=params, config=cfg,
                            max_per_class=max_per_class, model_label="exported pair scores",
                            graph_known=False, training={"note": "trained outside "
                                                         "graphleaks; scores only"})
    rep = dataclasses.replace(run.report, target=dataclasses.replace(
        run.report.target, protocol="scores_only", num_edges=0,
        dataset={"name": f"{scores.output} exported for {len(scores.pairs)} pairs",
                 "kind": "scores_only", "source": scores.source}))
    return AuditRun(rep, run.tables)


def audit_link_split(
    model: LinkPredictor, x: torch.Tensor, split: EdgeMembershipSplit, *, name: str = "graph",
    attacks: Sequence[EdgeAttack | str] | None = None, seed: int = 0,
    suite: str = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None, max_per_class: int | None = None,
    node_type: np.ndarray | None = None, training: Mapping[str, Any] | None = None,
) -> AuditRun:
    """Audit graphleaks' own link predictor on the split it trained on.

    Members are the split's members; non-members its held-out edges and non-edges (kinds
    known, so the report slices them apart). The model is served on the split's inference
    graph, dropping the queried pairs when ``member_edges_in_inference_graph`` is False.
    The report's utility is the test link AUC (held-out edges vs held-out non-edges).
    """
    graph = Data(x=x, edge_index=split.inference_edge_index(), num_nodes=split.num_nodes)
    if node_type is not None:
        graph.node_type = torch.as_tensor(node_type)
    graph.name = name
    target = link_target(model, graph, spec=model.spec,
                         drop_queried=not split.config.member_edges_in_inference_graph)
    non_members = np.concatenate([split.held_out_edges, split.held_out_non_edges])
    kinds = np.r_[np.full(len(split.held_out_edges), HELD_OUT_EDGE),
                  np.full(len(split.held_out_non_edges), HELD_OUT_NON_EDGE)]
    protocol = edge_protocol(target, split.members, non_members,
                             non_member_sampling=split.config.non_member_sampling,
                             kind=split.config.kind, drawn=split.record())
    utility = {"test_link_auc": held_out_link_auc(model, x, split)}
    return audit_link_target(target, split.members, non_members, kinds=kinds,
                             protocol=protocol, attacks=attacks, seed=seed, suite=suite,
                             n_bootstrap=n_bootstrap, params=params, utility=utility,
                             max_per_class=max_per_class, model_label="LinkPredictor",
                             training=training, config={"entry": "audit_link_split"})


__all__ = ["LINK_SUITE_BUDGETS", "NON_MEMBER_SAMPLINGS", "as_edge_array", "audit_link_model",
           "audit_link_scores",
           "audit_link_split", "audit_link_target", "build_edge_attacks", "check_edge_sets",
           "edge_protocol", "exposure_of", "link_target"]
