"""The CycloneDX ML-BOM: schema-valid (the library's bundled 1.6 schema, offline), and every
metric of report.json in the model card with its interval and slice."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from graphleaks._outputs import CYCLONEDX_HEAD, is_cyclonedx_bom
from graphleaks.report.mlbom import build_bom, render_bom, validate_bom
from graphleaks.report.report import load_report

V1 = Path(__file__).parent / "data" / "report_v1.json"

pytest.importorskip("cyclonedx.validation.json", reason="needs graphleaks[evidence]")


@pytest.fixture(scope="module")
def report():  # noqa: ANN201
    return load_report(V1)


@pytest.fixture(scope="module")
def sliced(tmp_path_factory) -> Path:  # noqa: ANN001
    """report_v1 whose slices have intervals (all of v1's are too small), as report.json."""
    import dataclasses

    from graphleaks.metrics.binary import Estimate
    from graphleaks.metrics.slices import SliceMetrics

    r = load_report(V1)
    attacks = []
    for i, a in enumerate(r.attacks):
        slices = {k: SliceMetrics(12 + j, 15, auc=Estimate(0.6 + j / 100, 0.5, 0.7 + i / 10),
                                  tpr_at_fpr={0.01: Estimate(0.1, 0.0, 0.3 + j / 100)})
                  if j % 2 == 0 else s for j, (k, s) in enumerate(a.metrics.slices.items())}
        attacks.append(dataclasses.replace(
            a, metrics=dataclasses.replace(a.metrics, slices=slices)))
    path = tmp_path_factory.mktemp("sliced") / "report.json"
    path.write_text(dataclasses.replace(r, attacks=attacks).to_json())
    return path


@pytest.fixture(scope="module")
def bom(report) -> dict[str, Any]:  # noqa: ANN001
    return json.loads(render_bom(report))


def test_the_bom_is_valid_against_the_cyclonedx_1_6_schema(report):
    text = render_bom(report)
    assert validate_bom(text) == []
    # the check is real: a field the schema does not know is refused
    bad = json.loads(text)
    bad["components"][0]["modelCard"]["quantitativeAnalysis"]["performanceMetrics"][0][
        "interval"] = "0.5"
    assert validate_bom(json.dumps(bad))
    bad = json.loads(text)
    bad["components"][0]["type"] = "ml-model"
    assert validate_bom(json.dumps(bad))


def test_the_bom_starts_with_the_head_the_ownership_rule_recognises(report):
    text = render_bom(report)
    assert text.startswith(CYCLONEDX_HEAD) and is_cyclonedx_bom(text.encode())
    assert not is_cyclonedx_bom(text.replace('"graphleaks"', '"other"', 1).encode())


def test_one_report_gives_one_bom(report):
    assert render_bom(report) == render_bom(load_report(V1))
    assert "timestamp" not in render_bom(report)


def test_graphleaks_is_the_tool_and_the_model_is_a_machine_learning_model(bom):
    tool = bom["metadata"]["tools"]["components"][0]
    assert (tool["type"], tool["name"]) == ("application", "graphleaks")
    (model,) = bom["components"]
    assert model["type"] == "machine-learning-model"
    assert bom["specVersion"] == "1.6" and bom["serialNumber"].startswith("urn:uuid:")


def _estimates(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every ``{"value", "ci"}`` object under ``node`` of report.json, by dotted path."""
    out = []
    if isinstance(node, dict):
        if "value" in node and "ci" in node:
            return [(path, node)]
        for k, v in node.items():
            out += _estimates(v, f"{path}.{k}" if path else k)
    return out


def _num(x: Any) -> float:
    return float(x)  # report.json writes non-finite numbers as "inf"/"nan" strings


@pytest.mark.parametrize("which", ["v1", "sliced"])
def test_every_metric_of_report_json_is_in_the_model_card_with_interval_and_slice(
        which, sliced):
    path = V1 if which == "v1" else sliced
    bom = json.loads(render_bom(load_report(path)))
    raw = json.loads(path.read_text())  # enumerated from the JSON, not from the records
    n_slices = 0
    metrics = bom["components"][0]["modelCard"]["quantitativeAnalysis"]["performanceMetrics"]
    card = Counter((m["type"].split(" ", 1)[0], m["slice"], float(m["value"]),
                    float(m["confidenceInterval"]["lowerBound"]),
                    float(m["confidenceInterval"]["upperBound"]))
                   for m in metrics if "confidenceInterval" in m)
    n_card = sum(card.values())
    seen = 0
    for a in raw["attacks"]:
        m = a["metrics"]
        for where, est in _estimates({k: v for k, v in m.items() if k != "slices"}):
            want = (a["attack"], "overall", _num(est["value"]), _num(est["ci"][0]),
                    _num(est["ci"][1]))
            assert card[want] > 0, (a["attack"], where)
            card[want] -= 1
            seen += 1
        for key, s in m.get("slices", {}).items():
            ests = _estimates(s.get("binary", {}))
            assert ests or s.get("too_few"), key
            n_slices += bool(ests)
            for where, est in ests:
                want = (a["attack"], key, _num(est["value"]), _num(est["ci"][0]),
                        _num(est["ci"][1]))
                assert card[want] > 0, (a["attack"], key, where)
                card[want] -= 1
                seen += 1
        # metrics without an interval: ε bounds, oracle accuracy
        singles = {(x["type"], float(x["value"])) for x in metrics
                   if "confidenceInterval" not in x}
        for name in ("epsilon_lower_bound", "epsilon_lower_bound_max_over_thresholds"):
            if name in m:
                value = _num(m[name]["epsilon_lb"])
                assert any(t.startswith(a["attack"] + " epsilon_lb") and
                           (v == value or math.isnan(value)) for t, v in singles), name
        if "oracle_balanced_accuracy" in m:
            assert (f"{a['attack']} oracle_balanced_accuracy",
                    m["oracle_balanced_accuracy"]["value"]) in singles
    assert seen == n_card  # nothing in the card that report.json lacks
    assert n_slices == (0 if which == "v1" else 9)  # the sliced report exercises slices
    utility = raw["target"]["utility"]
    assert {(f"target {k}", v) for k, v in utility.items()} <= \
        {(x["type"], float(x["value"])) for x in metrics}


def test_a_too_small_slice_is_a_stated_limitation_a_measured_one_a_fairness_assessment(
        sliced):
    bom = build_bom(load_report(sliced))
    assert validate_bom(json.dumps(bom)) == []
    considerations = bom["components"][0]["modelCard"]["considerations"]
    limits = considerations["technicalLimitations"]
    # slices 0, 2, 4... were given intervals: class=1 (index 1) is still too small
    assert any("confidence_mia: slice class=1 " in t and "too few" in t for t in limits)
    assert not any("slice class=0 " in t for t in limits)
    groups = [f["groupAtRisk"] for f in considerations["fairnessAssessments"]]
    assert any(g.startswith("candidates in slice class=0 (12 positives") for g in groups)
    assert not any("class=1 " in g for g in groups)
    harms = considerations["fairnessAssessments"][0]["harms"]
    assert "AUC 0.6 [0.5, 0.7]" in harms and "all candidates: AUC" in harms


def test_ledger_threat_model_and_verdict_are_in_the_card(bom, report):
    card = bom["components"][0]["modelCard"]
    props = {p["name"]: p["value"] for p in card["properties"]}
    assert props["graphleaks:ledger:unit"] == "edge"
    assert props["graphleaks:ledger:epsilon"] == "1.0"
    assert props["graphleaks:ledger:accountant"] == "basic_composition"
    assert props["graphleaks:ledger:status"] == "verified"
    assert props["graphleaks:control:OWASP-AITG-MOD-04"] == "covered by confidence_mia"
    limits = card["considerations"]["technicalLimitations"]
    assert any(t.startswith("confidence_mia (membership): the figures hold for a blackbox")
               for t in limits)
    risks = card["considerations"]["ethicalConsiderations"]
    assert risks and all(set(r) == {"name", "mitigationStrategy"} for r in risks)
    assert any(r["name"].startswith("membership risk") for r in risks)


def test_non_finite_numbers_are_strings_the_schema_accepts(report):
    import dataclasses

    from graphleaks.privacy.ledger import PrivacyLedger

    open_target = dataclasses.replace(report, ledger=PrivacyLedger.non_private())
    text = render_bom(open_target)
    props = {p["name"]: p["value"] for p in
             build_bom(open_target)["components"][0]["modelCard"]["properties"]}
    assert props["graphleaks:ledger:epsilon"] == "inf"
    assert validate_bom(text) == []
