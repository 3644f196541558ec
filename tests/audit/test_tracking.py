"""MLflow tracking against a local file store (skipped without the extra)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from graphleaks.audit.tracking import MlflowTracker, flat_metrics
from graphleaks.metrics.binary import Estimate
from graphleaks.metrics.slices import SliceMetrics
from graphleaks.report.report import load_report


def test_flat_metrics_carry_interval_bounds():
    m = load_report(Path(__file__).parents[1] / "report" / "data" / "report_v1.json").attack(
        "confidence_mia").metrics
    m = replace(m, slices={"degree<=2": SliceMetrics(10, 10, Estimate(0.9, 0.8, 1.0))})
    d = dict(flat_metrics("confidence_mia", m))
    assert d["confidence_mia.binary.auc"] == m.binary.auc.value
    assert (d["confidence_mia.binary.auc.ci_lo"], d["confidence_mia.binary.auc.ci_hi"]) == \
        m.binary.auc.ci
    assert d["confidence_mia.binary.n_pos"] == 12
    assert d["confidence_mia.binary.tpr_at_fpr.0.01.ci_hi"] == m.binary.tpr_at_fpr[0.01].hi
    assert d["confidence_mia.slices.degree__2.binary.auc.ci_hi"] == 1.0


def test_logs_an_audit_to_a_file_store(tmp_path, trained_target, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    # MLflow 3 keeps the file store behind an opt-in; it is the offline store a test can use
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    from graphleaks.audit.runner import run_audit
    from graphleaks.report.writers import write_report

    report = run_audit(trained_target, ["confidence_mia"], seed=0, n_bootstrap=30)
    write_report(report, tmp_path / "out")
    uri = (tmp_path / "mlruns").as_uri()
    run_id = MlflowTracker(tracking_uri=uri).log_audit(report, tmp_path / "out")
    mlflow.set_tracking_uri(uri)
    run = mlflow.get_run(run_id)
    assert run.data.params["seed"] == "0" and run.data.params["defense"] == "none"
    auc = report.attacks[0].metrics.binary.auc
    assert run.data.metrics["confidence_mia.binary.auc"] == pytest.approx(auc.value)
    assert run.data.metrics["confidence_mia.binary.auc.ci_hi"] == pytest.approx(auc.hi)
    arts = {a.path for a in mlflow.MlflowClient().list_artifacts(run_id)}
    assert {"report.json", "report.md", "ledger.json"} <= arts
    ledger = json.loads((tmp_path / "out" / "report.json").read_text())["ledger"]
    assert ledger["epsilon"] == "inf"


def test_mlflow_flag_without_the_extra_exits_2_naming_the_fix(monkeypatch, tmp_path):
    import builtins

    from typer.testing import CliRunner

    from graphleaks.cli import app

    real = builtins.__import__

    def no_mlflow(name, *a, **k):  # noqa: ANN001, ANN202
        if name == "mlflow" or name.startswith("mlflow."):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    r = CliRunner().invoke(app, ["audit", "--mlflow", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "pip install 'graphleaks[mlflow]'" in r.output
    assert not (tmp_path / "o").exists()
