"""The graph options of ``train``/``audit`` resolve into one DatasetRef, or exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()


def _files(d):
    return ["--edges", str(d / "edges.csv"), "--features", str(d / "x.npy")]


@pytest.mark.parametrize(("extra", "match"), [
    (lambda d: ["--labels", str(d / "y.csv")], "--edges and --features must be given"),
    (lambda d: ["--edges", str(d / "edges.csv")], "--edges and --features must be given"),
    (lambda d: ["--dataset", "cora", *_files(d)], "either --dataset or --edges"),
])
@pytest.mark.parametrize("command", ["train", "audit"])
def test_conflicting_or_partial_graph_options_exit_2(command, extra, match, edge_files,
                                                     tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, [command, "--out", "out", *extra(edge_files)])
    assert r.exit_code == 2, r.output
    assert match in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_trained_bundle_records_file_names_only(edge_files, tmp_path):
    r = runner.invoke(app, ["train", "--out", str(tmp_path / "b"), "--epochs", "2",
                            *_files(edge_files), "--labels", str(edge_files / "y.csv")])
    assert r.exit_code == 0, r.output
    record = json.loads((tmp_path / "b" / "manifest.json").read_text())["dataset"]
    assert record["kind"] == "files"
    assert (record["edges"], record["features"], record["labels"]) == (
        "edges.csv", "x.npy", "y.csv")
    assert str(edge_files) not in json.dumps(record)
