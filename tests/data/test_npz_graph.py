"""The toy ``.npz`` graph format: one reader module and one GRAPH_READERS entry."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from graphleaks.cli import app
from graphleaks.data import DatasetRef, csbm, fingerprint
from graphleaks.data.graph_readers import GRAPH_READERS
from graphleaks.data.npz_graph import read_npz_graph
from graphleaks.errors import DataError


def _save(path, **arrays):
    np.savez(path, **arrays)
    return path


@pytest.fixture
def npz(tmp_path):
    g = csbm(40, num_classes=2, num_features=4, seed=1)
    return g, _save(tmp_path / "graph.npz", edge_index=g.edge_index.numpy(), x=g.x.numpy(),
                    y=g.y.numpy())


def test_the_table_picks_the_npz_reader_by_suffix(npz):
    g, path = npz
    assert GRAPH_READERS.reader(path).read is read_npz_graph
    ref = DatasetRef.files(path)
    assert ref.to_dict() == {"kind": "files", "name": "files", "edges": "graph.npz",
                             "features": None, "labels": None}
    assert fingerprint(ref.load()) == fingerprint(g)
    stored = DatasetRef.from_dict(ref.to_dict())
    assert "pass the same files again (--edges)" in stored.reload_hint()


def test_train_accepts_an_npz_graph_alone_and_refuses_companions(npz, tmp_path):
    _, path = npz
    runner = CliRunner()
    r = runner.invoke(app, ["train", "--out", str(tmp_path / "b"), "--epochs", "2",
                            "--edges", str(path)])
    assert r.exit_code == 0, r.output
    record = json.loads((tmp_path / "b" / "manifest.json").read_text())["dataset"]
    assert record["edges"] == "graph.npz" and record["features"] is None
    np.save(tmp_path / "x.npy", np.zeros((40, 4), dtype=np.float32))
    r = runner.invoke(app, ["train", "--out", str(tmp_path / "c"), "--edges", str(path),
                            "--features", str(tmp_path / "x.npy")])
    assert r.exit_code == 2 and "without --features" in r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp_path / "c").exists()


def test_an_edge_list_still_needs_its_features(tmp_path):
    (tmp_path / "e.csv").write_text("0,1\n1,2\n")
    with pytest.raises(DataError, match="--edges and --features must be given together"):
        DatasetRef.files(tmp_path / "e.csv").load()


def _raw(path, content):
    path.write_bytes(content)
    return path


def _forged_member(path, name, header_shape, body):
    """An archive whose member's .npy header claims ``header_shape`` over ``body`` bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": header_shape})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(name, buf.getvalue() + body)
    return path


@pytest.mark.parametrize(("build", "match"), [
    (lambda p: _save(p, x=np.zeros((3, 2))), "needs arrays 'edge_index' and 'x'"),
    (lambda p: _save(p, edge_index=np.zeros((3, 2), dtype=np.int64), x=np.zeros((3, 2))),
     "edge_index must be an integer array of 2 rows"),
    (lambda p: _save(p, edge_index=np.array([[0], [5]]), x=np.zeros((3, 2))),
     "one row per node id"),
    (lambda p: _save(p, edge_index=np.array([[0], [1]]), x=np.array(["a", "b"])),
     "non-numeric array"),
    (lambda p: _save(p, edge_index=np.array([[0], [1]]), x=np.zeros((2, 2)),
                     y=np.array([0.5, 1.0])), "integer class labels"),
    (lambda p: _forged_member(p, "x.npy", (10**12, 10**6), b"\0" * 16),
     "header does not match"),
    (lambda p: _raw(p, b"PK\x03\x04 not really a zip"), "not a valid .npz"),
])
def test_bad_archives_are_one_line_refusals(tmp_path, build, match):
    path = build(tmp_path / "bad.npz")
    with pytest.raises(DataError, match=match) as exc:
        read_npz_graph(path)
    assert "\n" not in str(exc.value)


def test_the_graph_is_made_undirected(tmp_path):
    path = _save(tmp_path / "g.npz", edge_index=np.array([[0, 1], [1, 2]]),
                 x=np.eye(3, dtype=np.float32))
    g = read_npz_graph(path)
    assert g.edge_index.shape[1] == 4 and g.y is None
    assert torch.equal(g.x, torch.eye(3))
