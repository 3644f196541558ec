"""EdgeRand: exact sparse sampler, flip probabilities, ledger, LinkTeller at small ε."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from graphleaks.audit.runner import train_target
from graphleaks.data import SplitConfig, csbm
from graphleaks.defenses._edge_release import (
    keys_to_edge_index,
    num_pairs,
    pair_keys,
    sample_non_edges,
)
from graphleaks.defenses.edgerand import edgerand_release, edgerand_replace_probability
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.privacy.ledger import GuaranteeStatus

SPEC = ArchitectureSpec(hidden=(16,), epochs=30, patience=0)


def test_pair_keys_roundtrip():
    e = torch.tensor([[0, 1, 2, 3, 3], [1, 0, 3, 2, 3]])
    k = pair_keys(e, 4)
    assert k.tolist() == [1, 11]
    back = keys_to_edge_index(k, 4)
    assert sorted(map(tuple, back.T.tolist())) == [(0, 1), (1, 0), (2, 3), (3, 2)]


def test_sample_non_edges_distinct_and_uniform():
    n, existing = 6, np.array([1, 2, 3])  # pairs (0,1) (0,2) (0,3)
    rng = np.random.default_rng(0)
    counts = np.zeros(n * n)
    for _ in range(3000):
        s = sample_non_edges(n, existing, 3, rng)
        assert len(np.unique(s)) == 3 and not np.isin(s, existing).any()
        counts[s] += 1
    free = [i * n + j for i in range(n) for j in range(i + 1, n) if i * n + j not in existing]
    freq = counts[free] / 3000
    assert np.allclose(freq, 3 / len(free), atol=0.04)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_flip_probabilities(eps):
    """Each edge survives w.p. 1 − s/2; each non-edge appears w.p. s/2 (s = 2/(e^ε+1))."""
    n = 7
    keys = np.array([0 * n + 1, 1 * n + 2, 2 * n + 3, 4 * n + 6])
    rng = np.random.default_rng(1)
    reps = 4000
    hits = np.zeros(n * n)
    for _ in range(reps):
        hits[edgerand_release(keys, n, eps, rng)] += 1
    s = edgerand_replace_probability(eps)
    keep = hits[keys] / reps
    non = [i * n + j for i in range(n) for j in range(i + 1, n) if i * n + j not in keys]
    add = hits[non] / reps
    se_keep = math.sqrt((1 - s / 2) * s / 2 / reps)
    assert np.all(np.abs(keep - (1 - s / 2)) < 4.5 * se_keep)
    assert abs(add.mean() - s / 2) < 4.5 * se_keep / math.sqrt(len(non))
    assert math.isclose(1 - s / 2, math.exp(eps) / (1 + math.exp(eps)))


def test_max_edges_guard():
    keys = np.array([1, 2])
    with pytest.raises(InvalidConfigError, match="max_edges"):
        edgerand_release(keys, 2000, 0.1, np.random.default_rng(0), max_edges=1000)
    assert num_pairs(4) == 6


def test_ledger_and_release():
    g = csbm(60, seed=0)
    t = train_target(g, defense="edgerand", defense_params={"epsilon": 2.0}, spec=SPEC, seed=0)
    assert t.ledger.status == GuaranteeStatus.VERIFIED
    assert math.isclose(t.ledger.epsilon, 2.0) and t.ledger.delta == 0.0
    assert t.released_edges is not None and t.training["mode"] == "exact-sparse"
    assert torch.equal(t.edges("target"), t.released_edges)


def test_linkteller_auc_low_at_eps1():
    pytest.importorskip("graphleaks.attacks.linkteller")
    from graphleaks.attacks.harness import run_attack
    from graphleaks.attacks.linkteller import LinkTeller
    from graphleaks.metrics.binary import auc

    g = csbm(150, num_features=8, avg_degree=5, homophily=0.9, seed=0)
    t = train_target(g, defense="edgerand", defense_params={"epsilon": 1.0}, spec=SPEC,
                     split=SplitConfig(kind="transductive"), seed=0)
    r = run_attack(LinkTeller(n_nodes=80), t, seed=0)
    assert auc(r.scores, r.labels) < 0.65
