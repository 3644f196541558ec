"""Experiment tracking: log an audit to MLflow (extra ``graphleaks[mlflow]``).

One audit is one MLflow run: its parameters (target, defense, seed, suite, each attack's
config), every metric estimate with its interval bounds (``auc``, ``auc.ci_lo``,
``auc.ci_hi`` per attack, slices included), the privacy ledger as a JSON artifact and the
report files as artifacts. A sweep logs one run per unit with :meth:`MlflowTracker.log_row`.

Written against MLflow's public fluent API (``mlflow.start_run``, ``log_params``,
``log_metrics``, ``log_dict``, ``log_artifact``); the tracking URI comes from
``MLFLOW_TRACKING_URI`` as usual (a local ``file:`` store works offline).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphleaks.errors import InvalidConfigError

if TYPE_CHECKING:
    from graphleaks.metrics.binary import Estimate
    from graphleaks.report.records import AttackMetrics
    from graphleaks.report.report import AuditReport

REPORT_FILES = ("report.json", "report.md", "report.html", "scores.csv")


def _mlflow() -> Any:
    try:
        import mlflow
    except ImportError:
        raise InvalidConfigError("--mlflow needs MLflow: pip install 'graphleaks[mlflow]'") \
            from None
    return mlflow


def _key(name: str) -> str:
    """MLflow keys allow letters, digits, ``_ - . / space``; map the rest (``@ % [ ] < =``)."""
    return re.sub(r"[^A-Za-z0-9_\-./ ]", "_", name)


def _estimate(key: str, e: Estimate) -> Iterator[tuple[str, float]]:
    yield _key(key), float(e.value)
    yield _key(f"{key}.ci_lo"), float(e.lo)
    yield _key(f"{key}.ci_hi"), float(e.hi)


def flat_metrics(attack: str, metrics: AttackMetrics) -> Iterator[tuple[str, float]]:
    """``(key, value)`` for every figure of one attack: estimates with ``.ci_lo``/``.ci_hi``,
    counts, ε bounds, the oracle accuracy, the paper metric and the slices."""
    from graphleaks.report.records import AttackMetrics

    b, mc = metrics.binary, metrics.multiclass
    if b is not None:
        for path, e in AttackMetrics(binary=b).estimates().items():
            yield from _estimate(f"{attack}.binary.{path}", e)
        yield _key(f"{attack}.binary.n_pos"), float(b.n_pos)
        yield _key(f"{attack}.binary.n_neg"), float(b.n_neg)
    if mc is not None:
        for path, e in AttackMetrics(multiclass=mc).estimates().items():
            yield from _estimate(f"{attack}.multiclass.{path}", e)
        yield _key(f"{attack}.multiclass.majority_baseline"), float(mc.majority_baseline)
        yield _key(f"{attack}.multiclass.n"), float(mc.n)
    for name in ("epsilon_lower_bound", "epsilon_lower_bound_max_over_thresholds"):
        bound = getattr(metrics, name)
        if bound is not None:
            for field in ("epsilon_lb", "tpr_lower", "fpr_upper"):
                v = float(getattr(bound.bound, field))
                if math.isfinite(v):  # MLflow refuses non-finite values
                    yield _key(f"{attack}.{name}.{field}"), v
    if metrics.oracle_balanced_accuracy is not None:
        yield (_key(f"{attack}.oracle_balanced_accuracy"),
               float(metrics.oracle_balanced_accuracy.value))
    if metrics.paper_metric is not None:
        yield _key(f"{attack}.paper_metric"), float(metrics.paper_metric.value)
    for key, s in metrics.slices.items():
        where = f"{attack}.slices.{key}"
        yield _key(f"{where}.n_pos"), float(s.n_pos)
        yield _key(f"{where}.n_neg"), float(s.n_neg)
        if s.auc is not None:
            yield from _estimate(f"{where}.binary.auc", s.auc)
        for fpr, e in s.tpr_at_fpr.items():
            yield from _estimate(f"{where}.binary.tpr_at_fpr.{fpr!r}", e)


def audit_params(report: AuditReport) -> dict[str, str]:
    """The parameters of an audit, as MLflow params (strings, at most 500 characters)."""
    t = report.target
    params: dict[str, Any] = {
        "seed": report.seed, "defense": t.defense,
        "arch": t.architecture.get("arch"),
        "dataset": (t.dataset or {}).get("name"), "fingerprint": t.fingerprint,
        "epsilon": report.ledger.to_dict()["epsilon"],
        "suite": report.config.get("suite"),
    }
    for k, v in t.defense_config.items():
        params[f"defense.{k}"] = v
    for a in report.attacks:
        for k, v in a.config.items():
            params[f"{a.attack}.{k}"] = v
    return {_key(k): str(v)[:500] for k, v in params.items() if v is not None}


@dataclass(frozen=True)
class MlflowTracker:
    """Logs audits to the MLflow tracking server or store ``tracking_uri`` (None: MLflow's
    default, i.e. ``MLFLOW_TRACKING_URI`` or ``./mlruns``)."""

    tracking_uri: str | None = None
    experiment: str = "graphleaks"

    @classmethod
    def from_env(cls) -> MlflowTracker:
        """A tracker for MLflow's configured store; fails early without the extra.

        Raises:
            InvalidConfigError: If MLflow is not installed, naming the fix.
        """
        _mlflow()
        return cls()

    def _start(self, name: str) -> Any:
        mlflow = _mlflow()
        if self.tracking_uri:
            mlflow.set_tracking_uri(self.tracking_uri)
        mlflow.set_experiment(self.experiment)
        return mlflow, mlflow.start_run(run_name=name)

    def log_audit(self, report: AuditReport, out_dir: str | Path | None = None) -> str:
        """Log one audit as one run; returns the run id."""
        mlflow, run = self._start(f"audit seed={report.seed}")
        with run:
            mlflow.log_params(audit_params(report))
            metrics = {k: v for a in report.attacks for k, v in flat_metrics(a.attack, a.metrics)}
            for k, v in report.target.utility.items():
                metrics[_key(f"utility.{k}")] = float(v)
            mlflow.log_metrics(metrics)
            mlflow.log_dict(report.ledger.to_dict(), "ledger.json")
            if out_dir is not None:
                for name in REPORT_FILES:
                    p = Path(out_dir) / name
                    if p.exists():
                        mlflow.log_artifact(str(p))
            return str(run.info.run_id)

    def log_row(self, row: Mapping[str, Any]) -> str:
        """Log one sweep unit (a results-store row) as one run; returns the run id."""
        mlflow, run = self._start(f"sweep {row.get('defense')} eps={row.get('epsilon')} "
                                  f"{row.get('attack')} seed={row.get('seed')}")
        with run:
            mlflow.log_params({k: str(row.get(k)) for k in ("defense", "epsilon", "attack",
                                                             "seed", "config_hash")
                               if row.get(k) is not None})
            from graphleaks.report.records import decode_metrics

            metrics = dict(flat_metrics(str(row.get("attack")), decode_metrics(
                row.get("metrics") or {}, "results store metrics")))
            for k, v in (row.get("utility") or {}).items():
                metrics[_key(f"utility.{k}")] = float(v)
            mlflow.log_metrics(metrics)
            if row.get("ledger"):
                mlflow.log_dict(dict(row["ledger"]), "ledger.json")
            return str(run.info.run_id)
