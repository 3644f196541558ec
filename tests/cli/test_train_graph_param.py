"""``graphleaks train --task graph --param``: the defense's fields (``dp_sgd.FIELD``) and the
classifier's (``gin.FIELD``), typed and checked in one place; anything else is one line,
exit 2, nothing written."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()
BASE = ["train", "--task", "graph", "--dataset", "motif", "--defense", "dp_sgd",
        "--epsilon", "4"]


def test_params_reach_the_bundle(tmp_path, monkeypatch) -> None:
    # a 40-graph motif set keeps this a unit test (the CLI's set has 400)
    monkeypatch.setattr("graphleaks.data.graphsets.named.MOTIF_SET_SIZE", 40)
    out = tmp_path / "b"
    r = runner.invoke(app, [*BASE, "--param", "gin.hidden=4", "--param", "gin.epochs=1",
                            "--param", "dp_sgd.max_grad_norm=0.5", "--out", str(out)])
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    assert (m["architecture"]["hidden"], m["architecture"]["epochs"]) == (4, 1)
    assert m["architecture"]["batch_size"] == 64  # the DP-SGD default is kept
    assert m["defense_config"]["max_grad_norm"] == 0.5
    assert m["defense_config"]["epsilon"] == 4


@pytest.mark.parametrize("extra,needle", [
    (["--param", "gin.hidden=[64]"], "--param gin.hidden: the graph classifier's hidden is "
                                     "one width"),
    (["--param", "gin.hiden=3"], "graph classifier 'gin' has no parameter 'hiden'"),
    (["--param", "gcn.hidden=4"], "'gcn' is not in use here"),
    (["--param", "edgerand.epsilon=1"], "'edgerand' is not in use here"),
    (["--param", "dp_sgd.max_grad_norm=abc"], "--param dp_sgd.max_grad_norm must be a number"),
    (["--param", "dp_sgd.max_grad_norm=-1"], "--param dp_sgd: The max_grad_norm parameter"),
    (["--param", "dp_sgd.epsilon=2"], "--epsilon and --param dp_sgd.epsilon disagree"),
    (["--param", "gin.epochs=2", "--epochs", "3"], "--epochs and --param gin.epochs"),
    (["--param", "gin.arch=gcn"], "chosen with --arch"),
])
def test_bad_params_refused_before_training(tmp_path, extra, needle) -> None:
    out = tmp_path / "b"
    r = runner.invoke(app, [*BASE, *extra, "--out", str(out)])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], r.output
    assert not out.exists()
