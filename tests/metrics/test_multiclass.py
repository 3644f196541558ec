"""Tests of graphleaks.metrics.multiclass."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import f1_score

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics import (
    accuracy,
    f1_macro,
    f1_micro,
    majority_baseline,
    multiclass_metrics,
)


def test_point_metrics() -> None:
    y, p = [0, 1, 2, 2], [0, 1, 1, 2]
    assert accuracy(y, p) == 0.75
    assert f1_micro(y, p) == 0.75
    assert f1_macro(y, p) == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)
    with pytest.raises(DataError):
        accuracy([0, 1], [0])


def test_majority_baseline() -> None:
    assert majority_baseline([0, 0, 1], [0, 1, 1, 1]) == 0.25
    assert majority_baseline(["a", "b", "b"], ["b", "b", "a"]) == pytest.approx(2 / 3)
    assert majority_baseline([1, 0], [0, 0, 1]) == pytest.approx(2 / 3)  # tie -> smallest
    with pytest.raises(DataError):
        majority_baseline([], [0])


@pytest.mark.parametrize("seed", range(3))
def test_multiclass_point_values_match_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, 300)
    p = np.where(rng.random(300) < 0.5, y, rng.integers(0, 6, 300))  # class 5 never true
    m = multiclass_metrics(y, p, n_bootstrap=50, seed=0)
    assert m.accuracy.value == pytest.approx(accuracy(y, p))
    assert m.f1_micro.value == pytest.approx(f1_micro(y, p))
    assert m.f1_macro.value == pytest.approx(f1_score(y, p, average="macro", zero_division=0))
    assert m.majority_baseline == pytest.approx(majority_baseline(y, y))
    assert m.gain_over_baseline.value == pytest.approx(m.f1_micro.value - m.majority_baseline)
    for e in (m.accuracy, m.f1_macro, m.gain_over_baseline):
        assert e.lo <= e.value <= e.hi


def test_random_predictions_do_not_leak() -> None:
    rng = np.random.default_rng(0)
    y = rng.choice(3, size=1000, p=[0.5, 0.3, 0.2])
    p = rng.integers(0, 3, 1000)
    m = multiclass_metrics(y, p, y_train=rng.choice(3, size=500, p=[0.5, 0.3, 0.2]), seed=1)
    assert not m.leaks
    assert m.baseline_from_train


def test_predicting_majority_does_not_leak() -> None:
    y = np.r_[np.zeros(80), np.ones(20)].astype(int)
    m = multiclass_metrics(y, np.zeros(100, dtype=int), n_bootstrap=200, seed=0)
    assert m.gain_over_baseline.value == 0.0
    assert m.gain_over_baseline.ci == (0.0, 0.0)
    assert not m.leaks


def test_perfect_predictions_leak() -> None:
    y = np.r_[np.zeros(60), np.ones(30), 2 * np.ones(10)].astype(int)
    m = multiclass_metrics(y, y, seed=0)
    assert m.leaks
    assert m.accuracy.value == 1.0 and m.f1_macro.value == 1.0
    assert m.majority_baseline == pytest.approx(0.6)
    assert m.n == 100 and m.n_classes == 3


def test_string_labels_seed_determinism_and_to_dict() -> None:
    rng = np.random.default_rng(3)
    y = rng.choice(["x", "y", "z"], size=200)
    p = np.where(rng.random(200) < 0.7, y, "x")
    a = multiclass_metrics(y, p, n_bootstrap=100, seed=5)
    assert a == multiclass_metrics(y, p, n_bootstrap=100, seed=5)
    assert a.f1_macro.ci != multiclass_metrics(y, p, n_bootstrap=100, seed=6).f1_macro.ci
    d = a.to_dict()
    assert d["accuracy"]["ci"] == [a.accuracy.lo, a.accuracy.hi]
    assert json.loads(json.dumps(d, allow_nan=False)) == d


def test_bad_arguments() -> None:
    with pytest.raises(InvalidConfigError):
        multiclass_metrics([0, 1], [0, 1], n_bootstrap=0, seed=0)
    with pytest.raises(DataError):
        multiclass_metrics([0, 1], [0, 1], y_train=[], seed=0)
    with pytest.raises(DataError):
        multiclass_metrics([], [], seed=0)
