"""Attribute inference (Duddu et al.): released DeepWalk embeddings and white-box GNN layers."""

import numpy as np
import pytest

from graphleaks.attacks.attribute_inference import (
    AttributeInference,
    fit_predict,
    make_classifier,
    split_known,
)
from graphleaks.attacks.base import Output
from graphleaks.attacks.harness import run_attack, sample_challenge
from graphleaks.audit.runner import evaluate_result, train_target
from graphleaks.data.synthetic import csbm
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec

SMALL_WALKS = {"dimensions": 16, "walk_length": 20, "walks_per_node": 10, "window": 5,
               "epochs": 2}


@pytest.fixture(scope="module")
def homophilous_target():
    g = csbm(120, num_classes=2, num_features=8, avg_degree=5, homophily=0.98, seed=0)
    spec = ArchitectureSpec(hidden=(16,), epochs=10, patience=0)
    return train_target(g, spec=spec, seed=0)


def _mc(result):
    return evaluate_result(result, n_bootstrap=300, seed=0).multiclass


def test_challenge_hides_truth_and_hints_known_nodes(homophilous_target):
    atk = AttributeInference(aux_frac=0.5, released=np.zeros((120, 4)))
    lc = sample_challenge(atk, homophilous_target, seed=3)
    ch = lc.challenge
    known = ch.hints["known_nodes"]
    assert len(known) == 60 and len(ch.candidates) == 60
    assert not set(known) & set(ch.candidates)
    y = homophilous_target.graph.y.numpy()
    np.testing.assert_array_equal(ch.hints["train_labels"], y[known])
    np.testing.assert_array_equal(lc.truth, y[ch.candidates])
    again = sample_challenge(atk, homophilous_target, seed=3).challenge
    np.testing.assert_array_equal(again.candidates, ch.candidates)


def test_released_deepwalk_embeddings_leak_community(homophilous_target):
    result = run_attack(AttributeInference(aux_frac=0.5, classifier="rf", **SMALL_WALKS),
                        homophilous_target, seed=0)
    assert result.train_labels is not None and len(result.train_labels) == 60
    mc = _mc(result)
    assert mc.leaks and mc.gain_over_baseline.lo > 0
    assert mc.f1_micro.value > 0.85


def test_permuted_attribute_does_not_leak(homophilous_target):
    y = homophilous_target.graph.y.numpy()
    perm = np.random.default_rng(0).permutation(y)
    result = run_attack(AttributeInference(aux_frac=0.5, classifier="rf", attribute=perm,
                                           **SMALL_WALKS), homophilous_target, seed=0)
    mc = _mc(result)
    assert not mc.leaks
    assert abs(mc.f1_micro.value - mc.majority_baseline) < 0.2


def test_whitebox_target_embeddings(homophilous_target):
    result = run_attack(AttributeInference(source="target_embeddings", classifier="mlp",
                                           aux_frac=0.5), homophilous_target, seed=0)
    mc = _mc(result)
    assert mc.leaks


def test_whitebox_needs_embeddings_output(homophilous_target):
    atk = AttributeInference(source="target_embeddings")
    with pytest.raises(CapabilityError):
        run_attack(atk, homophilous_target, seed=0,
                   exposed=frozenset({Output.POSTERIORS, Output.RELEASED_EMBEDDINGS}))


def test_bad_inputs(homophilous_target):
    with pytest.raises(InvalidConfigError):
        sample_challenge(AttributeInference(classifier="knn"), homophilous_target, seed=0)
    with pytest.raises(DataError):
        sample_challenge(AttributeInference(released=np.zeros((5, 2))), homophilous_target,
                         seed=0)
    with pytest.raises(DataError):
        sample_challenge(AttributeInference(attribute=np.ones(120)), homophilous_target,
                         seed=0)
    with pytest.raises(InvalidConfigError):
        make_classifier("knn", seed=0)
    with pytest.raises(DataError):
        fit_predict("rf", np.zeros((4, 2)), np.zeros(4), np.zeros((2, 2)), seed=0)


def test_split_known_is_seeded_and_disjoint():
    a, b = split_known(10, 0.3, seed=1)
    assert len(a) == 3 and len(b) == 7 and not set(a) & set(b)
    np.testing.assert_array_equal(split_known(10, 0.3, seed=1)[0], a)
    with pytest.raises(DataError):
        split_known(3, 0.01, seed=0)


# ------------------------------------------------------------------ the skip-gram walk budget


def test_walk_budget_lowers_walks_then_length():
    from graphleaks.attacks.base import walk_budget

    assert walk_budget(2708, 5, 20, 10_000_000, window=5) == (5, 20)  # Cora fits: unchanged
    assert walk_budget(100_000, 5, 20, 10_000_000, window=5) == (5, 20)  # exactly at it
    assert walk_budget(100_000, 5, 20, None, window=5) == (5, 20)  # no budget
    assert walk_budget(100_000, 5, 20, 4_000_000, window=5) == (2, 20)
    assert walk_budget(100_000, 5, 20, 1_000_000, window=5) == (1, 10)
    assert walk_budget(1_000_000, 5, 20, 4_000_000, window=5) == (1, 10)  # the floor: 2·window
    assert walk_budget(1_000_000, 5, 8, 4_000_000, window=5) == (1, 8)  # never longer
    for n, w, ln, b in [(5000, 10, 40, 300_000), (70_000, 3, 30, 2_500_000)]:
        walks, length = walk_budget(n, w, ln, b, window=5)
        assert n * walks * length <= b and 1 <= walks <= w and length <= ln


def test_walk_budget_is_recorded_and_seeded(homophilous_target):
    atk = AttributeInference(aux_frac=0.5, max_walk_tokens=120 * 4 * 20, **SMALL_WALKS)
    lc = sample_challenge(atk, homophilous_target, seed=1)
    (note,) = lc.challenge.notes
    assert note.startswith("walk budget: the release ran walks_per_node=4, walk_length=20 "
                           "(9,600 skip-gram tokens) instead of 10 x 20 (24,000)")
    again = sample_challenge(atk, homophilous_target, seed=1).challenge
    np.testing.assert_array_equal(again.hints["released_embeddings"],
                                  lc.challenge.hints["released_embeddings"])
    # a budget the corpus fits leaves the release exactly as without one
    roomy = AttributeInference(aux_frac=0.5, max_walk_tokens=10**9, **SMALL_WALKS)
    plain = AttributeInference(aux_frac=0.5, **SMALL_WALKS)
    a = sample_challenge(roomy, homophilous_target, seed=1).challenge
    b = sample_challenge(plain, homophilous_target, seed=1).challenge
    assert a.notes == ()
    np.testing.assert_array_equal(a.hints["released_embeddings"],
                                  b.hints["released_embeddings"])
