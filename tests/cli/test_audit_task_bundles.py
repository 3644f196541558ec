"""``graphleaks audit --bundle B`` reads the task from the bundle: a link bundle gets the
edge-membership audit, a graph bundle the graph-membership audit, each with its ledger; an
option of another task is refused in one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()
FAST = ["--suite", "quick", "--n-bootstrap", "20"]


@pytest.fixture(scope="module")
def link_bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("link") / "b"
    r = runner.invoke(app, ["train", "--task", "link", "--dataset", "bipartite", "--defense",
                            "dp_sgd", "--epsilon", "4", "--param", "dp_sgd.epochs=1",
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def graph_bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("graph") / "b"
    r = runner.invoke(app, ["train", "--task", "graph", "--dataset", "motif", "--defense",
                            "dp_sgd", "--epsilon", "4", "--delta", "1e-4", "--epochs", "2",
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def _verdict_line(out: Path, risk: str) -> str:
    rows = [ln for ln in (out / "report.md").read_text().splitlines()
            if ln.startswith(f"| {risk} |")]
    assert len(rows) == 1, (out / "report.md").read_text()
    return rows[0]


@pytest.mark.parametrize("task,attack,risk,unit", [
    ("link", "edge_score_threshold", "edge membership", "edge"),
    ("graph", "graph_confidence_mia", "graph membership", "graph"),
])
def test_bundle_audited_with_its_task(request, tmp_path, task, attack, risk, unit) -> None:
    bundle = request.getfixturevalue(f"{task}_bundle")
    out = tmp_path / "r"
    r = runner.invoke(app, ["audit", "--bundle", str(bundle), "--attack", attack, *FAST,
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report.json").read_text())
    assert rep["config"]["task"] == task
    assert [a["attack"] for a in rep["attacks"]] == [attack]
    assert rep["ledger"]["unit"] == unit and rep["target"]["defense"] == "dp_sgd"
    line = _verdict_line(out, risk)
    assert f"covered: {unit} unit at ε = 4" in line, line
    # the canary audit was not asked for: the report says so, and how to get it
    assert not rep.get("canary_audits")
    assert f"--canary-audit {unit}" in rep["config"]["canary_audit_skipped"]
    assert (out / "scores.csv").is_file()


def test_link_bundle_protocol_and_edge_canary(link_bundle, tmp_path) -> None:
    out = tmp_path / "r"
    r = runner.invoke(app, ["audit", "--bundle", str(link_bundle), "--attack",
                            "edge_score_threshold", *FAST, "--canary-audit", "edge",
                            "--canaries", "40", "--out", str(out)])
    assert r.exit_code in (0, 3), r.output
    rep = json.loads((out / "report.json").read_text())
    proto = rep["config"]["edge_protocol"]
    assert proto["served_graph"] == "the split's inference graph"
    assert proto["member_edges_in_inference_graph"] == "all"
    assert rep["target"]["split_sizes"]["members"] == proto["counts"]["members"] > 0
    (audit,) = rep["canary_audits"]
    assert audit["unit"] == "edge" and audit["claimed_epsilon"] == pytest.approx(4, rel=1e-2)
    assert "canary_audit_skipped" not in rep["config"]
    assert "audited ε ≥" in _verdict_line(out, "edge membership")


@pytest.mark.parametrize("task,args,named", [
    ("link", ["--param", "gcn.hidden=8"], "--param gcn.hidden"),
    ("link", ["--param", "confidence_mia.shadow_epochs=3"], "--param confidence_mia"),
    ("link", ["--query-budgets", "10,100"], "--query-budgets"),
    ("link", ["--attack", "confidence_mia"], "--attack confidence_mia"),
    ("link", ["--canary-audit", "node"], "--canary-audit node"),
    ("link", ["--dataset", "cora"], "--dataset"),
    ("link", ["--defense-unaware"], "--defense-unaware"),
    ("graph", ["--param", "gcn.hidden=8"], "--param gcn.hidden"),
    ("graph", ["--query-graph", "full"], "--query-graph"),
    ("graph", ["--canary-audit", "graph", "--canary-attack", "released"], "--canary-attack"),
    ("graph", ["--compare-unit", "graph"], "--compare-unit"),
    ("graph", ["--ray", "127.0.0.1:6379"], "--ray"),
])
def test_option_of_another_task_refused(request, tmp_path, task, args, named) -> None:
    bundle = request.getfixturevalue(f"{task}_bundle")
    out = tmp_path / "r"
    r = runner.invoke(app, ["audit", "--bundle", str(bundle), *args, "--out", str(out)])
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    assert named in lines[0] and f"a {task} bundle" in lines[0], lines[0]
    assert not out.exists()


def test_bad_edge_attack_param_value_refused(link_bundle, tmp_path) -> None:
    out = tmp_path / "r"
    r = runner.invoke(app, ["audit", "--bundle", str(link_bundle), "--param",
                            "edge_lira.num_references=many", "--out", str(out)])
    assert r.exit_code == 2 and "num_references" in r.output, r.output
    assert not out.exists()
