"""LinkTeller influence analysis."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from graphleaks.attacks import Output
from graphleaks.attacks._pairs import sample_nodes
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.linkteller import LinkTeller
from graphleaks.audit.runner import train_target
from graphleaks.data import SplitConfig, csbm
from graphleaks.errors import CapabilityError, DataError
from graphleaks.metrics.binary import auc
from graphleaks.metrics.ranking import density_ks, precision_at_k

SPEC_KW = {"hidden": (16,), "epochs": 30, "patience": 0}


@pytest.fixture(autouse=True, scope="module")
def _one_thread():  # noqa: ANN202
    """One torch thread: tiny graphs gain nothing from two, and busy hosts lose a lot."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def graph():  # noqa: ANN201
    return csbm(150, num_features=8, avg_degree=5, homophily=0.9, seed=0)


@pytest.fixture(scope="module")
def gcn_target(graph):  # noqa: ANN001, ANN201
    from graphleaks.models.gnn import ArchitectureSpec

    return train_target(graph, seed=0, spec=ArchitectureSpec(**SPEC_KW),
                        split=SplitConfig(kind="transductive"))


def test_gcn_target_leaks_edges(gcn_target) -> None:  # noqa: ANN001
    r = run_attack(LinkTeller(n_nodes=80), gcn_target, seed=0)
    assert len(r.scores) == 80 * 79 // 2
    assert auc(r.scores, r.labels) > 0.95
    k = density_ks(int(r.labels.sum()), len(r.labels))[1.0]
    assert precision_at_k(r.scores, r.labels, k) > 0.5


def test_mlp_target_gives_chance(graph) -> None:  # noqa: ANN001
    from graphleaks.models.gnn import ArchitectureSpec

    t = train_target(graph, seed=0, spec=ArchitectureSpec(arch="mlp", **SPEC_KW),
                     split=SplitConfig(kind="transductive"))
    r = run_attack(LinkTeller(n_nodes=60), t, seed=0)
    assert abs(auc(r.scores, r.labels) - 0.5) < 0.05


def test_symmetrize_and_probs(gcn_target) -> None:  # noqa: ANN001
    a = run_attack(LinkTeller(n_nodes=30, symmetrize="max", output="probs"), gcn_target, seed=1)
    b = run_attack(LinkTeller(n_nodes=30, symmetrize="max", output="probs"), gcn_target, seed=1)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert np.all(a.scores >= 0)


def test_sample_types() -> None:
    deg = np.array([0, 1, 2, 3, 5, 8, 1, 0])
    rng = np.random.default_rng(0)
    lo = sample_nodes(deg, 10, "low_degree", low=2, high=4, rng=rng)
    hi = sample_nodes(deg, 10, "high_degree", low=2, high=4, rng=rng)
    assert set(lo) == {0, 1, 6, 7} and set(hi) == {3, 4, 5}
    with pytest.raises(DataError):
        sample_nodes(deg, 10, "high_degree", low=2, high=100, rng=rng)


def test_requires_feature_queries(gcn_target) -> None:  # noqa: ANN001
    with pytest.raises(CapabilityError, match="FEATURE_QUERIES"):
        run_attack(LinkTeller(n_nodes=10), gcn_target, seed=0,
                   exposed=frozenset({Output.POSTERIORS}))
    assert dataclasses.asdict(LinkTeller().config)["influence"] == 1e-4
