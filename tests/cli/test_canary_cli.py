"""``graphleaks audit --canary-audit``: claimed beside audited ε, and bad input exits 2."""

import json

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A 120-node CSBM as edge-list, feature and label files (small: fast training)."""
    import numpy as np

    from graphleaks.data.synthetic import csbm

    d = tmp_path_factory.mktemp("canary-graph")
    g = csbm(120, num_classes=3, num_features=8, seed=0)
    np.savetxt(d / "e.csv", g.edge_index.numpy().T, fmt="%d", delimiter=",", header="src,dst",
               comments="")
    np.save(d / "x.npy", g.x.numpy())
    np.savetxt(d / "y.csv", g.y.numpy(), fmt="%d")
    return ["--edges", str(d / "e.csv"), "--features", str(d / "x.npy"), "--labels",
            str(d / "y.csv")]


def test_edge_canary_audit_in_report(files, tmp_path):
    r = runner.invoke(app, ["audit", *files, "--attack", "label_only_mia", "--defense",
                            "edgerand", "--epsilon", "1",
                            "--canary-audit", "edge", "--canaries", "60", "--n-bootstrap", "50",
                            "--out", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    (audit,) = rep["canary_audits"]
    assert audit["unit"] == "edge" and audit["claimed_epsilon"] == 1.0
    assert audit["bound"]["num_canaries"] == 60 and audit["attack"] == "released"
    assert "canary audit (edge unit)" in r.stdout and "consistent" in r.stdout
    assert "claimed ε" in (tmp_path / "r" / "report.md").read_text()


@pytest.mark.parametrize("extra,match", [
    (["--defense", "edgerand", "--canary-audit", "edge", "--canaries", "8"],
     "num_canaries parameter must be in [10, 1000000]"),
    (["--defense", "edgerand", "--canary-audit", "node"], "protects unit edge; valid: edge"),
    (["--canary-audit", "vertex"], "unit parameter of --canary-audit must be one of"),
    (["--canary-audit", "node", "--canary-attack", "released"], "attack parameter"),
    (["--bundle", "/nonexistent", "--canary-audit", "edge"], "describes a target trained here"),
])
def test_bad_canary_input_one_line_exit_2(files, extra, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["audit", *files, *extra])
    assert r.exit_code == 2, r.output
    assert match in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "graphleaks-report").exists()
