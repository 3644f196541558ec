"""The privacy gate: thresholds, baselines, bounds (on hand-written report dictionaries)."""

from __future__ import annotations

import copy

import pytest

from graphleaks.audit.regression import (
    check_report,
    parse_threshold_option,
    render_gate_markdown,
)
from graphleaks.audit.spec import GateSpec, Threshold
from graphleaks.errors import DataError, InvalidConfigError


def _report(auc=(0.7, 0.65, 0.75), tpr=(0.05, 0.01, 0.12), version=1, attack="confidence_mia"):
    return {"kind": "graphleaks-audit-report", "schema_version": version,
            "target": {"fingerprint": "abc"},
            "attacks": [{"attack": attack, "metrics": {"binary": {
                "auc": {"value": auc[0], "ci": [auc[1], auc[2]]},
                "max_advantage": {"value": 0.3, "ci": [0.2, 0.4]},
                "tpr_at_fpr": {"0.01": {"value": tpr[0], "ci": [tpr[1], tpr[2]]},
                               "0.001": {"value": 0.0, "ci": [0.0, 0.01]}}}}}]}


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
    base = _report()
    same = check_report(_report(), GateSpec(), base)
    assert same.passed and {c.kind for c in same.checks} == {"baseline"}
    worse = _report(auc=(0.76, 0.72, 0.80))
    res = check_report(worse, GateSpec(tolerance=0.02), base)
    assert [c.metric for c in res.failures] == ["auc"]
    assert check_report(worse, GateSpec(tolerance=0.02, tolerances={"auc": 0.06}), base).passed


def test_baseline_attack_missing_from_report_fails():
    res = check_report(_report(attack="shadow_mia"), GateSpec(), _report())
    assert not res.passed
    assert all(c.observed is None for c in res.failures)
    assert "not measured" in res.failures[0].message


def test_baseline_schema_version_mismatch():
    with pytest.raises(DataError, match="schema_version"):
        check_report(_report(), GateSpec(), _report(version=0))


def test_fingerprint_note():
    base = copy.deepcopy(_report())
    base["target"]["fingerprint"] = "other"
    res = check_report(_report(), GateSpec(), base)
    assert res.notes and "fingerprint" in res.notes[0]


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
