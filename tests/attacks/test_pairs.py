"""Candidate pair sampling shared by the edge attacks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphleaks.attacks._pairs import (
    all_pairs,
    balanced_pairs,
    edge_keys,
    label_pairs,
    pair_keys,
    sample_non_edges,
    undirected_pairs,
)
from graphleaks.attacks.base import Task
from graphleaks.attacks.harness import sample_link_challenge
from graphleaks.data import csbm
from graphleaks.errors import DataError


def test_undirected_pairs_dedup_and_self_loops() -> None:
    ei = torch.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 3]])
    assert undirected_pairs(ei).tolist() == [[0, 1], [1, 2]]


def test_non_edges_avoid_edges_distinct_and_seeded() -> None:
    g = csbm(200, seed=1)
    n = g.num_nodes
    keys = edge_keys(g.edge_index, n)
    a = sample_non_edges(500, n, keys, np.random.default_rng(0))
    b = sample_non_edges(500, n, keys, np.random.default_rng(0))
    assert np.array_equal(a, b)
    assert (a[:, 0] < a[:, 1]).all()
    assert len(np.unique(pair_keys(a, n))) == 500
    assert label_pairs(a, keys, n).sum() == 0


def test_balanced_challenge_truth() -> None:
    g = csbm(100, seed=2)
    n = g.num_nodes
    lc = sample_link_challenge(g.edge_index, n, seed=0, n_positive=50)
    ch = lc.challenge
    assert ch.task == Task.LINK and ch.candidates.shape == (100, 2)
    keys = edge_keys(g.edge_index, n)
    assert np.array_equal(label_pairs(ch.candidates, keys, n), lc.truth)
    pos, neg = balanced_pairs(undirected_pairs(g.edge_index), n, np.random.default_rng(0))
    assert len(pos) == len(neg) == len(keys)


def test_all_pairs_and_too_dense() -> None:
    assert len(all_pairs(np.arange(10))) == 45
    ei = torch.tensor([[0, 0, 1], [1, 2, 2]])
    with pytest.raises(DataError):
        sample_non_edges(1, 3, edge_keys(ei, 3), np.random.default_rng(0), max_rounds=5)
