"""Link stealing attacks 0-7 (He et al.)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from scipy.spatial import distance as ssd

from graphleaks.attacks import Output
from graphleaks.attacks.harness import run_attack, sample_challenge
from graphleaks.attacks.link_stealing import (
    DISTANCES,
    LinkStealingAttack,
    _NodeData,
    pair_distances,
    pair_features,
)
from graphleaks.audit.runner import train_target
from graphleaks.data import SplitConfig, csbm
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.metrics.binary import auc
from graphleaks.models.gnn import ArchitectureSpec


@pytest.fixture(autouse=True, scope="module")
def _one_thread():  # noqa: ANN202
    """One torch thread: tiny graphs gain nothing from two, and busy hosts lose a lot."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def target():  # noqa: ANN201
    g = csbm(240, num_features=16, avg_degree=6, homophily=0.9, seed=0)
    spec = ArchitectureSpec(hidden=(32,), epochs=60, patience=0)
    return train_target(g, seed=0, spec=spec, split=SplitConfig(kind="transductive"))


def test_distances_match_scipy() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random((20, 7)), rng.random((20, 7))
    a[0, :3] = 0.0
    b[0, :3] = 0.0  # canberra 0/0 terms
    d = pair_distances(a, b)
    for i in range(20):
        for c, name in enumerate(DISTANCES):
            assert d[i, c] == pytest.approx(getattr(ssd, name)(a[i], b[i]), rel=1e-9, abs=1e-12)
    const = pair_distances(np.ones((1, 4)), np.ones((1, 4)))
    assert np.all(np.isfinite(const))  # correlation of constant vectors -> 0


@pytest.mark.parametrize(("attack", "dim"), [(1, 12), (3, 4 * 3 + 12), (4, 12), (5, 32),
                                             (6, 8 * 3 + 32), (7, 32)])
def test_feature_dimensions(attack: int, dim: int) -> None:
    rng = np.random.default_rng(0)
    post = rng.dirichlet(np.ones(3), size=10)
    data = _NodeData(post=post, ref=rng.dirichlet(np.ones(3), size=10), feat=rng.random((10, 5)))
    assert pair_features(attack, data, np.array([[0, 1], [2, 3]])).shape == (2, dim)


def test_attack0_beats_chance_and_protocol(target) -> None:  # noqa: ANN001
    r = run_attack(LinkStealingAttack(), target, seed=0)
    assert auc(r.scores, r.labels) > 0.75
    assert r.labels.mean() == 0.5
    assert r.threat_model.graph_knowledge == "none" and not r.threat_model.feature_knowledge


def test_rewired_edges_give_chance(target) -> None:  # noqa: ANN001
    g = target.graph
    n, m = g.num_nodes, g.edge_index.shape[1] // 2
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    ei = torch.as_tensor(np.stack([np.r_[src, dst], np.r_[dst, src]]))
    rewired = dataclasses.replace(target, graph=g.clone(), released_edges=g.edge_index)
    rewired.graph.edge_index = ei
    rewired.clear_cache()
    aucs = []
    for s in range(2):
        r = run_attack(LinkStealingAttack(eval_fraction=0.5), rewired, seed=s)
        aucs.append(auc(r.scores, r.labels))
    assert abs(np.mean(aucs) - 0.5) < 0.08


def test_partial_graph_attack_records_knowledge(target) -> None:  # noqa: ANN001
    a = LinkStealingAttack(attack=3, epochs=5)
    ch = sample_challenge(a, target, seed=0).challenge
    known = {tuple(p) for p in ch.hints["known_pairs"].tolist()}
    assert not known & {tuple(p) for p in ch.candidates.tolist()}
    r = run_attack(a, target, seed=0)
    assert r.threat_model.graph_knowledge == "partial"
    assert auc(r.scores, r.labels) > 0.7


def test_compat_flag_and_no_hints_without_partial(target) -> None:  # noqa: ANN001
    a = LinkStealingAttack(attack=0, compat_scaler_on_test=True)
    assert a.compat_flags() == ("compat_scaler_on_test",)
    assert sample_challenge(a, target, seed=0).challenge.hints == {}


def test_capability_and_config_errors(target) -> None:  # noqa: ANN001
    with pytest.raises(CapabilityError):
        run_attack(LinkStealingAttack(), target, seed=0, exposed=frozenset({Output.LABELS}))
    with pytest.raises(InvalidConfigError):
        run_attack(LinkStealingAttack(train_ratio=0.95, eval_fraction=0.1), target, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("attack", [1, 2, 4, 5, 6, 7])
def test_other_attacks_run(target, attack: int) -> None:  # noqa: ANN001
    r = run_attack(LinkStealingAttack(attack=attack, epochs=10), target, seed=0)
    assert np.all(np.isfinite(r.scores))
    if attack != 2:  # attack 2 scores raw Gaussian csbm features: near chance by design
        assert auc(r.scores, r.labels) > 0.5
