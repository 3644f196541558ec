"""Eclipse (paper mode) and eclipse_strict: blockwise top-T, SVD, ledgers, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from graphleaks.audit.runner import train_target
from graphleaks.bundles import load_bundle, save_bundle
from graphleaks.data import SplitConfig, csbm
from graphleaks.defenses.eclipse import (
    PAPER_NOTE,
    _noisy_matmul,
    adjacency,
    noisy_lowrank,
    paper_delta,
    top_upper_entries,
    truncated_svd,
)
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.privacy.calibration import classic_gaussian_sigma
from graphleaks.privacy.ledger import GuaranteeStatus

SPEC = ArchitectureSpec(hidden=(16,), epochs=30, patience=0)


@pytest.fixture(scope="module")
def graph():
    return csbm(60, seed=0)


def test_paper_delta_and_sigma_golden():
    assert paper_delta(5278) == 1e-6
    for eps, want in [(1, 7.57), (2, 3.78), (4, 1.89)]:
        assert round(classic_gaussian_sigma(0.99 * eps, 1e-6, math.sqrt(2)), 2) == want


def test_blockwise_top_matches_dense():
    rng = np.random.default_rng(0)
    left, right = rng.standard_normal((37, 3)), rng.standard_normal((3, 37))
    got = top_upper_entries(left, right, 25, block_rows=5)
    m = (left @ right).astype(np.float32)
    iu, ju = np.triu_indices(37, 1)
    want = np.sort((iu * 37 + ju)[np.argsort(-m[iu, ju])[:25]])
    assert np.array_equal(got, want)


def test_truncated_svd_matches_dense():
    g = csbm(500, seed=1)
    from graphleaks.defenses._edge_release import pair_keys

    a = adjacency(pair_keys(g.edge_index, 500), 500)
    _, s, _ = truncated_svd(a, 5, seed=0)
    dense = np.linalg.svd(a.toarray(), compute_uv=False)[:5]
    assert np.allclose(s, dense, rtol=1e-6)


def test_noisy_matmul_is_symmetric_gaussian():
    """The implicit G is symmetric, zero-diagonal, N(0, σ²) off the diagonal."""
    n, sigma = 9, 2.0
    a = adjacency(np.array([1, 12]), n)
    g = _noisy_matmul(a, np.eye(n), sigma, seed=3, tile=4) - a.toarray()
    assert np.allclose(g, g.T) and np.allclose(np.diag(g), 0)
    big = _noisy_matmul(adjacency(np.array([1]), 300), np.eye(300), sigma, 5, 64)
    off = big[np.triu_indices(300, 1)]
    assert abs(off.std() - sigma) < 0.05
    u, s, vt = noisy_lowrank(a, 2, 0.0, seed=0, oversample=5)
    assert np.allclose(s, np.linalg.svd(a.toarray(), compute_uv=False)[:2], atol=1e-8)


def test_paper_ledger(graph):
    t = train_target(graph, defense="eclipse", defense_params={"epsilon": 2.0, "rank": 4},
                     spec=SPEC, seed=0)
    assert t.ledger.status == GuaranteeStatus.AUTHORS_CLAIM
    assert PAPER_NOTE in t.ledger.notes
    assert t.ledger.epsilon == 2.0 and t.training["mode"] == "paper"
    assert t.released_edges is not None


def test_strict_ledger(graph, tmp_path):
    t = train_target(graph, defense="eclipse_strict",
                     defense_params={"epsilon": 2.0, "rank": 4}, spec=SPEC, seed=0)
    assert t.ledger.status == GuaranteeStatus.VERIFIED
    assert math.isclose(t.ledger.epsilon, 2.0, rel_tol=1e-6) and t.ledger.delta == 1e-6
    assert t.training["mode"] == "strict"
    save_bundle(t, tmp_path / "b")
    back = load_bundle(tmp_path / "b", graph=graph)
    assert back.defense == "eclipse_strict"
    assert torch.equal(back.released_edges, t.released_edges)
    assert torch.allclose(back.logits(), t.logits(), atol=1e-5)


@pytest.mark.parametrize("name", ["eclipse", "eclipse_strict"])
def test_rank_too_large(graph, name):
    with pytest.raises(InvalidConfigError, match="rank"):
        train_target(graph, defense=name, defense_params={"rank": 60}, spec=SPEC, seed=0)


def test_linkteller_auc_low_strict_eps1():
    pytest.importorskip("graphleaks.attacks.linkteller")
    from graphleaks.attacks.harness import run_attack
    from graphleaks.attacks.linkteller import LinkTeller
    from graphleaks.metrics.binary import auc

    g = csbm(150, num_features=8, avg_degree=5, homophily=0.9, seed=0)
    t = train_target(g, defense="eclipse_strict", defense_params={"epsilon": 1.0}, spec=SPEC,
                     split=SplitConfig(kind="transductive"), seed=0)
    r = run_attack(LinkTeller(n_nodes=80), t, seed=0)
    assert auc(r.scores, r.labels) < 0.65
