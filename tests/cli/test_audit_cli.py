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


def test_sweep_results_reach_the_verdict(edge_files, tmp_path):
    spec = tmp_path / "sweep.toml"
    spec.write_text("""
[target]
dataset = "synthetic"
[target.synthetic]
num_nodes = 120
num_features = 8
[target.architecture]
epochs = 20
hidden = [16]
[audit]
n_bootstrap = 30
[attacks.confidence_mia]
threshold = "none"
[sweep]
defenses = ["none", "gap_ndp"]
epsilons = [1.0]
seeds = [0]
[sweep.defense_params.gap_ndp]
encoder_epochs = 5
epochs = 5
""")
    db = tmp_path / "sw.sqlite"
    r = CliRunner().invoke(app, ["sweep", str(spec), "--db", str(db)])
    assert r.exit_code == 0, r.output
    r = _audit(edge_files, tmp_path / "o", "--sweep-results", str(db))
    assert r.exit_code == 0, r.output
    membership = next(ln for ln in r.stdout.splitlines() if "membership:" in ln)
    assert "sweep" in membership.lower()
    r = _audit(edge_files, tmp_path / "o2", "--sweep-results", str(tmp_path / "none.sqlite"))
    assert r.exit_code == 2 and "does not exist" in r.output
