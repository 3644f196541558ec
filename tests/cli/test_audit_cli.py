"""``graphleaks audit``: suites, verdict-first summary, quiet, progress, scores.csv."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from graphleaks.cli import app


@pytest.fixture(scope="module")
def files(tmp_path_factory):  # noqa: ANN201
    from graphleaks.data.synthetic import csbm

    d = tmp_path_factory.mktemp("g")
    g = csbm(120, num_classes=3, num_features=8, seed=0)
    ei = g.edge_index.numpy()
    (d / "edges.csv").write_text("src,dst\n" + "\n".join(f"{a},{b}" for a, b in ei.T))
    np.save(d / "x.npy", g.x.numpy())
    (d / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    return d


def _audit(files, out, *extra):  # noqa: ANN001, ANN202
    return CliRunner().invoke(app, ["audit", "--edges", str(files / "edges.csv"),
                                    "--features", str(files / "x.npy"), "--labels",
                                    str(files / "y.csv"), "--out", str(out),
                                    "--attack", "confidence_mia", "--n-bootstrap", "30",
                                    *extra])


def test_summary_starts_with_the_verdict_and_all_files_are_written(files, tmp_path):
    r = _audit(files, tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # CliRunner's stderr is not a terminal: no progress unless asked
    lines = r.stdout.splitlines()
    assert lines[0] == "Verdict" and lines[1].strip().startswith("membership: ")
    for name in ("report.json", "report.md", "report.html", "scores.csv"):
        assert (tmp_path / "o" / name).is_file()


def test_quiet_prints_nothing_even_with_progress_asked(files, tmp_path):
    r = _audit(files, tmp_path / "q", "--quiet", "--progress")
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == ""


def test_unknown_suite_exits_2_before_any_work(tmp_path):
    r = CliRunner().invoke(app, ["audit", "--suite", "fast", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "error: --suite 'fast' is unknown; choose one of: quick, standard, thorough"]
    assert not (tmp_path / "x").exists()
