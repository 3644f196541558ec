"""Report schema 2: typed records, one decoder, version-1 reports (old CI baselines) still read.

``data/report_v1.json`` and ``data/report_v1.md`` were written by graphleaks at main 555e0d9
(schema version 1) from a tiny synthetic audit: an EdgeRand target, ``confidence_mia``,
``attribute_inference`` and ``link_stealing``. ``report_v1.md`` has since been edited where the
rendering changed on purpose (issue 24: claimed ε rounded for display, separate sound and
optimistic ε columns, the table's footnotes; issue 27: the control-mapping
section at the end; issue 29: the slice section no longer says every interval is a
bootstrap one).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphleaks.attacks.base import Output, ThreatModel
from graphleaks.cli import app
from graphleaks.errors import DataError
from graphleaks.metrics.binary import BinaryMetrics, Estimate
from graphleaks.metrics.multiclass import MulticlassMetrics
from graphleaks.privacy.ledger import PrivacyLedger, PrivacyUnit
from graphleaks.report.html import render_html
from graphleaks.report.markdown import render_markdown
from graphleaks.report.records import AttackMetrics, BoundReport
from graphleaks.report.report import REPORT_SCHEMA_VERSION, AuditReport, load_report
from graphleaks.report.writers import write_report

DATA = Path(__file__).parent / "data"
V1 = DATA / "report_v1.json"
#: The defended CI baseline as committed at 0.1.0 (schema 1, kebab defense names); the
#: one in ci/ is regenerated with the code of its day.
BASELINE_DEFENDED = Path(__file__).parent / "data" / "privacy-baseline-defended-v1.json"


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(V1.read_text())


@pytest.fixture(scope="module")
def v1() -> AuditReport:
    return load_report(V1)


def test_the_committed_report_is_version_1(raw):
    assert raw["schema_version"] == 1 and REPORT_SCHEMA_VERSION == 2


def test_v1_is_read_into_typed_records(v1, raw):
    mia = v1.attack("confidence_mia")
    assert isinstance(mia.metrics, AttackMetrics) and isinstance(mia.threat_model, ThreatModel)
    assert isinstance(mia.metrics.binary, BinaryMetrics) and mia.metrics.multiclass is None
    assert isinstance(v1.ledger, PrivacyLedger) and v1.ledger.unit is PrivacyUnit.EDGE
    auc = raw["attacks"][0]["metrics"]["binary"]["auc"]
    assert mia.metrics.binary.auc == Estimate(auc["value"], *auc["ci"], auc["method"])
    assert mia.metrics.binary.tpr_at_fpr[0.01].hi == \
        raw["attacks"][0]["metrics"]["binary"]["tpr_at_fpr"]["0.01"]["ci"][1]
    assert mia.threat_model.outputs == frozenset({Output.POSTERIORS})
    bound = mia.metrics.epsilon_lower_bound
    assert isinstance(bound, BoundReport) and bound.bound.unit == "node"
    assert bound.ledger_comparison is not None and not bound.ledger_comparison.comparable
    attr = v1.attack("attribute_inference").metrics
    assert isinstance(attr.multiclass, MulticlassMetrics) and attr.binary is None
    assert attr.multiclass.n_classes == 3
    link = v1.attack("link_stealing").metrics
    assert link.epsilon_lower_bound is None and link.epsilon_lower_bound_max_over_thresholds
    assert set(link.slices) >= {"degree<=2", "class=same"} and link.slices["degree<=2"].too_few


def test_v1_upgrades_to_v2_json_of_the_same_shape(v1, raw):
    new = json.loads(v1.to_json())
    assert new["schema_version"] == 2
    old = {k: v for k, v in raw.items() if k != "schema_version"}
    for a in old["attacks"]:  # v1's never-enforced query_budget (always null) is dropped
        assert a["threat_model"].pop("query_budget") is None
    for a in new["attacks"]:
        # added keys only (issue 24): the TPR@FPR rule v1 used, and the AUC-below-chance flag
        binary = a["metrics"].get("binary")
        if binary is not None:
            assert binary.pop("tpr_at_fpr_rule") == "real-threshold"
            assert binary.pop("miscalibrated") is (binary["auc"]["ci"][1] < 0.5)
    # the verdict is derived again (for the target: tests/audit/test_verdict.py), with notes
    assert [v["risk"] for v in new["verdict"] if v["risk"] != "target"] == \
        [v["risk"] for v in old["verdict"]][:3] + ["attributes", "reconstruction"]
    assert isinstance(new.pop("verdict_notes"), list)
    skip = ("schema_version", "verdict")
    assert {k: v for k, v in new.items() if k not in skip} == \
        {k: v for k, v in old.items() if k not in skip}


def test_v2_round_trips_in_the_typed_sense(v1):
    again = AuditReport.from_json(v1.to_json())
    assert again == v1
    assert AuditReport.from_json(again.to_json()) == again


def test_v1_is_rendered(v1):
    md = render_markdown(v1)
    # the same lines as schema-1 graphleaks wrote (slices now in the JSON's key order), but
    # the verdict's advice, derived when rendering, names the defense by its canonical name
    expected = (DATA / "report_v1.md").read_text().replace("--defense gap-ndp",
                                                           "--defense gap_ndp")
    assert "--defense gap_ndp" in md and "gap-ndp" not in md

    def after_verdict(text: str) -> list[str]:  # the verdict is computed for the target now
        return sorted(text[text.index("Target: "):].strip().splitlines())

    assert after_verdict(md) == after_verdict(expected)
    html = render_html(v1)
    for name in ("confidence_mia", "attribute_inference", "link_stealing", "Privacy ledger"):
        assert name in html


def test_v1_report_and_baselines_are_gated_by_check(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["check", str(V1), "--baseline", str(V1)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["check", str(V1), "--max", "confidence_mia.auc=0.85"])
    assert r.exit_code == 3 and "0.8587 > limit 0.8500" in r.output
    # a v2 report (written today) against the v1 baseline
    write_report(load_report(V1), tmp_path / "now")
    assert json.loads((tmp_path / "now" / "report.json").read_text())["schema_version"] == 2
    r = runner.invoke(app, ["check", str(tmp_path / "now" / "report.json"), "--baseline",
                            str(V1)])
    assert r.exit_code == 0, r.output
    # a version-1 CI baseline (the defended one as committed at 0.1.0) still gates, and so
    # do the committed CI baselines, whatever version regenerated them
    assert json.loads(BASELINE_DEFENDED.read_text())["schema_version"] == 1
    root = Path(__file__).parents[2]
    for path in (BASELINE_DEFENDED, root / "ci" / "privacy-baseline.json",
                 root / "ci" / "privacy-baseline-defended.json"):
        r = runner.invoke(app, ["check", str(path), "--baseline", str(path)])
        assert r.exit_code == 0, r.output


def test_non_finite_numbers_round_trip():
    # the encoder writes non-finite floats as "inf"/"nan"; the decoder reads them back
    d = json.loads(V1.read_text())
    d["attacks"][0]["metrics"]["epsilon_lower_bound"]["epsilon_lb"] = "inf"
    r = AuditReport.from_dict(d)
    assert r.attacks[0].metrics.epsilon_lower_bound.bound.epsilon_lb == math.inf
    assert AuditReport.from_json(r.to_json()) == r


def test_canary_audits_are_typed_and_round_trip(v1):
    from dataclasses import replace

    from graphleaks.audit.canary import CanaryAudit
    from graphleaks.metrics.one_run import OneRunBound

    audit = CanaryAudit(unit="edge", defense="edgerand", attack="released",
                        claimed_epsilon=math.inf, claimed_delta=0.0,
                        bound=OneRunBound(60, 20, 18, 0.7, 0.3, 0.0, 0.95), violation=False,
                        num_inserted=31, seed=3, notes=("one run",))
    report = replace(v1, canary_audits=[audit])
    again = AuditReport.from_json(report.to_json())
    assert again == report and again.canary_audits[0].audited_epsilon == 0.7
    # rounded for display by the one rule (graphleaks._display): no finite claim reads ∞
    assert "| edge | 60 (31) | released | 20 / 18 | ∞ |" in render_markdown(again)
    d = json.loads(report.to_json())
    d["canary_audits"][0]["bound"]["num_guesses"] = "20"
    with pytest.raises(DataError, match="num_guesses"):
        AuditReport.from_dict(d)


@pytest.mark.parametrize("path,value,needle", [
    (("attacks", 0, "metrics", "binary", "auc", "ci"), [0.1], "auc.ci"),
    (("attacks", 0, "metrics", "binary", "n_pos"), 1.5, "n_pos"),
    (("attacks", 0, "metrics", "binary", "tpr_at_fpr"), {"x": {}}, "false-positive"),
    (("attacks", 0, "metrics", "epsilon_lower_bound", "threshold_fixed"), "yes",
     "threshold_fixed"),
    (("attacks", 1, "metrics", "multiclass", "leaks"), 1, "leaks"),
    (("attacks", 0, "metrics", "slices", "class=0"), [], "slices[class=0]"),
    (("attacks", 0, "metrics", "roc", "tpr"), [0.0], "roc"),
    (("attacks", 0, "threat_model", "outputs"), ["telepathy"], "threat_model"),
    (("ledger", "unit"), "planet", "ledger"),
    (("ledger", "serving"), {"fresh_releases": "many"}, "serving"),
])
def test_malformed_fields_are_one_line_data_errors(raw, path, value, needle):
    d = json.loads(json.dumps(raw))
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(DataError) as exc:
        AuditReport.from_dict(d)
    msg = str(exc.value)
    assert needle in msg and "\n" not in msg


def test_no_reader_walks_string_key_paths():
    # issue 12 target: `["binary"]`, `["ci"]`, `["value"]` only in the one decoder/encoder
    import re

    root = Path(__file__).parents[2] / "graphleaks"
    pattern = re.compile(r'\["binary"\]|\["ci"\]|\["value"\]')
    found = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert all(f.startswith("report/records.py:") for f in found), found




def test_v1_kebab_defense_names_are_read_as_canonical():
    # the committed defended baseline was written when the defense was spelled "gap-edp"
    raw = json.loads(BASELINE_DEFENDED.read_text())
    assert raw["target"]["defense"] == "gap-edp"
    assert raw["config"]["spec"]["target"]["defense"] == "gap-edp"
    report = load_report(BASELINE_DEFENDED)
    assert report.target.defense == "gap_edp"
    assert report.config["spec"]["target"]["defense"] == "gap_edp"
    again = json.loads(report.to_json())
    assert again["target"]["defense"] == "gap_edp"
    assert "gap-edp" not in json.dumps({k: again[k] for k in ("target", "config", "verdict")})


def test_v1_params_owners_and_canary_defense_are_read_as_canonical(raw):
    d = json.loads(json.dumps(raw))
    d["config"]["params"] = {"gap-ndp": {"epsilon": 2.0}, "confidence_mia": {}}
    d["canary_audits"] = [{
        "unit": "edge", "defense": "eclipse-strict", "attack": "released",
        "claimed_epsilon": 1.0, "claimed_delta": 1e-6,
        "bound": {"num_canaries": 60, "num_guesses": 20, "num_correct": 18,
                  "epsilon_lb": 0.7, "mu_lb": 0.3, "delta": 0.0, "confidence": 0.95},
        "violation": False, "num_inserted": 31, "seed": 3, "notes": []}]
    r = AuditReport.from_dict(d)
    assert r.config["params"] == {"gap_ndp": {"epsilon": 2.0}, "confidence_mia": {}}
    assert r.canary_audits[0].defense == "eclipse_strict"


def test_new_report_is_gated_by_the_v1_baseline_with_kebab_names(tmp_path):
    # a report written today names the defense "gap_edp"; the committed v1 baseline holds
    # "gap-edp". Every baseline metric must still be checked against the new report.
    write_report(load_report(BASELINE_DEFENDED), tmp_path / "now")
    now = tmp_path / "now" / "report.json"
    assert json.loads(now.read_text())["target"]["defense"] == "gap_edp"
    r = CliRunner().invoke(app, ["check", str(now), "--baseline", str(BASELINE_DEFENDED),
                                 "--json"])
    assert r.exit_code == 0, r.output
    checks = json.loads(r.stdout)["checks"]
    baseline_checks = [c for c in checks if c["kind"] == "baseline"]
    assert baseline_checks and all(c["passed"] for c in baseline_checks)
    assert {c["attack"] for c in baseline_checks} == {"confidence_mia", "link_stealing"}
