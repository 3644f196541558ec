"""Link bundles (task "link"): round trip with split and ledger; tampering is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphleaks.bundles import MANIFEST, load_bundle, read_manifest, save_bundle
from graphleaks.data import tiny_graph
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.data.ref import DatasetRef
from graphleaks.defenses.link import get_link_defense
from graphleaks.errors import BundleError
from graphleaks.models.link_predictor import LinkPredictorSpec
from graphleaks.models.link_target import TrainedLinkTarget


@pytest.fixture(scope="module")
def graph_split():
    g = tiny_graph()
    return g, EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)


@pytest.mark.parametrize("name,params,spec", [
    ("none", {}, LinkPredictorSpec(epochs=3, embedding_dim=8)),
    ("edgerand", {"epsilon": 2.0}, LinkPredictorSpec(epochs=3, embedding_dim=8)),
    ("gap_edp", {"epsilon": 2.0, "epochs": 1, "hidden": 4}, None),
])
def test_round_trip_scores_split_and_ledger(graph_split, tmp_path, name, params, spec):
    g, split = graph_split
    t = get_link_defense(name, params).fit(g, split, spec=spec, seed=0)
    save_bundle(t, tmp_path / "b")
    manifest = read_manifest(tmp_path / "b")
    assert manifest["task"] == "link" and manifest["defense"] == name
    assert manifest["edge_split"]["counts"]["members"] == len(split.members)
    back = load_bundle(tmp_path / "b")
    assert isinstance(back, TrainedLinkTarget) and back.task == "link"
    assert back.ledger == t.ledger and back.defense == name and back.spec == t.spec
    for field in ("members", "val_edges", "val_non_edges", "held_out_edges",
                  "held_out_non_edges"):
        assert np.array_equal(getattr(back.split, field), getattr(split, field))
    assert back.split.config == split.config and back.split.seed == split.seed
    pairs = np.concatenate([split.held_out_edges, split.held_out_non_edges])
    assert np.array_equal(back.score_pairs(pairs), t.score_pairs(pairs))
    assert back.utility == t.utility


def test_registered_dataset_is_reloaded_by_name(tmp_path):
    g = DatasetRef.named("synthetic").load()
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    t = get_link_defense("none").fit(g, split, spec=LinkPredictorSpec(epochs=2), seed=0,
                                     dataset=DatasetRef.named("synthetic"))
    save_bundle(t, tmp_path / "b")
    assert not (tmp_path / "b" / "graph.safetensors").exists()
    back = load_bundle(tmp_path / "b")
    assert back.dataset.kind == "bundled" and back.graph.num_nodes == g.num_nodes


def _rewrite(path, edit):
    """Edit the manifest and re-checksum nothing: only manifest fields are changed."""
    m = json.loads((path / MANIFEST).read_text())
    edit(m)
    (path / MANIFEST).write_text(json.dumps(m))


def test_unknown_task_and_tampered_split_refused(graph_split, tmp_path):
    g, split = graph_split
    t = get_link_defense("none").fit(g, split, spec=LinkPredictorSpec(epochs=2), seed=0)
    save_bundle(t, tmp_path / "b")
    _rewrite(tmp_path / "b", lambda m: m.update(task="graph-of-doom"))
    with pytest.raises(BundleError, match="task"):
        load_bundle(tmp_path / "b")
    # members that overlap the held-out edges are refused like a user's pair lists
    from safetensors.torch import load_file, save_file

    save_bundle(t, tmp_path / "c")
    extras = load_file(str(tmp_path / "c" / "extras.safetensors"))
    extras["members"][0] = extras["held_out_edges"][0]
    save_file(extras, str(tmp_path / "c" / "extras.safetensors"))
    import hashlib

    digest = hashlib.sha256((tmp_path / "c" / "extras.safetensors").read_bytes()).hexdigest()
    _rewrite(tmp_path / "c", lambda m: m["sha256"].update({"extras.safetensors": digest}))
    with pytest.raises(BundleError, match="share a pair"):
        load_bundle(tmp_path / "c")


def test_node_bundle_still_loads(tmp_path):
    from graphleaks.audit.runner import train_target
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.models.target import TrainedTarget

    t = train_target(tiny_graph(), spec=ArchitectureSpec(epochs=2), seed=0)
    save_bundle(t, tmp_path / "n")
    assert "task" not in read_manifest(tmp_path / "n")
    assert isinstance(load_bundle(tmp_path / "n"), TrainedTarget)
