"""DatasetRef: one record of where a graph came from, for bundles, specs, the CLI and reports."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from graphleaks.data import DatasetRef, csbm, fingerprint, load_graph_files
from graphleaks.data.ref import MAX_SYNTHETIC_CELLS, FilesRef
from graphleaks.errors import DataError, InvalidConfigError


def _write_files(d, graph):
    d.mkdir(parents=True, exist_ok=True)
    (d / "e.csv").write_text("\n".join(f"{a},{b}" for a, b in graph.edge_index.T.tolist()))
    np.save(d / "x.npy", graph.x.numpy())
    (d / "y.csv").write_text("\n".join(str(v) for v in graph.y.tolist()))
    return d / "e.csv", d / "x.npy", d / "y.csv"


def write_lastfm_root(root, graph):
    """A data root holding ``graph`` laid out as the LastFM Asia files (a data-root dataset)."""
    base = root / "LastFMAsia" / "original"
    base.mkdir(parents=True)
    (base / "lastfm_asia_edges.csv").write_text(
        "node_1,node_2\n" + "\n".join(f"{a},{b}" for a, b in graph.edge_index.T.tolist()))
    (base / "lastfm_asia_target.csv").write_text(
        "id,target\n" + "\n".join(f"{i},{c}" for i, c in enumerate(graph.y.tolist())))
    return root


REFS = {
    "bundled": DatasetRef.named("Cora"),
    "data_root": DatasetRef.named("lastfm_asia"),
    "files": DatasetRef.files("/somewhere/e.csv", "/else/x.npy", "y.csv"),
    "synthetic": DatasetRef.synthetic(num_nodes=40, num_features=4, seed=3),
    "user": DatasetRef.user("my graph"),
}


@pytest.mark.parametrize("kind", sorted(REFS))
def test_record_round_trips_through_json(kind):
    ref = REFS[kind]
    assert ref.kind == kind
    pinned = dataclasses.replace(ref, fingerprint="0123456789abcdef")
    for r in (ref, pinned):
        record = json.loads(json.dumps(r.to_dict()))
        assert DatasetRef.from_dict(record) == r
    assert "/" not in json.dumps(ref.to_dict())  # never a path, only names


def test_named_resolves_spelling_and_kind():
    assert REFS["bundled"].name == "cora" and REFS["data_root"].name == "lastfm-asia"
    with pytest.raises(InvalidConfigError, match="unknown dataset 'nope'.*cora"):
        DatasetRef.named("nope")


def test_synthetic_loads_the_recorded_graph():
    ref = DatasetRef.synthetic(num_nodes=40, num_features=4, seed=3)
    assert fingerprint(ref.load()) == fingerprint(csbm(40, num_features=4, seed=3))
    # the seed defaults to 0, and is recorded, so the graph is the same on every reload
    assert dict(DatasetRef.synthetic(num_nodes=40).csbm)["seed"] == 0


def test_data_root_dataset_loads_from_the_root(tmp_path):
    g = csbm(60, num_classes=3, num_features=1, seed=0)
    root = write_lastfm_root(tmp_path / "root", g)
    loaded = REFS["data_root"].load(data_root=root)
    assert torch.equal(loaded.edge_index, g.edge_index) and torch.equal(loaded.y, g.y)


def test_files_load_from_their_paths_or_the_files_given_again(tmp_path):
    g = csbm(40, seed=0)
    e, x, y = _write_files(tmp_path / "a", g)
    ref = DatasetRef.files(e, x, y)
    assert (ref.edges, ref.features, ref.labels) == ("e.csv", "x.npy", "y.csv")
    assert fingerprint(ref.load()) == fingerprint(load_graph_files(e, features=x, labels=y))
    stored = DatasetRef.from_dict(ref.to_dict())  # another machine: names only
    with pytest.raises(DataError, match=r"again \(--edges, --features, --labels\)"):
        stored.load()
    e2, x2, y2 = _write_files(tmp_path / "b", g)
    assert fingerprint(stored.load(edges=e2, features=x2, labels=y2)) == fingerprint(ref.load())


def test_a_graph_in_memory_cannot_be_reloaded_by_name():
    with pytest.raises(DataError, match="in memory"):
        REFS["user"].load()


def test_pinned_fingerprint_refuses_another_graph():
    ref = DatasetRef.synthetic(num_nodes=40, seed=1)
    pinned = ref.pinned(csbm(40, seed=2))
    with pytest.raises(DataError, match="not the graph this record was made from"):
        pinned.load()
    assert fingerprint(pinned.load(verify=False)) == fingerprint(ref.load())
    assert ref.pinned(ref.load()).load() is not None


@pytest.mark.parametrize(("record", "match"), [
    ([], "JSON object"),
    ({"kind": "files", "edges": "../secret.csv", "features": "x.npy"}, "bare file name"),
    ({"name": "files", "edges": "/etc/passwd", "features": "x.npy"}, "bare file name"),
    ({"kind": "files", "edges": "e.csv", "features": "sub\\x.npy"}, "bare file name"),
    ({"kind": "files", "features": "x.npy"}, "edges"),
    ({"kind": "files", "edges": "..", "features": "x.npy"}, "bare file name"),
    ({"kind": "bundled", "name": "no-such-dataset"}, "not a registered dataset"),
    ({"name": "no-such-dataset"}, "not a registered dataset"),
    ({"kind": "bundled"}, "needs a name"),
    ({"kind": "blob", "name": "cora"}, "kind must be one of"),
    ({"kind": "bundled", "name": "cora", "edges": "e.csv"}, "not allowed"),
    ({"kind": "user", "path": "/etc"}, "unknown field"),
    ({"kind": "synthetic", "csbm": {"num_nodes": "many"}}, "finite number"),
    ({"kind": "synthetic", "csbm": {"num_nodes": True}}, "finite number"),
    ({"kind": "synthetic", "csbm": {"bogus": 1}}, "unknown parameter"),
    ({"kind": "synthetic", "csbm": {"seed": -1}}, "seed"),
    ({"kind": "synthetic", "csbm": {"num_nodes": 60.5}}, "num_nodes must be an integer"),
    ({"kind": "synthetic", "csbm": [1, 2]}, "JSON object"),
    ({"kind": "synthetic", "csbm": {"num_nodes": 10_000_000, "num_features": 100_000}},
     "over the limit"),
    ({"kind": "user", "name": 3}, "non-empty string"),
    ({"kind": "user", "fingerprint": "../../x"}, "16 hex digits"),
])
def test_hostile_records_are_refused_by_field(record, match):
    with pytest.raises(DataError, match=match):
        DatasetRef.from_dict(record)


def test_the_synthetic_size_limit_is_checked_before_allocating():
    n = MAX_SYNTHETIC_CELLS // 100 + 1
    with pytest.raises(DataError, match="over the limit"):
        DatasetRef.synthetic(num_nodes=n, num_features=100)


@pytest.mark.parametrize(("record", "expected"), [
    ({"name": "cora"}, DatasetRef.named("cora")),
    ({"name": "synthetic"}, DatasetRef.named("synthetic")),
    ({"name": "synthetic", "csbm": {"num_nodes": 50, "seed": 0}},
     DatasetRef.synthetic(num_nodes=50)),
    ({"name": "files", "edges": "e.csv", "features": "x.npy", "labels": None},
     FilesRef("e.csv", "x.npy")),
    ({}, DatasetRef.user()),
])
def test_version_one_records_are_read(record, expected):
    # bundles written before DatasetRef recorded only a name (and file names or parameters)
    assert DatasetRef.from_dict(record) == expected


def test_coerce_accepts_what_python_callers_pass(tmp_path):
    assert DatasetRef.coerce(None) == DatasetRef.user()
    assert DatasetRef.coerce({"name": "synthetic-test"}) == DatasetRef.user("synthetic-test")
    ref = DatasetRef.coerce({"name": "files", "edges": str(tmp_path / "e.csv"),
                             "features": str(tmp_path / "x.npy")})
    assert ref.edges == "e.csv" and ref.paths is not None
    assert DatasetRef.coerce(REFS["bundled"]) is REFS["bundled"]
    with pytest.raises(DataError, match="DatasetRef"):
        DatasetRef.coerce("cora")  # type: ignore[arg-type]


def test_each_kind_is_one_frozen_class_in_the_decoding_table():
    from graphleaks.data.ref import (
        CARRIED_KINDS,
        DATASET_CLASSES,
        RegisteredRef,
        SyntheticRef,
        UserRef,
    )

    assert set(REFS) == set(DATASET_CLASSES)  # the round-trip test covers every kind
    for kind, ref in REFS.items():
        assert type(ref) is DATASET_CLASSES[kind] and ref.kind == kind
        with pytest.raises(dataclasses.FrozenInstanceError):
            ref.fingerprint = "0123456789abcdef"  # type: ignore[misc]
    assert isinstance(REFS["bundled"], RegisteredRef) and isinstance(REFS["files"], FilesRef)
    assert isinstance(REFS["synthetic"], SyntheticRef) and isinstance(REFS["user"], UserRef)
    assert CARRIED_KINDS == {"files", "user"}
    with pytest.raises(TypeError):
        DatasetRef()  # type: ignore[abstract]  # the base is the union, not a record


def test_a_files_record_without_features_names_only_the_graph_file():
    ref = DatasetRef.from_dict({"kind": "files", "edges": "graph.npz"})
    assert ref == FilesRef("graph.npz") and ref.describe() == "files graph.npz"
    with pytest.raises(DataError, match=r"again \(--edges\)"):
        ref.load()
