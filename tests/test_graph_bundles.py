"""Graph-classification bundles (task ``graph``): round trip, carried sets, refusals."""

from __future__ import annotations

import json

import pytest
import torch

from graphleaks.bundles import load_bundle, save_bundle
from graphleaks.data.graphsets import GraphSetRef
from graphleaks.defenses.graph_base import train_graph_target
from graphleaks.errors import BundleError
from graphleaks.graph_bundles import bundle_task, load_graph_bundle
from graphleaks.models.graph_classifier import GraphClassifierSpec

SPEC = GraphClassifierSpec(hidden=8, epochs=2, batch_size=8)


@pytest.fixture(scope="module")
def target():  # noqa: ANN201
    ref = GraphSetRef.motif(num_graphs=30, seed=1)
    return train_graph_target(ref.load(), defense="dp_sgd",
                              defense_params={"epsilon": 2.0, "delta": 1e-3}, spec=SPEC,
                              dataset=ref, seed=0)


def _same(a, b) -> None:  # noqa: ANN001
    assert torch.equal(a.logits(), b.logits())
    assert a.ledger == b.ledger and a.split == b.split and a.utility == b.utility
    assert a.spec == b.spec and a.defense == b.defense and a.seed == b.seed
    assert a.defense_config == b.defense_config and a.training == b.training


def test_round_trip_through_the_dataset_record(target, tmp_path) -> None:
    path = save_bundle(target, tmp_path / "b")
    assert bundle_task(path) == "graph"
    assert not (path / "graph.safetensors").exists()  # the motif set is redrawn from its seed
    loaded = load_graph_bundle(path)
    _same(target, loaded)
    assert loaded.dataset == target.dataset


def test_a_set_built_in_memory_travels_inside_the_bundle(target, tmp_path) -> None:
    import dataclasses

    mem = dataclasses.replace(target, dataset=None)
    path = save_bundle(mem, tmp_path / "b")
    assert (path / "graph.safetensors").exists()
    loaded = load_graph_bundle(path)
    _same(mem, loaded)
    assert loaded.graphs.fingerprint() == target.graphs.fingerprint()


def test_node_and_graph_loaders_refuse_each_others_bundles(target, tmp_path, graph) -> None:  # noqa: ANN001
    from graphleaks.audit.runner import train_target
    from graphleaks.models.gnn import ArchitectureSpec

    gpath = save_bundle(target, tmp_path / "g")
    with pytest.raises(BundleError, match="load_graph_bundle"):
        load_bundle(gpath)
    node = train_target(graph, spec=ArchitectureSpec(epochs=2), seed=0)
    npath = save_bundle(node, tmp_path / "n")
    assert bundle_task(npath) == "node"
    assert load_bundle(npath).utility == node.utility  # old-style bundles load as before
    with pytest.raises(BundleError, match="node-classification"):
        load_graph_bundle(npath)


def _rewrite(path, name: str, text: str) -> None:  # noqa: ANN001
    import hashlib

    (path / name).write_text(text)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["sha256"][name] = hashlib.sha256(text.encode()).hexdigest()
    (path / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(("name", "change"), [
    ("split.json", lambda d: {**d, "members": [0, 99]}),
    ("split.json", lambda d: {**d, "non_members": d["members"]}),
    ("manifest.json", lambda d: {**d, "architecture": {**d["architecture"], "hidden": 9}}),
    ("manifest.json", lambda d: {**d, "architecture": {**d["architecture"], "evil": 1}}),
    ("manifest.json", lambda d: {**d, "class_names": ["a"]}),
    ("manifest.json", lambda d: {**d, "defense": "edgerand"}),
    ("manifest.json", lambda d: {**d, "fingerprint": "0" * 16}),
])
def test_a_tampered_bundle_is_refused(target, tmp_path, name, change) -> None:  # noqa: ANN001
    path = save_bundle(target, tmp_path / "b")
    record = json.loads((path / name).read_text())
    if name == "manifest.json":
        (path / name).write_text(json.dumps(change(record)))
    else:
        _rewrite(path, name, json.dumps(change(record)))
    with pytest.raises(BundleError):
        load_graph_bundle(path)


def test_a_changed_weights_file_is_refused(target, tmp_path) -> None:
    path = save_bundle(target, tmp_path / "b")
    (path / "weights.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(BundleError, match="checksum"):
        load_graph_bundle(path)


def test_carried_graphs_are_checked_like_input(target, tmp_path) -> None:
    import dataclasses
    import hashlib

    from safetensors.torch import load_file, save_file

    path = save_bundle(dataclasses.replace(target, dataset=None), tmp_path / "b")
    tensors = load_file(str(path / "graph.safetensors"))
    tensors["edge_index"] = tensors["edge_index"] + 1000  # out of every graph
    save_file(tensors, str(path / "graph.safetensors"))
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["sha256"]["graph.safetensors"] = hashlib.sha256(
        (path / "graph.safetensors").read_bytes()).hexdigest()
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="outside the graph"):
        load_graph_bundle(path)


def test_a_carried_molecule_set_keeps_its_smiles(target, tmp_path) -> None:
    import dataclasses

    smiles = [f"C{'C' * (i % 5)}O" for i in range(len(target.graphs))]
    mol = dataclasses.replace(target, dataset=None,
                              graphs=dataclasses.replace(target.graphs, smiles=tuple(smiles)))
    path = save_bundle(mol, tmp_path / "b")
    assert json.loads((path / "smiles.json").read_text()) == smiles
    assert load_graph_bundle(path).graphs.smiles == tuple(smiles)
    # the list is checksummed and checked like user input
    (path / "smiles.json").write_text(json.dumps(smiles[:-1]))
    with pytest.raises(BundleError, match="sha256|checksum"):
        load_graph_bundle(path)
