"""Never delete what graphleaks did not write; bad output paths fail before any work."""

from __future__ import annotations

import json

import pytest

# One cheap attack where an audit must succeed: these tests are about the files written.
ONE_ATTACK = ("--attack", "confidence_mia")


@pytest.fixture
def no_training(monkeypatch):
    """Make any training or audit fail loudly (exit 1): a refusal must come before it."""
    import graphleaks.audit.runner as runner

    def boom(*args, **kwargs):
        raise RuntimeError("work started before the output path was checked")

    monkeypatch.setattr(runner, "train_target", boom)
    monkeypatch.setattr(runner, "run_audit", boom)


def test_overwrite_refuses_a_user_project(hostile, graph_dir):
    project = hostile.root / "my-project"
    project.mkdir()
    (project / "thesis.tex").write_text("\\documentclass{article} years of work")
    hostile.refused("train", "--out", project, "--overwrite", "--epochs", "2",
                    *hostile.graph_opts(graph_dir), match="my-project")
    assert (project / "thesis.tex").exists()


def test_overwrite_refuses_the_working_directory(hostile, graph_dir):
    (hostile.root / "notes.txt").write_text("keep me")
    hostile.refused("train", "--out", ".", "--overwrite", *hostile.graph_opts(graph_dir),
                    match="working directory")


@pytest.mark.parametrize("where", ["..", "home"])
def test_overwrite_refuses_parents_and_home(hostile, graph_dir, monkeypatch, where):
    sub = hostile.root / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    out = ".." if where == ".." else str(hostile.root / "home")
    (hostile.root / "home" / ".bashrc").write_text("export X=1")
    hostile.refused("train", "--out", out, "--overwrite", *hostile.graph_opts(graph_dir))


def test_bundle_with_a_foreign_file_is_not_replaced(hostile, bundle, graph_dir):
    (bundle / "my-notes.md").write_text("mine")
    hostile.refused("train", "--out", bundle, "--overwrite", *hostile.graph_opts(graph_dir),
                    match="my-notes.md")


def test_overwrite_replaces_an_earlier_bundle(hostile, bundle, graph_dir):
    before = (bundle / "manifest.json").read_text()
    r = hostile.run("train", "--out", bundle, "--overwrite", "--epochs", "3", "--seed", "1",
                    *hostile.graph_opts(graph_dir))
    assert r.exit_code == 0, r.stderr
    assert (bundle / "manifest.json").read_text() != before
    assert sorted(p.name for p in hostile.root.iterdir()) == ["bundle", "home"]  # no temp left


def test_audit_refuses_a_user_folder(hostile, graph_dir, no_training):
    docs = hostile.root / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# my docs")
    hostile.refused("audit", "--out", docs, *hostile.graph_opts(graph_dir), match="docs")


def test_audit_never_replaces_a_bundle_with_a_report(hostile, bundle, no_training):
    hostile.refused("audit", "--bundle", bundle, "--out", bundle, match="bundle")


def test_out_that_is_a_file_fails_before_training(hostile, graph_dir, no_training):
    (hostile.root / "taken").write_text("a file")
    hostile.refused("audit", "--out", "taken", *hostile.graph_opts(graph_dir),
                    match="not a folder")
    hostile.refused("train", "--out", "taken/sub", *hostile.graph_opts(graph_dir),
                    match="not a folder")


def test_embed_refuses_the_working_directory(hostile):
    hostile.refused("embed", "--out", ".", "--dataset", "synthetic",
                    match="working directory")


def test_report_folder_is_all_or_nothing(hostile, bundle, graph_dir, monkeypatch):
    import graphleaks.report.html as html

    def killed(*args, **kwargs):
        raise RuntimeError("killed while rendering report.html")

    monkeypatch.setattr(html, "render_html", killed)
    r = hostile.run("audit", "--bundle", bundle, "--out", "rep", "--n-bootstrap", "20", *ONE_ATTACK,
                    *hostile.graph_opts(graph_dir))
    assert r.exit_code != 0
    assert not (hostile.root / "rep").exists()  # no report.json without its page
    assert [p.name for p in hostile.root.iterdir() if p.name.startswith(".")] == []


def test_a_report_folder_is_replaced_as_a_whole(hostile, bundle, graph_dir):
    args = ("audit", "--bundle", bundle, "--out", "rep", "--n-bootstrap", "20", *ONE_ATTACK,
            *hostile.graph_opts(graph_dir))
    assert hostile.run(*args).exit_code == 0
    assert hostile.run(*args, "--seed", "3").exit_code == 0
    assert sorted(p.name for p in (hostile.root / "rep").iterdir()) == [
        "report.html", "report.json", "report.md", "scores.csv"]
    assert json.loads((hostile.root / "rep" / "report.json").read_text())["seed"] == 3


@pytest.mark.parametrize("flag", ["--junit", "--html"])
def test_check_never_overwrites_a_foreign_file(hostile, flag):
    report = hostile.report(hostile.root)
    (hostile.root / "ci.yml").write_text("jobs: {}")
    hostile.refused("check", report, "--max", "auc=0.9", flag, "ci.yml", match="ci.yml")


def test_check_replaces_its_own_junit(hostile):
    report = hostile.report(hostile.root)
    for _ in range(2):
        r = hostile.run("check", report, "--max", "auc=0.9", "--junit", "j.xml")
        assert r.exit_code == 0, r.stderr


def test_results_export_never_overwrites_a_foreign_file(hostile):
    from graphleaks.sweep.results_store import ResultsStore

    ResultsStore(hostile.root / "s.sqlite").close()
    (hostile.root / "data.csv").write_text("name,salary\nann,1\n")
    hostile.refused("results", "s.sqlite", "--format", "csv", "--out", "data.csv",
                    match="data.csv")


def test_ci_example_rerun_replaces_gate_files_in_the_report_folder(hostile, bundle, graph_dir):
    # docs/ci-example.md writes junit.xml and summary.md into the report folder
    audit = ("audit", "--bundle", bundle, "--out", "rep", "--n-bootstrap", "20", *ONE_ATTACK,
             *hostile.graph_opts(graph_dir))
    assert hostile.run(*audit).exit_code == 0
    r = hostile.run("check", "rep/report.json", "--max", "auc=0.99", "--junit", "rep/junit.xml",
                    "--summary", "rep/summary.md")
    assert r.exit_code in (0, 3), r.stderr
    assert hostile.run(*audit).exit_code == 0  # graphleaks' own gate files do not block it
    assert not (hostile.root / "rep" / "junit.xml").exists()
    (hostile.root / "rep" / "summary.md").write_text("my own notes\n")
    hostile.refused(*audit, match="summary.md")  # a user's file does


def test_console_entry_point_prints_usage_errors_on_one_line(tmp_path, monkeypatch, capsys):
    """``main()``, the console entry point (not CliRunner), keeps the one-line contract.

    It runs in this process: the one real subprocess round trip of the CLI is
    ``tests/cli/test_cli.py::test_bundle_audited_in_a_new_process_reproduces``.
    """
    import os

    from graphleaks.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["graphleaks", "train", "--out", "o", "--seed", "abc"])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--seed" in lines[0]
    assert os.listdir(tmp_path) == []
