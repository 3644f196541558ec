"""LapGraph: exact sparse order statistics, edge-selection probabilities, ledger."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphleaks.audit.runner import train_target
from graphleaks.data import SplitConfig, csbm
from graphleaks.defenses.lapgraph import lapgraph_release, top_laplace_order_statistics
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.privacy.ledger import GuaranteeStatus

SPEC = ArchitectureSpec(hidden=(16,), epochs=30, patience=0)


def test_order_statistics_match_sorting():
    """Top-3 of 50 Laplace draws: sequential order statistics vs brute force (KS-style)."""
    rng = np.random.default_rng(0)
    reps = 4000
    fast = np.stack([top_laplace_order_statistics(3, 50, 1.0, rng) for _ in range(reps)])
    slow = -np.sort(-rng.laplace(0, 1.0, size=(reps, 50)), axis=1)[:, :3]
    assert np.all(np.diff(fast, axis=1) <= 0)
    for j in range(3):
        q = [0.1, 0.5, 0.9]
        assert np.allclose(np.quantile(fast[:, j], q), np.quantile(slow[:, j], q), atol=0.12)


def test_selection_probabilities_match_dense():
    """Per-pair selection frequency of the sparse sampler equals the dense LinkTeller one."""
    n, eps = 6, 1.0
    keys = np.array([0 * n + 1, 1 * n + 2, 3 * n + 5])
    iu, ju = np.triu_indices(n, 1)
    allk = iu * n + ju
    rng = np.random.default_rng(2)
    reps = 3000
    sparse = np.zeros(n * n)
    dense = np.zeros(n * n)
    for _ in range(reps):
        sparse[lapgraph_release(keys, n, eps, rng)[0]] += 1
        t = int(np.clip(round(len(keys) + rng.laplace(0, 1 / (0.01 * eps))), 0, len(allk)))
        score = np.isin(allk, keys).astype(float) + rng.laplace(0, 1 / (0.99 * eps), len(allk))
        dense[allk[np.argsort(-score)[:t]]] += 1
    is_edge = np.isin(allk, keys)
    for sel in (is_edge, ~is_edge):
        a, b = sparse[allk[sel]].mean() / reps, dense[allk[sel]].mean() / reps
        assert abs(a - b) < 0.04


def test_ledger():
    g = csbm(60, seed=0)
    t = train_target(g, defense="lapgraph", defense_params={"epsilon": 1.0}, spec=SPEC, seed=0)
    assert t.ledger.status == GuaranteeStatus.VERIFIED
    assert math.isclose(t.ledger.epsilon, 1.0) and t.ledger.delta == 0.0
    assert math.isclose(t.ledger.components["epsilon_count"], 0.01)
    with pytest.raises(InvalidConfigError, match="epsilon"):
        train_target(g, defense="lapgraph", defense_params={"epsilon": 0.0}, seed=0)


def test_linkteller_auc_low_at_eps1():
    pytest.importorskip("graphleaks.attacks.linkteller")
    from graphleaks.attacks.harness import run_attack
    from graphleaks.attacks.linkteller import LinkTeller
    from graphleaks.metrics.binary import auc

    g = csbm(150, num_features=8, avg_degree=5, homophily=0.9, seed=0)
    t = train_target(g, defense="lapgraph", defense_params={"epsilon": 1.0}, spec=SPEC,
                     split=SplitConfig(kind="transductive"), seed=0)
    r = run_attack(LinkTeller(n_nodes=80), t, seed=0)
    assert auc(r.scores, r.labels) < 0.65
