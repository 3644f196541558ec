"""``--param link.propagation_mode=precomputed`` on the command line: trained, audited, stated."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphleaks.bundles import load_bundle
from graphleaks.cli import app

runner = CliRunner()
PRECOMPUTED = ["--param", "link.propagation_mode=precomputed", "--param", "link.edge_dropout=0",
               "--param", "link.input_dropout=0"]


@pytest.mark.slow  # a train and an audit through the CLI: seconds
def test_precomputed_bundle_is_audited_and_the_report_states_the_mode(edge_files, tmp_path):
    d = edge_files
    bundle, out = tmp_path / "b", tmp_path / "r"
    r = runner.invoke(app, ["train", "--task", "link", "--edges", str(d / "edges.csv"),
                            "--features", str(d / "x.npy"), "--param", "link.epochs=3",
                            *PRECOMPUTED, "--out", str(bundle)])
    assert r.exit_code == 0, r.output
    assert load_bundle(bundle).spec.propagation_mode == "precomputed"
    r = runner.invoke(app, ["audit", "--bundle", str(bundle), "--attack", "edge_score_threshold",
                            "--suite", "quick", "--n-bootstrap", "20", "--out", str(out)])
    assert r.exit_code == 0, r.output
    arch = json.loads((out / "report.json").read_text())["target"]["architecture"]
    assert arch["propagation_mode"] == "precomputed" and arch["edge_dropout"] == 0
    assert "precomputed once per graph" in (out / "report.md").read_text().lower()


def test_precomputed_with_the_default_dropouts_is_refused_in_one_line(edge_files, tmp_path):
    d = edge_files
    out = tmp_path / "b"
    r = runner.invoke(app, ["train", "--task", "link", "--edges", str(d / "edges.csv"),
                            "--features", str(d / "x.npy"), "--param",
                            "link.propagation_mode=precomputed", "--out", str(out)])
    assert r.exit_code == 2
    line = r.output.strip()
    assert line.startswith("error:") and "\n" not in line
    assert "edge_dropout=0" in line and "input_dropout=0" in line
    assert not out.exists()
