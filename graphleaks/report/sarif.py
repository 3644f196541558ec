"""A gate result as a SARIF 2.1.0 log, so code scanning shows a privacy regression as an alert.

``graphleaks export REPORT --sarif FILE`` writes it. The gate is not evaluated here: the
caller passes the :class:`~graphleaks.report.regression.GateResult` of
:func:`~graphleaks.report.regression.check_report` (the same options as ``graphleaks check``).

- **Rules**: one per gateable metric an attack of the report measures, id
  ``<attack>/<metric>`` (``confidence_mia/tpr@1%fpr``), plus one per gated slice
  (``confidence_mia[degree<=2]/auc``). Each rule's ``properties.tags`` name the controls its
  attack tests (:mod:`graphleaks.report.controls`).
- **Results**: one per crossed check, level ``error``, its message stating the value, the
  interval, the gated number, the limit and the baseline; its location is the file that
  holds the gate (the spec, for a threshold or baseline it set) or else the report.
  Checks that passed, or were not gated (too few candidates), give no result.
- **No gate given**: the rules and zero results, and the run says so
  (``invocations[0].toolExecutionNotifications`` and ``properties.gated = false``).

Every result carries a ``partialFingerprints`` entry made of its rule and check kind, so the
same breach stays the same alert across runs.

Example:
    >>> from graphleaks.report.report import load_report
    >>> from graphleaks.report.regression import GateSpec, Threshold, check_report
    >>> report = load_report("tests/report/data/report_v1.json")
    >>> gate = check_report(report, GateSpec(thresholds=(Threshold("auc", 0.8),)))
    >>> log = build_sarif(report, gate, report_uri="report.json")
    >>> [r["ruleId"] for r in log["runs"][0]["results"]]
    ['confidence_mia/auc']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphleaks._outputs import SARIF_HEAD
from graphleaks._registry import normalize_name
from graphleaks.report.controls import control_tags, controls_for_task
from graphleaks.report.gates import METRICS, is_metric
from graphleaks.report.report import json_safe

if TYPE_CHECKING:
    from graphleaks.report.regression import GateCheck, GateResult
    from graphleaks.report.report import AuditReport

SCHEMA_URI = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
              "sarif-schema-2.1.0.json")
#: Keys of an attack's trivial baseline (``AttackReport.baseline``) by gate metric.
_TRIVIAL_KEY = {"auc": "auc", "max_advantage": "advantage", "advantage": "advantage",
                "accuracy": "accuracy"}


@dataclass(frozen=True)
class GateSource:
    """Where the gate came from, for result locations.

    Attributes:
        report_uri: The report file, as a URI relative to the repository root when it lies
            inside it.
        spec_uri: The spec file (``--config``), when one gave thresholds or the baseline.
        spec_lines: The line of the spec that sets each ``(attack or None, metric)``
            threshold (:func:`spec_threshold_lines`; 1 when unknown).
        spec_thresholds: The ``(attack or None, metric)`` thresholds the spec set (the rest
            came from ``--max``); attacks normalised by
            :func:`~graphleaks._registry.normalize_name`.
        baseline_from_spec: Whether the baseline was named by the spec (not ``--baseline``).
        baseline_uri: The baseline report, when there is one.
    """

    report_uri: str
    spec_uri: str | None = None
    spec_lines: Mapping[tuple[str | None, str], int] | None = None
    spec_thresholds: frozenset[tuple[str | None, str]] = frozenset()
    baseline_from_spec: bool = False
    baseline_uri: str | None = None


def spec_threshold_lines(text: str) -> dict[tuple[str | None, str], int]:
    """The line (1-based) of each threshold in a spec's ``[gate.thresholds]`` tables.

    Keys are ``(attack or None, metric)``, the attack normalised by
    :func:`~graphleaks._registry.normalize_name`; a threshold written another way (an inline
    table) is not found, and its result points at the spec's first line. Only positions are
    read, never quoted.
    """
    out: dict[tuple[str | None, str], int] = {}
    table: str | None = None
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("["):
            table = line.strip("[] ").replace('"', "")
            continue
        if table is None or "=" not in line:
            continue
        key = line.partition("=")[0].strip().strip('"').strip("'").strip().lower()
        if table == "gate.thresholds" and is_metric(key):
            out.setdefault((None, key.replace(" ", "")), i)
        elif table.startswith("gate.thresholds.") and is_metric(key):
            attack = normalize_name(table[len("gate.thresholds."):])
            out.setdefault((attack, key.replace(" ", "")), i)
    return out


def rule_id(attack: str, metric: str) -> str:
    """``<attack>/<metric>``, e.g. ``confidence_mia/tpr@1%fpr``."""
    return f"{attack}/{metric}"


def _rule(attack: str, task: str, metric: str) -> dict[str, Any]:
    controls = controls_for_task(task)
    covered = "; ".join(c.label for c in controls) or "no mapped control"
    text = (f"The {metric} of the {attack} attack ({task} inference) must stay within the "
            "privacy gate (threshold or baseline tolerance).")
    return {
        "id": rule_id(attack, metric),
        "name": f"PrivacyGate/{attack}/{metric}",
        "shortDescription": {"text": f"{attack}: {metric} within the privacy gate"},
        "fullDescription": {"text": f"{text} Controls: {covered}."},
        "help": {"text": f"{text} A crossed gate means the model leaks more than allowed: "
                         "re-run `graphleaks check` to see every check, compare with the "
                         "baseline, and strengthen the defense (e.g. a smaller ε) before "
                         "release. Controls tested: " + covered + "."},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": control_tags(task), "attack": attack, "task": task,
                       "metric": metric,
                       "controls": [c.label for c in controls]},
    }


def _rules(report: AuditReport, result: GateResult | None) -> list[dict[str, Any]]:
    tasks = {a.attack: a.task for a in report.attacks}
    rules: dict[str, dict[str, Any]] = {}
    for a in report.attacks:
        readings = a.metrics.readings()
        for metric in METRICS:
            if readings.get(metric) is not None:
                rules[rule_id(a.attack, metric)] = _rule(a.attack, a.task, metric)
    for c in () if result is None else result.checks:
        rid = rule_id(c.attack, c.metric)
        if rid not in rules:  # a gated slice, or a baseline attack the report lacks
            base = c.attack.partition("[")[0]
            rules[rid] = _rule(c.attack, tasks.get(base, "unknown"), c.metric)
    return list(rules.values())


def _fmt(x: float | None) -> str:
    return "not measured" if x is None else f"{x:.4f}"


def result_message(check: GateCheck, report: AuditReport, source: GateSource) -> str:
    """One crossed check in words: value, interval, gated number, limit and baseline."""
    interval = (f" [95% CI {check.ci[0]:.4f}, {check.ci[1]:.4f}]" if check.ci is not None
                else "")
    base_attack = check.attack.partition("[")[0]
    trivial = None
    for a in report.attacks:
        if a.attack == base_attack:
            trivial = a.baseline.get(_TRIVIAL_KEY.get(check.metric, ""))
    if check.kind == "baseline":
        baseline = f"baseline report {source.baseline_uri or '(given)'}"
    else:
        baseline = "no baseline check (absolute threshold)"
    if trivial is not None:
        baseline += f"; trivial baseline (no access to the target) {trivial:.4f}"
    return (f"Privacy gate crossed: {check.attack} {check.metric} = {_fmt(check.value)}"
            f"{interval}; gated number {_fmt(check.observed)} > limit {check.limit:.4f} "
            f"({check.kind}); {baseline}. {check.message}")


def _location(check: GateCheck, source: GateSource) -> dict[str, Any]:
    uri, line = source.report_uri, 1
    key = (normalize_name(check.attack), check.metric)
    if source.spec_uri is not None:
        if check.kind == "threshold" and (key in source.spec_thresholds
                                          or (None, check.metric) in source.spec_thresholds):
            uri = source.spec_uri
            lines = source.spec_lines or {}
            line = lines.get(key, lines.get((None, check.metric), 1))
        elif check.kind == "baseline" and source.baseline_from_spec:
            uri = source.spec_uri
    return {"physicalLocation": {"artifactLocation": {"uri": uri},
                                 "region": {"startLine": line}}}


def _fingerprint(check: GateCheck) -> str:
    return hashlib.sha256(f"{check.attack}/{check.metric}/{check.kind}".encode()).hexdigest()


def build_sarif(report: AuditReport, result: GateResult | None, *, report_uri: str,
                source: GateSource | None = None, tool_version: str | None = None
                ) -> dict[str, Any]:
    """The SARIF 2.1.0 log of a gate result (JSON-ready, keys in write order).

    Args:
        report: The gated report.
        result: The gate's result, or None when no gate was given (rules, no results).
        report_uri: The report file's URI (used when ``source`` is not given).
        source: Where the gate came from (spec and baseline files).
        tool_version: graphleaks' version (default: the installed one).
    """
    from graphleaks.report.mlbom import graphleaks_version

    source = source or GateSource(report_uri)
    rules = _rules(report, result)
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    notes: list[dict[str, Any]] = []
    if result is None:
        notes.append(_note("note", "no gate given (--config, --max or --baseline): the log "
                                   "lists the rules and has no results"))
    else:
        for c in result.failures:
            rid = rule_id(c.attack, c.metric)
            results.append({
                "ruleId": rid, "ruleIndex": index[rid], "level": "error",
                "message": {"text": result_message(c, report, source)},
                "locations": [_location(c, source)],
                "partialFingerprints": {"graphleaksGate/v1": _fingerprint(c)},
                "properties": json_safe({
                    "attack": c.attack, "metric": c.metric, "kind": c.kind,
                    "value": c.value, "ci": list(c.ci) if c.ci else None,
                    "observed": c.observed, "limit": c.limit, "bound": result.bound})})
        notes += [_note("warning", n) for n in result.notes]
        notes += [_note("note", c.message) for c in result.checks if not c.gated]
        if result.passed:
            notes.append(_note("note", f"privacy gate passed: {len(result.checks)} checks, "
                                       "none crossed"))
    artifacts = [{"location": {"uri": source.report_uri}, "roles": ["analysisTarget"]}]
    if source.spec_uri is not None:
        artifacts.append({"location": {"uri": source.spec_uri},
                          "roles": ["userSpecifiedConfiguration"]})
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            # graphleaks as the driver's name, at a fixed place: SARIF_HEAD recognises the file
            "tool": {"driver": {"name": "graphleaks",
                                "version": tool_version or graphleaks_version(),
                                "rules": rules}},
            "invocations": [{"executionSuccessful": True,
                             "toolExecutionNotifications": notes}],
            "artifacts": artifacts,
            "results": results,
            "properties": {
                "gated": result is not None,
                "passed": None if result is None else result.passed,
                "bound": None if result is None else result.bound,
                "checks": 0 if result is None else len(result.checks),
                "crossed": len(results),
            },
        }],
    }


def _note(level: str, text: str) -> dict[str, Any]:
    return {"level": level, "message": {"text": text}}


def render_sarif(report: AuditReport, result: GateResult | None, *, report_uri: str,
                 source: GateSource | None = None, tool_version: str | None = None) -> str:
    """The SARIF log as indented JSON text, starting with :data:`SARIF_HEAD`."""
    text = json.dumps(build_sarif(report, result, report_uri=report_uri, source=source,
                                  tool_version=tool_version),
                      indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if not text.startswith(SARIF_HEAD):  # the ownership rule depends on it
        raise RuntimeError("SARIF head moved; update graphleaks._outputs.SARIF_HEAD")
    return text
