"""The printed summary lists the verdict's notes; a negative --seed is refused everywhere."""

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app


def test_summary_prints_the_verdict_notes_after_the_verdict(capsys, tmp_path):
    from graphleaks.audit.runner import run_audit, train_target
    from graphleaks.cli.options import print_summary
    from graphleaks.data import tiny_graph
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.report.verdict import verdict_notes

    t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=5))
    report = run_audit(t, ["confidence_mia"], seed=0, n_bootstrap=20)
    report.config["skipped_attacks"] = {"graph_reconstruction": "needs embeddings; name them"}
    print_summary(report, tmp_path, json_out=False, quiet=False)
    lines = capsys.readouterr().out.splitlines()
    notes = verdict_notes(report)
    assert notes and lines.index("Notes") > lines.index("Verdict")
    printed = lines[lines.index("Notes") + 1:]
    assert printed[:len(notes)] == [f"  - {n}" for n in notes]
    assert "  - graph_reconstruction was skipped: needs embeddings; name them" in printed
    assert printed[len(notes)].startswith("Report:")


def test_summary_without_notes_prints_no_notes_heading(capsys, tmp_path, monkeypatch):
    import graphleaks.cli.options as options
    from graphleaks.audit.runner import run_audit, train_target
    from graphleaks.data import tiny_graph
    from graphleaks.models.gnn import ArchitectureSpec

    t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=5))
    report = run_audit(t, ["confidence_mia"], seed=0, n_bootstrap=20)
    monkeypatch.setattr(options, "verdict_notes", lambda r: [])
    options.print_summary(report, tmp_path, json_out=False, quiet=False)
    assert "Notes" not in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("command", [
    ["audit"], ["audit", "model", "m.pt2"], ["audit", "scores", "s.npz"],
    ["audit", "spec", "s.toml"], ["audit", "embeddings", "e.npy"], ["train", "-o", "b"],
    ["embed"],
])
def test_negative_seed_exit_2_before_any_work(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, [*command, "--seed", "-5"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error:") and "--seed" in r.stderr
    assert "non-negative" in r.stderr and r.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_seed_zero_still_parses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # a bad --n-bootstrap is refused after --seed parsed: the seed itself passed
    r = CliRunner().invoke(app, ["audit", "--seed", "0", "--n-bootstrap", "0"])
    assert r.exit_code == 2 and "--n-bootstrap" in r.stderr and "--seed" not in r.stderr
