"""Embedding audit: leak verdicts against the majority baseline, user files, bad input."""

import json

import numpy as np
import pytest

from graphleaks.audit.embedding_audit import (
    align_attributes,
    audit_embedding_files,
    audit_embeddings,
    load_attribute_csv,
    write_embedding_report,
)
from graphleaks.data.synthetic import csbm
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.embeddings import DeepWalk, EmbedderConfig, NodeEmbeddings


@pytest.fixture(scope="module")
def community_embeddings():
    g = csbm(120, num_classes=2, num_features=4, avg_degree=5, homophily=0.98, seed=0)
    cfg = EmbedderConfig(dimensions=16, walk_length=20, walks_per_node=10, window=5, epochs=2)
    return DeepWalk(cfg).fit(g.edge_index, 120, seed=0), g.y.numpy()


def test_deepwalk_embeddings_reveal_community(community_embeddings):
    emb, y = community_embeddings
    r = audit_embeddings(emb.vectors, y, aux_frac=0.5, seed=0, n_bootstrap=300)
    assert r.leaks
    for res in r.results:
        m = res.metrics
        assert res.verdict == "leak" and m.leaks
        assert m.gain_over_baseline.lo > 0
        assert m.baseline_from_train
    assert r.num_known == 60 and r.num_classes == 2


def test_permuted_attribute_reads_no_leak(community_embeddings):
    emb, y = community_embeddings
    perm = np.random.default_rng(0).permutation(y)
    r = audit_embeddings(emb.vectors, perm, aux_frac=0.5, seed=0, n_bootstrap=300)
    assert not r.leaks
    for res in r.results:
        m = res.metrics
        assert res.verdict == "no leak" and not m.leaks
        assert abs(m.f1_micro.value - m.majority_baseline) < 0.2


def test_same_seed_same_report(community_embeddings):
    emb, y = community_embeddings
    a = audit_embeddings(emb.vectors, y, classifiers=("rf",), seed=4, n_bootstrap=50)
    b = audit_embeddings(emb.vectors, y, classifiers=("rf",), seed=4, n_bootstrap=50)
    assert a.results == b.results


def _write_files(tmp_path, emb: NodeEmbeddings, y):
    emb_path = tmp_path / "emb.txt"
    emb.save_word2vec_text(emb_path)
    order = np.random.default_rng(1).permutation(len(y))  # row order differs from the file's
    attr = tmp_path / "labels.csv"
    attr.write_text("node_id,attribute\n" + "".join(f"{i},{y[i]}\n" for i in order))
    return emb_path, attr


def test_user_files_and_report(tmp_path, community_embeddings):
    emb, y = community_embeddings
    emb_path, attr = _write_files(tmp_path, emb, y)
    r = audit_embedding_files(emb_path, attr, classifiers=("rf",), aux_frac=0.5, seed=0,
                              n_bootstrap=200)
    direct = audit_embeddings(emb.vectors, y, classifiers=("rf",), aux_frac=0.5, seed=0,
                              n_bootstrap=200)
    assert r.results == direct.results and r.leaks
    js, md = write_embedding_report(r, tmp_path / "out")
    data = json.loads(js.read_text())
    assert data["kind"] == "graphleaks-embedding-audit" and data["leaks"] is True
    assert "| rf |" in md.read_text() and "**leak**" in md.read_text()
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]


def test_load_attribute_csv_without_header(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text("2,1\n0,0\n1,1\n")
    ids, vals = load_attribute_csv(p)
    assert ids.tolist() == [2, 0, 1] and vals.tolist() == [1, 0, 1]
    assert align_attributes(np.array([0, 1, 2]), ids, vals).tolist() == [0, 1, 1]


@pytest.mark.parametrize("rows, match", [
    ("node_id,attribute\n0,0\n1,1\n", "do not match"),          # node 2 missing
    ("0,0\n1,1\n2,1\n3,0\n", "do not match"),                    # extra node
    ("0,0\n1,male\n2,1\n", "non-numeric"),
    ("0,1\n1,1\n2,1\n", "single class"),
    ("0,0\n0,1\n2,1\n", "more than once"),
    ("0,0,5\n1,1\n2,1\n", "fields"),
])
def test_bad_attribute_files(tmp_path, rows, match):
    emb = NodeEmbeddings(vectors=np.eye(3, dtype=np.float32), method="deepwalk", config={},
                         seed=0)
    emb_path = tmp_path / "e.txt"
    emb.save_word2vec_text(emb_path)
    attr = tmp_path / "a.csv"
    attr.write_text(rows)
    with pytest.raises(DataError, match=match) as exc:
        audit_embedding_files(emb_path, attr, seed=0, n_bootstrap=20)
    assert "\n" not in str(exc.value)


def test_non_numeric_embedding_file(tmp_path):
    emb_path = tmp_path / "e.txt"
    emb_path.write_text("2 2\n0 0.1 abc\n1 0.2 0.3\n")
    attr = tmp_path / "a.csv"
    attr.write_text("0,0\n1,1\n")
    with pytest.raises(DataError, match="non-numeric"):
        audit_embedding_files(emb_path, attr, seed=0)


def test_bad_arguments():
    x, y = np.zeros((10, 2)), np.arange(10) % 2
    with pytest.raises(DataError, match="single class"):
        audit_embeddings(x, np.zeros(10), seed=0)
    with pytest.raises(DataError):
        audit_embeddings(x, y[:5], seed=0)
    with pytest.raises(DataError):
        audit_embeddings(np.full((10, 2), np.nan), y, seed=0)
    with pytest.raises(InvalidConfigError):
        audit_embeddings(x, y, classifiers=("knn",), seed=0)
    with pytest.raises(InvalidConfigError):
        audit_embeddings(x, y, aux_frac=1.0, seed=0)
