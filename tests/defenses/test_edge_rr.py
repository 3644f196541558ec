"""EdgeRR (HeteroRR's pHRG edge mechanism): likelihood, stored-likelihood MCMC, noise, sampling."""

from __future__ import annotations

import math

import numpy as np
import pytest

import graphleaks.defenses.edge_rr as er_mod
from graphleaks.audit.runner import train_target
from graphleaks.data import csbm
from graphleaks.defenses.edge_rr import (
    Dendrogram,
    edge_rr,
    node_term,
    noisy_probabilities,
    sample_private_graph,
    sensitivity,
)
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.privacy.accounting import pure_epsilon
from graphleaks.seeding import Rngs

PUB = np.array([[0, 1], [1, 2], [3, 4], [2, 5], [0, 4]])
PRI = np.array([[0, 2], [3, 5], [1, 4]])
W_PUB = np.array([1, 1, 1, 1, 1, 1])
W_PRI = np.array([1, 1, 1, 1, 1, 1])


def _brute(d: Dendrogram, edges: np.ndarray, w: np.ndarray) -> float:
    """Σ_r N_r χ(e_r/N_r) from explicit leaf sets of every internal node."""
    es = {(min(a, b), max(a, b)) for a, b in edges.tolist()}
    total = 0.0
    for r in range(d.n, 2 * d.n - 1):
        left, right = d.leaves(d.left[r]), d.leaves(d.right[r])
        e = sum((min(a, b), max(a, b)) in es for a in left for b in right)
        total += node_term(e, sum(w[a] for a in left), sum(w[b] for b in right))
    return total


def _dendro(seed=0, w_pri=W_PRI):
    return Dendrogram(6, PUB, PRI, W_PUB, w_pri, np.random.default_rng(seed))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_likelihood_matches_brute_force(seed):
    d = _dendro(seed, w_pri=np.array([1, 1, 1, 1, 1, 0]) if seed == 2 else W_PRI)
    w_pri = np.array(d.cpri[:6])
    for _ in range(2):
        lp, lq = d.stored_log_likelihood()
        assert math.isclose(lp, _brute(d, PUB, W_PUB), abs_tol=1e-9)
        assert math.isclose(lq, _brute(d, PRI, w_pri), abs_tol=1e-9)
        assert np.allclose(d.log_likelihood(), (lp, lq))
        d.mcmc(300, 0.7, "joint", np.random.default_rng(seed))  # incremental updates stay exact
    assert sorted(d.leaves(d.root)) == list(range(6))


def test_node_term_and_sensitivity_eq19():
    assert node_term(0, 3, 4) == 0.0 and node_term(12, 3, 4) == 0.0
    assert math.isclose(node_term(3, 2, 3), 3 * math.log(0.5) + 3 * math.log(0.5))
    for v in (4, 5, 9):
        nmax = ((v + 1) // 2) * (v // 2)
        worst = max(abs(node_term(e + 1, nmax, 1) - node_term(e, nmax, 1))
                    for e in range(nmax))  # change of one LCA count, brute force
        assert math.isclose(sensitivity(v), worst, rel_tol=1e-12)
        assert sensitivity(v) > math.log(nmax)  # Eq. 19, not the Eq. 15 typo


def test_mcmc_uses_stored_likelihood(monkeypatch):
    """Each proposal computes only the two proposed terms per part (4 calls), never the
    current state's likelihood (the released C++ recomputed / mixed it, flaw E6)."""
    d = _dendro(0)
    calls = []
    orig = d._term
    monkeypatch.setattr(d, "_term", lambda *a: calls.append(a) or orig(*a))
    monkeypatch.setattr(d, "log_likelihood",
                        lambda: pytest.fail("current-state likelihood recomputed"))
    for chain, per in (("joint", 1), ("alternating", 2)):
        calls.clear()
        stats = d.mcmc(50, 0.5, chain, np.random.default_rng(1))
        assert stats["proposals"] == 50 * per
        assert len(calls) == 4 * stats["proposals"]


def test_acceptance_reads_stored_terms():
    """Corrupting the stored private term of the current state changes the decision."""
    d = _dendro(3)
    rng_u = (0.3, 0.2)
    move = d.propose(*rng_u)
    r, p = move[0], move[1]
    d.tpri[r] += 5.0
    assert math.isclose(d.propose(*rng_u)[-1], move[-1] - 5.0)
    d.tpri[r] -= 5.0
    assert math.isclose(d.propose(*rng_u)[-1], move[-1]) and p >= 6


def test_laplace_scale_is_sensitivity_over_epsilon(monkeypatch):
    seen = []
    orig = er_mod.laplace_noise
    monkeypatch.setattr(er_mod, "laplace_noise",
                        lambda shape, scale, gen, **k: seen.append(scale) or orig(shape, scale,
                                                                                 gen, **k))
    keys_pub = np.sort(PUB.min(1) * 6 + PUB.max(1))
    keys_pri = np.sort(PRI.min(1) * 6 + PRI.max(1))
    res = edge_rr(6, keys_pub, keys_pri, 2.0, mcmc_fraction=0.25, mcmc_steps=10,
                  private_nodes=np.ones(6, bool), seed_rngs=Rngs.from_seed(0))
    assert seen == [1.0 / 1.5] and res.noise_scale == 1.0 / 1.5
    assert math.isclose(res.temperature, 0.5 / (2 * sensitivity(6)))
    assert math.isclose(pure_epsilon(res.event), 2.0)  # ε_e1 + ε_e2, basic composition


def test_released_size_matches_private_count():
    """With ε_e2 → ∞ each block is Binomial(N̄_r, ē_r/N̄_r): E|Ẽ_pri| = |E_pri|."""
    import torch

    d = _dendro(4)
    probs, _, _ = noisy_probabilities(d, 1e9, torch.Generator().manual_seed(0))
    rng = np.random.default_rng(0)
    sizes = [len(sample_private_graph(d, probs, rng)) for _ in range(2000)]
    assert abs(np.mean(sizes) - len(PRI)) < 0.1
    # paper mode: pairs are drawn only inside V̄
    d2 = _dendro(4, w_pri=np.array([1, 1, 1, 1, 1, 0]))
    probs2, _, _ = noisy_probabilities(d2, 0.5, torch.Generator().manual_seed(0))
    for _ in range(50):
        k = sample_private_graph(d2, probs2, rng)
        assert not np.isin(k // 6, [5]).any() and not np.isin(k % 6, [5]).any()
        assert len(k) == len(np.unique(k)) and (k // 6 < k % 6).all()


def test_determinism_and_bad_input():
    g = np.random.default_rng(0)
    n = 40
    a, b = g.integers(0, n, 200), g.integers(0, n, 200)
    keys = np.unique(np.minimum(a, b)[a != b] * n + np.maximum(a, b)[a != b])
    pub, pri = keys[::2], keys[1::2]
    run = [edge_rr(n, pub, pri, 1.0, mcmc_steps=500, seed_rngs=Rngs.from_seed(s)).private_keys
           for s in (7, 7, 8)]
    assert np.array_equal(run[0], run[1]) and not np.array_equal(run[0], run[2])
    with pytest.raises(InvalidConfigError, match="private_keys"):
        edge_rr(n, pub, pri[:0], 1.0, seed_rngs=Rngs.from_seed(0))
    with pytest.raises(InvalidConfigError, match="mcmc_fraction"):
        edge_rr(n, pub, pri, 1.0, mcmc_fraction=1.0, seed_rngs=Rngs.from_seed(0))


def test_heterorr_ledger_composes_edge_budget():
    graph = csbm(60, num_features=4, seed=0)
    spec = ArchitectureSpec(hidden=(8,), epochs=5, patience=0)
    t = train_target(graph, defense="heterorr",
                     defense_params={"epsilon": 1.0, "epsilon_e": 2.0, "mcmc_steps": 300},
                     spec=spec, seed=0)
    c = t.ledger.components
    assert t.ledger.epsilon == 1.0  # the headline unit is node-feature LDP
    assert math.isclose(c["epsilon_e"], 2.0) and c["epsilon_e1"] == c["epsilon_e2"] == 1.0
    assert len(t.ledger.events) == 2 and t.ledger.events[1]["kind"] == "composed"
    assert t.training["edgerr_mcmc_proposals"] == 300
    assert t.training["edgerr_private_nodes"] == 60  # V̄ = all nodes, fixed publicly
