"""``graphleaks audit --canary-audit``: claimed beside audited ε, and bad input exits 2."""

import json

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()


@pytest.fixture
def files():
    """The bundled seeded synthetic graph (500 nodes), so no data root is needed."""
    return ["--dataset", "synthetic"]


def test_edge_canary_audit_in_report(files, tmp_path):
    r = runner.invoke(app, ["audit", *files, "--defense", "edgerand", "--epsilon", "1",
                            "--canary-audit", "edge", "--canaries", "60", "--n-bootstrap", "50",
                            "--out", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    (audit,) = rep["canary_audits"]
    assert audit["unit"] == "edge" and audit["claimed_epsilon"] == 1.0
    assert audit["bound"]["num_canaries"] == 60 and audit["attack"] == "released"
    assert json.loads(r.stdout)["canary_audits"]["edge"]["violation"] is False
    assert "claimed ε" in (tmp_path / "r" / "report.md").read_text()


@pytest.mark.parametrize("extra,match", [
    (["--defense", "edgerand", "--canary-audit", "edge", "--canaries", "8"],
     "num_canaries parameter must be in [10, 1000000]"),
    (["--defense", "edgerand", "--canary-audit", "node"], "protects unit edge; valid: edge"),
    (["--canary-audit", "vertex"], "unit parameter of --canary-audit must be one of"),
    (["--canary-audit", "node", "--canary-attack", "released"], "attack parameter"),
    (["--bundle", "/nonexistent", "--canary-audit", "edge"], "needs a target trained here"),
])
def test_bad_canary_input_one_line_exit_2(files, extra, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["audit", *files, *extra])
    assert r.exit_code == 2, r.output
    assert match in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "graphleaks-report").exists()
