"""Auditing a graph classifier: the API path, bad inputs, determinism, a user's own PyG
model through the API and through its exported scores (identical shared scores)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch_geometric.data import Data
from torch_geometric.nn import GINConv, global_mean_pool

import graphleaks
from graphleaks.audit.graph_audit import audit_graph_scores_run, graph_target
from graphleaks.data.graphsets import motif_graphs
from graphleaks.data.score_files import check_scores
from graphleaks.errors import DataError
from graphleaks.models.graph_classifier import GraphClassifierSpec, fit_graph_classifier
from graphleaks.report.graph_scores import graph_scores_csv
from graphleaks.report.verdict import compute_verdict

SPEC = GraphClassifierSpec(hidden=16, layers=2, epochs=30, patience=0, batch_size=8)
CHEAP = ["graph_confidence_mia", "graph_label_only_mia"]


@pytest.fixture(scope="module")
def setup():
    gs = motif_graphs(40, seed=1)
    model, _ = fit_graph_classifier(SPEC, [gs[i] for i in range(16)], gs.num_classes, seed=0)
    return gs, model


def _run(setup, **kw):
    gs, model = setup
    return graphleaks.audit_model(model, gs, members=range(16), non_members=range(16, 32),
                                  task="graph", attacks=CHEAP, n_bootstrap=30, suite="quick",
                                  **kw)


def test_api_path_gives_a_graph_membership_report(setup):
    r = _run(setup, embedding_layer="pool")
    assert [a.attack for a in r.attacks] == CHEAP
    assert all(a.task == "graph_membership" for a in r.attacks)
    assert r.config["task"] == "graph" and r.target.split_sizes["train"] == 16
    assert any(k.startswith("class=") for k in r.attacks[0].metrics.slices)
    verdict = compute_verdict(r)
    assert [v.risk for v in verdict if v.risk != "target"] == ["graph membership"]
    line = next(v for v in verdict if v.risk == "graph membership")
    assert "no ledger" in line.coverage
    d = r.to_dict()  # the report serialises (JSON form)
    assert d["attacks"][0]["task"] == "graph_membership"


def test_same_seed_same_report(setup):
    def strip(d):
        for a in d["attacks"]:
            a.pop("runtime_s", None)
        return d

    a, b = _run(setup, seed=4).to_dict(), _run(setup, seed=4).to_dict()
    assert strip(a)["attacks"] == strip(b)["attacks"]


@pytest.mark.parametrize(("members", "non", "match"), [
    ([0, 1, 99], [20, 21], "out of range"),
    ([0, 1, 1], [20, 21], "duplicates"),
    ([0, 1, 2], [2, 21], "both members and non-members"),
    ([], [20, 21], "no members"),
])
def test_bad_ids_are_one_line(setup, members, non, match):
    gs, model = setup
    with pytest.raises(DataError, match=match) as exc:
        graph_target(model, gs, members, non)
    assert "\n" not in str(exc.value)


def test_empty_graph_is_refused(setup):
    gs, model = setup
    graphs = list(gs.graphs)
    graphs[3] = Data(x=torch.zeros(0, gs.num_features), edge_index=torch.empty(2, 0,
                     dtype=torch.long), y=torch.tensor([0]), num_nodes=0)
    with pytest.raises(DataError, match="graph 3 is empty"):
        graph_target(model, graphs, [0, 1], [2, 4])


def test_per_node_model_is_refused_in_one_line(setup):
    gs, _ = setup

    class NodeModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(gs.num_features, 2)

        def forward(self, x, edge_index, batch):
            return self.lin(x)  # forgot the pooling

    with pytest.raises(DataError, match="one row per node") as exc:
        graph_target(NodeModel(), gs, [0, 1], [2, 3])
    assert "\n" not in str(exc.value)


class UserGIN(nn.Module):
    """A user's own PyG graph classifier: GINConv layers, its own readout layer name."""

    def __init__(self, in_dim: int, classes: int) -> None:
        super().__init__()
        self.conv1 = GINConv(nn.Sequential(nn.Linear(in_dim, 16), nn.ReLU(), nn.Linear(16, 16)))
        self.conv2 = GINConv(nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16)))
        self.readout = nn.Identity()
        self.out = nn.Linear(16, classes)

    def forward(self, x, edge_index, batch):
        h = self.conv2(self.conv1(x, edge_index).relu(), edge_index).relu()
        return self.out(self.readout(global_mean_pool(h, batch)))


def test_users_pyg_model_api_and_scores_only_agree():
    from graphleaks.models.graph_target import batch_graphs

    gs = motif_graphs(40, seed=2)
    torch.manual_seed(0)
    model = UserGIN(gs.num_features, gs.num_classes)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    train = [gs[i] for i in range(16)]
    for _ in range(40):  # the user's own loop
        opt.zero_grad()
        x, ei, b = batch_graphs(train)
        nn.functional.cross_entropy(model(x, ei, b), gs.y[:16]).backward()
        opt.step()
    model.eval()
    members, non = np.arange(16), np.arange(16, 32)
    api = graphleaks.audit_model(model, gs, members=members, non_members=non, task="graph",
                                 embedding_layer="readout", n_bootstrap=30, suite="quick",
                                 attacks=["graph_confidence_mia", "graph_lira_mia"],
                                 seed=0)
    assert api.config["target_model"]["shadow_models"].startswith("reset deep copies")
    # the owner exports one row per graph: posteriors and labels
    ids = np.arange(32)
    x, ei, b = batch_graphs([gs[int(i)] for i in ids])
    with torch.no_grad():
        post = torch.softmax(model(x, ei, b), 1).numpy()
    ns = check_scores(post, gs.y.numpy()[ids], node_ids=ids, output="probabilities")
    run = audit_graph_scores_run(ns, members, non, seed=0, n_bootstrap=30, suite="quick")
    assert [a.attack for a in run.report.attacks] == ["graph_confidence_mia"]
    assert "graph_lira_mia" in run.report.config["skipped_attacks"]
    a = api.attacks[0].metrics.binary.auc.value
    s = run.report.attacks[0].metrics.binary.auc.value
    assert a == pytest.approx(s, abs=1e-6)
    # per graph: the API path's scores equal the scores-only path's
    from graphleaks.audit.graph_audit import audit_graph_run

    api_run = audit_graph_run(graph_target(model, gs, members, non), seed=0, n_bootstrap=30,
                              attacks=["graph_confidence_mia"])
    by_id = {int(g): v for g, v in zip(api_run.tables[0].nodes, api_run.tables[0].scores,
                                        strict=True)}
    t = run.tables[0]
    np.testing.assert_allclose([by_id[int(g)] for g in t.nodes], t.scores, atol=1e-6)
    csv_text = graph_scores_csv(run.tables)
    assert csv_text.splitlines()[0].startswith("attack,task,graph_id,smiles")
    assert len(csv_text.splitlines()) == 33


def test_cli_scores_task_graph_refuses_bad_ids_with_exit_2(tmp_path):
    from typer.testing import CliRunner

    from graphleaks.cli import app

    rows = ["0,0,0.9,0.1", "1,1,0.2,0.8", "2,0,0.6,0.4", "3,1,0.3,0.7"]
    (tmp_path / "s.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "m.txt").write_text("node_id\n0\n7\n")  # named: a bare first 0 is ambiguous
    out = tmp_path / "rep"
    r = CliRunner().invoke(app, ["audit", "scores", str(tmp_path / "s.csv"), "--task", "graph",
                                 "--members", str(tmp_path / "m.txt"), "--out", str(out)])
    assert r.exit_code == 2, r.output
    err = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("error:") and "out of range" in err[0]
    assert not out.exists()
