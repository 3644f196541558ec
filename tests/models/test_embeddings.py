"""Tests of the DeepWalk/node2vec embedders and the embedding file readers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.embeddings import (
    DeepWalk,
    EmbedderConfig,
    Node2Vec,
    NodeEmbeddings,
    load_embeddings,
)

SMALL = EmbedderConfig(dimensions=16, walk_length=20, walks_per_node=10, window=5)


def _sbm(seed: int, n: int = 60) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Two strong communities of n/2 nodes: p_in = 0.3, p_out = 0.01."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    prob = np.where(y[:, None] == y[None, :], 0.3, 0.01)
    upper = np.triu(rng.random((n, n)) < prob, 1)
    adj = upper | upper.T
    return np.array(np.nonzero(adj), dtype=np.int64), y


@pytest.fixture(scope="module")
def sbm() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    return _sbm(0)


@pytest.fixture(scope="module")
def deepwalk_emb(sbm: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]) -> NodeEmbeddings:
    return DeepWalk(SMALL).fit(sbm[0], 60, seed=0)


def test_deepwalk_separates_communities(
    sbm: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]], deepwalk_emb: NodeEmbeddings
) -> None:
    assert deepwalk_emb.vectors.shape == (60, 16)
    assert deepwalk_emb.vectors.dtype == np.float32
    assert (np.abs(deepwalk_emb.vectors).sum(axis=1) > 0).all()
    acc = cross_val_score(LogisticRegression(), deepwalk_emb.vectors, sbm[1], cv=5).mean()
    assert acc > 0.9


def test_node2vec_separates_communities(
    sbm: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
) -> None:
    cfg = EmbedderConfig(
        dimensions=16, walk_length=20, walks_per_node=10, window=5, p=0.5, q=2.0, negative=0
    )
    emb = Node2Vec(cfg).fit(sbm[0], 60, seed=1)
    assert emb.method == "node2vec"
    assert emb.config["hs"] == 1 and emb.config["p"] == 0.5
    acc = cross_val_score(LogisticRegression(), emb.vectors, sbm[1], cv=5).mean()
    assert acc > 0.9


def test_deterministic_in_process(
    sbm: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]], deepwalk_emb: NodeEmbeddings
) -> None:
    again = DeepWalk(SMALL).fit(sbm[0], 60, seed=0)
    assert np.array_equal(again.vectors, deepwalk_emb.vectors)
    other = DeepWalk(SMALL).fit(sbm[0], 60, seed=1)
    assert not np.array_equal(other.vectors, deepwalk_emb.vectors)
    assert deepwalk_emb.seed == 0
    assert deepwalk_emb.config["workers"] == 1 and deepwalk_emb.config["deterministic"]


@pytest.mark.slow  # a fresh interpreter spends seconds importing torch and gensim
def test_deterministic_across_processes(
    sbm: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    deepwalk_emb: NodeEmbeddings,
    tmp_path: Path,
) -> None:
    edges, out = tmp_path / "edges.npy", tmp_path / "vectors.npy"
    np.save(edges, sbm[0])
    fields = ", ".join(f"{k}={v!r}" for k, v in SMALL.__dict__.items())
    # The child registers a bare ``graphleaks.models`` package so that importing the embedder
    # skips the package ``__init__`` (torch_geometric takes seconds to import).
    code = (
        "import sys, types, numpy as np\n"
        "import graphleaks\n"
        "pkg = types.ModuleType('graphleaks.models')\n"
        "pkg.__path__ = [p + '/models' for p in graphleaks.__path__]\n"
        "sys.modules['graphleaks.models'] = pkg\n"
        "from graphleaks.models.embeddings import DeepWalk, EmbedderConfig\n"
        f"cfg = EmbedderConfig({fields})\n"
        "ei = np.load(sys.argv[1], allow_pickle=False)\n"
        "DeepWalk(cfg).fit(ei, 60, seed=0).save_npy(sys.argv[2])\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONHASHSEED="12345")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    subprocess.run([sys.executable, "-c", code, str(edges), str(out)], check=True, env=env)
    assert np.array_equal(np.load(out, allow_pickle=False), deepwalk_emb.vectors)


def test_deepwalk_forces_uniform_walks(
    sbm: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
) -> None:
    cfg = EmbedderConfig(dimensions=4, walk_length=5, walks_per_node=1, window=2, p=0.5)
    with pytest.warns(UserWarning, match="ignores p"):
        emb = DeepWalk(cfg).fit(sbm[0], 60, seed=0)
    assert emb.config["p"] == 1.0 and emb.config["q"] == 1.0


def test_deterministic_forces_one_worker(
    sbm: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
) -> None:
    cfg = EmbedderConfig(dimensions=4, walk_length=5, walks_per_node=1, window=2, workers=2)
    assert DeepWalk(cfg).fit(sbm[0], 60, seed=0).config["workers"] == 1


@pytest.mark.parametrize(
    "overrides",
    [
        {"dimensions": 0},
        {"walk_length": 1},
        {"walk_length": 10_001},
        {"window": 0},
        {"negative": -1},
        {"p": 0.0},
        {"epochs": 1.5},
        {"deterministic": 1},
    ],
)
def test_config_validation(
    sbm: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]], overrides: dict[str, object]
) -> None:
    cfg = EmbedderConfig(**overrides)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError):
        Node2Vec(cfg).fit(sbm[0], 60, seed=0)


def test_save_load_roundtrip(deepwalk_emb: NodeEmbeddings, tmp_path: Path) -> None:
    npy = tmp_path / "emb.npy"
    deepwalk_emb.save_npy(npy)
    ids, vectors = load_embeddings(npy)
    assert np.array_equal(ids, np.arange(60)) and np.array_equal(vectors, deepwalk_emb.vectors)

    emd = tmp_path / "emb.emd"
    deepwalk_emb.save_word2vec_text(emd)
    assert emd.read_text().splitlines()[0] == "60 16"
    ids, vectors = load_embeddings(emd)
    assert np.array_equal(ids, np.arange(60)) and np.array_equal(vectors, deepwalk_emb.vectors)


def test_load_text_without_header_and_unordered_ids(tmp_path: Path) -> None:
    path = tmp_path / "x.emd"
    path.write_text("2 0.5 1.5\n0 -1 2e-3\n")
    ids, vectors = load_embeddings(path)
    assert ids.tolist() == [2, 0]
    assert vectors.tolist() == [[0.5, 1.5], [-1.0, np.float32(2e-3)]]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("2 2\n0 0.1 0.2\n1 0.3 abc\n", r"x\.emd:3: non-numeric value in field 3"),
        ("3 2\n0 0.1 0.2\n1 0.3 0.4\n", "row count differs"),
        ("2 2\n0 0.1 0.2\n1 0.3\n", r"x\.emd:3: expected a node id and as many values"),
        ("2 2\n0 0.1 0.2\nb 0.3 0.4\n", "node id is not"),
        ("2 2\n0 0.1 0.2\n0 0.3 0.4\n", r"x\.emd:3: a node id appears more than once"),
        ("1 2\n0 nan 0.2\n", "non-finite"),
        ("", "empty"),
    ],
)
def test_bad_text_files(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "x.emd"
    path.write_text(content)
    with pytest.raises(DataError, match=match) as info:
        load_embeddings(path)
    assert "\n" not in str(info.value)


def test_bad_npy_files(tmp_path: Path) -> None:
    pickled = tmp_path / "obj.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="obj.npy"):
        load_embeddings(pickled)
    flat = tmp_path / "flat.npy"
    np.save(flat, np.zeros(3))
    with pytest.raises(DataError, match="2-D"):
        load_embeddings(flat)
    with pytest.raises(DataError, match="not found"):
        load_embeddings(tmp_path / "missing.npy")


def test_binary_word2vec_files_load_like_text_ones(tmp_path):
    import numpy as np
    from gensim.models import KeyedVectors

    from graphleaks.models.embeddings import load_embeddings

    kv = KeyedVectors(vector_size=4)
    vecs = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    kv.add_vectors(["5", "0", "2"], vecs)
    kv.save_word2vec_format(str(tmp_path / "e.bin"), binary=True)
    kv.save_word2vec_format(str(tmp_path / "e.txt"), binary=False)
    ids, got = load_embeddings(tmp_path / "e.bin")
    assert ids.tolist() == [5, 0, 2] and np.allclose(got, vecs)
    ids_t, got_t = load_embeddings(tmp_path / "e.txt")
    assert ids_t.tolist() == ids.tolist() and np.allclose(got_t, got, atol=1e-5)


@pytest.mark.parametrize(
    ("counts", "min_count", "negative", "sample"),
    [
        ([5, 9, 5, 1, 9, 3, 700, 5, 2, 9], 0, 5, 1e-3),  # ties; one node down-sampled
        ([5, 9, 5, 1, 9, 3, 700, 5, 2, 9], 3, 5, 1e-3),  # min_count drops some nodes
        ([4, 4, 4, 8, 1, 2], 0, 0, 0.0),  # hierarchical softmax, no down-sampling
        ([30, 1, 1, 2], 0, 2, 2.0),  # sample >= 1: gensim's absolute-count shorthand
    ],
)
def test_vectorised_vocab_matches_gensim(
    counts: list[int], min_count: int, negative: int, sample: float
) -> None:
    """The numpy vocabulary set-up leaves the model exactly as build_vocab_from_freq does."""
    from gensim.models import Word2Vec

    from graphleaks.models.embeddings import _build_vocab

    def fresh() -> Word2Vec:
        return Word2Vec(vector_size=8, min_count=min_count, sg=1, hs=int(negative == 0),
                        negative=negative, sample=sample, seed=7, workers=1)

    ref, ours = fresh(), fresh()
    ref.build_vocab_from_freq({str(i): c for i, c in enumerate(counts)}, corpus_count=3)
    _build_vocab(ours, np.asarray(counts, dtype=np.int64), corpus_count=3)
    assert ours.wv.index_to_key == ref.wv.index_to_key
    assert ours.wv.key_to_index == ref.wv.key_to_index
    assert ours.corpus_count == ref.corpus_count
    for attr in ref.wv.expandos:
        got, want = ours.wv.expandos[attr], ref.wv.expandos[attr]
        assert got.dtype == want.dtype, attr
        if got.dtype == object:  # Huffman codes and points: one array per word
            assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True)), attr
        else:
            np.testing.assert_array_equal(got, want, err_msg=attr)
    np.testing.assert_array_equal(ours.wv.vectors, ref.wv.vectors)
    if negative:
        assert ours.cum_table.dtype == ref.cum_table.dtype
        np.testing.assert_array_equal(ours.cum_table, ref.cum_table)
    else:
        np.testing.assert_array_equal(ours.syn1, ref.syn1)
