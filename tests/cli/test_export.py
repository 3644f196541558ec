"""``graphleaks export``: CycloneDX and SARIF evidence of a fresh audit, valid against their
published schemas; exit 0 even when a gate is crossed; reruns replace graphleaks' own files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

DATA = Path(__file__).parents[1] / "report" / "data"
V1 = DATA / "report_v1.json"

jsonschema = pytest.importorskip("jsonschema", reason="needs the dev extra")
pytest.importorskip("cyclonedx.validation.json", reason="needs graphleaks[evidence]")


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:  # noqa: ANN001
    """report.json of a small fresh audit (schema 2, slices with intervals)."""
    import torch

    from graphleaks.audit.spec import parse_spec, run_spec
    from graphleaks.report.writers import write_report

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        spec = parse_spec({"target": {"dataset": "synthetic",
                                      "synthetic": {"num_nodes": 200, "num_features": 16,
                                                    "seed": 1},
                                      "architecture": {"dropout": 0.0, "weight_decay": 0.0,
                                                       "epochs": 60, "patience": 0}},
                           "audit": {"n_bootstrap": 50},
                           "attacks": {"confidence_mia": {"threshold": "none"}}})
        json_path, _ = write_report(run_spec(spec), tmp_path_factory.mktemp("r") / "report")
    finally:
        torch.set_num_threads(n)
    return json_path


def _sarif_errors(log: dict) -> list[str]:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())
    return [e.message for e in jsonschema.Draft4Validator(schema).iter_errors(log)]


def _run(*args: object):  # noqa: ANN202
    return CliRunner().invoke(app, ["export", *map(str, args)])


def test_export_of_a_fresh_audit_is_valid_evidence_and_exits_0_on_a_crossed_gate(
        audited, tmp_path, monkeypatch):
    from graphleaks.report.mlbom import validate_bom

    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "audit.toml"
    spec.write_text("[target]\ndataset = 'synthetic'\n\n[gate]\n[gate.thresholds]\n"
                    "auc = 0.01\n")
    r = _run(audited, "--cyclonedx", "bom.cdx.json", "--sarif", "gate.sarif",
             "--config", spec)
    assert r.exit_code == 0, r.output
    assert "FAILED, 1 crossed" in r.output and "graphleaks check is the gate" in r.output
    bom = (tmp_path / "bom.cdx.json").read_text()
    assert validate_bom(bom) == []
    raw = json.loads(audited.read_text())
    slices = [k for k, s in raw["attacks"][0]["metrics"]["slices"].items() if "binary" in s]
    assert slices, "the fresh audit should have slices with intervals"
    card = json.loads(bom)["components"][0]["modelCard"]
    assert {m["slice"] for m in card["quantitativeAnalysis"]["performanceMetrics"]} >= \
        {"overall", *slices}
    log = json.loads((tmp_path / "gate.sarif").read_text())
    assert _sarif_errors(log) == []
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "confidence_mia/auc"
    loc = res["locations"][0]["physicalLocation"]
    assert (loc["artifactLocation"]["uri"], loc["region"]["startLine"]) == ("audit.toml", 6)
    # the same command again replaces graphleaks' own files
    assert _run(audited, "--cyclonedx", "bom.cdx.json", "--sarif", "gate.sarif",
                "--config", spec).exit_code == 0
    # `check` on the same gate is the one that fails the build
    r = CliRunner().invoke(app, ["check", str(audited), "--config", str(spec)])
    assert r.exit_code == 3


def test_sarif_only_needs_no_gate_and_lists_the_rules(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = _run(V1, "--sarif", "out.sarif")
    assert r.exit_code == 0, r.output
    assert "no gate given" in r.output and "0 results" in r.output
    log = json.loads((tmp_path / "out.sarif").read_text())
    assert _sarif_errors(log) == [] and log["runs"][0]["results"] == []
    uri = log["runs"][0]["artifacts"][0]["location"]["uri"]
    assert uri.startswith("file://") and uri.endswith("report_v1.json")  # outside the cwd


def test_max_and_baseline_options_as_for_check(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = _run(V1, "--sarif", "g.sarif", "--max", "confidence_mia.tpr@10%fpr=0.01",
             "--baseline", V1, "--tolerance", "0.0")
    assert r.exit_code == 0, r.output
    log = json.loads((tmp_path / "g.sarif").read_text())
    assert _sarif_errors(log) == []
    assert [x["ruleId"] for x in log["runs"][0]["results"]] == ["confidence_mia/tpr@10%fpr"]
    assert log["runs"][0]["properties"]["checks"] > 1  # baseline checks ran, all passed


def test_an_audit_may_replace_a_report_folder_holding_the_evidence(tmp_path, monkeypatch):
    from graphleaks.report.report import load_report
    from graphleaks.report.writers import write_report

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "privacy-report"
    write_report(load_report(V1), folder)
    r = _run(folder / "report.json", "--cyclonedx", folder / "bom.cdx.json", "--sarif",
             folder / "gate.sarif")
    assert r.exit_code == 0, r.output
    write_report(load_report(V1), folder)  # the CI example's rerun
    assert sorted(p.name for p in folder.iterdir()) == ["report.json", "report.md"]
