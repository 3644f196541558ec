"""The privacy gate: thresholds, baselines, bounds (on edited copies of a committed report)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.report.gates import GateSpec, Threshold
from graphleaks.report.regression import (
    check_report,
    parse_threshold_option,
    render_gate_markdown,
)
from graphleaks.report.report import REPORT_SCHEMA_VERSION, AuditReport, load_report

V1 = Path(__file__).parent / "data" / "report_v1.json"


def _est(v):
    return {"value": v[0], "ci": [v[1], v[2]], "method": "percentile-bootstrap"}


def _raw(auc=(0.7, 0.65, 0.75), tpr=(0.05, 0.01, 0.12), attack="confidence_mia"):
    """The committed v1 report cut to one binary attack with these estimates, as JSON."""
    d = json.loads(V1.read_text())
    a = d["attacks"][0]
    a["attack"] = attack
    b = a["metrics"]["binary"]
    b.update(auc=_est(auc), max_advantage=_est((0.3, 0.2, 0.4)))
    b["tpr_at_fpr"].update({"0.01": _est(tpr), "0.001": _est((0.0, 0.0, 0.01))})
    d["attacks"] = [a]
    return d


def _report(**kwargs):
    return AuditReport.from_dict(_raw(**kwargs))


def test_gates_on_upper_bound_by_default():
    r = _report()
    # point estimate 0.7 is below 0.72 but the upper bound 0.75 is not
    res = check_report(r, GateSpec(thresholds=(Threshold("auc", 0.72),)))
    assert not res.passed and res.failures[0].observed == 0.75
    assert check_report(r, GateSpec(bound="value",
                                    thresholds=(Threshold("auc", 0.72),))).passed
    assert check_report(r, GateSpec(thresholds=(Threshold("auc", 0.8),))).passed


def test_attack_specific_threshold_and_missing_attack():
    r = _report()
    res = check_report(r, GateSpec(thresholds=(Threshold("tpr@1%fpr", 0.1, "confidence_mia"),)))
    assert not res.passed and res.checks[0].attack == "confidence_mia"
    with pytest.raises(DataError, match="shadow_mia"):
        check_report(r, GateSpec(thresholds=(Threshold("auc", 0.9, "shadow_mia"),)))
    with pytest.raises(DataError, match="f1_macro"):
        check_report(r, GateSpec(thresholds=(Threshold("f1_macro", 0.9),)))


def test_attack_specific_threshold_overrides_global():
    gate = GateSpec(thresholds=(Threshold("auc", 0.5), Threshold("auc", 0.8, "confidence_mia")))
    res = check_report(_report(), gate)
    assert res.passed and [c.limit for c in res.checks] == [0.8]


def test_nothing_to_check_is_an_error():
    with pytest.raises(InvalidConfigError, match="nothing to gate"):
        check_report(_report(), GateSpec())


def test_baseline_with_tolerance():
    base = _report()  # AUC 0.70 [0.65, 0.75]
    same = check_report(_report(), GateSpec(), base)
    assert same.passed and {c.kind for c in same.checks} == {"baseline"}
    # the interval clears the baseline's: lower 0.78 > upper 0.75 + 0.02
    worse = _report(auc=(0.85, 0.78, 0.92))
    res = check_report(worse, GateSpec(tolerance=0.02), base)
    assert [c.metric for c in res.failures] == ["auc"]
    fail = res.failures[0]
    assert fail.observed == 0.78 and fail.limit == pytest.approx(0.77)
    assert "lower bound 0.7800 > baseline upper bound 0.7500 + tolerance 0.02" in fail.message
    assert check_report(worse, GateSpec(tolerance=0.02, tolerances={"auc": 0.06}), base).passed


def test_a_rise_inside_the_baseline_interval_passes():
    # the point estimate rose (0.70 -> 0.76, and by 0.0002 below) but the intervals overlap:
    # the data cannot tell the two models apart, so the gate does not fail
    base = _report()
    assert check_report(_report(auc=(0.76, 0.72, 0.80)), GateSpec(tolerance=0.0), base).passed
    assert check_report(_report(auc=(0.7002, 0.6502, 0.7502)), GateSpec(tolerance=0.0),
                        base).passed
    # gated on point estimates, the same rise of 0.06 crosses a tolerance of 0.05
    res = check_report(_report(auc=(0.76, 0.72, 0.80)), GateSpec(bound="value"), base)
    assert [c.metric for c in res.failures] == ["auc"]


def test_too_few_positives_are_not_gated():
    raw = _raw(auc=(0.99, 0.9, 1.0), tpr=(0.9, 0.5, 1.0))
    raw["attacks"][0]["metrics"]["binary"]["n_pos"] = 9
    few = AuditReport.from_dict(raw)
    res = check_report(few, GateSpec(thresholds=(Threshold("auc", 0.6),)), _report())
    assert res.passed and res.checks and not any(c.gated for c in res.checks)
    assert all("not gated: 9 positives / 12 negatives" in c.message for c in res.checks)
    assert "not gated" in render_gate_markdown(res)
    assert res.to_dict()["checks"][0]["gated"] is False
    # the same numbers with enough positives fail both kinds of check
    res = check_report(_report(auc=(0.99, 0.9, 1.0), tpr=(0.9, 0.5, 1.0)),
                       GateSpec(thresholds=(Threshold("auc", 0.6),)), _report())
    assert {c.kind for c in res.failures} == {"threshold", "baseline"}


def test_baseline_attack_missing_from_report_fails():
    res = check_report(_report(attack="shadow_mia"), GateSpec(), _report())
    assert not res.passed
    assert all(c.observed is None for c in res.failures)
    assert "not measured" in res.failures[0].message


def test_a_v1_baseline_gates_a_v2_report():
    # old CI baselines keep working: both are decoded into the same typed records
    base = load_report(V1)
    report = AuditReport.from_json(base.to_json())
    assert json.loads(report.to_json())["schema_version"] == REPORT_SCHEMA_VERSION == 2
    res = check_report(report, GateSpec(), base)
    assert res.passed and res.checks and {c.kind for c in res.checks} == {"baseline"}
    assert {c.attack for c in res.checks} == {"confidence_mia", "link_stealing"}


def test_v1_report_is_gated_on_its_upper_bound():
    res = check_report(load_report(V1), GateSpec(thresholds=(Threshold("auc", 0.85),)))
    by = {c.attack: c for c in res.checks}
    # confidence_mia AUC 0.674 [0.404, 0.859]: the upper bound crosses 0.85
    assert by["confidence_mia"].observed == pytest.approx(0.8586805555555556)
    assert not by["confidence_mia"].passed


def test_newer_schema_version_is_refused():
    with pytest.raises(DataError, match="schema_version"):
        AuditReport.from_dict({**_raw(), "schema_version": REPORT_SCHEMA_VERSION + 1})


def test_baseline_of_another_graph_is_refused_without_quoting_it():
    raw = copy.deepcopy(_raw())
    raw["target"]["fingerprint"] = "0123456789abcdef"
    with pytest.raises(DataError, match="different graph") as err:
        check_report(_report(), GateSpec(), AuditReport.from_dict(raw))
    assert "0123456789abcdef" not in str(err.value)


def test_baseline_of_another_model_on_the_same_graph_gates_with_a_note():
    raw = copy.deepcopy(_raw())
    raw["target"]["architecture"]["arch"] = "sage"
    raw["target"]["defense"] = "gap_ndp"
    res = check_report(_report(), GateSpec(), AuditReport.from_dict(raw))
    assert res.passed and res.checks
    assert len(res.notes) == 1 and "architecture and defense" in res.notes[0]
    assert not check_report(_report(), GateSpec(), _report()).notes


def test_parse_threshold_option():
    assert parse_threshold_option("auc=0.6") == Threshold("auc", 0.6)
    assert parse_threshold_option("tpr@0.1%fpr=0.02") == Threshold("tpr@0.1%fpr", 0.02)
    assert parse_threshold_option("confidence_mia.tpr@1%fpr=0.05") == \
        Threshold("tpr@1%fpr", 0.05, "confidence_mia")
    for bad, match in [("auc", "METRIC=LIMIT"), ("auc=1.2", r"\[0, 1\]"),
                       ("nope=0.1", "unknown metric"), ("auc=x", "number")]:
        with pytest.raises(InvalidConfigError, match=match):
            parse_threshold_option(bad)


def test_markdown_summary():
    res = check_report(_report(), GateSpec(thresholds=(Threshold("auc", 0.72),
                                                       Threshold("tpr@1%fpr", 0.5))))
    md = render_gate_markdown(res)
    assert "failed" in md and "❌" in md and "✅" in md and "0.7500" in md
    assert md.index("❌ | confidence_mia") < md.index("✅ | confidence_mia")
