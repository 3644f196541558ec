"""The old audit spellings still work for one release: one deprecation line on stderr, and
exactly the report of the new command."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()

USER_MODULE = '''
import torch


class Lin(torch.nn.Module):
    def __init__(self, d, c):
        super().__init__()
        self.lin = torch.nn.Linear(d, c)

    def forward(self, x, edge_index):
        return self.lin(x)
'''

SPEC = """
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
"""


@pytest.fixture(scope="module")
def d(tmp_path_factory: pytest.TempPathFactory, edge_files: Path) -> Any:
    import torch

    d = tmp_path_factory.mktemp("old")
    (d / "depr_user_model.py").write_text(USER_MODULE)
    sys.path.insert(0, str(d))
    from depr_user_model import Lin  # type: ignore[import-not-found]

    torch.manual_seed(0)
    model = Lin(8, 3)
    torch.save(model.state_dict(), d / "w.pt")
    (d / "m.txt").write_text("node_id\n" + "\n".join(map(str, range(0, 40))) + "\n")
    (d / "n.txt").write_text("\n".join(map(str, range(40, 80))) + "\n")
    x = torch.from_numpy(np.load(edge_files / "x.npy"))
    y = np.array([int(v) for v in (edge_files / "y.csv").read_text().split()])
    with torch.no_grad():
        post = torch.softmax(model(x, None), dim=1).double().numpy()
    np.savez(d / "s.npz", scores=post[:80], labels=y[:80], node_ids=np.arange(80))
    (d / "a.toml").write_text(SPEC)
    rng = np.random.default_rng(0)
    attr = np.arange(80) % 2
    np.save(d / "emb.npy", rng.normal(size=(80, 4)) + 3.0 * attr[:, None])
    (d / "attr.csv").write_text("node,attr\n" + "\n".join(f"{i},{a}" for i, a in
                                                          enumerate(attr)))
    yield d
    sys.path.remove(str(d))


def _graph(g: Path) -> list[str]:
    return ["--edges", str(g / "edges.csv"), "--features", str(g / "x.npy"), "--labels",
            str(g / "y.csv")]


QUICK = ["--suite", "quick", "--n-bootstrap", "50", "--attack", "confidence_mia"]


def _cases(d: Path, g: Path) -> dict[str, tuple[list[str], list[str], str]]:
    """Old argv, new argv (without --out), and the deprecation line."""
    model = ["--model-class", "depr_user_model:Lin", "--model-kwargs", '{"d": 8, "c": 3}',
             *_graph(g), "--members", str(d / "m.txt"), "--non-members", str(d / "n.txt"),
             *QUICK]
    scores = ["--members", str(d / "m.txt"), *QUICK]
    emb = ["--attributes", str(d / "attr.csv"), "--n-bootstrap", "50"]
    return {
        "model": (["audit", *model[:4], "--model", str(d / "w.pt"), *model[4:]],
                  ["audit", "model", str(d / "w.pt"), *model],
                  "warning: graphleaks audit --model is deprecated; use graphleaks audit model "
                  "FILE"),
        "scores": (["audit", "--scores", str(d / "s.npz"), *scores],
                   ["audit", "scores", str(d / "s.npz"), *scores],
                   "warning: graphleaks audit --scores is deprecated; use graphleaks audit "
                   "scores FILE"),
        "config": (["audit", f"--config={d / 'a.toml'}", "--seed", "2"],
                   ["audit", "spec", str(d / "a.toml"), "--seed", "2"],
                   "warning: graphleaks audit --config is deprecated; use graphleaks audit "
                   "spec FILE"),
        "embeddings": (["audit", "--embeddings", str(d / "emb.npy"), *emb],
                       ["audit", "embeddings", str(d / "emb.npy"), *emb],
                       "warning: graphleaks audit --embeddings is deprecated; use graphleaks "
                       "audit embeddings FILE"),
        "audit-embeddings": (["audit-embeddings", *emb, "--embeddings", str(d / "emb.npy")],
                             ["audit", "embeddings", str(d / "emb.npy"), *emb],
                             "warning: graphleaks audit-embeddings is deprecated; use "
                             "graphleaks audit embeddings FILE"),
    }


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if not k.endswith("_s")}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.mark.parametrize("old", ["model", "scores", "config", "embeddings", "audit-embeddings"])
def test_old_spelling_warns_once_and_writes_the_same_report(old, d, edge_files, tmp_path):
    old_argv, new_argv, warning = _cases(d, edge_files)[old]
    r_old = runner.invoke(app, [*old_argv, "--out", str(tmp_path / "old")])
    r_new = runner.invoke(app, [*new_argv, "--out", str(tmp_path / "new")])
    assert r_old.exit_code == 0 and r_new.exit_code == 0, r_old.output + r_new.output
    assert r_old.stderr.splitlines() == [warning]
    assert r_new.stderr == ""
    reports = [json.loads((tmp_path / x / "report.json").read_text()) for x in ("old", "new")]
    assert _without_timings(reports[0]) == _without_timings(reports[1])
    assert r_old.stdout.replace(str(tmp_path / "old"), str(tmp_path / "new")) == r_new.stdout


@pytest.mark.parametrize(("argv", "match"), [
    (["audit", "model", "m.pt2", "--model", "m.pt2"],
     "error: --model is the deprecated spelling of `graphleaks audit model FILE`"),
    (["audit", "scores", "s.npz", "--config", "a.toml"],
     "error: --config is the deprecated spelling of `graphleaks audit spec FILE`"),
    (["audit", "--scores-output", "logits"],
     "error: --scores-output belongs to graphleaks audit scores FILE, not to graphleaks audit"),
    (["audit", "scores", "s.npz", "--arch", "gcn"],
     "error: --arch belongs to graphleaks audit, not to graphleaks audit scores FILE"),
    (["audit", "--dataset", "synthetic", "--scores-output", "logits", "--score-ids",
      "/nonexistent.npy", "--model-output", "probabilities"],
     "error: --scores-output belongs to graphleaks audit scores FILE"),
    (["audit", "--out", "r", "model", "m.pt2"],
     "error: --out before `model` is an option of graphleaks audit itself"),
])
def test_mixed_spellings_and_misplaced_options_exit_2_in_one_line(argv, match, tmp_path,
                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, argv)
    assert r.exit_code == 2, r.output
    [line] = r.stderr.strip().splitlines()
    assert line.startswith(match), line
    assert list(tmp_path.iterdir()) == []
