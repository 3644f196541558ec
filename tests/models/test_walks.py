"""Tests of the vectorised DeepWalk/node2vec random-walk engine."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
import torch

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.walks import (
    CSRGraph,
    WalkConfig,
    generate_walks,
    node2vec_walks,
    uniform_walks,
)


def _undirected(pairs: list[tuple[int, int]]) -> npt.NDArray[np.int64]:
    ei = np.array(pairs, dtype=np.int64).T
    return np.concatenate([ei, ei[::-1]], axis=1)


def _random_graph(n: int, m: int, seed: int) -> npt.NDArray[np.int64]:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    return _undirected(list(zip(src[keep].tolist(), dst[keep].tolist(), strict=True)))


@pytest.fixture
def graph() -> CSRGraph:
    """A small random graph plus two isolated nodes (ids 40 and 41)."""
    return CSRGraph.from_edge_index(_random_graph(40, 90, seed=3), 42)


def _assert_on_edges(graph: CSRGraph, walks: npt.NDArray[np.integer]) -> None:
    a, b = walks[:, :-1].ravel(), walks[:, 1:].ravel()
    on_edge = graph.has_edges(a, b)
    stay_on_sink = (a == b) & (graph.degree[a] == 0)
    assert (on_edge | stay_on_sink).all()


def test_csr_from_edge_index_sorts_and_dedups() -> None:
    ei = torch.tensor([[2, 0, 0, 1, 0], [0, 2, 1, 0, 2]])
    g = CSRGraph.from_edge_index(ei, 4)
    assert g.indptr.tolist() == [0, 2, 3, 4, 4]
    assert g.indices.tolist() == [1, 2, 0, 0]
    assert g.indices.dtype == np.int32
    assert g.degree.tolist() == [2, 1, 1, 0]
    assert g.has_edges(np.array([0, 0, 3, 1]), np.array([2, 3, 0, 0])).tolist() == [
        True,
        False,
        False,
        True,
    ]
    und = CSRGraph.from_edge_index(np.array([[0], [1]]), 2, to_undirected=True)
    assert und.indices.tolist() == [1, 0]


@pytest.mark.parametrize(
    ("edge_index", "num_nodes"),
    [
        (np.zeros((3, 2), dtype=np.int64), 3),
        (np.array([[0, 1], [1, 5]]), 3),
        (np.array([[0, -1], [1, 0]]), 3),
        (np.array([[0.0], [1.0]]), 3),
        (np.array([[0], [1]]), 0),
    ],
)
def test_csr_rejects_bad_input(edge_index: npt.NDArray[np.generic], num_nodes: int) -> None:
    with pytest.raises(DataError):
        CSRGraph.from_edge_index(edge_index, num_nodes)


@pytest.mark.parametrize(("p", "q"), [(1.0, 1.0), (0.25, 4.0), (4.0, 0.25), (0.5, 1.0)])
def test_walks_stay_on_edges(graph: CSRGraph, p: float, q: float) -> None:
    starts = np.tile(np.arange(graph.num_nodes), 5)
    walks = node2vec_walks(graph, starts, 12, p, q, np.random.default_rng(0))
    assert walks.shape == (starts.shape[0], 12)
    assert (walks[:, 0] == starts).all()
    _assert_on_edges(graph, walks)
    # Isolated nodes repeat themselves.
    assert (walks[starts == 40] == 40).all()


def test_uniform_walks_on_edges_and_isolated(graph: CSRGraph) -> None:
    starts = np.arange(graph.num_nodes)
    walks = uniform_walks(graph, starts, 20, np.random.default_rng(1))
    _assert_on_edges(graph, walks)
    assert (walks[41] == 41).all()


def test_directed_sink_stays() -> None:
    g = CSRGraph.from_edge_index(np.array([[0, 1], [1, 2]]), 3)
    for p, q in [(1.0, 1.0), (0.3, 2.0)]:
        walks = node2vec_walks(g, np.array([0, 0]), 5, p, q, np.random.default_rng(0))
        assert walks.tolist() == [[0, 1, 2, 2, 2]] * 2


def test_determinism_and_seed_sensitivity(graph: CSRGraph) -> None:
    cfg = WalkConfig(walk_length=10, walks_per_node=3, p=0.5, q=2.0, chunk_size=50)
    a = np.concatenate(list(generate_walks(graph, cfg, seed=7)))
    b = np.concatenate(list(generate_walks(graph, cfg, seed=7)))
    c = np.concatenate(list(generate_walks(graph, cfg, seed=8)))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    # Every node starts walks_per_node walks.
    assert np.bincount(a[:, 0], minlength=graph.num_nodes).tolist() == [3] * graph.num_nodes


def test_chunking_bounds_chunk_size(graph: CSRGraph) -> None:
    cfg = WalkConfig(walk_length=4, walks_per_node=5, chunk_size=17)
    chunks = list(generate_walks(graph, cfg, seed=0))
    sizes = [c.shape[0] for c in chunks]
    assert max(sizes) <= 17
    assert sum(sizes) == 5 * graph.num_nodes
    assert all(s == 17 for s in sizes[:-1])


def test_node2vec_matches_exact_transition_law() -> None:
    # prev = 0 -> cur = 1; neighbours of 1: 0 (return), 2 (also adjacent to 0), 3, 4.
    g = CSRGraph.from_edge_index(_undirected([(0, 1), (1, 2), (1, 3), (1, 4), (0, 2), (4, 5)]), 6)
    p, q = 0.25, 4.0
    walks = node2vec_walks(g, np.zeros(40_000, dtype=np.int64), 3, p, q, np.random.default_rng(0))
    third = walks[walks[:, 1] == 1, 2]
    weights = np.array([1 / p, 1.0, 1 / q, 1 / q])
    expected = weights / weights.sum()
    observed = np.array([(third == x).mean() for x in (0, 2, 3, 4)])
    # About 13k samples: 5 standard errors is below 0.02.
    assert np.abs(observed - expected).max() < 0.02


def test_small_p_returns_more_often() -> None:
    g = CSRGraph.from_edge_index(_random_graph(60, 240, seed=1), 60)
    starts = np.tile(np.arange(60), 20)

    def return_rate(p: float) -> float:
        w = node2vec_walks(g, starts, 15, p, 1.0, np.random.default_rng(2))
        return float((w[:, 2:] == w[:, :-2]).mean())

    low, high = return_rate(0.1), return_rate(10.0)
    assert low > 0.5
    assert high < 0.05
    assert low > 5 * high


def test_uniform_fallback_when_p_q_are_one(graph: CSRGraph) -> None:
    starts = np.arange(graph.num_nodes)
    a = node2vec_walks(graph, starts, 8, 1.0, 1.0, np.random.default_rng(3))
    b = uniform_walks(graph, starts, 8, np.random.default_rng(3))
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "overrides",
    [
        {"walk_length": 1},
        {"walks_per_node": 0},
        {"p": 0.0},
        {"q": -1.0},
        {"q": float("inf")},
        {"chunk_size": 0},
        {"walk_length": 2.5},
    ],
)
def test_walk_config_validation(graph: CSRGraph, overrides: dict[str, float]) -> None:
    cfg = WalkConfig(**overrides)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError):
        next(generate_walks(graph, cfg, seed=0))


def test_bad_starts_and_params(graph: CSRGraph) -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(DataError):
        uniform_walks(graph, np.array([graph.num_nodes]), 3, rng)
    with pytest.raises(InvalidConfigError):
        node2vec_walks(graph, np.array([0]), 3, 0.0, 1.0, rng)
