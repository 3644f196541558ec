"""Experiment tracking: log an audit to MLflow (extra ``graphleaks[mlflow]``).

One audit is one MLflow run: its parameters (target, defense, seed, suite, each attack's
config), every metric estimate with its interval bounds (``auc``, ``auc.ci_lo``,
``auc.ci_hi`` per attack, slices included), the privacy ledger as a JSON artifact and the
report files as artifacts. A sweep logs one run per unit with :meth:`MlflowTracker.log_row`.

Written against MLflow's public fluent API (``mlflow.start_run``, ``log_params``,
``log_metrics``, ``log_dict``, ``log_artifact``); the tracking URI comes from
``MLFLOW_TRACKING_URI`` as usual.

The store is checked before any work: :meth:`MlflowTracker.from_env` refuses a URI that
cannot work (unknown scheme, or a database store without SQLAlchemy) and
:meth:`MlflowTracker.open` connects to it, so a bad store is exit 2 before training, never a
failure after a long audit. Two MLflow 3 changes are handled there:

* the ``file:`` store (``file:./mlruns``, the offline store of the README) is behind the
  opt-in ``MLFLOW_ALLOW_FILE_STORE``; naming a ``file:`` URI is that choice, so graphleaks
  sets the opt-in for its own process when the variable is unset;
* with ``MLFLOW_TRACKING_URI`` unset, MLflow 3 defaults to ``sqlite:///mlflow.db``, which
  needs SQLAlchemy (the full ``mlflow`` package; ``mlflow-skinny`` lacks it). Without it
  that default is refused up front, naming ``file:./mlruns`` or a server instead.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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


#: Database schemes served by MLflow's SQLAlchemy store (a ``+driver`` suffix allowed).
DB_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
#: Schemes opened without SQLAlchemy: the file store, servers, Databricks.
OTHER_SCHEMES = ("file", "http", "https", "databricks", "databricks-uc", "uc")
_USE_INSTEAD = ("set MLFLOW_TRACKING_URI=file:./mlruns (an offline store) or "
                "http://HOST:PORT (a tracking server)")


def _scheme(uri: str) -> str:
    """The URI's scheme, lower case; ``file`` for a plain path (MLflow reads it as one)."""
    m = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*):", uri)
    if m is None or len(m.group(1)) == 1:  # no scheme, or a Windows drive letter
        return "file"
    return m.group(1).lower()


def shown_uri(uri: str) -> str:
    """``uri`` for a message: user and password removed, control characters escaped."""
    from graphleaks.errors import one_line

    return one_line(re.sub(r"^([A-Za-z][A-Za-z0-9+.\-]*://)[^/@]*@", r"\1***@", uri))


def check_tracking_uri(uri: str, *, default: bool = False) -> str:
    """Refuse a tracking URI that cannot work, before anything is opened or written.

    Args:
        uri: The tracking URI.
        default: True when ``MLFLOW_TRACKING_URI`` is unset and ``uri`` is MLflow's default.

    Returns:
        The URI's scheme (``file`` for a plain path).

    Raises:
        InvalidConfigError: For an unknown scheme, or a database store without SQLAlchemy;
            the message says what to use instead.
    """
    scheme = _scheme(uri)
    if scheme.split("+")[0] in DB_SCHEMES:
        if not _has_sqlalchemy():
            what = (f"MLFLOW_TRACKING_URI is unset, and MLflow's default store "
                    f"{shown_uri(uri)}" if default else
                    f"the MLflow store MLFLOW_TRACKING_URI={shown_uri(uri)}")
            raise InvalidConfigError(f"--mlflow: {what} needs SQLAlchemy, which mlflow-skinny "
                                     f"lacks (pip install mlflow for a database store); or "
                                     f"{_USE_INSTEAD}")
        return scheme
    if scheme not in OTHER_SCHEMES:
        raise InvalidConfigError(f"--mlflow: MLFLOW_TRACKING_URI={shown_uri(uri)} has an "
                                 f"unknown scheme {scheme!r}; {_USE_INSTEAD}")
    return scheme


def _has_sqlalchemy() -> bool:
    """Whether MLflow's database stores can load (the full ``mlflow`` package brings it)."""
    return importlib.util.find_spec("sqlalchemy") is not None


@contextmanager
def _quick_http() -> Iterator[None]:
    """One short try at a server: MLflow retries for minutes by default."""
    names = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(names)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


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
        "task": report.config.get("task"),  # link, graph; a node report names none
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
    default, i.e. ``MLFLOW_TRACKING_URI`` or, in MLflow 3, ``sqlite:///mlflow.db``)."""

    tracking_uri: str | None = None
    experiment: str = "graphleaks"

    @classmethod
    def from_env(cls) -> MlflowTracker:
        """A tracker for MLflow's configured store, its URI checked; opens nothing yet.

        Call :meth:`open` once every other option is checked, before the work starts.

        Raises:
            InvalidConfigError: If MLflow is not installed, or the store cannot work (see
                :func:`check_tracking_uri`), naming the fix.
        """
        mlflow = _mlflow()
        given = os.environ.get("MLFLOW_TRACKING_URI") or None
        uri = given or str(mlflow.get_tracking_uri())
        check_tracking_uri(uri, default=given is None)
        return cls(tracking_uri=uri)

    def open(self) -> None:
        """Connect to the store and look the experiment up: a store that is down, refuses
        us or cannot be created fails here, before any work (a new ``file:`` or ``sqlite:``
        store is created empty).

        Raises:
            InvalidConfigError: Naming the store (without credentials) and what to do.
        """
        mlflow = _mlflow()
        uri = self.tracking_uri or str(mlflow.get_tracking_uri())
        scheme = check_tracking_uri(uri, default=self.tracking_uri is None)
        if scheme == "file":
            # naming a file: store is the user's opt-in to MLflow 3's maintenance-mode store;
            # an explicit MLFLOW_ALLOW_FILE_STORE (even false) is kept
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        try:
            with _quick_http():
                mlflow.MlflowClient(tracking_uri=uri).get_experiment_by_name(self.experiment)
        except Exception as exc:  # noqa: BLE001 - any failure to open the store is the same
            raise InvalidConfigError(
                f"--mlflow: cannot open the MLflow store {shown_uri(uri)} "
                f"({type(exc).__name__}); check that it is reachable and writable, or "
                f"{_USE_INSTEAD}") from None

    def _start(self, name: str) -> Any:
        mlflow = _mlflow()
        if self.tracking_uri:
            if _scheme(self.tracking_uri) == "file":  # as in open(): the user's opt-in
                os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
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
                                                             "seed", "config_hash", "task")
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
