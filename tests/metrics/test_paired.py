"""Paired bootstrap of a TPR difference between two attacks on the same candidates."""

from __future__ import annotations

import numpy as np
import pytest

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics import tpr_at_fpr
from graphleaks.metrics.paired import paired_tpr_difference


def _runs(seeds: list[int], n: int = 400, shift_a: float = 2.0, shift_b: float = 0.5):
    a, b, y = [], [], []
    for s in seeds:
        rng = np.random.default_rng(s)
        lab = np.r_[np.ones(n), np.zeros(n)]
        noise = rng.normal(size=2 * n)  # shared: the attacks see the same candidates
        a.append(noise + shift_a * lab + 0.3 * rng.normal(size=2 * n))
        b.append(noise + shift_b * lab + 0.3 * rng.normal(size=2 * n))
        y.append(lab)
    return a, b, y


def test_point_is_mean_of_per_run_differences() -> None:
    a, b, y = _runs([0, 1, 2])
    d = paired_tpr_difference(a, b, y, fpr=0.01, n_bootstrap=200, seed=0)
    per = [tpr_at_fpr(ai, yi, 0.01) - tpr_at_fpr(bi, yi, 0.01)
           for ai, bi, yi in zip(a, b, y, strict=True)]
    assert d.value == pytest.approx(np.mean(per))
    assert [r[0] for r in d.per_run] == pytest.approx(per)
    assert d.lo <= d.value <= d.hi


def test_stronger_attack_clears_zero_and_swapping_negates() -> None:
    a, b, y = _runs([0, 1, 2])
    d = paired_tpr_difference(a, b, y, fpr=0.01, n_bootstrap=300, seed=3)
    assert d.lo > 0
    r = paired_tpr_difference(b, a, y, fpr=0.01, n_bootstrap=300, seed=3)
    assert r.value == pytest.approx(-d.value)
    assert r.hi == pytest.approx(-d.lo) and r.lo == pytest.approx(-d.hi)


def test_identical_attacks_give_a_zero_interval() -> None:
    a, _, y = _runs([0])
    d = paired_tpr_difference(a, a, y, fpr=0.05, n_bootstrap=100, seed=0)
    assert (d.value, d.lo, d.hi) == (0.0, 0.0, 0.0)


def test_pooling_narrows_the_interval() -> None:
    a, b, y = _runs([0, 1, 2, 3], shift_a=1.0, shift_b=0.8)
    d = paired_tpr_difference(a, b, y, fpr=0.05, n_bootstrap=300, seed=0)
    one = d.per_run[0]
    assert d.hi - d.lo < one[2] - one[1]


def test_seeded() -> None:
    a, b, y = _runs([0, 1])
    d1 = paired_tpr_difference(a, b, y, fpr=0.01, n_bootstrap=100, seed=5)
    d2 = paired_tpr_difference(a, b, y, fpr=0.01, n_bootstrap=100, seed=5)
    assert d1 == d2


def test_bad_input() -> None:
    a, b, y = _runs([0])
    with pytest.raises(DataError, match="same candidates"):
        paired_tpr_difference(a, [b[0][:-1]], [y[0]], fpr=0.01, seed=0)
    with pytest.raises(DataError, match="one array"):
        paired_tpr_difference(a, b, [], fpr=0.01, seed=0)
    with pytest.raises(InvalidConfigError):
        paired_tpr_difference(a, b, y, fpr=1.5, seed=0)
    with pytest.raises(InvalidConfigError):
        paired_tpr_difference(a, b, y, fpr=0.01, n_bootstrap=0, seed=0)
