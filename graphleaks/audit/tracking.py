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

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphleaks.errors import InvalidConfigError

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


def flat_metrics(attack: str, metrics: Mapping[str, Any], prefix: str = "") -> Iterator[
        tuple[str, float]]:
    """``(key, value)`` for every estimate of one attack: value and, with an interval,
    ``.ci_lo``/``.ci_hi``."""
    for k, v in metrics.items():
        path = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, Mapping) and "value" in v:
            try:
                yield _key(f"{attack}.{path}"), float(v["value"])
            except (TypeError, ValueError):
                continue
            ci = v.get("ci")
            if ci and ci[0] is not None:
                yield _key(f"{attack}.{path}.ci_lo"), float(ci[0])
                yield _key(f"{attack}.{path}.ci_hi"), float(ci[1])
        elif isinstance(v, Mapping) and k not in ("roc",):
            yield from flat_metrics(attack, v, path)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield _key(f"{attack}.{path}"), float(v)


def audit_params(report: Mapping[str, Any]) -> dict[str, str]:
    """The parameters of an audit, as MLflow params (strings, at most 500 characters)."""
    t = report.get("target", {})
    params: dict[str, Any] = {
        "seed": report.get("seed"), "defense": t.get("defense"),
        "arch": (t.get("architecture") or {}).get("arch"),
        "dataset": (t.get("dataset") or {}).get("name"), "fingerprint": t.get("fingerprint"),
        "epsilon": (report.get("ledger") or {}).get("epsilon"),
        "suite": (report.get("config") or {}).get("suite"),
    }
    for k, v in (t.get("defense_config") or {}).items():
        params[f"defense.{k}"] = v
    for a in report.get("attacks", []):
        for k, v in (a.get("config") or {}).items():
            params[f"{a['attack']}.{k}"] = v
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

    def log_audit(self, report: Mapping[str, Any], out_dir: str | Path | None = None) -> str:
        """Log one audit as one run; returns the run id."""
        mlflow, run = self._start(f"audit seed={report.get('seed')}")
        with run:
            mlflow.log_params(audit_params(report))
            metrics = {k: v for a in report.get("attacks", [])
                       for k, v in flat_metrics(a["attack"], a.get("metrics", {}))}
            for k, v in (report.get("target", {}).get("utility") or {}).items():
                metrics[_key(f"utility.{k}")] = float(v)
            mlflow.log_metrics(metrics)
            mlflow.log_dict(dict(report.get("ledger") or {}), "ledger.json")
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
            metrics = dict(flat_metrics(str(row.get("attack")), row.get("metrics") or {}))
            for k, v in (row.get("utility") or {}).items():
                metrics[_key(f"utility.{k}")] = float(v)
            mlflow.log_metrics(metrics)
            if row.get("ledger"):
                mlflow.log_dict(dict(row["ledger"]), "ledger.json")
            return str(run.info.run_id)
