"""``graphleaks audit model FILE --task link``: a user's own PyG link predictor (a
``MessagePassing`` layer graphleaks does not ship, its own training loop) is audited three
ways, through the API, a ``.pt2`` export on the command line and its exported scores only,
with the same scores for the attack they share; files and options that cannot serve an edge
audit are one ``error:`` line, exit 2, nothing written."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import graphleaks
from graphleaks.audit.link_audit import audit_link_model
from graphleaks.cli import app
from graphleaks.data import tiny_graph
from graphleaks.data.pairs import undirected_pairs
from graphleaks.models.foreign import export_pt2
from graphleaks.models.link_export import export_link_pt2
from graphleaks.report.report import load_report
from tests.audit.link_own_model import train_user_model

SEED = 3
SHARED = "edge_score_threshold"  # the one attack a scores-only export can run
QUICK = ["--seed", str(SEED), "--n-bootstrap", "30", "--suite", "quick", "--quiet"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The user's model trained on 80 % of the tiny graph's edges, served on them; its
    .pt2 export, state_dict, graph files, edge files and its own score export."""
    d = tmp_path_factory.mktemp("link_model")
    g = tiny_graph()
    pairs = undirected_pairs(g.edge_index)
    perm = np.random.default_rng(0).permutation(len(pairs))
    cut = int(0.8 * len(pairs))
    members, held = pairs[perm[:cut]], pairs[perm[cut:]]
    model = train_user_model(g.x, torch.from_numpy(members).t(), epochs=30, seed=0)
    served = torch.from_numpy(members).t()
    data = g.clone()
    data.edge_index = torch.cat([served, served.flip(0)], dim=1)
    non_edges = np.array([[0, 59], [1, 58], [2, 57], [3, 56], [4, 55], [5, 54]])
    known = set(map(tuple, pairs.tolist()))
    non_edges = np.array([p for p in non_edges.tolist() if tuple(p) not in known])
    non_members = np.concatenate([held, non_edges])
    export_link_pt2(model, data.x, data.edge_index,
                    torch.from_numpy(pairs[:4]).t().contiguous(), d / "link.pt2")
    torch.save(model.state_dict(), d / "link.pt")
    np.save(d / "x.npy", g.x.numpy())
    (d / "edges.csv").write_text("source,target\n" + "".join(f"{a},{b}\n" for a, b in members))
    (d / "members.csv").write_text("src,dst\n" + "".join(f"{a},{b}\n" for a, b in members))
    (d / "non.csv").write_text("".join(f"{a},{b}\n" for a, b in non_members))
    scored = np.concatenate([members, non_members])
    with torch.no_grad():  # the user's own export: their model on their served graph
        logits = model(data.x, data.edge_index, torch.from_numpy(scored).t()).double()
    (d / "scores.csv").write_text("source,target,score\n" + "".join(
        f"{a},{b},{s!r}\n" for (a, b), s in zip(scored.tolist(), logits.tolist(), strict=True)))
    return {"dir": d, "model": model, "data": data, "members": members,
            "non_members": non_members}


def _graph_args(d: Path) -> list[str]:
    return ["--edges", str(d / "edges.csv"), "--features", str(d / "x.npy"), "--members",
            str(d / "members.csv"), "--non-members", str(d / "non.csv")]


def _audit(model: Path, out: Path, *args: str, graph: bool = True,
           d: Path | None = None) -> object:
    d = d or model.parent
    return CliRunner().invoke(app, ["audit", "model", str(model), "--task", "link",
                                    *(_graph_args(d) if graph else []), *QUICK,
                                    "--out", str(out), *args])


def _csv_scores(path: Path) -> dict[tuple[int, int], float]:
    with path.open() as fh:
        return {(int(r["src"]), int(r["dst"])): float(r["score"]) for r in csv.DictReader(fh)
                if r["attack"] == SHARED}


def _same(a: dict[tuple[int, int], float], b: dict[tuple[int, int], float]) -> None:
    assert a.keys() == b.keys() and len(a) > 40  # the same candidate pairs, every one
    keys = sorted(a)
    # float32 models: the export and the module agree to float32 rounding
    np.testing.assert_allclose([a[k] for k in keys], [b[k] for k in keys], rtol=1e-6,
                               atol=1e-6)


@pytest.fixture(scope="module")
def pt2_run(setup, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report folder of the .pt2 export audited on the command line (the shared attack)."""
    out = tmp_path_factory.mktemp("pt2_run") / "pt2"
    r = _audit(setup["dir"] / "link.pt2", out, "--attack", SHARED)
    assert r.exit_code == 0, r.output
    return out


def test_api_pt2_and_scores_only_give_the_same_scores(setup, pt2_run, tmp_path):
    d, model, data = setup["dir"], setup["model"], setup["data"]
    m, nm = setup["members"], setup["non_members"]
    # 1. the API, as the facade calls it (the report) and its per-pair table
    report = graphleaks.audit_model(model, data, m, nm, task="link", attacks=[SHARED],
                                    seed=SEED, suite="quick", n_bootstrap=30)
    table = audit_link_model(model, data, m, nm, attacks=[SHARED], seed=SEED, suite="quick",
                             n_bootstrap=30).tables[0]
    api = {(int(a), int(b)): float(s) for (a, b), s in zip(table.nodes, table.scores,
                                                           strict=True)}
    # 2. the .pt2 export through the command line
    pt2 = _csv_scores(pt2_run / "scores.csv")
    # 3. the user's exported scores only
    r = CliRunner().invoke(app, ["audit", "scores", str(d / "scores.csv"), "--task", "link",
                                 "--scores-output", "logits", "--members",
                                 str(d / "members.csv"), "--non-members", str(d / "non.csv"),
                                 *QUICK, "--out", str(tmp_path / "scores")])
    assert r.exit_code == 0, r.output
    only = _csv_scores(tmp_path / "scores" / "scores.csv")
    assert str(d) not in (tmp_path / "scores" / "report.json").read_text()  # names only
    _same(api, pt2)
    _same(api, only)
    cli = load_report(pt2_run / "report.json")
    assert cli.attack(SHARED).metrics.binary.auc == report.attack(SHARED).metrics.binary.auc
    assert cli.config["task"] == "link" and cli.config["pairs_layout"] == "columns"
    assert cli.config["target_model"]["parameters_exposed"] is False
    assert str(d) not in (pt2_run / "report.json").read_text()  # names, not paths
    assert "Per-edge risk" in (pt2_run / "report.html").read_text()


def test_state_dict_with_model_class_gives_the_same_scores(setup, pt2_run, tmp_path):
    d = setup["dir"]
    r = _audit(d / "link.pt", tmp_path / "b", "--attack", SHARED, "--model-class",
               "tests.audit.link_own_model:UserLinkModel", "--model-kwargs", '{"in_dim": 8}',
               "--embedding-layer", "conv2")
    assert r.exit_code == 0, r.output
    _same(_csv_scores(pt2_run / "scores.csv"), _csv_scores(tmp_path / "b" / "scores.csv"))
    cfg = load_report(tmp_path / "b" / "report.json").config
    assert cfg["target_model"]["parameters_exposed"] is True
    assert cfg["target_model"]["embedding_layers"] == ["conv2"]


def _one_error_line(r: object, out: Path, *needles: str) -> None:
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    lines = [ln for ln in r.output.splitlines() if ln.strip()]  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("error:"), lines
    for n in needles:
        assert n in lines[0], lines[0]
    assert not out.exists()


@pytest.mark.parametrize(("members", "needles"), [
    ("0,1\n2,999\n", ("--members", "row 1 names a node outside 0..59")),
    ("0,1\n4,4\n", ("--members", "row 1 is a self-loop")),
    ("0,1\n1,0\n", ("--members", "the same undirected pair")),
    ("0\n1\n", ("two node ids per row",)),  # missing endpoints
])
def test_bad_member_edges_are_refused(setup, tmp_path, members, needles):
    d = setup["dir"]
    bad = tmp_path / "bad.csv"
    bad.write_text(members)
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["audit", "model", str(d / "link.pt2"), "--task", "link",
                                 "--edges", str(d / "edges.csv"), "--features",
                                 str(d / "x.npy"), "--members", str(bad), "--non-members",
                                 str(d / "non.csv"), *QUICK, "--out", str(out)])
    _one_error_line(r, out, *needles)


def test_overlapping_member_and_non_member_edges_are_refused(setup, tmp_path):
    d = setup["dir"]
    a, b = setup["members"][0]
    overlap = tmp_path / "non.csv"
    overlap.write_text(f"{b},{a}\n")  # the other orientation of a member edge
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["audit", "model", str(d / "link.pt2"), "--task", "link",
                                 "--edges", str(d / "edges.csv"), "--features",
                                 str(d / "x.npy"), "--members", str(d / "members.csv"),
                                 "--non-members", str(overlap), *QUICK, "--out", str(out)])
    _one_error_line(r, out, "also a member edge")


def test_models_that_are_not_pair_scorers_are_refused(setup, tmp_path):
    from torch_geometric.nn import GCNConv

    d, data = setup["dir"], setup["data"]
    # a node model's program: two inputs
    export_pt2(GCNConv(8, 3), data.x, data.edge_index, tmp_path / "node.pt2")
    _one_error_line(_audit(tmp_path / "node.pt2", tmp_path / "o1", d=d), tmp_path / "o1",
                    "takes 2 inputs", "a link predictor takes three")
    # three inputs, but one score per node
    from tests.cli.link_door_models import PerNodeScorer

    torch.save(PerNodeScorer(8).state_dict(), d / "per_node.pt")
    r = _audit(d / "per_node.pt", tmp_path / "o2", "--model-class",
               "tests.cli.link_door_models:PerNodeScorer", "--model-kwargs", '{"in_dim": 8}')
    _one_error_line(r, tmp_path / "o2", "one score per node, not per pair")
    # the right model declared with the other pairs layout
    r = _audit(d / "link.pt2", tmp_path / "o3", "--pairs-layout", "rows")
    _one_error_line(r, tmp_path / "o3", "takes pairs as [2, P]", "--pairs-layout columns")


@pytest.mark.parametrize(("args", "needles", "graph"), [
    (["--population", "x.txt"], ("--population does not apply to --task link",), True),
    (["--model-output", "log_probabilities"], ("--model-output", "logits, probabilities"),
     True),
    (["--embedding-layer", "conv2"], ("--embedding-layer", "--model-class"), True),
    (["--pairs-layout", "diagonal"], ("--pairs-layout", "columns", "rows"), True),
    (["--param", "edge_lira.num_references=2"], ("--param is not supported",), True),
    (["--features", "x.npy"], ("needs --members FILE and --non-members FILE",), False),
])
def test_bad_options_are_refused(setup, tmp_path, args, needles, graph):
    d = setup["dir"]
    args = [str(d / a) if a.endswith((".txt", ".npy")) else a for a in args]
    out = tmp_path / "o"
    _one_error_line(_audit(d / "link.pt2", out, *args, graph=graph), out, *needles)


def test_pairs_layout_is_refused_for_other_tasks(setup, tmp_path):
    d = setup["dir"]
    r = CliRunner().invoke(app, ["audit", "model", str(d / "link.pt2"), "--pairs-layout",
                                 "rows", "--out", str(tmp_path / "o")])
    _one_error_line(r, tmp_path / "o", "--pairs-layout applies to --task link only")


@pytest.mark.slow
def test_onnx_export_gives_the_same_scores(setup, pt2_run, tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    from torch.export import Dim

    d, model, data = setup["dir"], setup["model"], setup["data"]
    example = torch.from_numpy(setup["members"][:4]).t().contiguous()
    torch.onnx.export(model.eval(), (data.x, data.edge_index, example), d / "link.onnx",
                      dynamo=True, dynamic_shapes=({0: Dim("nodes", min=2)},
                                                   {1: Dim("edges", min=2)},
                                                   {1: Dim("pairs", min=1)}))
    r = _audit(d / "link.onnx", tmp_path / "b", "--attack", SHARED)
    assert r.exit_code == 0, r.output
    _same(_csv_scores(pt2_run / "scores.csv"), _csv_scores(tmp_path / "b" / "scores.csv"))
