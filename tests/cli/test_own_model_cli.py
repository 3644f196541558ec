"""A new user's own model on their own string-id graph, through every door (issue 24 item 7).

The user's GATv2-JK (tests/audit/own_model.py) is audited from Python, as a dynamic ``.pt2``,
as ONNX, as a state_dict with ``--model-class``, and from its exported scores keyed by the
user's ids; the shared attack scores every node identically, and ``scores.csv`` names the
nodes by the user's ids. Default static-shape exports run or are refused in one line before
any work (never exit 1); white-box attacks run from the command line with
``--embedding-layer``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from graphleaks.audit.model_audit import audit_target, model_target
from graphleaks.cli import app
from graphleaks.models.foreign import export_pt2
from tests.audit.own_model import MODULE_NAME, OwnSetup, make_own_setup

SEED = 7
QUICK = ["--seed", str(SEED), "--n-bootstrap", "30", "--suite", "quick"]


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> OwnSetup:
    return make_own_setup(tmp_path_factory.mktemp("own_cli"))


@pytest.fixture(scope="module")
def files(own: OwnSetup, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return own.write_files(tmp_path_factory.mktemp("own_files"))


def _graph_args(files: dict[str, Path]) -> list[str]:
    return ["--edges", str(files["edges"]), "--features", str(files["features"]),
            "--labels", str(files["labels"]), "--members", str(files["members"]),
            "--non-members", str(files["non_members"])]


def _model(model: Path, out: Path, files: dict[str, Path], *args: str) -> object:
    return CliRunner().invoke(app, ["audit", "model", str(model), *_graph_args(files), *QUICK,
                                    "--quiet", "--out", str(out), *args])


def _kwargs(own: OwnSetup) -> list[str]:
    return ["--model-class", f"{MODULE_NAME}:GATJK", "--model-kwargs", json.dumps(own.kwargs)]


def _scores(path: Path, attack: str = "confidence_mia") -> dict[str, float]:
    with path.open() as fh:
        return {r["node"]: float(r["score"]) for r in csv.DictReader(fh) if r["attack"] == attack}


def test_every_door_scores_the_users_nodes_alike(own, files, tmp_path):  # noqa: ANN001
    # 1. Python: the user's own Data, numbered their way, named by node_names
    target = model_target(own.model, own.graph, own.members, own.non_members, seed=SEED)
    run = audit_target(target, attacks=["confidence_mia"], seed=SEED, n_bootstrap=30,
                       suite="quick")
    [table] = run.tables
    api = {str(table.names[n]): float(s) for n, s in zip(table.nodes, table.scores,
                                                         strict=True)}
    assert len(api) == len(own.members) + len(own.non_members)  # every member and non-member
    a = ["--attack", "confidence_mia"]
    doors: dict[str, dict[str, float]] = {}
    # 2. a torch.export program with dynamic shapes
    pt2 = export_pt2(own.model, own.graph.x, own.graph.edge_index, tmp_path / "m.pt2")
    r = _model(pt2, tmp_path / "pt2", files, *a)
    assert r.exit_code == 0, r.output
    doors["pt2"] = _scores(tmp_path / "pt2" / "scores.csv")
    # 3. ONNX with dynamic shapes
    if _onnx_available():
        from torch.export import Dim

        torch.onnx.export(own.model, (own.graph.x, own.graph.edge_index),
                          str(tmp_path / "m.onnx"), dynamo=True, verbose=False,
                          dynamic_shapes=({0: Dim("nodes", min=2)}, {1: Dim("edges", min=2)}))
        r = _model(tmp_path / "m.onnx", tmp_path / "onnx", files, *a)
        assert r.exit_code == 0, r.output
        doors["onnx"] = _scores(tmp_path / "onnx" / "scores.csv")
    # 4. the state_dict and the user's class
    torch.save(own.model.state_dict(), tmp_path / "w.pt")
    r = _model(tmp_path / "w.pt", tmp_path / "sd", files, *a, *_kwargs(own))
    assert r.exit_code == 0, r.output
    doors["state_dict"] = _scores(tmp_path / "sd" / "scores.csv")
    # 5. the exported posteriors, keyed by the user's ids (what a pandas export writes)
    with torch.no_grad():
        post = torch.softmax(own.model(own.graph.x, own.graph.edge_index), 1).double().numpy()
    nodes = np.union1d(own.members, own.non_members)
    rows = [f"{own.names[i]},{int(own.graph.y[i])}," + ",".join(repr(float(v)) for v in post[i])
            for i in nodes]
    (tmp_path / "scores.csv").write_text("node_id,label,c0,c1,c2\n" + "\n".join(rows) + "\n")
    r = CliRunner().invoke(app, ["audit", "scores", str(tmp_path / "scores.csv"), "--members",
                                 str(files["members"]), "--non-members",
                                 str(files["non_members"]), *QUICK, "--quiet", *a, "--out",
                                 str(tmp_path / "sc")])
    assert r.exit_code == 0, r.output
    doors["scores"] = _scores(tmp_path / "sc" / "scores.csv")
    for name, got in doors.items():
        assert set(got) == set(api), name  # the same nodes, named by the user's ids
        # float32 programs and a re-ordered edge list (the CLI numbers nodes by first
        # appearance) agree with the module to rounding
        assert max(abs(got[k] - api[k]) for k in api) <= 1e-5, name


def _onnx_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError:
        return False
    return True


def test_default_static_exports_run_or_are_refused_before_work(own, files,  # noqa: ANN001
                                                               tmp_path):
    g = own.graph
    torch.export.save(torch.export.export(own.model, (g.x, g.edge_index)),
                      str(tmp_path / "static.pt2"))
    models = [tmp_path / "static.pt2"]
    if _onnx_available():
        torch.onnx.export(own.model, (g.x, g.edge_index), str(tmp_path / "static.onnx"),
                          dynamo=True, verbose=False)
        models.append(tmp_path / "static.onnx")
    for model in models:
        # the attack that queries the edgeless graph: one line, exit 2, nothing written
        out = tmp_path / f"refused_{model.suffix[1:]}"
        r = _model(model, out, files, "--attack", "gbase_mia")
        assert r.exit_code == 2, r.output
        [line] = r.stderr.strip().splitlines()
        assert line.startswith("error:") and "static shapes" in line and "dynamic_shapes" in line
        assert not out.exists()
        # the attacks that query the served graph run
        out = tmp_path / f"ran_{model.suffix[1:]}"
        r = _model(model, out, files, "--attack", "confidence_mia", "--attack", "link_stealing")
        assert r.exit_code == 0, r.output
        report = json.loads((out / "report.json").read_text())
        assert report["config"]["target_model"]["static_shapes"]["nodes"] == int(g.num_nodes)
    # the default state_dict (torch.save(model.state_dict())) with its class runs
    torch.save(own.model.state_dict(), tmp_path / "w.pt")
    r = _model(tmp_path / "w.pt", tmp_path / "sd", files, "--attack", "gbase_mia",
               *_kwargs(own))
    assert r.exit_code == 0, r.output


def test_static_pt2_default_audit_lists_the_reexport(own, files, tmp_path):  # noqa: ANN001
    g = own.graph
    torch.export.save(torch.export.export(own.model, (g.x, g.edge_index)),
                      str(tmp_path / "static.pt2"))
    r = CliRunner().invoke(app, ["audit", "model", str(tmp_path / "static.pt2"),
                                 *_graph_args(files), *QUICK, "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "gbase_mia was skipped" in r.stdout and "torch.export.export(" in r.stdout
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert {"gbase_mia", "label_only_mia"} <= set(report["config"]["skipped_attacks"])
    assert report["target"]["architecture"]["model"].startswith("static.pt2 (torch.export")


def test_white_box_attacks_from_the_command_line(own, files, tmp_path):  # noqa: ANN001
    torch.save(own.model.state_dict(), tmp_path / "w.pt")
    a = ["--attack", "embedding_cluster_mia", "--attack", "graph_reconstruction"]
    r = _model(tmp_path / "w.pt", tmp_path / "wb", files, *a, *_kwargs(own),
               "--embedding-layer", "conv1")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "wb" / "report.json").read_text())
    assert [x["attack"] for x in report["attacks"]] == ["embedding_cluster_mia",
                                                        "graph_reconstruction"]
    assert report["target"]["architecture"]["embedding_layers"] == ["conv1"]
    # the same audit from Python, on the graph the CLI read: the same figures
    from graphleaks.data.files import load_graph_files
    from graphleaks.data.node_sets import read_node_ids

    graph = load_graph_files(files["edges"], features=files["features"], labels=files["labels"])
    index = {name: i for i, name in enumerate(graph.node_names)}
    target = model_target(own.model, graph, read_node_ids(files["members"], index=index),
                          read_node_ids(files["non_members"], index=index), seed=SEED,
                          embedding_layers=("conv1",))
    api = audit_target(target, attacks=["embedding_cluster_mia", "graph_reconstruction"],
                       seed=SEED, n_bootstrap=30, suite="quick").report
    for cli_attack, api_attack in zip(report["attacks"], api.attacks, strict=True):
        assert cli_attack["metrics"]["binary"]["auc"]["value"] == pytest.approx(
            api_attack.metrics.binary.auc.value, abs=1e-6)
    # without the layer the attack is refused up front, naming the option
    r = _model(tmp_path / "w.pt", tmp_path / "no", files, *a, *_kwargs(own))
    assert r.exit_code == 2 and "--embedding-layer" in r.stderr
    assert not (tmp_path / "no").exists()


def test_embedding_layer_refused_where_no_hook_can_run(own, files, tmp_path):  # noqa: ANN001
    pt2 = export_pt2(own.model, own.graph.x, own.graph.edge_index, tmp_path / "m.pt2")
    r = _model(pt2, tmp_path / "o", files, "--embedding-layer", "conv1")
    assert r.exit_code == 2
    [line] = r.stderr.strip().splitlines()
    assert "runs its operators inline" in line and "--model-class" in line
    assert not (tmp_path / "o").exists()


def test_progress_on_the_model_and_scores_paths(own, files, tmp_path,  # noqa: ANN001
                                               monkeypatch):
    # CliRunner's stderr is no terminal, where Rich draws nothing: the bars it is asked to
    # draw are recorded instead
    from rich.progress import Progress

    bars: list[str] = []
    real = Progress.add_task

    def add_task(self, description, *a, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        bars.append(str(description))
        return real(self, description, *a, **kw)

    monkeypatch.setattr(Progress, "add_task", add_task)
    torch.save(own.model.state_dict(), tmp_path / "w.pt")
    r = CliRunner().invoke(app, ["audit", "model", str(tmp_path / "w.pt"), *_graph_args(files),
                                 *_kwargs(own), *QUICK, "--attack", "confidence_mia",
                                 "--progress", "--out", str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert "attacks" in bars
    bars.clear()
    ids = np.union1d(own.members, own.non_members)
    with torch.no_grad():
        post = torch.softmax(own.model(own.graph.x, own.graph.edge_index), 1).numpy()[ids]
    np.savez(tmp_path / "s.npz", scores=post, labels=own.graph.y.numpy()[ids], node_ids=ids)
    (tmp_path / "m.txt").write_text("node_id\n" + "\n".join(str(i) for i in own.members))
    r = CliRunner().invoke(app, ["audit", "scores", str(tmp_path / "s.npz"), "--members",
                                 str(tmp_path / "m.txt"), *QUICK, "--progress", "--out",
                                 str(tmp_path / "s")])
    assert r.exit_code == 0, r.output
    assert "attacks" in bars
    bars.clear()
    r = CliRunner().invoke(app, ["audit", "scores", str(tmp_path / "s.npz"), "--members",
                                 str(tmp_path / "m.txt"), *QUICK, "--out", str(tmp_path / "s2")])
    assert r.exit_code == 0 and bars == []  # not asked, not a terminal: no bar


def test_pickled_whole_model_is_named(own, files, tmp_path):  # noqa: ANN001
    torch.save(own.model, tmp_path / "whole.pt")
    r = _model(tmp_path / "whole.pt", tmp_path / "o", files)
    assert r.exit_code == 2
    [line] = r.stderr.strip().splitlines()
    assert "pickled module" in line and "never unpickles" in line
    assert not (tmp_path / "o").exists()
