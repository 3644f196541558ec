"""Outputs graphleaks did not write are never replaced; every option is checked first.

``check --html/--junit/--write-baseline/--summary`` and ``results --out/--plot`` replace a
file only when it starts with the generator head graphleaks writes; links (dangling or not)
are refused; a refused command writes nothing. Also: the MLflow store is checked before
any work, a control character in a threshold is one escaped error line, a 10-replicate
audit writes its whole report, and help texts show brackets literally.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import types

import pytest

# One cheap attack and few replicates: these tests are about the files written.
AUDIT = ("audit", "--dataset", "synthetic", "--attack", "confidence_mia", "--n-bootstrap",
         "20", "--quiet")


@pytest.fixture
def no_training(monkeypatch):
    """Make any training, audit or sweep fail loudly (exit 1): a refusal must come first."""
    import graphleaks.audit.model_audit as model_audit
    import graphleaks.audit.runner as runner
    import graphleaks.audit.scores_only as scores_only
    import graphleaks.sweep.sweep as sweep

    def boom(*args, **kwargs):
        raise RuntimeError("work started before the MLflow store was checked")

    for mod, name in ((runner, "train_target"), (runner, "run_audit"),
                      (runner, "audit_with_scores"), (sweep, "run_sweep"),
                      (scores_only, "audit_scores_run"), (model_audit, "audit_target")):
        monkeypatch.setattr(mod, name, boom)


def _gate(hostile, *extra):
    """``check`` on the minimal valid report (one attack, confidence_mia)."""
    report = hostile.report(hostile.root)
    return ("check", report, "--max", "auc=0.99", *extra)


# ------------------------------------------------------------------ --html and --junit


def test_html_never_replaces_a_file_that_mentions_graphleaks(hostile):
    (hostile.root / "requirements.txt").write_text("graphleaks[mlflow]>=0.3\nnumpy\n")
    hostile.refused(*_gate(hostile, "--html", "requirements.txt"), match="requirements.txt")


def test_html_never_replaces_a_hand_written_page(hostile):
    site = hostile.root / "site"
    site.mkdir()
    # a hand-written page that mentions graphleaks, even its generator tag, but not at the
    # place graphleaks writes it
    (site / "report.html").write_text(
        '<!DOCTYPE html>\n<html><head><meta name="generator" content="graphleaks">'
        "<title>Our graphleaks privacy report</title></head><body>hand-written</body></html>")
    hostile.refused(*_gate(hostile, "--html", "site/report.html"), match="report.html")
    hostile.refused(*_gate(hostile, "--html", "site"), match="report.html")  # the folder form


def test_junit_never_replaces_a_workflow_named_after_the_gate(hostile):
    wf = hostile.root / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "privacy.yml").write_text("name: graphleaks-privacy-gate\njobs: {}\n")
    hostile.refused(*_gate(hostile, "--junit", ".github/workflows/privacy.yml"),
                    match="privacy.yml")
    # an XML file naming the gate is not enough either: only the generator head counts
    (hostile.root / "other.xml").write_text(
        "<?xml version='1.0'?>\n<testsuites name=\"graphleaks-privacy-gate\"/>\n")
    hostile.refused(*_gate(hostile, "--junit", "other.xml"), match="other.xml")


def test_a_second_run_replaces_its_own_junit_and_html(hostile):
    site = hostile.root / "site"
    site.mkdir()
    outs = ("--junit", "j.xml", "--html", "page.html")
    r = hostile.run(*_gate(hostile, *outs, "--summary", "sum.md"))
    assert r.exit_code in (0, 3), r.stderr
    first = {n: (hostile.root / n).read_text() for n in ("j.xml", "page.html")}
    assert first["j.xml"].startswith("<?xml version='1.0' encoding='utf-8'?>\n"
                                      "<!-- generator: graphleaks -->\n<testsuites ")
    assert '<meta name="generator" content="graphleaks">' in first["page.html"][:200]
    r = hostile.run(*_gate(hostile, *outs, "--summary", "sum.md", "--max", "auc=0.01"))
    assert r.exit_code == 3, r.stderr  # the new gate fails: the files must say so
    assert (hostile.root / "j.xml").read_text() != first["j.xml"]
    assert (hostile.root / "page.html").read_text() != first["page.html"]
    assert (hostile.root / "sum.md").read_text().count("## graphleaks privacy gate") == 2
    for _ in range(2):  # --html FOLDER writes and then replaces FOLDER/report.html
        assert hostile.run(*_gate(hostile, "--html", "site")).exit_code in (0, 3)
    assert (site / "report.html").is_file()
    assert sorted(p.name for p in hostile.root.iterdir() if p.name.startswith(".")) == []


# ------------------------------------------------------------------ --write-baseline


def test_write_baseline_refuses_a_dangling_link(hostile):
    os.symlink(hostile.root / "nowhere" / "b.json", hostile.root / "b.json")
    hostile.refused(*_gate(hostile, "--write-baseline", "b.json"), match="symbolic link")
    assert not (hostile.root / "nowhere").exists()


def test_write_baseline_refuses_a_link_to_a_file(hostile):
    (hostile.root / "real.json").write_text("{}")
    os.symlink("real.json", hostile.root / "b.json")
    hostile.refused(*_gate(hostile, "--write-baseline", "b.json"), match="symbolic link")


@pytest.mark.parametrize("bad", [
    ("--max", "bogus=0.5"),
    ("--max", "auc=7"),
    ("--config", "missing.toml"),
    ("--config", "bad.toml"),
    ("--baseline", "missing.json"),
    ("--tolerance", "-1"),
    ("--bound", "sideways"),
], ids=lambda b: " ".join(b))
def test_write_baseline_with_a_bad_option_writes_nothing(hostile, bad):
    (hostile.root / "bad.toml").write_text("[gate]\nthresholds = { aucc = 0.5 }\n")
    report = hostile.report(hostile.root)
    hostile.refused("check", report, "--write-baseline", "b.json", *bad)
    assert not (hostile.root / "b.json").exists()


def test_write_baseline_alone_writes_the_report(hostile):
    report = hostile.report(hostile.root)
    r = hostile.run("check", report, "--write-baseline", "b.json")
    assert r.exit_code == 0, r.stderr
    assert (hostile.root / "b.json").read_text() == report.read_text()
    hostile.refused("check", report, "--write-baseline", "b.json", match="already exists")


def test_a_gate_that_fails_to_render_writes_nothing(hostile, monkeypatch):
    import graphleaks.report.html as html

    def malformed(*args, **kwargs):
        raise KeyError("a nested field the page reads")

    monkeypatch.setattr(html, "render_html", malformed)
    hostile.refused(*_gate(hostile, "--junit", "j.xml", "--write-baseline", "b.json",
                           "--summary", "s.md", "--html", "p.html"), match="--html")


# ------------------------------------------------------------------ links and non-files


@pytest.mark.parametrize("flag", ["--junit", "--html", "--summary", "--write-baseline"])
def test_check_refuses_every_linked_output(hostile, flag):
    outside = hostile.root / "outside.txt"
    outside.write_text("someone else's file\n")
    os.symlink(outside, hostile.root / "link")
    hostile.refused(*_gate(hostile, flag, "link"), match="symbolic link")


def test_summary_is_appended_to_regular_files_only(hostile):
    (hostile.root / "folder").mkdir()
    hostile.refused(*_gate(hostile, "--summary", "folder"), match="not a regular file")
    os.symlink(hostile.root / "gone.md", hostile.root / "dangling.md")
    hostile.refused(*_gate(hostile, "--summary", "dangling.md"), match="symbolic link")
    steps = hostile.root / "step_summary"
    steps.write_text("# earlier step\n")  # $GITHUB_STEP_SUMMARY: another program's file
    assert hostile.run(*_gate(hostile, "--summary", steps)).exit_code in (0, 3)
    text = steps.read_text()
    assert text.startswith("# earlier step\n") and "## graphleaks privacy gate" in text


def test_html_link_to_a_folder_is_refused(hostile):
    (hostile.root / "site").mkdir()
    os.symlink(hostile.root / "site", hostile.root / "site-link")
    hostile.refused(*_gate(hostile, "--html", "site-link"), match="symbolic link")


def test_audit_out_link_is_refused(hostile, no_training):
    (hostile.root / "real").mkdir()
    os.symlink(hostile.root / "real", hostile.root / "rep")
    hostile.refused(*AUDIT, "--out", "rep", match="symbolic link")


@pytest.mark.parametrize("flag", ["--out", "--plot"])
def test_results_refuses_links_and_foreign_files(hostile, flag):
    from graphleaks.sweep.results_store import ResultsStore

    ResultsStore(hostile.root / "s.sqlite").close()
    (hostile.root / "notes.csv").write_text("config_hash is a column we also use\n")
    os.symlink(hostile.root / "notes.csv", hostile.root / "link.csv")
    hostile.refused("results", "s.sqlite", "--format", "csv", flag, "link.csv",
                    match="symbolic link")
    hostile.refused("results", "s.sqlite", "--format", "csv", flag, "notes.csv",
                    match="notes.csv")


def test_results_export_is_replaced_by_a_rerun_and_a_failed_plot_writes_nothing(hostile):
    from graphleaks.sweep.results_store import ResultsStore

    ResultsStore(hostile.root / "s.sqlite").close()
    for fmt in ("csv", "json", "table", "csv"):
        r = hostile.run("results", "s.sqlite", "--format", fmt, "--out", "export.txt")
        assert r.exit_code == 0, r.stderr
    # no finished run to plot: refused before the export is written
    hostile.refused("results", "s.sqlite", "--out", "new.csv", "--plot", "p.png",
                    match="no finished runs")


# ------------------------------------------------------------------ one line, always


@pytest.mark.parametrize("item", [
    "confidence_mia[deg\nree<=2].auc=0.5",
    "confidence_mia[degree<=2].auc=0.5\n",
    "auc=0.5\r\x1b[2J",
    "confidence_mia[degree\t<=2].tpr@1%fpr=0.1",
])
def test_control_character_in_a_threshold_is_one_escaped_line(hostile, item):
    line = hostile.refused(*_gate(hostile, "--max", item), match="--max")
    assert "\x1b" not in line and "\r" not in line and "\t" not in line
    assert "control character" in line


def test_control_character_in_a_spec_threshold_is_one_line(hostile):
    (hostile.root / "gate.toml").write_text(
        '[gate.thresholds.confidence_mia]\n"deg\\nree\\u001b" = 0.5\n')
    line = hostile.refused("check", hostile.report(hostile.root), "--config", "gate.toml")
    assert "\x1b" not in line


# ------------------------------------------------------------------ bootstrap and help


def test_ten_bootstrap_replicates_write_the_whole_report(hostile):
    r = hostile.run("audit", "--dataset", "synthetic", "--suite", "quick", "--n-bootstrap",
                    "10", "--out", "rep", "--quiet")
    assert r.exit_code == 0, (r.stderr, r.exception)
    assert sorted(p.name for p in (hostile.root / "rep").iterdir()) == [
        "report.html", "report.json", "report.md", "scores.csv"]
    report = json.loads((hostile.root / "rep" / "report.json").read_text())
    from graphleaks.report.report import load_report

    for a in load_report(hostile.root / "rep" / "report.json").attacks:
        for name, e in a.metrics.estimates().items():
            assert e.lo <= e.value <= e.hi, (a.attack, name, e)
    assert report["attacks"]


@pytest.mark.parametrize(("cmd", "text"), [
    ("audit", "graphleaks[mlflow]"), ("sweep", "graphleaks[mlflow]"), ("check", "[gate]"),
    ("sweep", "[sweep]"), ("train", "gcn.hidden=[16]"),
])
def test_help_shows_brackets_literally(cmd, text):
    from typer.testing import CliRunner

    from graphleaks.cli import app

    r = CliRunner().invoke(app, [cmd, "--help"], env={"COLUMNS": "400"})
    assert r.exit_code == 0
    assert text in " ".join(r.stdout.split()), r.stdout


# ------------------------------------------------------------------ MLflow, without MLflow


def _fake_mlflow(monkeypatch, *, default="sqlite:///mlflow.db", client_error=None):
    """A stand-in ``mlflow`` module: the URI checks run without the extra installed."""
    import graphleaks.audit.tracking as tracking

    class Client:
        def __init__(self, tracking_uri):
            self.uri = tracking_uri

        def get_experiment_by_name(self, name):
            if client_error is not None:
                raise client_error
            return None

    fake = types.SimpleNamespace(get_tracking_uri=lambda: default, MlflowClient=Client)
    monkeypatch.setattr(tracking, "_mlflow", lambda: fake)
    return tracking


def test_unknown_scheme_is_refused_before_training(hostile, no_training, monkeypatch):
    _fake_mlflow(monkeypatch)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "bogus://user:secret@host/x\n")
    line = hostile.refused(*AUDIT, "--mlflow", "--out", "rep", match="unknown scheme")
    assert "secret" not in line


def test_default_database_store_without_sqlalchemy_is_refused_naming_the_fix(
        hostile, no_training, monkeypatch):
    tracking = _fake_mlflow(monkeypatch)
    monkeypatch.setattr(tracking, "_has_sqlalchemy", lambda: False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    line = hostile.refused(*AUDIT, "--mlflow", "--out", "rep", match="MLFLOW_TRACKING_URI")
    assert "file:./mlruns" in line and "unset" in line


def test_unreachable_store_is_refused_before_training(hostile, no_training, monkeypatch):
    _fake_mlflow(monkeypatch, client_error=ConnectionError("refused"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
    hostile.refused(*AUDIT, "--mlflow", "--out", "rep", match="cannot open")


def test_sweep_store_is_checked_before_the_first_run(hostile, no_training, monkeypatch):
    _fake_mlflow(monkeypatch, client_error=ConnectionError("refused"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "https://127.0.0.1:9")
    (hostile.root / "sweep.toml").write_text(
        '[target]\ndataset = "synthetic"\n[sweep]\ndefenses = ["none"]\nseeds = [0]\n')
    hostile.refused("sweep", "sweep.toml", "--db", "s.sqlite", "--mlflow", match="cannot open")


def test_scores_and_model_audits_check_the_store_too(hostile, no_training, monkeypatch,
                                                     scores_files):
    _fake_mlflow(monkeypatch, client_error=ConnectionError("refused"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
    hostile.refused("audit", "scores", scores_files / "scores.npz", "--members",
                    scores_files / "members.txt", "--out", "rep", "--mlflow",
                    match="cannot open")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "ftp://127.0.0.1/x")
    hostile.refused("audit", "model", "m.onnx", "--out", "rep", "--mlflow",
                    match="unknown scheme")


@pytest.fixture
def scores_files(tmp_path):
    """A 3-class score export of 60 nodes (members: the first 30), outside the sandbox."""
    import numpy as np

    rng = np.random.default_rng(0)
    d = tmp_path / "scores"
    d.mkdir()
    y = rng.integers(0, 3, size=60)
    logits = rng.normal(size=(60, 3))
    logits[np.arange(30), y[:30]] += 2.0  # members are fit better
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.savez(d / "scores.npz", scores=p, labels=y, node_ids=np.arange(60))
    (d / "members.txt").write_text("node_id\n" + "\n".join(map(str, range(30))) + "\n")
    return d


# ------------------------------------------------------------------ MLflow, installed


@pytest.fixture
def mlflow_store(hostile, monkeypatch):
    """The real MLflow (skipped without it) and a ``file:`` store URI in the sandbox."""
    mlflow = pytest.importorskip("mlflow")
    from mlflow.tracking._tracking_service import utils

    # the fluent API keeps the last set_tracking_uri process-wide: start from MLflow's default
    monkeypatch.setattr(utils, "_tracking_uri", None)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    uri = (hostile.root / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    yield mlflow, uri
    os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)  # set by graphleaks for the file: store


def _runs(mlflow, uri):
    client = mlflow.MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("graphleaks")
    return [] if exp is None else client.search_runs([exp.experiment_id])


def test_file_store_of_the_readme_logs_an_audit(hostile, mlflow_store):
    mlflow, uri = mlflow_store
    r = hostile.run(*AUDIT, "--mlflow", "--out", "rep")
    assert r.exit_code == 0, (r.stderr, r.exception)
    (run,) = _runs(mlflow, uri)
    assert "confidence_mia.binary.auc.ci_hi" in run.data.metrics


def test_default_store_works_or_is_refused_before_training(hostile, mlflow_store,
                                                           monkeypatch, no_training):
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    import graphleaks.audit.tracking as tracking

    if tracking._has_sqlalchemy():
        pytest.skip("the full mlflow package is installed: its sqlite default works")
    hostile.refused(*AUDIT, "--mlflow", "--out", "rep", match="SQLAlchemy")


def test_real_mlflow_refuses_bad_and_unreachable_stores_before_training(
        hostile, mlflow_store, monkeypatch, no_training):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "bogus://x")
    hostile.refused(*AUDIT, "--mlflow", "--out", "rep", match="unknown scheme")
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    hostile.refused(*AUDIT, "--mlflow", "--out", "rep", match="cannot open")


def test_scores_audit_logs_to_mlflow(hostile, mlflow_store, scores_files):
    mlflow, uri = mlflow_store
    r = hostile.run("audit", "scores", scores_files / "scores.npz", "--members",
                    scores_files / "members.txt", "--out", "rep", "--n-bootstrap", "20",
                    "--quiet", "--mlflow")
    assert r.exit_code == 0, (r.stderr, r.exception)
    (run,) = _runs(mlflow, uri)
    assert any(k.endswith("binary.auc") for k in run.data.metrics)


def test_model_audit_logs_its_report_to_mlflow(hostile, mlflow_store, monkeypatch):
    """audit model logs the report it gets back (the model audit itself is stubbed:
    ``tests/audit/test_model_audit.py`` covers it)."""
    from pathlib import Path

    import graphleaks.cli.audit_model as audit_model
    from graphleaks.report.report import load_report

    mlflow, uri = mlflow_store
    calls = []

    def stub(model, *args, **kwargs):  # kwargs: embedding_layers
        args[-1].before_work()  # the OutputOptions: opens the store, as the real one does
        calls.append(model)
        v1 = Path(__file__).parents[1] / "report" / "data" / "report_v1.json"
        return types.SimpleNamespace(report=load_report(v1))

    monkeypatch.setattr(audit_model, "run_model_audit", stub)
    r = hostile.run("audit", "model", "m.onnx", "--out", "rep", "--quiet", "--mlflow")
    assert r.exit_code == 0, (r.stderr, r.exception)
    assert calls
    (run,) = _runs(mlflow, uri)
    assert "confidence_mia.binary.auc" in run.data.metrics


if sys.platform == "win32":  # pragma: no cover - links need privileges there
    pytestmark = pytest.mark.skip("symbolic links")
