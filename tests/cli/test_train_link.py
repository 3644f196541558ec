"""``graphleaks train --task link``: bundles with task, split and ledger; bad input exits 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from graphleaks.bundles import load_bundle, read_manifest
from graphleaks.cli import app
from graphleaks.models.link_target import TrainedLinkTarget

runner = CliRunner()


@pytest.mark.parametrize("defense,extra", [
    ("none", ["--param", "link.epochs=3"]),
    ("lapgraph", ["--epsilon", "4", "--param", "link.epochs=3"]),
    ("dp_sgd", ["--epsilon", "2", "--param", "dp_sgd.epochs=1"]),
])
def test_train_link_bundle(edge_files, tmp_path, defense, extra):
    d = edge_files
    out = tmp_path / "b"
    r = runner.invoke(app, ["train", "--task", "link", "--edges", str(d / "edges.csv"),
                            "--features", str(d / "x.npy"), "--defense", defense, *extra,
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    m = read_manifest(out)
    assert m["task"] == "link" and m["defense"] == defense
    t = load_bundle(out)
    assert isinstance(t, TrainedLinkTarget) and "test_auc" in t.utility
    if defense != "none":
        assert t.ledger.unit.value == "edge" and t.ledger.epsilon == pytest.approx(
            float(extra[1]), rel=1e-2)


def test_train_link_bipartite_dataset(tmp_path):
    out = tmp_path / "b"
    r = runner.invoke(app, ["train", "--task", "link", "--dataset", "bipartite", "--arch", "sage",
                            "--epochs", "2", "--param", "split.non_member_sampling=degree_matched",
                            "--param", "split.bipartite=true", "--out", str(out)])
    assert r.exit_code == 0, r.output
    t = load_bundle(out)
    assert t.spec.encoder == "sage" and t.spec.epochs == 2 and t.dataset.kind == "bundled"
    # the sampler chosen on the command line ran, and the bundle keeps it
    assert t.split.config.non_member_sampling == "degree_matched" and t.split.config.bipartite
    item = t.graph.node_type.numpy().astype(bool)
    assert (item[t.split.held_out_non_edges].sum(axis=1) == 1).all()
    # graphleaks serve answers node queries only: a link bundle is refused in one line
    r = runner.invoke(app, ["serve", str(out)])
    assert r.exit_code == 2 and "link target" in r.output


@pytest.mark.parametrize("extra,bipartite", [([], True),
                                               (["--param", "split.bipartite=false"], False)])
def test_bipartite_dataset_draws_user_item_non_edges_by_default(tmp_path, extra, bipartite):
    """``--dataset bipartite`` needs no ``split.bipartite=true``; an explicit false still
    draws plain uniform non-edges (user-user pairs among them)."""
    out = tmp_path / "b"
    r = runner.invoke(app, ["train", "--task", "link", "--dataset", "bipartite",
                            "--epochs", "1", *extra, "--out", str(out)])
    assert r.exit_code == 0, r.output
    t = load_bundle(out)
    item = t.graph.node_type.numpy().astype(bool)
    one_each = item[t.split.held_out_non_edges].sum(axis=1) == 1
    assert t.split.config.bipartite is bipartite and bool(one_each.all()) is bipartite
    rec = t.split.record()
    assert rec["bipartite"] is bipartite
    assert ("one user endpoint, one item endpoint" in rec["non_member_sampler"]) is bipartite
    # (the audit copies this record and its sampler sentence into the report's edge_protocol:
    # tests/audit/test_link_audit.py)


@pytest.mark.parametrize("args,match", [
    (["--defense", "lpgnn"], "not a defense for the link task"),
    (["--defense", "edgerand", "--epsilon", "0"], "epsilon"),
    (["--defense", "edgerand", "--epsilon", "-1"], "epsilon"),
    (["--defense", "none", "--epsilon", "1"], "takes no --epsilon"),
    (["--defense", "dp_sgd", "--arch", "gcn"], "reads no edges"),
    (["--arch", "tagcn"], "not a link encoder"),
    (["--train-frac", "0.3"], "train-frac"),
    (["--param", "link.nope=1"], "nope"),
    (["--protocol", "sideways"], "protocol"),
    (["--param", "split.non_member_sampling=popular"], "non_member_sampling"),
    (["--param", "split.bipartite=true"], "needs node_type"),
    (["--protocol", "inductive", "--param", "split.kind=transductive"], "disagree"),
])
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, args, match):
    out = tmp_path / "b"
    r = runner.invoke(app, ["train", "--task", "link", "--dataset", "cora", *args,
                            "--out", str(out)])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and match in lines[0], r.output
    assert not out.exists()


def test_unknown_task_refused(tmp_path):
    r = runner.invoke(app, ["train", "--task", "hypergraph", "--out", str(tmp_path / "b")])
    assert r.exit_code == 2 and "--task" in r.output
    assert not (tmp_path / "b").exists()


def test_list_defenses_shows_tasks():
    r = runner.invoke(app, ["list", "defenses"])
    assert r.exit_code == 0
    rows = {ln.split()[0]: ln for ln in r.output.splitlines() if ln.strip()}
    assert "tasks=node,link" in rows["edgerand"] and "tasks=link" in rows["dp_sgd"]
    assert rows["gap_ndp"].endswith("tasks=node")
