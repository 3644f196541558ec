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
