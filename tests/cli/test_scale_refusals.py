"""Sizes beyond a cap are refused in one line, exit 2, before any work and with nothing written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()


@pytest.mark.parametrize(("args", "match"), [
    (["--attack", "linkteller", "--param", "linkteller.max_pairs=1000"],
     "linkteller.max_pairs=1,000"),
    (["--defense", "eclipse_strict", "--param", "eclipse_strict.max_nodes=1000"],
     "eclipse_strict.max_nodes=1,000"),
    (["--defense", "eclipse", "--param", "eclipse.max_nodes=1000"], "CPU-hours"),
])
def test_capped_sizes_are_refused_before_any_work(args, match, tmp_path, monkeypatch) -> None:
    def no_training(*a, **k):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("training started before the refusal")

    monkeypatch.setattr("graphleaks.audit.runner.MembershipSplit.draw", no_training)
    out = tmp_path / "report"
    result = runner.invoke(app, ["audit", "--dataset", "cora", "--out", str(out), *args])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0]
    assert not out.exists()
