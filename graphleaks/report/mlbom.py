"""A report as a CycloneDX 1.6 ML-BOM: the audited model with a model card of every metric.

``graphleaks export REPORT --cyclonedx FILE`` writes it. The BOM holds one component of type
``machine-learning-model`` (the audited target) whose ``modelCard`` carries the audit; the
JSON is built here (cyclonedx-python-lib has no model-card classes yet) and checked against
the CycloneDX 1.6 schema bundled with that library before it is written
(:func:`validate_bom`).

How the report maps onto the model card (the mapping is ours; CycloneDX's fields are named
for model-quality metrics, and a privacy audit reuses them):

============================================  ==============================================
report.json                                   model card
============================================  ==============================================
each interval estimate of an attack           ``quantitativeAnalysis.performanceMetrics[]``:
                                              ``type`` = ``"<attack> <metric>"`` (the gate's
                                              metric names, e.g. ``tpr@1%fpr``, else the
                                              report.json path), ``value``, ``slice`` =
                                              ``overall``, ``confidenceInterval``
each slice (``degree<=2``, ``class=0``...)    the same, with ``slice`` = the slice key
ε lower bounds, oracle accuracy, paper metric  the same, without an interval (one number)
the attack's trivial baseline                 ``type`` = ``"<attack> trivial baseline <k>"``
canary audits                                 ``type`` = ``"canary audit (<unit>) <k>"``
target utility (accuracy, F1)                 ``type`` = ``"target <split>_<metric>"``
verdict (per risk: level, basis, advice)      ``considerations.ethicalConsiderations``:
                                              ``name`` = risk, level and basis,
                                              ``mitigationStrategy`` = the advice
threat model, notes, compat flags, ledger     ``considerations.technicalLimitations`` (the
notes, too-small slices                       conditions under which the numbers hold)
slices with intervals                         ``considerations.fairnessAssessments``: the
                                              group, its figures beside the overall ones
                                              (harms), the defense (mitigation)
target utility under the defense              ``considerations.performanceTradeoffs``
privacy ledger (unit, ε, δ, accountant,       ``modelCard.properties`` ``graphleaks:ledger:*``
status) and control coverage                  and ``graphleaks:control:*``
dataset, architecture                         ``modelParameters``
graphleaks itself                             ``metadata.tools.components[0]``
============================================  ==============================================

``performanceMetric`` has no place for an interval's method or confidence level: they are
stated once in ``modelCard.properties`` (``graphleaks:interval:*``). Numbers are written with
``repr`` (every digit of report.json); non-finite ones as ``inf``/``nan``. The BOM carries no
timestamp, and its serial number is derived from the report's content, so one report always
gives the same BOM.

Example:
    >>> from graphleaks.report.report import load_report
    >>> bom = build_bom(load_report("tests/report/data/report_v1.json"))
    >>> card = bom["components"][0]["modelCard"]
    >>> m = card["quantitativeAnalysis"]["performanceMetrics"][0]
    >>> m["type"], m["slice"], sorted(m["confidenceInterval"])
    ('confidence_mia auc', 'overall', ['lowerBound', 'upperBound'])
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from typing import TYPE_CHECKING, Any

from graphleaks._outputs import CYCLONEDX_HEAD
from graphleaks.report.controls import coverage

if TYPE_CHECKING:
    from graphleaks.metrics.binary import Estimate
    from graphleaks.report.report import AttackReport, AuditReport

SPEC_VERSION = "1.6"
SCHEMA_URI = "http://cyclonedx.org/schema/bom-1.6.schema.json"
OVERALL = "overall"
MODEL_REF = "graphleaks-audited-model"
#: The extra that brings the CycloneDX schema validator.
EXTRA = "evidence"

_GATE_NAMES = {"at_threshold.accuracy": "accuracy", "at_threshold.advantage": "advantage",
               "at_threshold.balanced_accuracy": "balanced_accuracy"}
_MULTICLASS_GATE_NAMES = {"accuracy": "attribute_accuracy"}
# a fixed namespace: the same report always gets the same serial number
_SERIAL_NAMESPACE = uuid.UUID("6c1f3a52-1b0e-5b8e-9a57-67726170686c")


def fmt_number(x: float) -> str:
    """A number as CycloneDX wants it (a string), with every digit: ``repr`` of the float."""
    x = float(x)
    return repr(x) if math.isfinite(x) else ("nan" if math.isnan(x) else
                                             ("inf" if x > 0 else "-inf"))


def tpr_name(fpr: float) -> str:
    """The gate's name of TPR at ``fpr``, e.g. ``tpr@1%fpr`` for 0.01."""
    return f"tpr@{float(fpr) * 100:g}%fpr"


def metric_name(path: str, *, multiclass: bool = False) -> str:
    """The name of an estimate of :meth:`AttackMetrics.estimates`: the gate's when it has one.

    >>> metric_name("tpr_at_fpr.0.001"), metric_name("at_threshold.f1")
    ('tpr@0.1%fpr', 'at_threshold.f1')
    """
    if multiclass:
        return _MULTICLASS_GATE_NAMES.get(path, path)
    if path.startswith("tpr_at_fpr."):
        return tpr_name(float(path.partition(".")[2]))
    return _GATE_NAMES.get(path, path)


def _metric(type_: str, value: float, slice_: str = OVERALL,
            ci: tuple[float, float] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_, "value": fmt_number(value), "slice": slice_}
    if ci is not None:
        out["confidenceInterval"] = {"lowerBound": fmt_number(ci[0]),
                                     "upperBound": fmt_number(ci[1])}
    return out


def _estimate(type_: str, est: Estimate, slice_: str = OVERALL) -> dict[str, Any]:
    return _metric(type_, est.value, slice_, (est.lo, est.hi))


def attack_metrics(a: AttackReport) -> list[dict[str, Any]]:
    """Every metric of one attack as ``performanceMetric`` objects (overall, then slices)."""
    m = a.metrics
    out = []
    if m.binary is not None:
        ests = {k: v for k, v in m.estimates().items()
                if m.multiclass is None or k not in _MULTICLASS_PATHS}
        out += [_estimate(f"{a.attack} {metric_name(k)}", e) for k, e in ests.items()]
    if m.multiclass is not None:
        mc = m.multiclass
        for k in _MULTICLASS_PATHS:
            out.append(_estimate(f"{a.attack} {metric_name(k, multiclass=True)}",
                                 getattr(mc, k)))
        out.append(_metric(f"{a.attack} majority_baseline", mc.majority_baseline))
    if m.epsilon_lower_bound is not None:
        out.append(_metric(f"{a.attack} epsilon_lb", m.epsilon_lower_bound.bound.epsilon_lb))
    if m.epsilon_lower_bound_max_over_thresholds is not None:
        out.append(_metric(f"{a.attack} epsilon_lb_max_over_thresholds",
                           m.epsilon_lower_bound_max_over_thresholds.bound.epsilon_lb))
    if m.oracle_balanced_accuracy is not None:
        out.append(_metric(f"{a.attack} oracle_balanced_accuracy",
                           m.oracle_balanced_accuracy.value))
    if m.paper_metric is not None:
        out.append(_metric(f"{a.attack} paper metric {m.paper_metric.name}",
                           m.paper_metric.value))
    for k, v in a.baseline.items():
        out.append(_metric(f"{a.attack} trivial baseline {k}", v))
    for key, s in m.slices.items():
        if s.auc is None:  # too few candidates: no metric (a technical limitation instead)
            continue
        out.append(_estimate(f"{a.attack} auc", s.auc, key))
        out += [_estimate(f"{a.attack} {tpr_name(f)}", e, key) for f, e in s.tpr_at_fpr.items()]
    return out


_MULTICLASS_PATHS = ("accuracy", "f1_micro", "f1_macro", "gain_over_baseline")


def performance_metrics(report: AuditReport) -> list[dict[str, Any]]:
    """Every metric of the report: attacks, canary audits, then the target's utility."""
    out = []
    for a in report.attacks:
        out += attack_metrics(a)
    for c in report.canary_audits:
        who = f"canary audit ({c.unit})"
        out += [_metric(f"{who} audited_epsilon", c.audited_epsilon),
                _metric(f"{who} audited_mu", c.bound.mu_lb),
                _metric(f"{who} claimed_epsilon", c.claimed_epsilon)]
    for k, v in sorted(report.target.utility.items()):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(_metric(f"target {k}", float(v)))
    return out


def _threat_line(a: AttackReport) -> str:
    tm = a.threat_model
    flags = [f.replace("_knowledge", "") for f in ("feature_knowledge", "label_knowledge",
                                                  "architecture_knowledge", "defense_knowledge")
             if getattr(tm, f)]
    outputs = ", ".join(sorted(str(getattr(o, "value", o)) for o in tm.outputs))
    return (f"{a.attack} ({a.task}): the figures hold for a {_v(tm.access)} adversary reading "
            f"{outputs}, with {_v(tm.graph_knowledge)} graph knowledge, shadow data "
            f"{_v(tm.shadow_data)}, knowing {', '.join(flags) or 'nothing else'}; queries "
            f"evaluated in the {a.query_graph} graph")


def _v(x: Any) -> str:
    return str(getattr(x, "value", x))


def _limitations(report: AuditReport) -> list[str]:
    out = []
    for a in report.attacks:
        out.append(_threat_line(a))
        out += [f"{a.attack}: {n}" for n in a.notes]
        if a.compat_flags:
            out.append(f"{a.attack}: compatibility flags on ({', '.join(a.compat_flags)}): "
                       "reproduces a paper's code, not the correct protocol")
        out += [f"{a.attack}: slice {k} has {s.n_pos} positives and {s.n_neg} negatives, too "
                "few for an interval; not measured" for k, s in a.metrics.slices.items()
                if s.too_few]
        out += [f"{a.attack}: metric kind {k} is not exported (unknown to this graphleaks)"
                for k in sorted(a.metrics.extra)]
    out += [f"privacy ledger: {n}" for n in report.ledger.notes]
    from graphleaks.report.verdict import verdict_notes

    out += verdict_notes(report)
    return out


def _risks(report: AuditReport) -> list[dict[str, str]]:
    from graphleaks.report.verdict import compute_verdict

    out = []
    for v in compute_verdict(report):
        who = f" ({v.attack}: {v.basis})" if v.attack else ""
        cov = f"; ledger {v.coverage}" if v.coverage else ""
        out.append({"name": f"{v.label} risk: {v.level}{who}{cov}",
                    "mitigationStrategy": v.advice})
    return out


def _defense_text(report: AuditReport) -> str:
    led = report.ledger
    if not led.is_private:
        return f"defense {report.target.defense}: no formal privacy guarantee (ε = inf)"
    return (f"defense {report.target.defense}: {led.unit.value}-level DP, ε = "
            f"{fmt_number(led.epsilon)}, δ = {fmt_number(led.delta)} ({led.status.value})")


def _fairness(report: AuditReport) -> list[dict[str, str]]:
    out = []
    for a in report.attacks:
        b = a.metrics.binary
        for key, s in a.metrics.slices.items():
            if s.auc is None:
                continue
            tpr = s.tpr_at_fpr.get(0.01)
            overall = "" if b is None else (
                f" (all candidates: AUC {_ci(b.auc)}"
                + (f", TPR@1%FPR {_ci(b.tpr_at_fpr[0.01])}" if 0.01 in b.tpr_at_fpr else "")
                + ")")
            harm = (f"{a.attack} ({a.task}) on this group: AUC {_ci(s.auc)}"
                    + (f", TPR@1%FPR {_ci(tpr)}" if tpr is not None else "") + overall)
            out.append({"groupAtRisk": f"candidates in slice {key} ({s.n_pos} positives, "
                                       f"{s.n_neg} negatives)",
                        "harms": harm, "mitigationStrategy": _defense_text(report)})
    return out


def _ci(e: Estimate) -> str:
    return f"{fmt_number(e.value)} [{fmt_number(e.lo)}, {fmt_number(e.hi)}]"


def _tradeoffs(report: AuditReport) -> list[str]:
    u = report.target.utility
    figures = ", ".join(f"{k} {fmt_number(v)}" for k, v in sorted(u.items())
                        if isinstance(v, (int, float)) and not isinstance(v, bool))
    return [f"{_defense_text(report)}; utility of the audited target: {figures or 'none'}"]


def _properties(report: AuditReport) -> list[dict[str, str]]:
    led = report.ledger
    props = [("graphleaks:ledger:unit", led.unit.value),
             ("graphleaks:ledger:epsilon", fmt_number(led.epsilon)),
             ("graphleaks:ledger:delta", fmt_number(led.delta)),
             ("graphleaks:ledger:accountant", led.accountant),
             ("graphleaks:ledger:status", led.status.value)]
    props += [(f"graphleaks:ledger:component:{k}", fmt_number(v))
              for k, v in sorted(led.components.items())]
    if report.serving is not None:
        props += [("graphleaks:serving:epsilon_after_queries",
                   fmt_number(report.serving.epsilon_after_queries)),
                  ("graphleaks:serving:policy", report.serving.policy)]
    for a in report.attacks:
        b, mc = a.metrics.binary, a.metrics.multiclass
        stats = b if b is not None else mc
        if stats is not None:
            props += [(f"graphleaks:interval:{a.attack}",
                       f"{fmt_number(stats.confidence)} two-sided, "
                       f"{getattr(stats, 'interval', 'percentile-bootstrap')}, "
                       f"{stats.n_bootstrap} bootstrap replicates, seed {stats.seed}")]
    props += [(f"graphleaks:control:{c.control.id}", c.text()) for c in coverage(report)]
    props += [("graphleaks:report:seed", str(report.seed)),
              ("graphleaks:report:schema_version", str(report.schema_version)),
              ("graphleaks:target:fingerprint", report.target.fingerprint),
              ("graphleaks:target:protocol", report.target.protocol)]
    if report.config.get("spec_hash"):
        props.append(("graphleaks:report:spec_hash", str(report.config["spec_hash"])))
    return [{"name": n, "value": v} for n, v in props]


def _model_parameters(report: AuditReport) -> dict[str, Any]:
    t = report.target
    ds = t.dataset.get("name") if t.dataset else None
    data = {"type": "dataset", "name": str(ds) if ds else "user graph",
            "description": f"{t.num_nodes} nodes, {t.num_edges} directed edges; split "
                           + ", ".join(f"{k} {v}" for k, v in sorted(t.split_sizes.items()))}
    return {"task": "node classification on a graph",
            "modelArchitecture": str(t.architecture.get("arch", "unknown")),
            "datasets": [data]}


def graphleaks_version() -> str:
    """The installed graphleaks' version (``0.0.0`` when run from a source tree)."""
    from importlib import metadata

    try:
        return metadata.version("graphleaks")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def serial_number(report: AuditReport) -> str:
    """``urn:uuid:`` derived from the report's content: one report, one serial number."""
    digest = hashlib.sha256(report.to_json().encode()).hexdigest()
    return f"urn:uuid:{uuid.uuid5(_SERIAL_NAMESPACE, digest)}"


def build_bom(report: AuditReport, *, tool_version: str | None = None) -> dict[str, Any]:
    """The CycloneDX 1.6 BOM of a report, as a JSON-ready dictionary (keys in write order).

    Args:
        report: The audit report.
        tool_version: graphleaks' version (default: the installed one).
    """
    if tool_version is None:
        tool_version = graphleaks_version()
    t = report.target
    ds = t.dataset.get("name") if t.dataset else None
    name = f"{str(t.architecture.get('arch', 'model')).upper()} on {ds or 'user graph'}"
    return {
        "$schema": SCHEMA_URI,
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        # graphleaks as the first tool, at a fixed place: CYCLONEDX_HEAD recognises the file
        "metadata": {
            "tools": {"components": [{
                "type": "application", "name": "graphleaks", "version": tool_version,
                "description": "privacy attack and audit toolkit for graph machine learning"}]},
        },
        "serialNumber": serial_number(report),
        "version": 1,
        "components": [{
            "type": "machine-learning-model",
            "bom-ref": MODEL_REF,
            "name": name,
            "description": f"privacy audit by graphleaks; defense {t.defense}",
            "modelCard": {
                "modelParameters": _model_parameters(report),
                "quantitativeAnalysis": {"performanceMetrics": performance_metrics(report)},
                "considerations": {
                    "technicalLimitations": _limitations(report),
                    "performanceTradeoffs": _tradeoffs(report),
                    "ethicalConsiderations": _risks(report),
                    "fairnessAssessments": _fairness(report),
                },
                "properties": _properties(report),
            },
        }],
    }


def render_bom(report: AuditReport, *, tool_version: str | None = None) -> str:
    """The BOM as indented JSON text, starting with :data:`CYCLONEDX_HEAD`."""
    text = json.dumps(build_bom(report, tool_version=tool_version), indent=2,
                      ensure_ascii=False, allow_nan=False) + "\n"
    if not text.startswith(CYCLONEDX_HEAD):  # the ownership rule depends on it
        raise RuntimeError("CycloneDX head moved; update graphleaks._outputs.CYCLONEDX_HEAD")
    return text


def validator_available() -> bool:
    """Whether the extra that validates CycloneDX (cyclonedx-python-lib, jsonschema) is here."""
    try:
        import cyclonedx.validation.json  # noqa: F401
        import jsonschema  # noqa: F401
    except ImportError:
        return False
    return True


def validate_bom(text: str) -> list[str]:
    """Schema errors of a CycloneDX 1.6 JSON BOM (strict schema bundled with
    cyclonedx-python-lib, read offline); empty when valid.

    Raises:
        ImportError: Without the ``evidence`` extra.
    """
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    errors = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text, all_errors=True)
    return [] if errors is None else [str(e) for e in errors]
