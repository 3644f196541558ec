"""HeteroRR FeatureRR: k-bin mechanism bounds by enumeration, composition, modes, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from graphleaks.audit.runner import train_target
from graphleaks.data import csbm
from graphleaks.defenses import registry
from graphleaks.defenses.hetero_rr import (
    combine_theta,
    discretize,
    kbin_mechanism,
    kbin_probabilities,
    worst_case_log_ratio,
)
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.privacy.ledger import GuaranteeStatus

SPEC = ArchitectureSpec(hidden=(16,), epochs=20, patience=0)


@pytest.fixture(scope="module")
def graph():
    return csbm(80, num_features=6, seed=0)


@pytest.mark.parametrize("k", [2, 3, 5, 10, 20, 50])
@pytest.mark.parametrize("eps_i", [0.01, 0.1, 1.0, 5.0])
def test_worst_case_ratio_is_eps_i(k, eps_i):
    """σ_i = (k−1)/(kε_i): the exact worst-case log-ratio equals ε_i (defenses.md §5.2)."""
    assert worst_case_log_ratio(k, eps_i) <= eps_i + 1e-9
    assert math.isclose(worst_case_log_ratio(k, eps_i), eps_i, rel_tol=1e-9)


def test_composition_over_features_with_shared_theta():
    """With one normalized θ the per-feature worst cases sum to ε_f (vector enumeration)."""
    rng = np.random.default_rng(0)
    alpha = rng.random(4)
    alpha /= alpha.sum()
    beta = rng.random(4)
    beta /= beta.sum()
    theta = combine_theta(alpha, beta, 0.5)
    assert math.isclose(theta.sum(), 1.0)
    eps_f, k = 2.0, 3
    logp = [np.log(kbin_probabilities(k, t * eps_f)) for t in theta]
    # product mechanism: the vector worst case is the sum of per-feature worst cases
    worst = 0.0
    for pi in logp:
        worst += (pi[:, None, :] - pi[None, :, :]).max()
    assert worst <= eps_f + 1e-9


def test_mechanism_sampling_matches_probabilities():
    k, eps_i = 4, 1.5
    z = torch.full((20000, 1), 0.3)  # bin 1
    out = kbin_mechanism(z, torch.tensor([eps_i]), k, torch.Generator().manual_seed(0))
    freq = np.bincount((out[:, 0] * k).round().long().numpy() - 1, minlength=k) / 20000
    assert np.allclose(freq, kbin_probabilities(k, eps_i)[1], atol=0.015)
    assert discretize(torch.tensor([0.0, 0.05, 0.1, 0.11, 1.0]), 10).tolist() == [0, 0, 0, 1, 9]


def test_corrected_and_paper_ledgers(graph):
    t = train_target(graph, defense="heterorr", defense_params={"epsilon": 2.0}, spec=SPEC,
                     seed=0)
    assert t.ledger.status == GuaranteeStatus.VERIFIED and t.ledger.epsilon == 2.0
    assert t.features is not None and t.training["mode"] == "corrected"
    assert t.training["private_edges"] > 0
    p = train_target(graph, defense="heterorr", defense_params={"epsilon": 2.0, "mode": "paper"},
                     spec=SPEC, seed=0)
    assert p.ledger.status == GuaranteeStatus.AUTHORS_CLAIM
    assert p.ledger.components["epsilon_upper_bound"] == 4.0
    assert registry.get("heterorr").name == "heterorr"


@pytest.mark.parametrize("params,name", [
    ({"gamma": 1.5}, "gamma"), ({"gamma": -0.1}, "gamma"), ({"k": 1}, "k"),
    ({"private_fraction": 0.0}, "private_fraction"),
])
def test_bad_input(graph, params, name):
    with pytest.raises(InvalidConfigError, match=name):
        train_target(graph, defense="heterorr", defense_params=params, spec=SPEC, seed=0)


def test_release_is_standardized_and_public_edges_are_recorded(graph):
    t = train_target(graph, defense="heterorr", defense_params={"epsilon": 2.0}, spec=SPEC,
                     seed=0)
    assert torch.allclose(t.features.mean(0), torch.zeros(graph.num_features), atol=1e-5)
    raw = train_target(graph, defense="heterorr",
                       defense_params={"epsilon": 2.0, "standardize": False}, spec=SPEC, seed=0)
    assert raw.features.min() > 0  # the k-bin release (u+1)/k, untouched
    public = {tuple(sorted(e)) for e in t.public_edges.t().tolist()}
    released = {tuple(sorted(e)) for e in t.released_edges.t().tolist()}
    assert public and public <= released
    assert len(public) + t.training["private_edges"] == len(
        {tuple(sorted(e)) for e in graph.edge_index.t().tolist() if e[0] != e[1]}
        & {tuple(sorted(e)) for e in t.split.training_edges(graph.edge_index).t().tolist()})


def test_edgerr_alone_has_an_edge_ledger_and_public_features(graph):
    t = train_target(graph, defense="heterorr",
                     defense_params={"features": "public", "epsilon_e": 0.5}, spec=SPEC, seed=0)
    assert t.ledger.unit.value == "edge" and t.ledger.epsilon == pytest.approx(0.5)
    assert t.ledger.status == GuaranteeStatus.VERIFIED
    assert t.features is None and torch.equal(t.served_features(), graph.x)
    assert "theta_min" not in t.training
    p = train_target(graph, defense="heterorr", spec=SPEC, seed=0,
                     defense_params={"features": "public", "epsilon_e": 0.5, "mode": "paper"})
    assert p.ledger.status == GuaranteeStatus.AUTHORS_CLAIM


def test_edge_attacks_score_only_the_private_edges(graph):
    from graphleaks.attacks._pairs import edge_keys, pair_keys
    from graphleaks.attacks.harness import private_edges, sample_challenge
    from graphleaks.attacks.link_stealing import LinkStealingAttack
    from graphleaks.attacks.linkteller import LinkTeller

    t = train_target(graph, defense="heterorr", defense_params={"epsilon": 2.0}, spec=SPEC,
                     seed=0)
    n = graph.num_nodes
    public = edge_keys(t.public_edges, n)
    private = edge_keys(private_edges(t), n)
    assert len(private) == t.training["private_edges"]
    assert not np.isin(private, public).any()
    for attack in (LinkTeller(n_nodes=60), LinkStealingAttack(attack=0)):
        lc = sample_challenge(attack, t, seed=0)
        keys = pair_keys(lc.challenge.candidates, n)
        assert not np.isin(keys, public).any()
        assert set(np.unique(keys[lc.truth == 1])) <= set(private)


def test_bundle_keeps_features_and_public_edges(graph, tmp_path):
    from graphleaks.bundles import load_bundle, save_bundle

    t = train_target(graph, defense="heterorr", defense_params={"epsilon": 2.0}, spec=SPEC,
                     seed=0)
    save_bundle(t, tmp_path / "b")
    back = load_bundle(tmp_path / "b", graph=graph)
    assert torch.equal(back.public_edges, t.public_edges)
    assert torch.equal(back.features, t.features)
    assert torch.allclose(back.logits(), t.logits(), atol=1e-5)


def test_reports_say_public_edges_were_excluded(graph):
    from graphleaks.attacks.harness import run_attack
    from graphleaks.attacks.linkteller import LinkTeller

    t = train_target(graph, defense="heterorr", defense_params={"epsilon": 2.0}, spec=SPEC,
                     seed=0)
    r = run_attack(LinkTeller(n_nodes=40), t, seed=0)
    assert any("private edges only" in n for n in r.notes)
    plain = train_target(graph, spec=SPEC, seed=0)
    assert not any("private edges only" in n for n in run_attack(LinkTeller(n_nodes=40), plain,
                                                                 seed=0).notes)


def test_private_edges_from_a_column(graph):
    from graphleaks.attacks._pairs import edge_keys
    from graphleaks.attacks.harness import private_edges

    marked = graph.edge_index[:, ::3]
    g = graph.clone()
    g.private_edge_index = torch.cat([marked, marked.flip(0)], 1)
    t = train_target(g, defense="heterorr", spec=SPEC, seed=0,
                     defense_params={"epsilon": 2.0, "edge_split": "column"})
    n = graph.num_nodes
    truth = np.intersect1d(edge_keys(marked, n),
                           edge_keys(t.split.training_edges(graph.edge_index), n))
    assert np.array_equal(edge_keys(private_edges(t), n), truth)
    with pytest.raises(InvalidConfigError, match="edge_split"):
        train_target(graph, defense="heterorr", defense_params={"edge_split": "column"},
                     spec=SPEC, seed=0)
    g.private_edge_index = torch.empty(2, 0, dtype=torch.long)
    with pytest.raises(InvalidConfigError, match="no training edge is marked"):
        train_target(g, defense="heterorr", defense_params={"edge_split": "column"},
                     spec=SPEC, seed=0)
