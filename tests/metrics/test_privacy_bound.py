"""Tests of graphleaks.metrics.privacy_bound."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics import clopper_pearson, epsilon_lower_bound

Y = np.r_[np.ones(1000), np.zeros(1000)]
PERFECT = np.r_[np.ones(1000), np.zeros(1000)]


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (17, 250)])
def test_clopper_pearson_matches_scipy(k: int, n: int) -> None:
    ref = binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    lo, hi = clopper_pearson(k, n, 0.9)
    assert lo == pytest.approx(ref.low, abs=1e-10)
    assert hi == pytest.approx(ref.high, abs=1e-10)


def test_clopper_pearson_edges() -> None:
    assert clopper_pearson(0, 10, 0.95)[0] == 0.0
    assert clopper_pearson(10, 10, 0.95)[1] == 1.0
    assert clopper_pearson(0, 10, 0.95)[1] == pytest.approx(1 - 0.025 ** (1 / 10))
    for bad in [(11, 10, 0.95), (-1, 10, 0.95), (0, 0, 0.95), (1, 10, 1.0)]:
        with pytest.raises(InvalidConfigError):
            clopper_pearson(*bad)


def test_perfect_separation_gives_large_finite_bound() -> None:
    b = epsilon_lower_bound(PERFECT, Y)
    hi = 1 - 0.025 ** (1 / 1000)  # CP upper bound of 0/1000; lower bound of 1000/1000 = 1 - hi
    assert math.isfinite(b.epsilon_lb)
    assert b.epsilon_lb > 5
    assert b.epsilon_lb == pytest.approx(math.log((1 - hi) / hi))
    assert b.threshold == 1.0
    assert b.tpr_lower == pytest.approx(1 - hi)
    assert b.fpr_upper == pytest.approx(hi)


def test_identical_distributions_give_small_bound() -> None:
    rng = np.random.default_rng(0)
    b = epsilon_lower_bound(rng.normal(size=2000), Y)
    assert b.epsilon_lb < 0.5


def test_monotone_in_confidence() -> None:
    rng = np.random.default_rng(1)
    s = rng.normal(size=2000) + 1.0 * Y
    values = [epsilon_lower_bound(s, Y, confidence=c).epsilon_lb for c in (0.5, 0.9, 0.95, 0.99)]
    assert all(a >= b for a, b in zip(values[:-1], values[1:], strict=True))
    assert values[0] > values[-1] > 0


def test_delta_reduces_bound() -> None:
    base = epsilon_lower_bound(PERFECT, Y).epsilon_lb
    with_delta = epsilon_lower_bound(PERFECT, Y, delta=1e-3).epsilon_lb
    assert with_delta < base
    assert epsilon_lower_bound(PERFECT, Y, delta=0.999).epsilon_lb == 0.0


def test_fixed_threshold_is_at_most_the_max() -> None:
    rng = np.random.default_rng(2)
    s = rng.normal(size=2000) + 1.0 * Y
    free = epsilon_lower_bound(s, Y)
    fixed = epsilon_lower_bound(s, Y, threshold=1.0)
    assert fixed.threshold_fixed and not free.threshold_fixed
    assert fixed.threshold == 1.0
    assert 0.0 <= fixed.epsilon_lb <= free.epsilon_lb
    again = epsilon_lower_bound(s, Y, threshold=free.threshold)
    assert again.epsilon_lb == pytest.approx(free.epsilon_lb)


def test_tnr_fnr_form_when_no_member_scores_low() -> None:
    # All members score 1, half the non-members 0: at t = 1 no member is missed (FNR ~ 0) while
    # TNR = 0.5, so TNR <= e^eps * FNR + delta is what forces a large epsilon.
    s = np.r_[np.ones(1000), np.ones(500), np.zeros(500)]
    b = epsilon_lower_bound(s, Y)
    assert b.form == "tnr/fnr"
    assert b.threshold == 1.0
    tnr_lo = 1 - clopper_pearson(500, 1000, 0.95)[1]
    fnr_hi = clopper_pearson(0, 1000, 0.95)[1]
    assert b.epsilon_lb == pytest.approx(math.log(tnr_lo / fnr_hi))
    assert b.epsilon_lb > 4


def test_assumptions_and_to_dict() -> None:
    b = epsilon_lower_bound(PERFECT, Y)
    text = " ".join(b.assumptions)
    assert "random" in text and "Steinke" in text
    assert "confidence" in text and "lower bound" in text
    assert json.loads(json.dumps(b.to_dict())) == b.to_dict()


def test_bad_arguments() -> None:
    with pytest.raises(InvalidConfigError):
        epsilon_lower_bound(PERFECT, Y, delta=1.0)
    with pytest.raises(InvalidConfigError):
        epsilon_lower_bound(PERFECT, Y, confidence=0.0)
    with pytest.raises(DataError):
        epsilon_lower_bound(PERFECT, np.ones(2000))
