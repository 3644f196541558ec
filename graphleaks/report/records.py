"""Typed records of an attack's metrics in a report, and their one JSON encoder and decoder.

A report keeps every figure typed from :mod:`graphleaks.metrics` to the JSON encoder: an
:class:`AttackMetrics` holds the :class:`~graphleaks.metrics.binary.BinaryMetrics` or
:class:`~graphleaks.metrics.multiclass.MulticlassMetrics`, the ROC points, the ε lower
bounds with their ledger comparisons, the paper metric and the slices. Readers (the
``check`` gate, HTML, Markdown, verdict, sweeps, ``results``, tracking) read attributes.

Report JSON becomes objects only through
:meth:`graphleaks.report.report.AuditReport.from_json`, which calls :func:`decode_metrics` for
each attack here (and :func:`decode_canary_audit` for canary audits); the metrics of a
results-store row are read with :func:`decode_metrics` or, for the compact rows that hold only
some metrics, :func:`decode_readings`. Every decoder refuses malformed input with a one-line
:class:`~graphleaks.errors.DataError` naming the field; it never quotes the hostile value.

Example:
    >>> est = Estimate(0.8, 0.77, 0.83)
    >>> m = AttackMetrics(multiclass=None, binary=None)
    >>> metric_reading(m, "auc") is None
    True
    >>> decode_estimate(est.to_dict(), "auc") == est
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from graphleaks._registry import canonical_name
from graphleaks.errors import DataError
from graphleaks.metrics.binary import (
    TPR_AT_FPR_THRESHOLD,
    BinaryMetrics,
    Estimate,
    ThresholdEstimates,
)
from graphleaks.metrics.multiclass import MulticlassMetrics
from graphleaks.metrics.one_run import OneRunBound
from graphleaks.metrics.privacy_bound import EpsilonBound
from graphleaks.metrics.slices import SliceMetrics

# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class CanaryAudit:
    """The outcome of one canary audit: claimed beside audited ε.

    Attributes:
        unit: The audited unit.
        defense: The defense's registry name.
        attack: The canary attack used.
        claimed_epsilon: ε from the target's ledger (``inf`` if non-private).
        claimed_delta: δ from the ledger.
        bound: The one-run bound (ε and μ lower bounds, guesses, correct guesses).
        violation: Whether the audited ε exceeds the claimed ε.
        num_inserted: Canaries actually inserted.
        seed: The audit's seed.
        notes: How the audit was run.
        scope: What was audited, for the report ("the trained target", "the feature
            mechanism's release, not the training run"); empty in reports written before.
    """

    unit: str
    defense: str
    attack: str
    claimed_epsilon: float
    claimed_delta: float
    bound: OneRunBound
    violation: bool
    num_inserted: int
    seed: int
    notes: tuple[str, ...] = ()
    scope: str = ""

    @property
    def audited_epsilon(self) -> float:
        """The audited ε lower bound."""
        return self.bound.epsilon_lb

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict."""
        d = asdict(self)
        d["audited_epsilon"] = self.audited_epsilon
        d["notes"] = list(self.notes)
        if not math.isfinite(self.claimed_epsilon):
            d["claimed_epsilon"] = "inf"
        return d


@dataclass(frozen=True)
class RocCurve:
    """ROC points of one attack (at most a few hundred, for plots)."""

    fpr: tuple[float, ...]
    tpr: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"fpr": [...], "tpr": [...]}``."""
        return {"fpr": list(self.fpr), "tpr": list(self.tpr)}


@dataclass(frozen=True)
class OracleAccuracy:
    """Balanced accuracy at the threshold chosen on the evaluation labels (an upper bound)."""

    value: float
    threshold: float
    note: str = "upper bound: threshold chosen on the evaluation labels"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {"value": self.value, "threshold": self.threshold, "note": self.note}


@dataclass(frozen=True)
class PaperMetric:
    """A figure computed the way a paper's code did (compat modes), named so."""

    name: str
    value: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {"name": self.name, "value": self.value}


@dataclass(frozen=True)
class LedgerComparison:
    """An ε lower bound compared with the ledger's claim (same unit only).

    Attributes:
        tested_unit: The unit the attack tests.
        ledger_unit: The unit the ledger protects.
        comparable: Whether the two units are the same and a finite ε is claimed.
        violation: Whether the bound exceeds the claim (None when not comparable).
        sound: Whether the bound's threshold was fixed without the evaluation labels.
        text: The comparison in words.
    """

    tested_unit: str
    ledger_unit: str
    comparable: bool
    violation: bool | None
    sound: bool
    text: str

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> LedgerComparison:
        """From :func:`graphleaks.metrics.privacy_bound.compare_with_claim`'s result."""
        return cls(str(d["tested_unit"]), str(d["ledger_unit"]), bool(d["comparable"]),
                   None if d["violation"] is None else bool(d["violation"]),
                   bool(d["sound"]), str(d["text"]))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {"tested_unit": self.tested_unit, "ledger_unit": self.ledger_unit,
                "comparable": self.comparable, "violation": self.violation,
                "sound": self.sound, "text": self.text}


@dataclass(frozen=True)
class BoundReport:
    """An ε lower bound and, when the target has a ledger, its comparison with the claim."""

    bound: EpsilonBound
    ledger_comparison: LedgerComparison | None = None

    def to_dict(self) -> dict[str, Any]:
        """The bound's fields, plus ``ledger_comparison`` when there is one."""
        out = self.bound.to_dict()
        if self.ledger_comparison is not None:
            out["ledger_comparison"] = self.ledger_comparison.to_dict()
        return out


@dataclass(frozen=True)
class AttackMetrics:
    """Everything measured of one attack.

    Attributes:
        binary: Binary metrics (membership, link, reconstruction), or None.
        multiclass: Multiclass metrics (attribute inference), or None.
        roc: ROC points of a binary attack.
        oracle_balanced_accuracy: Balanced accuracy at the oracle threshold.
        paper_metric: A paper's own figure, in a compat mode.
        epsilon_lower_bound: The sound ε lower bound at the attack's own threshold.
        epsilon_lower_bound_max_over_thresholds: The optimistic bound (best threshold).
        slices: Per-slice metrics (degree bucket, class), by slice key.
        slice_auc: Only on a slice read as an attack (:func:`slice_as_metrics`).
        slice_tpr_at_fpr: Likewise.
        extra: Metric kinds this graphleaks has no record for, kept as JSON so a report
            written by a newer producer loses nothing (listed, never read).
    """

    binary: BinaryMetrics | None = None
    multiclass: MulticlassMetrics | None = None
    roc: RocCurve | None = None
    oracle_balanced_accuracy: OracleAccuracy | None = None
    paper_metric: PaperMetric | None = None
    epsilon_lower_bound: BoundReport | None = None
    epsilon_lower_bound_max_over_thresholds: BoundReport | None = None
    slices: Mapping[str, SliceMetrics] = field(default_factory=dict)
    slice_auc: Estimate | None = None
    slice_tpr_at_fpr: Mapping[float, Estimate] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The metric kinds present (``binary``, ``multiclass`` and any ``extra``)."""
        known = tuple(k for k in ("binary", "multiclass") if getattr(self, k) is not None)
        return known + tuple(sorted(self.extra))

    def readings(self) -> Readings:
        """The gateable metrics (see :data:`METRIC_READERS`) as :class:`Readings`."""
        return Readings.of(self)

    @property
    def bound(self) -> BoundReport | None:
        """The sound ε bound if there is one, else the optimistic one."""
        return self.epsilon_lower_bound or self.epsilon_lower_bound_max_over_thresholds

    def estimates(self) -> dict[str, Estimate]:
        """Every interval estimate of the binary or multiclass metrics, by dotted path."""
        out: dict[str, Estimate] = {}
        if self.binary is not None:
            b = self.binary
            out.update(auc=b.auc, average_precision=b.average_precision,
                       max_advantage=b.max_advantage)
            out.update({f"tpr_at_fpr.{_fpr_key(f)}": e for f, e in b.tpr_at_fpr.items()})
            if b.at_threshold is not None:
                t = b.at_threshold
                out.update({f"at_threshold.{n}": getattr(t, n) for n in _THRESHOLD_ESTIMATES})
        if self.multiclass is not None:
            mc = self.multiclass
            out.update({n: getattr(mc, n) for n in _MULTICLASS_ESTIMATES})
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary, in the shape of schema version 1 and 2."""
        out: dict[str, Any] = dict(self.extra)
        if self.binary is not None:
            out.update(binary=self.binary.to_dict())
        if self.multiclass is not None:
            out.update(multiclass=self.multiclass.to_dict())
        for name in ("roc", "oracle_balanced_accuracy", "paper_metric", "epsilon_lower_bound",
                     "epsilon_lower_bound_max_over_thresholds"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value.to_dict()
        if self.slices:
            out["slices"] = {k: s.to_dict() for k, s in self.slices.items()}
        return out


def slice_as_metrics(s: SliceMetrics) -> AttackMetrics:
    """A slice read as an attack's metrics (AUC and TPR@FPR only), for gating."""
    return AttackMetrics(slice_auc=s.auc, slice_tpr_at_fpr=dict(s.tpr_at_fpr))


_THRESHOLD_ESTIMATES = ("accuracy", "balanced_accuracy", "precision", "recall", "fpr", "f1",
                        "advantage")
_MULTICLASS_ESTIMATES = ("accuracy", "f1_micro", "f1_macro", "gain_over_baseline")


@dataclass(frozen=True)
class MetricReading:
    """One gateable metric: its value and, for an estimate, its interval."""

    value: float
    ci: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"value": v, "ci": [lo, hi] or None}`` (the shape of an estimate)."""
        return {"value": self.value, "ci": None if self.ci is None else list(self.ci)}


def _tpr_at(fpr: float) -> Callable[[AttackMetrics], Estimate | None]:
    def read(m: AttackMetrics) -> Estimate | None:
        if m.binary is not None:
            return m.binary.tpr_at_fpr.get(fpr)
        return m.slice_tpr_at_fpr.get(fpr)
    return read


def _at_threshold(name: str) -> Callable[[AttackMetrics], Estimate | None]:
    def read(m: AttackMetrics) -> Estimate | None:
        at = m.binary.at_threshold if m.binary is not None else None
        return None if at is None else getattr(at, name)
    return read


def _binary(name: str) -> Callable[[AttackMetrics], Estimate | None]:
    def read(m: AttackMetrics) -> Estimate | None:
        if m.binary is not None:
            return getattr(m.binary, name)
        return m.slice_auc if name == "auc" else None
    return read


def _multiclass(name: str) -> Callable[[AttackMetrics], Estimate | None]:
    def read(m: AttackMetrics) -> Estimate | None:
        return None if m.multiclass is None else getattr(m.multiclass, name)
    return read


def _epsilon_lb(m: AttackMetrics) -> float | None:
    return None if m.epsilon_lower_bound is None else m.epsilon_lower_bound.bound.epsilon_lb


#: Gateable metric names and how to read each from an :class:`AttackMetrics`.
METRIC_READERS: dict[str, Callable[[AttackMetrics], Estimate | float | None]] = {
    "auc": _binary("auc"),
    "average_precision": _binary("average_precision"),
    "max_advantage": _binary("max_advantage"),
    "tpr@0.1%fpr": _tpr_at(0.001),
    "tpr@1%fpr": _tpr_at(0.01),
    "tpr@10%fpr": _tpr_at(0.1),
    "accuracy": _at_threshold("accuracy"),
    "advantage": _at_threshold("advantage"),
    "balanced_accuracy": _at_threshold("balanced_accuracy"),
    "epsilon_lb": _epsilon_lb,
    "attribute_accuracy": _multiclass("accuracy"),
    "f1_micro": _multiclass("f1_micro"),
    "f1_macro": _multiclass("f1_macro"),
    "gain_over_baseline": _multiclass("gain_over_baseline"),
}


def metric_reading(metrics: AttackMetrics, metric: str) -> MetricReading | None:
    """Read the gateable ``metric`` (a key of :data:`METRIC_READERS`); None if absent.

    This reads numbers already computed by :mod:`graphleaks.metrics`; it computes nothing.
    """
    found = METRIC_READERS[metric](metrics)
    if found is None:
        return None
    if isinstance(found, Estimate):
        return MetricReading(float(found.value), (float(found.lo), float(found.hi)))
    return MetricReading(float(found))


@dataclass(frozen=True)
class Readings:
    """The gateable metrics of one attack, a slice or a sweep row, by metric name.

    Attributes:
        values: Each measured metric of :data:`METRIC_READERS` and its reading.
        n_pos: Positives of a binary attack (None when unknown).
        n_neg: Negatives of a binary attack (None when unknown).
        multiclass: Whether the metrics are multiclass (attribute inference).
    """

    values: Mapping[str, MetricReading]
    n_pos: int | None = None
    n_neg: int | None = None
    multiclass: bool = False

    def get(self, metric: str) -> MetricReading | None:
        """The reading of ``metric``, or None when it was not measured."""
        return self.values.get(metric)

    def to_dict(self) -> dict[str, Any]:
        """The binary and multiclass readings in the JSON shape of an attack's metrics, which
        :func:`decode_readings` reads back (e.g. the sweep rows a report records)."""
        binary: dict[str, Any] = {}
        multiclass: dict[str, Any] = {}
        for metric, reading in self.values.items():
            path = _METRIC_PATHS[metric]
            node = binary if path[0] == "binary" else multiclass if path[0] == "multiclass" \
                else None
            if node is None:
                continue
            for key in path[1:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = reading.to_dict()
        out: dict[str, Any] = {}
        if binary:
            out.update(binary={**binary, "n_pos": self.n_pos, "n_neg": self.n_neg})
        if multiclass or self.multiclass:
            out.update(multiclass=multiclass)
        return out

    @classmethod
    def of(cls, metrics: AttackMetrics) -> Readings:
        """Every gateable metric of typed metrics."""
        values = {m: r for m in METRIC_READERS if (r := metric_reading(metrics, m)) is not None}
        b = metrics.binary
        return cls(values, None if b is None else b.n_pos, None if b is None else b.n_neg,
                   metrics.multiclass is not None)


# --------------------------------------------------------------------------- decoder


def _fpr_key(fpr: float) -> str:
    """JSON key of an FPR point: the shortest round-tripping repr, e.g. ``"0.001"``."""
    return repr(float(fpr))


def _obj(d: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise DataError(f"{where} must be a JSON object, got {type(d).__name__}; regenerate "
                        "the report with graphleaks")
    return d


def _get(d: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise DataError(f"{where} lacks the field {key!r}; regenerate the report with "
                        "graphleaks")
    return d[key]


def num(x: Any, where: str) -> float:
    """A number of a report; ``"inf"``/``"-inf"``/``"nan"`` are how the encoder writes
    non-finite floats.

    Raises:
        DataError: For anything else.
    """
    if isinstance(x, str) and x in ("inf", "-inf", "nan"):
        return float(x)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise DataError(f"{where} must be a number, got {type(x).__name__}")
    return float(x)


def _int(x: Any, where: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise DataError(f"{where} must be an integer, got {type(x).__name__}")
    return x


def _bool(x: Any, where: str) -> bool:
    if not isinstance(x, bool):
        raise DataError(f"{where} must be true or false, got {type(x).__name__}")
    return x


def _str(x: Any, where: str) -> str:
    if not isinstance(x, str):
        raise DataError(f"{where} must be a string, got {type(x).__name__}")
    return x


def decode_estimate(d: Any, where: str) -> Estimate:
    """An :class:`Estimate` from ``{"value", "ci": [lo, hi], "method"}``."""
    d = _obj(d, where)
    value = num(_get(d, "value", where), f"{where}.value")
    ci = _get(d, "ci", where)
    if not isinstance(ci, list) or len(ci) != 2:
        raise DataError(f"{where}.ci must be a pair of numbers [lo, hi]")
    method = d.get("method", "percentile-bootstrap")
    return Estimate(value, num(ci[0], f"{where}.ci"), num(ci[1], f"{where}.ci"),
                    _str(method, f"{where}.method"))


def _tpr_map(d: Any, where: str) -> dict[float, Estimate]:
    out = {}
    for key, est in _obj(d, where).items():
        try:
            fpr = float(key)
        except ValueError:
            raise DataError(f"{where}: keys must be false-positive rates") from None
        out[fpr] = decode_estimate(est, f"{where}.{key}")
    return out


def _decode_binary(d: Any, where: str) -> BinaryMetrics:
    d = _obj(d, where)
    at = d.get("at_threshold")
    at_thr = None
    if at is not None:
        at = _obj(at, f"{where}.at_threshold")
        at_thr = ThresholdEstimates(
            threshold=num(_get(at, "threshold", f"{where}.at_threshold"),
                          f"{where}.at_threshold.threshold"),
            **{n: decode_estimate(_get(at, n, f"{where}.at_threshold"),
                                  f"{where}.at_threshold.{n}") for n in _THRESHOLD_ESTIMATES})
    return BinaryMetrics(
        auc=decode_estimate(_get(d, "auc", where), f"{where}.auc"),
        average_precision=decode_estimate(_get(d, "average_precision", where),
                                          f"{where}.average_precision"),
        max_advantage=decode_estimate(_get(d, "max_advantage", where),
                                      f"{where}.max_advantage"),
        tpr_at_fpr=_tpr_map(_get(d, "tpr_at_fpr", where), f"{where}.tpr_at_fpr"),
        at_threshold=at_thr,
        n_pos=_int(_get(d, "n_pos", where), f"{where}.n_pos"),
        n_neg=_int(_get(d, "n_neg", where), f"{where}.n_neg"),
        n_bootstrap=_int(_get(d, "n_bootstrap", where), f"{where}.n_bootstrap"),
        confidence=num(_get(d, "confidence", where), f"{where}.confidence"),
        seed=_int(_get(d, "seed", where), f"{where}.seed"),
        interval=_str(d.get("interval", "percentile-bootstrap"), f"{where}.interval"),
        # reports written before the randomised rule read TPR@FPR at a real threshold
        tpr_at_fpr_rule=_str(d.get("tpr_at_fpr_rule", TPR_AT_FPR_THRESHOLD),
                             f"{where}.tpr_at_fpr_rule"),
    )


def _decode_multiclass(d: Any, where: str) -> MulticlassMetrics:
    d = _obj(d, where)
    est = {n: decode_estimate(_get(d, n, where), f"{where}.{n}") for n in _MULTICLASS_ESTIMATES}
    return MulticlassMetrics(
        **est,
        majority_baseline=num(_get(d, "majority_baseline", where), f"{where}.majority_baseline"),
        leaks=_bool(_get(d, "leaks", where), f"{where}.leaks"),
        baseline_from_train=_bool(_get(d, "baseline_from_train", where),
                                  f"{where}.baseline_from_train"),
        n=_int(_get(d, "n", where), f"{where}.n"),
        n_classes=_int(_get(d, "n_classes", where), f"{where}.n_classes"),
        n_bootstrap=_int(_get(d, "n_bootstrap", where), f"{where}.n_bootstrap"),
        confidence=num(_get(d, "confidence", where), f"{where}.confidence"),
        seed=_int(_get(d, "seed", where), f"{where}.seed"),
    )


def _decode_bound(d: Any, where: str) -> BoundReport:
    d = _obj(d, where)
    assumptions = d.get("assumptions", [])
    if not isinstance(assumptions, list):
        raise DataError(f"{where}.assumptions must be a list of strings")
    bound = EpsilonBound(
        epsilon_lb=num(_get(d, "epsilon_lb", where), f"{where}.epsilon_lb"),
        threshold=num(_get(d, "threshold", where), f"{where}.threshold"),
        tpr_lower=num(_get(d, "tpr_lower", where), f"{where}.tpr_lower"),
        fpr_upper=num(_get(d, "fpr_upper", where), f"{where}.fpr_upper"),
        form=_str(_get(d, "form", where), f"{where}.form"),
        delta=num(_get(d, "delta", where), f"{where}.delta"),
        confidence=num(_get(d, "confidence", where), f"{where}.confidence"),
        threshold_fixed=_bool(_get(d, "threshold_fixed", where), f"{where}.threshold_fixed"),
        n_pos=_int(_get(d, "n_pos", where), f"{where}.n_pos"),
        n_neg=_int(_get(d, "n_neg", where), f"{where}.n_neg"),
        unit=_str(d.get("unit", "node"), f"{where}.unit"),
        assumptions=tuple(_str(a, f"{where}.assumptions") for a in assumptions),
    )
    cmp = d.get("ledger_comparison")
    comparison = None
    if cmp is not None:
        w = f"{where}.ledger_comparison"
        cmp = _obj(cmp, w)
        violation = _get(cmp, "violation", w)
        comparison = LedgerComparison(
            tested_unit=_str(_get(cmp, "tested_unit", w), f"{w}.tested_unit"),
            ledger_unit=_str(_get(cmp, "ledger_unit", w), f"{w}.ledger_unit"),
            comparable=_bool(_get(cmp, "comparable", w), f"{w}.comparable"),
            violation=None if violation is None else _bool(violation, f"{w}.violation"),
            sound=_bool(_get(cmp, "sound", w), f"{w}.sound"),
            text=_str(_get(cmp, "text", w), f"{w}.text"))
    return BoundReport(bound, comparison)


def _decode_slice(d: Any, where: str) -> SliceMetrics:
    d = _obj(d, where)
    n_pos = _int(_get(d, "n_pos", where), f"{where}.n_pos")
    n_neg = _int(_get(d, "n_neg", where), f"{where}.n_neg")
    if d.get("too_few"):
        return SliceMetrics(n_pos, n_neg)
    b = _obj(_get(d, "binary", where), f"{where}.binary")
    return SliceMetrics(n_pos, n_neg,
                        auc=decode_estimate(_get(b, "auc", f"{where}.binary"),
                                            f"{where}.binary.auc"),
                        tpr_at_fpr=_tpr_map(b.get("tpr_at_fpr", {}),
                                            f"{where}.binary.tpr_at_fpr"))


def _decode_floats(x: Any, where: str) -> tuple[float, ...]:
    if not isinstance(x, list):
        raise DataError(f"{where} must be a list of numbers")
    return tuple(num(v, where) for v in x)


def decode_metrics(d: Any, where: str) -> AttackMetrics:
    """An :class:`AttackMetrics` from its JSON dictionary (schema version 1 or 2).

    Raises:
        DataError: Naming the first missing or mistyped field.
    """
    d = _obj(d, where)
    known = {"binary", "multiclass", "roc", "oracle_balanced_accuracy", "paper_metric",
             "epsilon_lower_bound", "epsilon_lower_bound_max_over_thresholds", "slices"}
    roc = oracle = paper = None
    if "roc" in d:
        r = _obj(d["roc"], f"{where}.roc")
        roc = RocCurve(_decode_floats(_get(r, "fpr", f"{where}.roc"), f"{where}.roc.fpr"),
                       _decode_floats(_get(r, "tpr", f"{where}.roc"), f"{where}.roc.tpr"))
        if len(roc.fpr) != len(roc.tpr):
            raise DataError(f"{where}.roc: fpr and tpr must have the same length")
    if "oracle_balanced_accuracy" in d:
        w = f"{where}.oracle_balanced_accuracy"
        o = _obj(d["oracle_balanced_accuracy"], w)
        oracle = OracleAccuracy(num(_get(o, "value", w), f"{w}.value"),
                                num(_get(o, "threshold", w), f"{w}.threshold"),
                                _str(o.get("note", OracleAccuracy.note), f"{w}.note"))
    if "paper_metric" in d:
        w = f"{where}.paper_metric"
        p = _obj(d["paper_metric"], w)
        paper = PaperMetric(_str(_get(p, "name", w), f"{w}.name"),
                            num(_get(p, "value", w), f"{w}.value"))
    slices = {str(k): _decode_slice(v, f"{where}.slices[{k}]")
              for k, v in _obj(d.get("slices", {}), f"{where}.slices").items()}
    return AttackMetrics(
        binary=(_decode_binary(d["binary"], f"{where}.binary") if "binary" in d else None),
        multiclass=(_decode_multiclass(d["multiclass"], f"{where}.multiclass")
                    if "multiclass" in d else None),
        roc=roc, oracle_balanced_accuracy=oracle, paper_metric=paper,
        epsilon_lower_bound=(_decode_bound(d["epsilon_lower_bound"],
                                           f"{where}.epsilon_lower_bound")
                             if "epsilon_lower_bound" in d else None),
        epsilon_lower_bound_max_over_thresholds=(
            _decode_bound(d["epsilon_lower_bound_max_over_thresholds"],
                          f"{where}.epsilon_lower_bound_max_over_thresholds")
            if "epsilon_lower_bound_max_over_thresholds" in d else None),
        slices=slices,
        extra={k: v for k, v in d.items() if k not in known},
    )


#: Where each gateable metric lives in the JSON of an attack's metrics, for the compact rows
#: of a results store or a report's recorded sweep, which hold only some metrics.
_METRIC_PATHS: dict[str, tuple[str, ...]] = {
    "auc": ("binary", "auc"),
    "average_precision": ("binary", "average_precision"),
    "max_advantage": ("binary", "max_advantage"),
    "tpr@0.1%fpr": ("binary", "tpr_at_fpr", "0.001"),
    "tpr@1%fpr": ("binary", "tpr_at_fpr", "0.01"),
    "tpr@10%fpr": ("binary", "tpr_at_fpr", "0.1"),
    "accuracy": ("binary", "at_threshold", "accuracy"),
    "advantage": ("binary", "at_threshold", "advantage"),
    "balanced_accuracy": ("binary", "at_threshold", "balanced_accuracy"),
    "epsilon_lb": ("epsilon_lower_bound", "epsilon_lb"),
    "attribute_accuracy": ("multiclass", "accuracy"),
    "f1_micro": ("multiclass", "f1_micro"),
    "f1_macro": ("multiclass", "f1_macro"),
    "gain_over_baseline": ("multiclass", "gain_over_baseline"),
}


def decode_readings(d: Any, where: str) -> Readings:
    """The gateable metrics found in a (possibly partial) metrics JSON dictionary.

    Results-store rows and the sweep rows a report records keep only some metrics, so this
    reads each one that is present; a present one that is malformed is refused.

    Raises:
        DataError: Naming the first malformed metric.
    """
    d = _obj(d, where)
    values: dict[str, MetricReading] = {}
    for metric, path in _METRIC_PATHS.items():
        node: Any = d
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        if node is None:
            continue
        w = f"{where}.{metric}"
        if isinstance(node, Mapping):
            e = decode_estimate(node, w) if node.get("ci") is not None else None
            values[metric] = (MetricReading(e.value, e.ci) if e is not None else
                              MetricReading(num(_get(node, "value", w), w)))
        else:
            values[metric] = MetricReading(num(node, w))
    b = d.get("binary")
    n_pos = b.get("n_pos") if isinstance(b, Mapping) else None
    n_neg = b.get("n_neg") if isinstance(b, Mapping) else None
    return Readings(values, n_pos if isinstance(n_pos, int) else None,
                    n_neg if isinstance(n_neg, int) else None, "multiclass" in d)


def decode_canary_audit(d: Any, where: str) -> CanaryAudit:
    """A :class:`CanaryAudit` from its JSON dictionary.

    Raises:
        DataError: Naming the first missing or mistyped field.
    """
    d = _obj(d, where)
    w = f"{where}.bound"
    b = _obj(_get(d, "bound", where), w)
    bound = OneRunBound(
        num_canaries=_int(_get(b, "num_canaries", w), f"{w}.num_canaries"),
        num_guesses=_int(_get(b, "num_guesses", w), f"{w}.num_guesses"),
        num_correct=_int(_get(b, "num_correct", w), f"{w}.num_correct"),
        epsilon_lb=num(_get(b, "epsilon_lb", w), f"{w}.epsilon_lb"),
        mu_lb=num(_get(b, "mu_lb", w), f"{w}.mu_lb"),
        delta=num(_get(b, "delta", w), f"{w}.delta"),
        confidence=num(_get(b, "confidence", w), f"{w}.confidence"),
        mu_method=_str(b.get("mu_method", OneRunBound.mu_method), f"{w}.mu_method"))
    notes = _get(d, "notes", where)
    if not isinstance(notes, list):
        raise DataError(f"{where}.notes must be a list of strings")
    return CanaryAudit(
        unit=_str(_get(d, "unit", where), f"{where}.unit"),
        defense=canonical_name(_str(_get(d, "defense", where), f"{where}.defense")),
        attack=_str(_get(d, "attack", where), f"{where}.attack"),
        claimed_epsilon=num(_get(d, "claimed_epsilon", where), f"{where}.claimed_epsilon"),
        claimed_delta=num(_get(d, "claimed_delta", where), f"{where}.claimed_delta"),
        bound=bound, violation=_bool(_get(d, "violation", where), f"{where}.violation"),
        num_inserted=_int(_get(d, "num_inserted", where), f"{where}.num_inserted"),
        seed=_int(_get(d, "seed", where), f"{where}.seed"),
        notes=tuple(_str(n, f"{where}.notes") for n in notes),
        scope=_str(d.get("scope", ""), f"{where}.scope"))
