"""The CI gate: which metrics are gated, absolute thresholds and baseline tolerances.

A ``[gate]`` table of an audit spec (see :mod:`graphleaks.audit.spec`) becomes a
:class:`GateSpec`; :mod:`graphleaks.report.regression` checks a report against it. The gate
lives with the report, below the audit, so checking a report needs no audit runner.

Example:
    >>> gate = parse_gate({"thresholds": {"auc": 0.9}, "tolerance": 0.02})
    >>> gate.thresholds[0].metric, gate.thresholds[0].limit, gate.tolerance
    ('auc', 0.9, 0.02)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphleaks._tables import no_unknown, table, typed, wrap
from graphleaks.errors import InvalidConfigError
from graphleaks.report.records import METRIC_READERS

#: Gateable metric names; :data:`graphleaks.report.records.METRIC_READERS` reads each one
#: from an attack's typed metrics.
METRICS: tuple[str, ...] = tuple(METRIC_READERS)
#: Metrics that are not probabilities (their thresholds may exceed 1).
UNBOUNDED_METRICS = frozenset({"epsilon_lb"})
DEFAULT_METRICS = ("auc", "tpr@0.1%fpr", "tpr@1%fpr", "max_advantage")
BOUNDS = ("upper", "value", "lower")


def _norm_metric(name: str) -> str:
    return name.strip().lower().replace(" ", "")


def is_metric(name: str) -> bool:
    """Whether ``name`` spells a gated metric (any case, spaces ignored)."""
    return _norm_metric(name) in METRICS


def check_metric(name: Any, where: str) -> str:
    """The canonical metric ``name``, or an error naming the field ``where``."""
    if not isinstance(name, str) or _norm_metric(name) not in METRICS:
        raise InvalidConfigError(
            f"{where}: unknown metric {name!r}; choose one of: {', '.join(METRICS)}")
    return _norm_metric(name)


def check_threshold(metric: str, value: Any, where: str) -> float:
    """A threshold as a float, in [0, 1] for probability-valued metrics."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise InvalidConfigError(f"{where}: threshold must be a number, got {value!r}")
    v = float(value)
    if metric in UNBOUNDED_METRICS:
        if v < 0:
            raise InvalidConfigError(f"{where}: threshold must be >= 0, got {v}")
    elif not 0.0 <= v <= 1.0:
        raise InvalidConfigError(f"{where}: threshold must be in [0, 1], got {v}")
    return v


@dataclass(frozen=True)
class Threshold:
    """``metric`` of ``attack`` (every attack when None) must stay at or below ``limit``."""

    metric: str
    limit: float
    attack: str | None = None


@dataclass(frozen=True)
class GateSpec:
    """The CI gate.

    Attributes:
        bound: Which number is gated: ``upper`` confidence bound (default; a build fails
            only when the data cannot rule out a crossing), the point ``value``, or
            ``lower`` bound.
        thresholds: Absolute limits.
        baseline: Path of a baseline report (relative paths are relative to the spec).
        tolerance: Allowed increase over the baseline for every compared metric.
        tolerances: Per-metric overrides of ``tolerance``.
        metrics: Metrics compared with the baseline.
    """

    bound: str = "upper"
    thresholds: tuple[Threshold, ...] = ()
    baseline: str | None = None
    tolerance: float = 0.05
    tolerances: dict[str, float] = field(default_factory=dict)
    metrics: tuple[str, ...] = DEFAULT_METRICS


def parse_gate(raw: Any, where: str = "gate") -> GateSpec:
    """Validate a ``[gate]`` table."""
    from graphleaks.attacks import registry as attacks

    g = table(raw, where)
    no_unknown(g, {"bound", "thresholds", "baseline", "tolerance", "tolerances", "metrics"},
                where)
    bound = typed(g, "bound", str, where, "upper")
    if bound not in BOUNDS:
        raise InvalidConfigError(f"{where}.bound must be one of {', '.join(BOUNDS)}, "
                                 f"got {bound!r}")
    thresholds: list[Threshold] = []
    for key, value in table(g.get("thresholds", {}), f"{where}.thresholds").items():
        if isinstance(value, Mapping):
            try:
                attack = attacks.get(key).name
            except InvalidConfigError as exc:
                raise wrap(f"{where}.thresholds.{key}", exc) from None
            for mkey, mval in value.items():
                w = f"{where}.thresholds.{key}.{mkey}"
                m = check_metric(mkey, w)
                thresholds.append(Threshold(m, check_threshold(m, mval, w), attack))
        else:
            w = f"{where}.thresholds.{key}"
            m = check_metric(key, w)
            thresholds.append(Threshold(m, check_threshold(m, value, w)))
    tol = g.get("tolerance", 0.05)
    tol = check_threshold("epsilon_lb", tol, f"{where}.tolerance")
    tols = {}
    for key, value in table(g.get("tolerances", {}), f"{where}.tolerances").items():
        w = f"{where}.tolerances.{key}"
        tols[check_metric(key, w)] = check_threshold("epsilon_lb", value, w)
    metrics = parse_metrics(g.get("metrics", list(DEFAULT_METRICS)), f"{where}.metrics")
    for m in tols:
        if m not in metrics:
            metrics = (*metrics, m)
    return GateSpec(bound=bound, thresholds=tuple(thresholds),
                    baseline=typed(g, "baseline", str, where, None), tolerance=tol,
                    tolerances=tols, metrics=metrics)


def parse_metrics(raw: Any, where: str) -> tuple[str, ...]:
    """A non-empty list of metric names as canonical names, or an error naming ``where``."""
    if not isinstance(raw, list) or not raw:
        raise InvalidConfigError(f"{where} must be a non-empty list of metric names")
    return tuple(check_metric(m, f"{where}[{i}]") for i, m in enumerate(raw))
