"""The SARIF export: valid against the official SARIF 2.1.0 schema (vendored, offline), one
error per crossed gate, rules and zero results without a gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphleaks._outputs import SARIF_HEAD, is_sarif_log
from graphleaks.report.regression import GateSpec, Threshold, check_report
from graphleaks.report.report import load_report
from graphleaks.report.sarif import GateSource, build_sarif, render_sarif, spec_threshold_lines

DATA = Path(__file__).parent / "data"
V1 = DATA / "report_v1.json"  # confidence_mia AUC 0.674 [0.404, 0.859]

jsonschema = pytest.importorskip("jsonschema", reason="needs the dev extra")


@pytest.fixture(scope="module")
def validator():  # noqa: ANN201
    # the official OASIS schema; where the copy came from: sarif-schema-2.1.0.json.source.md
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


@pytest.fixture(scope="module")
def report():  # noqa: ANN201
    return load_report(V1)


def _valid(validator, text: str) -> dict[str, Any]:  # noqa: ANN001
    log = json.loads(text)
    errors = [e.message for e in validator.iter_errors(log)]
    assert errors == []
    return log


def test_without_a_gate_the_log_has_the_rules_no_results_and_says_so(validator, report):
    log = _valid(validator, render_sarif(report, None, report_uri="privacy/report.json"))
    run = log["runs"][0]
    assert run["results"] == [] and run["properties"]["gated"] is False
    note = run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
    assert note.startswith("no gate given")
    ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {"confidence_mia/auc", "confidence_mia/tpr@1%fpr", "link_stealing/auc",
            "attribute_inference/attribute_accuracy"} <= ids
    assert "attribute_inference/auc" not in ids  # only metrics the attack measures


def test_the_schema_check_is_real(validator, report):
    log = build_sarif(report, None, report_uri="r.json")
    log["runs"][0]["results"] = [{"ruleId": "x", "level": "fatal", "message": {"text": "m"}}]
    assert list(validator.iter_errors(log))


def test_one_error_per_crossed_gate_with_value_interval_limit_and_baseline(validator, report):
    gate = GateSpec(thresholds=(Threshold("auc", 0.8, "confidence_mia"),
                                Threshold("auc", 0.99, "link_stealing")))
    result = check_report(report, gate)
    log = _valid(validator, render_sarif(report, result, report_uri="out/report.json"))
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "confidence_mia/auc" and res["level"] == "error"
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
    text = res["message"]["text"]
    for piece in ("0.6736", "[95% CI 0.4036, 0.8587]", "gated number 0.8587", "limit 0.8000",
                  "no baseline check", "trivial baseline (no access to the target) 0.5000"):
        assert piece in text, piece
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "out/report.json"
    assert loc["region"]["startLine"] == 1
    assert log["runs"][0]["properties"] == {"gated": True, "passed": False, "bound": "upper",
                                            "checks": 2, "crossed": 1}


def test_rule_tags_name_the_controls(report):
    log = build_sarif(report, None, report_uri="r.json")
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["confidence_mia/auc"]["properties"]["tags"] == [
        "privacy", "EU-AI-Act-Art-15(5)", "OWASP-AITG-MOD-04",
        "NIST-AI-100-2-membership-inference"]
    assert "OWASP-AITG-MOD-05" in rules["link_stealing/auc"]["properties"]["tags"]


def test_a_passing_gate_has_no_results_and_a_note(validator, report):
    result = check_report(report, GateSpec(thresholds=(Threshold("auc", 0.99),)))
    log = _valid(validator, render_sarif(report, result, report_uri="r.json"))
    run = log["runs"][0]
    assert run["results"] == [] and run["properties"]["passed"] is True
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any(n.startswith("privacy gate passed") for n in notes)


def test_a_baseline_breach_names_the_baseline_and_points_at_the_spec(validator, report,
                                                                    tmp_path):
    import dataclasses

    from graphleaks.metrics.binary import Estimate

    # a baseline that leaked much less: the report's AUC interval clears it
    a = report.attacks[0]
    b = a.metrics.binary
    assert b is not None
    safer = dataclasses.replace(a, metrics=dataclasses.replace(
        a.metrics, binary=dataclasses.replace(b, auc=Estimate(0.2, 0.1, 0.3))))
    base = dataclasses.replace(report, attacks=[safer])
    result = check_report(report, GateSpec(metrics=("auc",), tolerance=0.01), base)
    src = GateSource("report.json", spec_uri="privacy/audit.toml",
                     baseline_from_spec=True, baseline_uri="privacy/baseline.json")
    log = _valid(validator, render_sarif(report, result, report_uri="report.json",
                                         source=src))
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "confidence_mia/auc"
    assert "baseline report privacy/baseline.json" in res["message"]["text"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "privacy/audit.toml"
    roles = [x["roles"] for x in log["runs"][0]["artifacts"]]
    assert roles == [["analysisTarget"], ["userSpecifiedConfiguration"]]


def test_a_spec_threshold_points_at_its_line(report):
    spec = ("[target]\ndataset = 'synthetic'\n\n[gate]\nbound = 'upper'\n"
            "[gate.thresholds]   # every attack\nauc = 0.99\n'tpr@1%fpr' = 0.5\n"
            "[gate.thresholds.confidence-mia]\n\"AUC\" = 0.8  # tighter\n")
    lines = spec_threshold_lines(spec)
    assert lines == {(None, "auc"): 7, (None, "tpr@1%fpr"): 8, ("confidencemia", "auc"): 10}
    gate = GateSpec(thresholds=(Threshold("auc", 0.99), Threshold("tpr@1%fpr", 0.5),
                                Threshold("auc", 0.8, "confidence_mia")))
    result = check_report(report, gate)
    src = GateSource("report.json", spec_uri="audit.toml", spec_lines=lines,
                     spec_thresholds=frozenset({(None, "auc"), (None, "tpr@1%fpr"),
                                                ("confidencemia", "auc")}))
    log = build_sarif(report, result, report_uri="report.json", source=src)
    res = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    loc = res["confidence_mia/auc"]["locations"][0]["physicalLocation"]
    assert (loc["artifactLocation"]["uri"], loc["region"]["startLine"]) == ("audit.toml", 10)


def test_the_same_breach_keeps_its_fingerprint(report):
    gate = GateSpec(thresholds=(Threshold("auc", 0.8, "confidence_mia"),))
    one = build_sarif(report, check_report(report, gate), report_uri="a.json")
    gate = GateSpec(thresholds=(Threshold("auc", 0.7, "confidence_mia"),))
    two = build_sarif(report, check_report(report, gate), report_uri="b.json")
    assert one["runs"][0]["results"][0]["partialFingerprints"] == \
        two["runs"][0]["results"][0]["partialFingerprints"]


def test_a_gated_slice_gets_its_own_rule(validator, tmp_path):
    import dataclasses

    from graphleaks.metrics.binary import Estimate
    from graphleaks.metrics.slices import SliceMetrics

    r = load_report(V1)
    a = r.attacks[0]
    sliced = dataclasses.replace(a, metrics=dataclasses.replace(a.metrics, slices={
        "degree<=2": SliceMetrics(20, 20, Estimate(0.9, 0.8, 0.95),
                                  {0.01: Estimate(0.4, 0.2, 0.6)})}))
    r = dataclasses.replace(r, attacks=[sliced, *r.attacks[1:]])
    gate = GateSpec(thresholds=(Threshold("tpr@1%fpr", 0.1, "confidence_mia[degree<=2]"),))
    log = _valid(validator, render_sarif(r, check_report(r, gate), report_uri="r.json"))
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "confidence_mia[degree<=2]/tpr@1%fpr"
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert "OWASP-AITG-MOD-04" in rules[res["ruleIndex"]]["properties"]["tags"]


def test_the_log_starts_with_the_head_the_ownership_rule_recognises(report):
    text = render_sarif(report, None, report_uri="r.json")
    assert text.startswith(SARIF_HEAD) and is_sarif_log(text.encode())
    assert not is_sarif_log(text.replace('"graphleaks"', '"codeql"', 1).encode())
