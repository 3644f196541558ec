"""``--query-budgets``: the leakage-against-queries curves from the command line.

On ``graphleaks audit`` (trained here and ``--bundle``) and ``graphleaks audit model``; a
bad grid is one line and exit 2 with nothing written; without the option nothing changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

FAST = ["--n-bootstrap", "30", "--seed", "3", "--quiet", "--suite", "quick"]


def _files(d: Path) -> list[str]:
    return ["--edges", str(d / "edges.csv"), "--features", str(d / "x.npy"), "--labels",
            str(d / "y.csv")]


def _audit(edge_files: Path, out: Path, *extra: str):  # noqa: ANN202
    return CliRunner().invoke(app, ["audit", *_files(edge_files), "--out", str(out), *FAST,
                                    *extra])


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def test_curves_reach_every_report_file(edge_files, tmp_path):  # noqa: ANN001
    out = tmp_path / "o"
    r = _audit(edge_files, out, "--attack", "label_only_mia", "--attack", "confidence_mia",
               "--query-budgets", "3,9")
    assert r.exit_code == 0, r.output
    rep = _report(out)
    assert rep["config"]["query_budgets"] == [3, 9]
    [curve] = rep["config"]["query_curves"]["curves"]  # only the named curve attack
    assert curve["attack"] == "label_only_mia"
    assert [p["queries"] for p in curve["points"]] == [3, 9]
    assert set(curve["first_budget_at_level"]) == {"low", "high", "severe"}
    notes = rep["verdict_notes"]
    assert "query budget: unbounded in-process queries; leakage against queries at 3, 9 " \
           "queries per attack: see the query-budget curves" in notes
    assert any(n.startswith("label_only_mia (membership) against queries: ") for n in notes)
    md = (out / "report.md").read_text()
    assert "## Leakage against queries" in md and "| label_only_mia | 9 | 9 |" in md
    html = (out / "report.html").read_text()
    assert "<h2>Leakage against queries</h2>" in html and "leakage against queries" in html


def test_bundle_audit_draws_the_curves(edge_files, tmp_path):  # noqa: ANN001
    r = CliRunner().invoke(app, ["train", "--out", str(tmp_path / "b"), "--epochs", "20",
                                 *_files(edge_files)])
    assert r.exit_code == 0, r.output
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["audit", "--bundle", str(tmp_path / "b"), *_files(edge_files),
                                 "--attack", "linkteller", "--out", str(out), *FAST,
                                 "--query-budgets", "21,41"])
    assert r.exit_code == 0, r.output
    [curve] = _report(out)["config"]["query_curves"]["curves"]
    assert curve["attack"] == "linkteller"
    assert [p["queries"] for p in curve["points"]] == [21, 41]


def test_without_the_option_the_report_says_unbounded_and_records_no_grid(  # noqa: ANN001
        edge_files, tmp_path):
    out = tmp_path / "o"
    r = _audit(edge_files, out, "--attack", "confidence_mia")
    assert r.exit_code == 0, r.output
    rep = _report(out)
    assert "query_budgets" not in rep["config"] and "query_curves" not in rep["config"]
    assert not any("query budget" in n for n in rep["verdict_notes"])
    assert "Query budget: unbounded in-process queries." in (out / "report.md").read_text()
    assert "Leakage against queries" not in (out / "report.md").read_text()


@pytest.mark.parametrize(("grid", "why"), [
    ("100,0", "budget 2 must be > 0"),
    ("-1", "budget 1 must be > 0"),
    ("1000,100", "must be strictly increasing"),
    ("ten,100", "item 1 is not an integer"),
    ("100,", "an item is empty"),
])
def test_bad_grids_exit_2_in_one_line_with_nothing_written(edge_files, tmp_path,  # noqa: ANN001
                                                           grid, why):
    out = tmp_path / "o"
    r = _audit(edge_files, out, "--attack", "label_only_mia", "--query-budgets", grid)
    assert r.exit_code == 2
    [line] = r.stderr.strip().splitlines()
    assert line.startswith("error: --query-budgets") and why in line
    assert not out.exists()


def test_a_grid_without_a_curve_attack_is_refused_before_work(edge_files, tmp_path):  # noqa: ANN001
    out = tmp_path / "o"
    r = _audit(edge_files, out, "--attack", "confidence_mia", "--query-budgets", "10")
    assert r.exit_code == 2
    [line] = r.stderr.strip().splitlines()
    assert "none of them is among the --attack ones" in line
    assert not out.exists()


def test_audit_model_draws_the_curves(tmp_path):  # noqa: ANN001
    from graphleaks.models.foreign import export_pt2
    from tests.audit.own_model import make_own_setup

    (tmp_path / "own").mkdir()
    own = make_own_setup(tmp_path / "own")
    files = own.write_files(tmp_path / "files")
    pt2 = export_pt2(own.model, own.graph.x, own.graph.edge_index, tmp_path / "m.pt2")
    out = tmp_path / "o"
    r = CliRunner().invoke(app, [
        "audit", "model", str(pt2), "--edges", str(files["edges"]), "--features",
        str(files["features"]), "--labels", str(files["labels"]), "--members",
        str(files["members"]), "--non-members", str(files["non_members"]),
        "--attack", "label_only_mia", "--out", str(out), *FAST, "--query-budgets", "2,5"])
    assert r.exit_code == 0, r.output
    rep = _report(out)
    assert rep["config"]["query_budgets"] == [2, 5]
    [curve] = rep["config"]["query_curves"]["curves"]
    assert [p["queries"] for p in curve["points"]] == [2, 5]
    r = CliRunner().invoke(app, ["audit", "model", str(pt2), "--query-budgets", "5,2",
                                 "--out", str(tmp_path / "bad")])
    assert r.exit_code == 2 and "strictly increasing" in r.stderr
    assert not (tmp_path / "bad").exists()
