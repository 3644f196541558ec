"""``graphleaks audit model FILE --task graph``: a user's own PyG GIN exported to ``.pt2``
(and ONNX, and a state_dict with ``--model-class``) is audited on a registered graph set
with the same per-graph scores as the API path; files that cannot serve a graph audit, and
bad options, are one ``error:`` line, exit 2, nothing written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from graphleaks.audit.graph_audit import audit_graph_run, graph_target
from graphleaks.cli import app
from graphleaks.data.graphsets import read_tu_folder
from graphleaks.data.graphsets.named import named_graph_set
from graphleaks.models.foreign import export_pt2
from graphleaks.models.graph_export import export_graph_pt2
from graphleaks.models.graph_target import batch_graphs
from tests.audit.graph_own_model import NodeRows, train_user_gin

SEED = 3
SHARED = ["graph_confidence_mia", "graph_label_only_mia"]
QUICK = ["--seed", str(SEED), "--n-bootstrap", "30", "--suite", "quick"]
MEMBERS, NON = np.arange(24), np.arange(24, 48)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    d = tmp_path_factory.mktemp("graph_model")
    # the set `--dataset motif --seed SEED` names
    gs = named_graph_set("motif", seed=SEED).load()
    model = train_user_gin([gs[int(i)] for i in MEMBERS], gs.y[MEMBERS])
    x, ei, b = batch_graphs([gs[i] for i in range(4)])
    export_graph_pt2(model, x, ei, b, d / "gin.pt2")
    # a header row: a bare first line 0 is ambiguous (pandas' unnamed column) and refused
    (d / "members.txt").write_text("graph_id\n" + "\n".join(str(i) for i in MEMBERS) + "\n")
    (d / "non.txt").write_text("# graph ids\n" + "\n".join(str(i) for i in NON) + "\n")
    return {"dir": d, "gs": gs, "model": model, "example": (x, ei, b)}


def _audit(model: Path, out: Path, setup: dict[str, object], *args: str) -> object:
    d = setup["dir"]
    assert isinstance(d, Path)
    return CliRunner().invoke(app, [
        "audit", "model", str(model), "--task", "graph", "--dataset", "motif",
        "--members", str(d / "members.txt"), "--non-members", str(d / "non.txt"), *QUICK,
        "--quiet", "--out", str(out), *args])


def _scores(path: Path) -> dict[tuple[str, int], float]:
    with path.open() as fh:
        return {(r["attack"], int(r["graph_id"])): float(r["score"]) for r in csv.DictReader(fh)}


def _api_scores(setup: dict[str, object]) -> dict[tuple[str, int], float]:
    run = audit_graph_run(graph_target(setup["model"], setup["gs"], MEMBERS, NON, seed=SEED),
                          attacks=SHARED, seed=SEED, suite="quick", n_bootstrap=30)
    return {(t.attack, int(g)): float(s) for t in run.tables
            for g, s in zip(t.nodes, t.scores, strict=True)}


def _same(a: dict[tuple[str, int], float], b: dict[tuple[str, int], float]) -> None:
    assert a.keys() == b.keys() and len(a) == len(SHARED) * 48
    np.testing.assert_allclose([a[k] for k in sorted(a)], [b[k] for k in sorted(a)],
                               atol=1e-5)


def _one_error_line(r: object, out: Path, *needles: str) -> None:
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    lines = [ln for ln in r.output.splitlines() if ln.strip()]  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("error:"), lines
    for n in needles:
        assert n in lines[0], lines[0]
    assert not out.exists()


def test_pt2_file_gives_the_api_paths_per_graph_scores(setup, tmp_path):  # noqa: ANN001
    d = setup["dir"]
    r = _audit(d / "gin.pt2", tmp_path / "rep", setup, *sum((["--attack", a] for a in SHARED),
                                                            []))
    assert r.exit_code == 0, r.output
    _same(_scores(tmp_path / "rep" / "scores.csv"), _api_scores(setup))
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert report["config"]["task"] == "graph"
    assert report["config"]["graph_set"]["kind"] == "motif"
    assert report["target"]["architecture"]["model"].startswith("gin.pt2 (torch.export")


def test_state_dict_with_model_class_gives_the_same_scores(setup, tmp_path):  # noqa: ANN001
    d, gs = setup["dir"], setup["gs"]
    torch.save(setup["model"].state_dict(), d / "gin_weights.pt")
    kwargs = json.dumps({"in_dim": gs.num_features, "classes": gs.num_classes})
    r = _audit(d / "gin_weights.pt", tmp_path / "rep", setup, "--model-class",
               "tests.audit.graph_own_model:UserGIN", "--model-kwargs", kwargs,
               "--embedding-layer", "readout", *sum((["--attack", a] for a in SHARED), []))
    assert r.exit_code == 0, r.output
    _same(_scores(tmp_path / "rep" / "scores.csv"), _api_scores(setup))
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert report["config"]["target_model"]["shadow_models"].startswith("model_factory")


def _onnx_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _onnx_available(), reason="needs onnxruntime and onnxscript")
def test_onnx_file_gives_the_same_scores(setup, tmp_path):  # noqa: ANN001
    from torch.export import Dim

    nodes, edges = Dim("nodes", min=1), Dim("edges", min=0)
    torch.onnx.export(setup["model"], setup["example"], str(tmp_path / "gin.onnx"),
                      dynamo=True, verbose=False,
                      dynamic_shapes=({0: nodes}, {1: edges}, {0: nodes}))
    r = _audit(tmp_path / "gin.onnx", tmp_path / "rep", setup,
               *sum((["--attack", a] for a in SHARED), []))
    assert r.exit_code == 0, r.output
    _same(_scores(tmp_path / "rep" / "scores.csv"), _api_scores(setup))


def test_model_with_one_row_per_node_is_one_line_exit_2(setup, tmp_path):  # noqa: ANN001
    gs = setup["gs"]
    x, ei, b = setup["example"]
    export_graph_pt2(NodeRows(gs.num_features, gs.num_classes), x, ei, b, tmp_path / "n.pt2")
    _one_error_line(_audit(tmp_path / "n.pt2", tmp_path / "rep", setup), tmp_path / "rep",
                    "one row per node")


def test_node_model_program_and_static_export_are_refused(setup, tmp_path):  # noqa: ANN001
    gs = setup["gs"]
    x, ei, b = setup["example"]
    node_model = torch.nn.Linear(gs.num_features, gs.num_classes)

    class TwoInputs(torch.nn.Module):
        def forward(self, x, edge_index):  # noqa: ANN001, ANN202
            return node_model(x)

    export_pt2(TwoInputs(), x, ei, tmp_path / "node.pt2")
    _one_error_line(_audit(tmp_path / "node.pt2", tmp_path / "rep", setup), tmp_path / "rep",
                    "takes 2 inputs", "export_graph_pt2")
    # the default torch.export call (no dynamic_shapes) fixes the example batch's size
    torch.export.save(torch.export.export(setup["model"], (x, ei, b)),
                      str(tmp_path / "static.pt2"))
    _one_error_line(_audit(tmp_path / "static.pt2", tmp_path / "rep", setup),
                    tmp_path / "rep", "fixed number of nodes", "dynamic_shapes")


@pytest.mark.parametrize(("args", "needles"), [
    (["--members-file-out-of-range"], ("members graph ids must lie in 0..399",)),
    (["--no-set"], ("--dataset", "--graphs")),
    (["--param", "graph_lira_mia.num_references=4"], ("--param",)),
    (["--edges", "e.csv"], ("--edges",)),
    (["--on-invalid", "skip"], ("--on-invalid",)),
    (["--task-typo"], ("--task",)),
])
def test_bad_options_are_one_line_exit_2(setup, tmp_path, args, needles):  # noqa: ANN001
    d = setup["dir"]
    out = tmp_path / "rep"
    base = ["audit", "model", str(d / "gin.pt2"), "--task", "graph", "--dataset", "motif",
            "--members", str(d / "members.txt"), "--non-members", str(d / "non.txt"),
            *QUICK, "--quiet", "--out", str(out)]
    if args == ["--members-file-out-of-range"]:
        (tmp_path / "m.txt").write_text("5\n1\n400\n")
        base[base.index("--members") + 1] = str(tmp_path / "m.txt")
    elif args == ["--no-set"]:
        base.remove("--dataset")
        base.remove("motif")
    elif args == ["--task-typo"]:
        base[base.index("--task") + 1] = "graphs"
    else:
        base += args
    _one_error_line(CliRunner().invoke(app, base), out, *needles)


def test_node_audit_refuses_graph_set_options(setup, tmp_path):  # noqa: ANN001
    d = setup["dir"]
    r = CliRunner().invoke(app, ["audit", "model", str(d / "gin.pt2"), "--dataset", "motif",
                                 "--quiet", "--out", str(tmp_path / "rep")])
    _one_error_line(r, tmp_path / "rep", "--task graph")


def _write_tu(folder: Path, graphs: list, name: str) -> None:  # noqa: ANN001
    folder.mkdir()
    rows, ind, attrs, labels, offset = [], [], [], [], 0
    for gid, g in enumerate(graphs, start=1):
        for s, t in g.edge_index.t().tolist():
            rows.append(f"{s + offset + 1}, {t + offset + 1}")
        ind += [str(gid)] * int(g.num_nodes)
        attrs += [", ".join(f"{v:g}" for v in r) for r in g.x.tolist()]
        labels.append(str(int(g.y)))
        offset += int(g.num_nodes)
    for part, lines in (("A", rows), ("graph_indicator", ind), ("graph_labels", labels),
                        ("node_attributes", attrs)):
        (folder / f"{name}_{part}.txt").write_text("\n".join(lines) + "\n")


def test_tu_folder_from_graphs_is_audited(setup, tmp_path):  # noqa: ANN001
    gs = setup["gs"]
    _write_tu(tmp_path / "MOTIFS", [gs[i] for i in range(48)], "MOTIFS")
    tu = read_tu_folder(tmp_path / "MOTIFS")
    model = train_user_gin([tu[int(i)] for i in MEMBERS], tu.y[MEMBERS], epochs=5)
    x, ei, b = batch_graphs([tu[i] for i in range(4)])
    export_graph_pt2(model, x, ei, b, tmp_path / "tu.pt2")
    d = setup["dir"]
    r = CliRunner().invoke(app, [
        "audit", "model", str(tmp_path / "tu.pt2"), "--task", "graph", "--graphs",
        str(tmp_path / "MOTIFS"), "--members", str(d / "members.txt"), "--non-members",
        str(d / "non.txt"), "--attack", "graph_confidence_mia", *QUICK, "--quiet", "--out",
        str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    assert len(_scores(tmp_path / "rep" / "scores.csv")) == 48
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert report["config"]["graphs"] == "MOTIFS"  # the folder's name, never its path
