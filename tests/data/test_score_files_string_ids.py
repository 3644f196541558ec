"""``.npz`` score exports naming nodes by strings, as CSV exports already may."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from graphleaks.cli import app
from graphleaks.data.score_files import load_scores
from graphleaks.errors import DataError

POST = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
LABELS = np.array([0, 1, 0, 1])
IDS = ["user_3", "user_0", "bob", "alice"]


@pytest.mark.parametrize("dtype", [str, "S"])
def test_npz_string_node_ids_read_like_csv(tmp_path, dtype):
    np.savez(tmp_path / "s.npz", scores=POST, labels=LABELS,
             node_ids=np.asarray(IDS, dtype=dtype))
    (tmp_path / "s.csv").write_text("node_id,label,p0,p1\n" + "".join(
        f"{i},{y},{float(a)!r},{float(b)!r}\n"
        for i, y, (a, b) in zip(IDS, LABELS, POST, strict=True)))
    npz, csv = load_scores(tmp_path / "s.npz"), load_scores(tmp_path / "s.csv")
    assert npz.names == tuple(IDS) == csv.names
    assert npz.id_table == csv.id_table == {n: i for i, n in enumerate(IDS)}
    np.testing.assert_allclose(npz.scores, csv.scores)
    np.testing.assert_array_equal(npz.labels, csv.labels)


def test_npz_object_ids_are_refused_with_the_fix(tmp_path):
    # an object array is a pickle inside the .npz: never loaded, and the message says how
    np.savez(tmp_path / "s.npz", scores=POST, labels=LABELS,
             node_ids=np.asarray(IDS, dtype=object))
    with pytest.raises(DataError, match=r"numpy.asarray\(ids, dtype=str\)") as err:
        load_scores(tmp_path / "s.npz")
    assert "user_" not in str(err.value)  # the file is never quoted


def test_npz_string_scores_or_labels_stay_refused(tmp_path):
    np.savez(tmp_path / "s.npz", scores=POST, labels=np.asarray(["0", "1", "0", "1"]))
    with pytest.raises(DataError, match="not numeric"):
        load_scores(tmp_path / "s.npz")


def test_npz_duplicate_string_ids_refused(tmp_path):
    np.savez(tmp_path / "s.npz", scores=POST, labels=LABELS,
             node_ids=np.asarray(["a", "b", "a", "c"]))
    with pytest.raises(DataError, match="more than one score row"):
        load_scores(tmp_path / "s.npz")


def test_scores_audit_of_string_id_npz_equals_the_csv_one(tmp_path):
    rng = np.random.default_rng(0)
    n = 60
    ids = [f"user_{i * 7}" for i in range(n)]
    member = np.arange(n) < 30
    labels = rng.integers(0, 3, n)
    # members get a higher posterior of their label: a leak the audit must see
    logits = rng.normal(size=(n, 3))
    logits[np.arange(n), labels] += np.where(member, 3.0, 0.5)
    post = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.savez(tmp_path / "s.npz", scores=post, labels=labels, node_ids=np.asarray(ids))
    (tmp_path / "s.csv").write_text("node_id,label,p0,p1,p2\n" + "".join(
        f"{i},{y},{','.join(repr(float(v)) for v in row)}\n"
        for i, y, row in zip(ids, labels, post, strict=True)))
    (tmp_path / "m.txt").write_text("\n".join(i for i, m in zip(ids, member, strict=True)
                                              if m) + "\n")
    aucs = {}
    for kind in ("npz", "csv"):
        out = tmp_path / kind
        r = CliRunner().invoke(app, ["audit", "scores", str(tmp_path / f"s.{kind}"),
                                     "--members", str(tmp_path / "m.txt"), "--n-bootstrap",
                                     "50", "--quiet", "--out", str(out)])
        assert r.exit_code == 0, r.output
        [a] = json.loads((out / "report.json").read_text())["attacks"]
        aucs[kind] = a["metrics"]["binary"]["auc"]["value"]
        assert "user_7" in (out / "scores.csv").read_text()  # the ids come back
    assert aucs["npz"] == aucs["csv"] and aucs["npz"] > 0.7
