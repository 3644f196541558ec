import json
import pickle

import pytest
import torch

from graphleaks.audit.runner import run_audit
from graphleaks.bundles import load_bundle, save_bundle
from graphleaks.errors import BundleError, DataError


def test_round_trip_reproduces_outputs(trained_target, small_graph, tmp_path):
    path = save_bundle(trained_target, tmp_path / "b")
    loaded = load_bundle(path, graph=small_graph)
    assert torch.allclose(loaded.posteriors(), trained_target.posteriors())
    assert loaded.ledger == trained_target.ledger
    a = run_audit(trained_target, ["confidence_mia"], seed=1,
                  n_bootstrap=50).to_dict(include_timings=False)
    b = run_audit(loaded, ["confidence_mia"], seed=1, n_bootstrap=50).to_dict(include_timings=False)
    a.pop("versions"), b.pop("versions")
    assert a == b


def test_existing_path_refused(trained_target, tmp_path):
    save_bundle(trained_target, tmp_path / "b")
    with pytest.raises(BundleError, match="already exists"):
        save_bundle(trained_target, tmp_path / "b")


class _Payload:
    def __reduce__(self):  # noqa: D105 - runs only if someone unpickles it
        import pathlib

        return (pathlib.Path.write_text, (pathlib.Path(self.marker), "pwned"))


def test_malicious_pickle_refused_and_never_runs(trained_target, small_graph, tmp_path):
    path = save_bundle(trained_target, tmp_path / "b")
    marker = tmp_path / "payload-ran"
    payload = _Payload()
    payload.marker = str(marker)
    (path / "weights.safetensors").write_bytes(pickle.dumps(payload))
    with pytest.raises(BundleError):
        load_bundle(path, graph=small_graph)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["sha256"].pop("weights.safetensors")
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="checksum"):  # a checksum is required
        load_bundle(path, graph=small_graph)
    # a forged but matching checksum: the pickle is still refused, never run
    import hashlib

    digest = hashlib.sha256((path / "weights.safetensors").read_bytes()).hexdigest()
    manifest["sha256"]["weights.safetensors"] = digest
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="not a valid safetensors"):
        load_bundle(path, graph=small_graph)
    assert not marker.exists()


def test_truncated_weights(trained_target, small_graph, tmp_path):
    path = save_bundle(trained_target, tmp_path / "b")
    w = path / "weights.safetensors"
    w.write_bytes(w.read_bytes()[:100])
    with pytest.raises(BundleError, match="checksum"):
        load_bundle(path, graph=small_graph)


def test_different_dataset_refused(trained_target, small_graph, tmp_path):
    path = save_bundle(trained_target, tmp_path / "b")
    other = small_graph.clone()
    other.x = other.x + 1.0
    with pytest.raises(BundleError, match="different dataset"):
        load_bundle(path, graph=other)
    narrow = small_graph.clone()
    narrow.x = narrow.x[:, :5]
    with pytest.raises(DataError, match="5 columns"):
        load_bundle(path, graph=narrow)


def test_not_a_bundle(tmp_path):
    with pytest.raises(BundleError, match="does not exist"):
        load_bundle(tmp_path / "missing")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "manifest.json").write_text("{broken")
    with pytest.raises(BundleError, match="not valid JSON"):
        load_bundle(tmp_path / "d")


def test_bundle_from_user_files_carries_its_graph(tmp_path):
    import numpy as np

    from graphleaks.audit.runner import train_target
    from graphleaks.data import load_graph_files
    from graphleaks.data.synthetic import tiny_graph
    from graphleaks.models.gnn import ArchitectureSpec

    g = tiny_graph(0)
    src = tmp_path / "src"
    src.mkdir()
    (src / "e.csv").write_text("s,t\n" + "\n".join(f"{a},{b}" for a, b in g.edge_index.T.tolist()))
    np.save(src / "x.npy", g.x.numpy())
    (src / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    graph = load_graph_files(src / "e.csv", features=src / "x.npy", labels=src / "y.csv")
    ds = {"name": "files", "edges": str(src / "e.csv"), "features": str(src / "x.npy"),
          "labels": str(src / "y.csv")}
    t = train_target(graph, spec=ArchitectureSpec(epochs=5), dataset=ds, seed=0)
    path = save_bundle(t, tmp_path / "b")
    for f in src.iterdir():  # another machine: the user's files are not there
        f.unlink()
    loaded = load_bundle(path)
    assert torch.allclose(loaded.posteriors(), t.posteriors())


# --------------------------------------------------------------- every kind of graph reloads


def write_lastfm_root(root, graph):
    """A data root holding ``graph`` laid out as the LastFM Asia files (a data-root dataset)."""
    base = root / "LastFMAsia" / "original"
    base.mkdir(parents=True)
    (base / "lastfm_asia_edges.csv").write_text(
        "node_1,node_2\n" + "\n".join(f"{a},{b}" for a, b in graph.edge_index.T.tolist()))
    (base / "lastfm_asia_target.csv").write_text(
        "id,target\n" + "\n".join(f"{i},{c}" for i, c in enumerate(graph.y.tolist())))
    return root


def _spec_bundle(tmp_path, target_table, monkeypatch):
    from graphleaks.audit.spec import build_target, parse_spec

    monkeypatch.setenv("GRAPHLEAKS_CACHE", str(tmp_path / "cache"))
    table = {**target_table, "architecture": {"hidden": [8], "epochs": 3}}
    spec = parse_spec({"target": table, "attacks": {"confidence_mia": {}}})
    target = build_target(spec.target, seed=0)
    return target, save_bundle(target, tmp_path / "b")


def test_spec_trained_bundle_on_a_synthetic_graph_reloads(tmp_path, monkeypatch):
    # Regression (issue 12): the manifest recorded the csbm parameters, but the bundle reloaded
    # the registered 500-node "synthetic" graph instead and blamed the user's graph.
    target, path = _spec_bundle(
        tmp_path, {"dataset": "synthetic", "synthetic": {"num_nodes": 90, "num_features": 6}},
        monkeypatch)
    assert json.loads((path / "manifest.json").read_text())["dataset"]["kind"] == "synthetic"
    assert not (path / "graph.safetensors").exists()  # rebuilt from the record, not carried
    loaded = load_bundle(path)
    assert loaded.graph.num_nodes == 90 and loaded.dataset == target.dataset
    assert torch.allclose(loaded.posteriors(), target.posteriors())


@pytest.mark.parametrize("kind", ["bundled", "data_root"])
def test_spec_trained_bundle_on_a_named_dataset_reloads(kind, tmp_path, monkeypatch):
    from graphleaks.data import csbm

    if kind == "bundled":
        table, root = {"dataset": "synthetic"}, None
    else:
        root = write_lastfm_root(tmp_path / "root",
                                 csbm(80, num_classes=3, num_features=1, seed=0))
        table = {"dataset": "lastfm-asia", "data_root": str(root)}
    target, path = _spec_bundle(tmp_path, table, monkeypatch)
    assert target.dataset.kind == kind
    loaded = load_bundle(path, data_root=root)
    assert loaded.dataset == target.dataset
    assert torch.allclose(loaded.posteriors(), target.posteriors())


def test_bundle_of_a_graph_in_memory_carries_it(tmp_path):
    from graphleaks.audit.runner import train_target
    from graphleaks.data import csbm
    from graphleaks.models.gnn import ArchitectureSpec

    g = csbm(60, seed=4)
    t = train_target(g, spec=ArchitectureSpec(hidden=(8,), epochs=3), seed=0)
    assert t.dataset.kind == "user"
    loaded = load_bundle(save_bundle(t, tmp_path / "b"))
    assert torch.allclose(loaded.posteriors(), t.posteriors())


def test_a_bundle_that_does_not_carry_its_files_names_the_options(tmp_path):
    from graphleaks.audit.runner import train_target
    from graphleaks.data import DatasetRef, csbm
    from graphleaks.models.gnn import ArchitectureSpec

    ref = DatasetRef.files(tmp_path / "e.csv", tmp_path / "x.npy")
    t = train_target(csbm(60, seed=4), spec=ArchitectureSpec(hidden=(8,), epochs=3), seed=0,
                     dataset=ref)
    path = save_bundle(t, tmp_path / "b")
    assert json.loads((path / "manifest.json").read_text())["dataset"]["edges"] == "e.csv"
    manifest = json.loads((path / "manifest.json").read_text())
    del manifest["files"]["graph"]
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="never follows file paths.*--edges, --features"):
        load_bundle(path)
