"""Audit a model behind an inference endpoint, within a query budget.

The attacks run unchanged against a :class:`~graphleaks.models.remote.RemoteTarget`. Before
the first query, every attack's declared cost (:meth:`Attack.query_cost`) is added up with
the determinism re-check; a plan over the budget is refused with the cost and the budget.
The budget's hard counter then refuses any query past it. The report records the budget,
the plan, the queries made per attack, the requests sent (retries included), the head of
the hash-chained query log (written beside the report as ``queries.jsonl``) and whether
identical requests got identical answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from torch_geometric.data import Data

from graphleaks.attacks.base import Attack, Output
from graphleaks.data.ref import DatasetRef
from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import InvalidConfigError
from graphleaks.models.protocol import ModelInterface
from graphleaks.models.remote import RemoteModel, RemoteTarget, remote_exposure
from graphleaks.models.target import TrainedTarget
from graphleaks.models.trainer import SurrogateArchitecture
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.seeding import derive_seed

#: Earlier queries sent again, by default, to detect a non-deterministic API.
DEFAULT_RECHECK = 3
#: The query log's file name, beside ``report.json``.
QUERY_LOG = "queries.jsonl"


class QueryPlanError(InvalidConfigError):
    """An audit whose planned queries exceed the budget: refused before any query."""


def ground_truth(graph: Data, members: np.ndarray, non_members: np.ndarray, *,
                 population: np.ndarray | None = None, seed: int = 0) -> TrainedTarget:
    """The auditor's ground truth for an endpoint: graph, labels and membership split.

    Its model is a stand-in that is never run; :func:`graphleaks.models.remote.remote_target`
    puts the endpoint in its place. Shadow and reference models are a surrogate GCN (the
    endpoint's architecture is unknown).
    """
    from graphleaks.data.node_sets import check_membership

    n = int(graph.num_nodes)
    check_membership(members, non_members, n)
    rest = np.setdiff1d(np.arange(n), np.union1d(members, non_members))
    aux = rest if population is None else np.sort(population)
    split = MembershipSplit(kind="transductive", num_nodes=n, train=np.sort(members),
                            val=np.setdiff1d(rest, aux), test=np.sort(non_members), aux=aux,
                            seed=int(seed))
    classes = int(graph.y.max()) + 1 if graph.y.numel() else 1
    return TrainedTarget(
        model=RemoteModel(int(graph.x.shape[1]), classes, "the endpoint"),  # type: ignore[arg-type]
        spec=SurrogateArchitecture(arch="gcn"), graph=graph, split=split, seed=int(seed),
        ledger=PrivacyLedger.non_private(), interface=ModelInterface(parameters=False),
        dataset=DatasetRef.user("endpoint").pinned(graph))


def query_plan(attacks: Sequence[Attack], num_nodes: int, num_edges: int,
               recheck: int) -> dict[str, int]:
    """Queries each attack declares (as if alone), and the re-check's."""
    plan = {a.name: int(a.query_cost(num_nodes, num_edges)) for a in attacks}
    if recheck:
        plan["recheck"] = int(recheck)
    return plan


def check_plan(plan: Mapping[str, int], budget: int) -> None:
    """Refuse a plan over the budget, naming its cost, the biggest items and the budget.

    Raises:
        QueryPlanError: One line: the cost, the budget, and what to change.
    """
    total = sum(plan.values())
    if total <= budget:
        return
    items = sorted(plan.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{k} {v}" for k, v in items[:4]) + (", ..." if len(items) > 4 else "")
    raise QueryPlanError(f"the audit plans {total} queries ({shown}) and --budget is {budget}; "
                         f"raise --budget to {total}, or run fewer attacks (--attack) or "
                         "smaller ones (e.g. --param linkteller.n_nodes=...), before any "
                         "query is sent")


def _offered(target: RemoteTarget, exposed: frozenset[Output]) -> frozenset[Any]:
    from graphleaks.attacks.capabilities import Capability, target_capabilities

    offered = target_capabilities(exposed)
    if "subgraph" not in target.client.description.requests:
        offered -= {Capability.GRAPH_QUERIES}
    return offered


def plan_attacks(target: RemoteTarget, attacks: Sequence[Any] | None, *, suite: Any,
                 params: Mapping[str, Mapping[str, Any]] | None = None,
                 ) -> tuple[list[Attack], dict[str, str], bool]:
    """The attacks an endpoint audit runs, those it skips (with why), and whether it is the
    default audit.

    Raises:
        CapabilityError: For a named attack the endpoint cannot serve.
        InvalidConfigError: For a named attack too large for the graph.
    """
    from graphleaks.attacks import registry
    from graphleaks.attacks.capabilities import partition, require_all
    from graphleaks.audit.suite import applicable_attacks, build_attack

    exposed = frozenset(Output(v) for v in remote_exposure(target.client.description))
    offered = _offered(target, exposed)
    params = params or {}
    default = attacks is None
    skipped: dict[str, str] = {}
    if attacks is None:
        names = [n for n in registry if n in applicable_attacks(exposed)]
        for n in registry:
            if n not in names:
                skipped[n] = f"{n} needs outputs the endpoint does not return"
        objs = [build_attack(n, suite, params.get(n)) for n in names]
        objs, more = partition(objs, offered, "this endpoint")
        skipped.update(more)
    else:
        objs = [a if isinstance(a, Attack) else build_attack(
            registry.get(a).name, suite, params.get(registry.get(a).name)) for a in attacks]
        require_all(objs, offered, "this endpoint")
    g = target.graph
    for a in list(objs):
        try:
            a.check_scale(int(g.num_nodes), int(g.edge_index.size(1)))
        except InvalidConfigError as exc:
            if not default:
                raise
            skipped[a.name] = str(exc)
            objs.remove(a)
    return objs, skipped, default


def audit_endpoint(
    target: RemoteTarget, *, attacks: Sequence[Any] | None = None, seed: int = 0,
    suite: Any = "standard", n_bootstrap: int | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None, recheck: int = DEFAULT_RECHECK,
    config: dict[str, Any] | None = None,
) -> Any:
    """Audit the endpoint behind ``target`` within its client's query budget.

    Args:
        target: From :func:`graphleaks.models.remote.remote_target`.
        attacks: Attack names or objects; default: every attack the endpoint can serve.
        seed: Root seed (challenges, attacks, intervals, the re-check's sample).
        suite: Budgets: ``quick``, ``standard`` or ``thorough``.
        n_bootstrap: Bootstrap replicates per interval (default: the suite's).
        params: Per-attack config overrides.
        recheck: Earlier queries sent again to detect a non-deterministic API (counted
            against the budget; 0: none).
        config: Extra entries for ``report.config``.

    Returns:
        The :class:`~graphleaks.audit.runner.AuditRun`; ``report.config["queries"]`` holds
        the budget, plan, queries per attack, requests sent, the log's head hash and the
        re-check's outcome. Write the log with ``target.client.log.write(...)``.

    Raises:
        QueryPlanError: When the plan exceeds the budget (before any query).
        CapabilityError: For a named attack the endpoint cannot serve.
    """
    from graphleaks.audit.runner import AuditRun, audit_with_scores
    from graphleaks.audit.suite import get_suite

    if not isinstance(recheck, int) or isinstance(recheck, bool) or recheck < 0:
        raise InvalidConfigError("--recheck must be a number of queries >= 0")
    the_suite = get_suite(suite)
    client = target.client
    objs, skipped, default = plan_attacks(target, attacks, suite=the_suite, params=params)
    g = target.graph
    plan = query_plan(objs, int(g.num_nodes), int(g.edge_index.size(1)), recheck)
    check_plan(plan, client.budget.limit)
    exposed = frozenset(Output(v) for v in remote_exposure(client.description))
    cfg = dict(config or {})
    d = client.description
    cfg["endpoint"] = {"url": d.safe_url, "outputs": list(d.outputs),
                       "requests": list(d.requests), "credential": client.credential_env
                       is not None, "verify_tls": d.verify_tls, "timeout_s": d.timeout_s,
                       "max_retries": d.max_retries}
    cfg.setdefault("attacks", [a.name for a in objs] if not default else "all applicable")
    run = audit_with_scores(target, objs, seed=seed, n_bootstrap=n_bootstrap, exposed=exposed,
                            config=cfg, suite=the_suite, skip_unrunnable=default, canary=False)
    report = run.report
    if skipped:
        report.config["skipped_attacks"] = {**skipped,
                                            **report.config.get("skipped_attacks", {})}
    rechecked = client.recheck(recheck, derive_seed(seed, "recheck"))
    budget = client.budget
    report.config["queries"] = {
        "budget": budget.limit, "planned": sum(plan.values()), "plan": dict(plan),
        "made": budget.used, "per_attack": dict(budget.per_attack),
        "requests_sent": client.requests_sent, "retries": client.retries,
        "log": QUERY_LOG, "log_head": client.log.head, "log_entries": len(client.log.entries),
        "determinism": rechecked,
        "unit": "one POST /query of docs/endpoint-protocol.md"}
    if rechecked["deterministic"] is False:
        note = (f"NON-DETERMINISTIC endpoint: {rechecked['differing']} of "
                f"{rechecked['rechecked']} identical requests got different answers; these "
                "scores are one draw of a randomized API, not averaged")
        report = dataclasses.replace(report, attacks=[
            dataclasses.replace(a, notes=[*a.notes, note]) for a in report.attacks])
    arch = {**report.target.architecture, "model": f"endpoint {d.safe_url}"}
    report = dataclasses.replace(report, target=dataclasses.replace(report.target,
                                                                    architecture=arch))
    return AuditRun(report, run.tables)
