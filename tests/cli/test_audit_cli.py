"""``graphleaks audit``: suites, verdict-first summary, quiet, progress, scores.csv."""

from __future__ import annotations

from typer.testing import CliRunner

from graphleaks.cli import app


def _audit(files, out, *extra):  # noqa: ANN001, ANN202
    return CliRunner().invoke(app, ["audit", "--edges", str(files / "edges.csv"),
                                    "--features", str(files / "x.npy"), "--labels",
                                    str(files / "y.csv"), "--out", str(out),
                                    "--attack", "confidence_mia", "--n-bootstrap", "30",
                                    *extra])


def test_summary_starts_with_the_verdict_and_all_files_are_written(edge_files, tmp_path):
    r = _audit(edge_files, tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # CliRunner's stderr is not a terminal: no progress unless asked
    lines = r.stdout.splitlines()
    assert lines[0] == "Verdict" and lines[1].strip().startswith("membership: ")
    for name in ("report.json", "report.md", "report.html", "scores.csv"):
        assert (tmp_path / "o" / name).is_file()


def test_quiet_prints_nothing_even_with_progress_asked(edge_files, tmp_path):
    r = _audit(edge_files, tmp_path / "q", "--quiet", "--progress")
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == ""


def test_unknown_suite_exits_2_before_any_work(tmp_path):
    r = CliRunner().invoke(app, ["audit", "--suite", "fast", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "error: --suite 'fast' is unknown; choose one of: quick, standard, thorough"]
    assert not (tmp_path / "x").exists()
