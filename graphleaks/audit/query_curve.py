"""Leakage against queries: each query-hungry attack re-run at every budget of a grid.

What an adversary learns grows with the queries it may make, which is what a rate limit
sets. For each attack whose power grows with its queries, :func:`query_curve` shrinks the
attack to each budget with its own hook (:meth:`~graphleaks.attacks.base.Attack.
with_query_budget`), runs it through a :class:`CountingView` that counts every answer the
target gives and refuses the first one past the budget, and records the queries made, AUC
and TPR at 1 % FPR with their intervals (:func:`graphleaks.metrics.binary.evaluate_binary`)
and the verdict's level (:func:`graphleaks.report.verdict.attack_level`).

Which attacks: LinkTeller (one query per sampled node, plus one: a larger budget samples
more nodes, so more candidate pairs and edges) and the label-only MIA (one clean query plus
one per perturbation: a larger budget resolves each node's robustness more finely). LiRA
and RMIA are left out: their power grows with reference models the adversary *trains* on
its own data, while the target answers them one request (LiRA) or two (RMIA) whatever their
size, so a query budget does not move them.

A query is one inference-API request, whatever number of nodes it asks about (the unit of
:meth:`~graphleaks.attacks.base.Attack.feature_queries`). Each curve attack is lifted to its
largest size first, so the budget (not the suite's size) binds; the points record the setting
that ran and the queries actually made, which stay below the budget when the graph is
smaller than the budget allows (LinkTeller cannot sample more nodes than the graph has).

Every budget of one attack scores a challenge drawn from the same seed: the label-only MIA
scores the same members and non-members at every budget, so its curve isolates the effect of
queries. Same seed, same curve.

Example:
    >>> from graphleaks.audit.runner import train_target
    >>> from graphleaks.data import tiny_graph
    >>> t = train_target(tiny_graph(), seed=0)
    >>> qc = query_curve(t, ["label_only_mia"], budgets=(2, 9), seed=0, n_bootstrap=50)
    >>> [p.queries for p in qc.curves[0].points]
    [2, 9]
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from graphleaks.attacks.base import ALL_OUTPUTS, Attack, Output, TargetView
from graphleaks.attacks.harness import sample_challenge, score_labelled
from graphleaks.audit.suite import DEFAULT_SUITE, Suite, build_attack, get_suite
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.metrics import binary as binm
from graphleaks.models.target import TrainedTarget
from graphleaks.report.query_curves import (
    CURVE_ATTACK_NAMES,
    DEFAULT_BUDGETS,
    CurvePoint,
    QueryCurve,
    QueryCurves,
    check_budgets,
)
from graphleaks.report.records import MetricReading, Readings
from graphleaks.seeding import derive_seed

#: The attacks whose power grows with queries, and the config field their budget sets.
CURVE_ATTACKS: dict[str, str] = dict(zip(CURVE_ATTACK_NAMES, ("n_nodes", "num_queries"),
                                         strict=True))
#: Attacks deliberately left out of the curves, and why (recorded in the curves' notes).
NOT_QUERY_BOUND: dict[str, str] = {
    "lira_mia": "its power grows with the reference models it trains on its own data, not "
                "with queries: it asks the target one request whatever its size",
    "rmia_mia": "its power grows with the reference models it trains on its own data, not "
                "with queries: it asks the target two requests whatever its size",
}


class QueryBudgetExceeded(RuntimeError):
    """An attack asked for more answers than its budget: its budget hook is wrong."""


class CountingView(TargetView):
    """A :class:`TargetView` that counts every answer the target gives.

    Every accessor that returns model outputs is one inference-API request (a query),
    whatever the number of nodes it asks about; knowledge the threat model grants (features,
    labels, edges) costs none. With ``limit`` set, the request past it is refused before it
    reaches the target.

    Args:
        target: The target.
        threat_model: The attack's threat model.
        limit: Most requests answered (None: count only).
        **kwargs: As :class:`TargetView`.
    """

    def __init__(self, target: TrainedTarget, threat_model: Any, *, limit: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(target, threat_model, **kwargs)
        self.limit = limit
        self.count = 0

    def _charge(self) -> None:
        if self.limit is not None and self.count >= self.limit:
            raise QueryBudgetExceeded(
                f"{self._attack} asked for query {self.count + 1:,} with a budget of "
                f"{self.limit:,}; its with_query_budget hook under-counts its queries")
        self.count += 1

    def posteriors(self, nodes: np.ndarray) -> torch.Tensor:  # noqa: D102 - as TargetView
        self._charge()
        return super().posteriors(nodes)

    def logits(self, nodes: np.ndarray) -> torch.Tensor:  # noqa: D102 - as TargetView
        self._charge()
        return super().logits(nodes)

    def predicted_labels(self, nodes: np.ndarray) -> torch.Tensor:  # noqa: D102
        self._charge()
        return super().predicted_labels(nodes)

    def embeddings(self, nodes: np.ndarray, *, layer: int = 0) -> torch.Tensor:  # noqa: D102
        self._charge()
        return super().embeddings(nodes, layer=layer)

    def query(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:  # noqa: D102
        self._charge()
        return super().query(x, edge_index)

    def query_labels(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:  # noqa: D102
        self._charge()
        return super().query_labels(x, edge_index)

    def query_features(self, x: torch.Tensor) -> torch.Tensor:  # noqa: D102 - as TargetView
        self._charge()
        return super().query_features(x)

    def query_features_rows(self, x: torch.Tensor, rows: np.ndarray, *,  # noqa: D102
                            scale_node: int | None = None, scale: float = 1.0,
                            local: bool = True) -> torch.Tensor:
        self._charge()
        return super().query_features_rows(x, rows, scale_node=scale_node, scale=scale,
                                           local=local)


def lifted(attack: Attack) -> Attack:
    """``attack`` at its largest size, so that only the budget bounds its queries.

    The size field (:data:`CURVE_ATTACKS`) is set to the top of its declared range.
    """
    name = CURVE_ATTACKS[attack.name]
    f = next(f for f in dataclasses.fields(attack.config) if f.name == name)
    top = f.metadata["range"][1]
    return type(attack)(attack.config, **{name: top})


def curve_attacks(
    attacks: Sequence[Attack | str] | None, suite: Suite,
    params: dict[str, dict[str, Any]] | None = None,
) -> list[Attack]:
    """The curve attacks to run: every one of :data:`CURVE_ATTACKS` by default.

    Names are built with the suite's budgets and the user's ``params``; attack objects are
    taken as they are.

    Raises:
        InvalidConfigError: For an attack whose power does not grow with queries.
    """
    chosen = list(CURVE_ATTACKS) if attacks is None else list(attacks)
    out = []
    for a in chosen:
        obj = a if isinstance(a, Attack) else build_attack(a, suite, (params or {}).get(a))
        if obj.name not in CURVE_ATTACKS:
            why = NOT_QUERY_BOUND.get(obj.name, "its queries do not depend on a budget")
            raise InvalidConfigError(f"{obj.name} has no query-budget curve: {why}; the "
                                     f"curves run {', '.join(CURVE_ATTACKS)}")
        out.append(obj)
    return out


def _setting(attack: Attack, shrunk: Attack) -> dict[str, Any]:
    """The config fields the budget changed, as they ran."""
    before, after = attack.config_record(), shrunk.config_record()
    return {k: v for k, v in after.items() if before.get(k) != v}


def _offered(target: TrainedTarget, exposed: frozenset[Output]) -> frozenset[Any]:
    """What the target can serve (the runner's rule: exposure, declarations, static shapes)."""
    from graphleaks.attacks.capabilities import target_capabilities
    from graphleaks.audit.runner import static_shape_limits

    offered = target_capabilities(exposed)
    declared = getattr(target, "capabilities", None)
    if callable(declared):
        offered &= frozenset(declared())
    return offered - static_shape_limits(target)


def _point(
    attack: Attack, budget: int, target: TrainedTarget, *, seed: int, n_bootstrap: int,
    view: str, exposed: frozenset[Output], defense_aware: bool,
) -> CurvePoint:
    """``attack`` shrunk to ``budget`` queries, run and graded."""
    from graphleaks.report.verdict import attack_level

    shrunk = attack.with_query_budget(budget)
    if shrunk is None:
        return CurvePoint(budget, 0, {}, None, None, None, None, None,
                          f"{attack.name} cannot run within {budget:,} queries")
    setting = _setting(attack, shrunk)
    try:
        challenge = sample_challenge(shrunk, target, seed=derive_seed(seed, "challenge"))
    except DataError as exc:
        return CurvePoint(budget, 0, setting, None, None, None, None, None, str(exc))
    tm = dataclasses.replace(shrunk.threat_model, defense_knowledge=bool(defense_aware))
    counter = CountingView(target, tm, limit=budget, exposed=exposed, view=view,
                           attack=shrunk.name)
    # a target behind an endpoint counts its queries per attack (RemoteTarget)
    attributed = getattr(target, "attributed_to", None)
    with attributed(shrunk.name) if callable(attributed) else contextlib.nullcontext():
        result = score_labelled(shrunk, counter, challenge, seed=derive_seed(seed, "attack"))
    labels = np.asarray(result.labels)
    n_pos = int(np.count_nonzero(labels))
    n_neg = len(labels) - n_pos
    note = next((n for n in result.notes if n.startswith("node sampler")), "")
    if n_pos == 0 or n_neg == 0:
        what = "positives" if n_pos == 0 else "negatives"
        return CurvePoint(budget, counter.count, setting, n_pos, n_neg, None, None, None,
                          f"the challenge holds no {what} among {len(labels):,} candidates")
    ev = binm.evaluate_binary(result.scores, labels, threshold=result.threshold,
                              fpr_points=(0.01,), n_bootstrap=n_bootstrap,
                              seed=derive_seed(seed, "bootstrap"))
    m = ev.metrics
    auc, tpr = m.auc, m.tpr_at_fpr[0.01]
    readings = Readings({"auc": MetricReading(auc.value, auc.ci),
                         "tpr@1%fpr": MetricReading(tpr.value, tpr.ci)}, n_pos, n_neg)
    level = attack_level(attack.name, readings)
    return CurvePoint(budget, counter.count, setting, n_pos, n_neg, auc, tpr,
                      None if level is None else level.level, note)


def query_curve(
    target: TrainedTarget,
    attacks: Sequence[Attack | str] | None = None,
    *,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    seed: int,
    n_bootstrap: int | None = None,
    suite: str | Suite = DEFAULT_SUITE,
    params: dict[str, dict[str, Any]] | None = None,
    view: str = "target",
    exposed: frozenset[Output] = ALL_OUTPUTS,
    defense_aware: bool = True,
) -> QueryCurves:
    """Leakage against queries: each curve attack at each budget of ``budgets``.

    Args:
        target: The target (a bundle, a model of another pipeline, anything behind a
            :class:`TargetView`).
        attacks: Curve attacks (names or objects); None: every one of
            :data:`CURVE_ATTACKS`. An attack the target cannot serve gets a skipped curve
            with the reason.
        budgets: Strictly increasing positive query budgets per attack.
        seed: Root seed (same seed, same curves).
        n_bootstrap: Bootstrap replicates per interval (default: the suite's).
        suite: Budgets the attacks are built with (their other fields).
        params: Per-attack config overrides, on top of the suite's.
        view: The graph view queries are evaluated in.
        exposed: What the deployment exposes.
        defense_aware: Whether the adversary knows the defense.

    Raises:
        InvalidConfigError: For a bad grid or an attack without a query-budget curve.
    """
    from graphleaks.attacks.capabilities import partition
    from graphleaks.report.verdict import risk_of

    grid = check_budgets(list(budgets))
    the_suite = get_suite(suite)
    n_boot = the_suite.n_bootstrap if n_bootstrap is None else n_bootstrap
    objs = curve_attacks(attacks, the_suite, params)
    _, skipped = partition(objs, _offered(target, exposed), "this target")
    curves = []
    for attack in objs:
        risk = risk_of(attack.name, attack.task.value)
        if attack.name in skipped:
            curves.append(QueryCurve(attack.name, attack.task.value, risk, (),
                                     skipped[attack.name]))
            continue
        big = lifted(attack)
        points = []
        for budget in grid:
            try:
                points.append(_point(big, budget, target,
                                     seed=derive_seed(seed, "query-curve", attack.name),
                                     n_bootstrap=n_boot, view=view, exposed=exposed,
                                     defense_aware=defense_aware))
            except (CapabilityError, InvalidConfigError) as exc:
                # a budget too large for the graph (LinkTeller's pairs): the other budgets
                # still run, and this point says why it has no metric
                points.append(CurvePoint(budget, 0, {}, None, None, None, None, None,
                                         str(exc)))
        curves.append(QueryCurve(attack.name, attack.task.value, risk, tuple(points)))
    notes = tuple(f"{n} has no curve: {why}" for n, why in NOT_QUERY_BOUND.items())
    return QueryCurves(grid, tuple(curves), seed=seed, notes=notes)
