"""``graphleaks audit spec`` on link and graph specs, and what reads their reports:
``check`` gates their metrics and slices, the Markdown titles the slice section by unit,
``--mlflow`` logs them like a node audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()

GRAPH_SPEC = """
[target]
task = "graph"
dataset = "motif"
[target.synthetic]
num_graphs = 80
[target.architecture]
hidden = 8
epochs = 2
[audit]
n_bootstrap = 20
[attacks.graph_confidence_mia]
[gate.thresholds]
auc = 0.99
"""

LINK_SPEC = """
[target]
task = "link"
dataset = "synthetic"
defense = "edgerand"
[target.defense_params]
epsilon = 4.0
[target.synthetic]
num_nodes = 100
[target.architecture]
epochs = 3
[audit]
n_bootstrap = 20
[attacks.edge_score_threshold]
"""


def _run_spec(folder: Path, text: str, *extra: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.toml").write_text(text)
    r = runner.invoke(app, ["audit", "spec", str(folder / "spec.toml"), "--out",
                            str(folder / "out"), "--quiet", *extra])
    assert r.exit_code == 0, r.output
    return folder / "out"


@pytest.fixture(scope="module")
def graph_out(tmp_path_factory) -> Path:
    return _run_spec(tmp_path_factory.mktemp("gspec"), GRAPH_SPEC)


@pytest.fixture(scope="module")
def link_out(tmp_path_factory) -> Path:
    return _run_spec(tmp_path_factory.mktemp("lspec"), LINK_SPEC)


def test_graph_spec_report(graph_out) -> None:
    rep = json.loads((graph_out / "report.json").read_text())
    assert rep["config"]["task"] == "graph" and rep["config"]["spec"]["target"]["task"] == "graph"
    assert [a["attack"] for a in rep["attacks"]] == ["graph_confidence_mia"]
    assert rep["target"]["architecture"]["arch"] == "gin"
    md = (graph_out / "report.md").read_text()
    assert "## Per-graph risk: slices" in md and "Per-node risk" not in md
    assert (graph_out / "scores.csv").is_file()


def test_link_spec_report(link_out) -> None:
    rep = json.loads((link_out / "report.json").read_text())
    assert rep["config"]["task"] == "link" and rep["target"]["defense"] == "edgerand"
    assert rep["ledger"]["unit"] == "edge"
    md = (link_out / "report.md").read_text()
    assert "## Per-edge risk: slices" in md and "Per-node risk" not in md
    assert "<h2>Per-edge risk" in (link_out / "report.html").read_text()
    assert (link_out / "scores.csv").read_text().splitlines()[0].split(",")[3:5] == \
        ["src", "dst"]


def _check(report: Path, *args: str) -> tuple[int, str]:
    r = runner.invoke(app, ["check", str(report / "report.json"), *args])
    return r.exit_code, r.output


def _slice_auc(report: Path, attack: str, key: str) -> float:
    rep = json.loads((report / "report.json").read_text())
    (a,) = [a for a in rep["attacks"] if a["attack"] == attack]
    return float(a["metrics"]["slices"][key]["binary"]["auc"]["ci"][1])


@pytest.mark.parametrize("which,attack,key", [
    ("graph", "graph_confidence_mia", "class=cycle"),
    ("link", "edge_score_threshold", "degree_product=5-25"),
])
def test_check_gates_task_slices(request, which, attack, key) -> None:
    """A slice's upper bound just above the limit fails (exit 3), just below passes; an
    unknown slice is refused naming the task's slices."""
    out = request.getfixturevalue(f"{which}_out")
    hi = _slice_auc(out, attack, key)
    code, text = _check(out, "--max", f"{attack}[{key}].auc={hi + 1e-3:.6f}")
    assert code == 0, text
    code, text = _check(out, "--max", f"{attack}[{key}].auc={hi - 1e-3:.6f}")
    assert code == 3, text
    code, text = _check(out, "--max", f"{attack}[nodes=999].auc=0.5")
    assert code == 2 and "unknown slice" in text


def test_check_reads_a_graph_spec_gate(graph_out, tmp_path) -> None:
    (tmp_path / "s.toml").write_text(GRAPH_SPEC)
    code, text = _check(graph_out, "-c", str(tmp_path / "s.toml"))
    assert code in (0, 3) and "graph_confidence_mia: auc upper bound" in text
    rep = json.loads((graph_out / "report.json").read_text())
    assert (code == 3) == (rep["attacks"][0]["metrics"]["binary"]["auc"]["ci"][1] > 0.99)


def test_spec_audit_logs_to_mlflow(tmp_path, monkeypatch, graph_out) -> None:
    """A link spec audit with --mlflow, and a graph report, log like a node audit."""
    mlflow = pytest.importorskip("mlflow")
    from graphleaks.audit.tracking import MlflowTracker
    from graphleaks.report.report import load_report

    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    out = _run_spec(tmp_path / "l", LINK_SPEC, "--mlflow")
    client = mlflow.MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("graphleaks")
    (run,) = client.search_runs([exp.experiment_id])
    assert run.data.params["task"] == "link" and run.data.params["defense"] == "edgerand"
    auc = json.loads((out / "report.json").read_text())["attacks"][0]["metrics"]["binary"]["auc"]
    assert run.data.metrics["edge_score_threshold.binary.auc"] == pytest.approx(auc["value"])
    assert any(k.startswith("edge_score_threshold.slices.degree_product")
               for k in run.data.metrics)
    arts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"report.json", "scores.csv", "ledger.json"} <= arts
    run_id = MlflowTracker(tracking_uri=uri).log_audit(load_report(graph_out / "report.json"),
                                                       graph_out)
    g = client.get_run(run_id)
    assert g.data.params["task"] == "graph" and g.data.params["arch"] == "gin"
    assert "graph_confidence_mia.slices.class_cycle.n_pos" in g.data.metrics


@pytest.mark.slow  # MLflow's file store costs seconds; the spec test above covers the path
def test_graph_bundle_audit_logs_to_mlflow(tmp_path, monkeypatch) -> None:
    """``audit --bundle B --mlflow`` on a graph bundle logs like a node audit."""
    mlflow = pytest.importorskip("mlflow")
    from graphleaks.bundles import save_bundle
    from graphleaks.data.graphsets import motif_graphs
    from graphleaks.defenses.graph_base import graph_registry
    from graphleaks.models.graph_classifier import GraphClassifierSpec
    from graphleaks.models.trained_graph_target import GraphSplit

    gs = motif_graphs(30, seed=0)
    t = graph_registry.get("none")().fit(gs, GraphSplit.draw(30, seed=0), seed=0,
                                         model=GraphClassifierSpec(hidden=4, epochs=1))
    save_bundle(t, tmp_path / "b")
    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    r = runner.invoke(app, ["audit", "--bundle", str(tmp_path / "b"), "--attack",
                            "graph_confidence_mia", "--suite", "quick", "--n-bootstrap", "20",
                            "--mlflow", "--quiet", "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    client = mlflow.MlflowClient(tracking_uri=uri)
    (run,) = client.search_runs([client.get_experiment_by_name("graphleaks").experiment_id])
    assert run.data.params["task"] == "graph" and run.data.params["arch"] == "gin"
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    auc = rep["attacks"][0]["metrics"]["binary"]["auc"]
    assert run.data.metrics["graph_confidence_mia.binary.auc.ci_hi"] == pytest.approx(
        auc["ci"][1])
    assert "report.html" in {a.path for a in client.list_artifacts(run.info.run_id)}
