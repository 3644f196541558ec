"""One user model, four ways in: the Python API, a .pt2 export, a state_dict with
--model-class, and its exported scores alone. The attack they all share (the confidence MIA)
must score the same candidates identically (issue 16's target)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import torch
from typer.testing import CliRunner

from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.audit.model_audit import audit_target, model_target
from graphleaks.cli import app
from graphleaks.models.foreign import export_pt2

SEED = 3


def _read_scores(path: Path) -> dict[int, tuple[float, int]]:
    with path.open() as f:
        rows = [r for r in csv.DictReader(f) if r["attack"] == "confidence_mia"]
    return {int(r["node"]): (float(r["score"]), int(r["label"])) for r in rows}


def _cli(mode: str, file: str, *args: str) -> None:
    r = CliRunner().invoke(app, ["audit", mode, file, "--attack", "confidence_mia", "--seed",
                                 str(SEED), "--n-bootstrap", "50", "--quiet", *args])
    assert r.exit_code == 0, r.output


def test_four_ways_in_give_identical_confidence_scores(user_setup, tmp_path):  # noqa: ANN001
    s = user_setup
    (tmp_path / "m.txt").write_text("node_id\n" + "\n".join(str(i) for i in s.members))
    (tmp_path / "n.txt").write_text("node_id\n" + "\n".join(str(i) for i in s.non_members))
    sets = ["--members", str(tmp_path / "m.txt"), "--non-members", str(tmp_path / "n.txt")]
    graph = s.write_graph(tmp_path / "g")

    # 1. the Python API (what audit_model runs), keeping each candidate's score
    target = model_target(s.model, s.graph, s.members, s.non_members, seed=SEED)
    run = audit_target(target, attacks=[ConfidenceMIA()], seed=SEED, n_bootstrap=50)
    [table] = run.tables
    api = {int(n): (float(v), int(y))
           for n, v, y in zip(table.nodes, table.scores, table.labels, strict=True)}

    # 2. a torch.export program
    pt2 = export_pt2(s.model, s.graph.x, s.graph.edge_index, tmp_path / "model.pt2")
    _cli("model", str(pt2), *graph, *sets, "--out", str(tmp_path / "pt2"))
    # 3. the state_dict and the user's class, named explicitly
    torch.save(s.model.state_dict(), tmp_path / "w.pt")
    _cli("model", str(tmp_path / "w.pt"), "--model-class", "usernet16:SGNet",
         "--model-kwargs", json.dumps(s.kwargs), *graph, *sets, "--out", str(tmp_path / "sd"))
    # 4. the model's exported posteriors only
    with torch.no_grad():
        post = torch.softmax(s.model(s.graph.x, s.graph.edge_index), dim=1).double().numpy()
    nodes = np.union1d(s.members, s.non_members)
    np.savez(tmp_path / "scores.npz", scores=post[nodes], labels=s.graph.y.numpy()[nodes],
             node_ids=nodes)
    _cli("scores", str(tmp_path / "scores.npz"), *sets, "--out", str(tmp_path / "sc"))

    ways = {"pt2": _read_scores(tmp_path / "pt2" / "scores.csv"),
            "state_dict": _read_scores(tmp_path / "sd" / "scores.csv"),
            "scores_only": _read_scores(tmp_path / "sc" / "scores.csv")}
    assert len(api) > 20
    for name, got in ways.items():
        assert sorted(got) == sorted(api), name  # the same candidates
        assert [got[n][1] for n in api] == [api[n][1] for n in api], name  # the same truth
        # the same scores: bit-identical for the same class and weights; the exported
        # program and the softmax of the export agree to float32 rounding
        diff = max(abs(got[n][0] - api[n][0]) for n in api)
        assert diff <= (0.0 if name == "state_dict" else 1e-6), (name, diff)
