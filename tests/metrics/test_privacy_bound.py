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


def _bound_at_every_threshold(scores, labels, delta, confidence):  # noqa: ANN001, ANN202
    """The bound maximised over every distinct score, with no threshold skipped."""
    from graphleaks.metrics import privacy_bound as pb

    s, y = np.asarray(scores, dtype=np.float64), np.asarray(labels).astype(bool)
    pos, neg = np.sort(s[y]), np.sort(s[~y])
    t = np.unique(s)
    k_pos = len(pos) - np.searchsorted(pos, t, side="left")
    k_neg = len(neg) - np.searchsorted(neg, t, side="left")
    tpr_lo, _ = pb._cp_bounds(k_pos, len(pos), confidence)
    _, fpr_hi = pb._cp_bounds(k_neg, len(neg), confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(tpr_lo > delta, np.log((tpr_lo - delta) / fpr_hi), -np.inf)
        b = np.where(1 - fpr_hi > delta, np.log((1 - fpr_hi - delta) / (1 - tpr_lo)), -np.inf)
    ia, ib = int(np.argmax(a)), int(np.argmax(b))
    if a[ia] >= b[ib] - 1e-12:
        return max(float(a[ia]), 0.0), float(t[ia]), "tpr/fpr"
    return max(float(b[ib]), 0.0), float(t[ib]), "tnr/fnr"


@pytest.mark.parametrize("case", range(40))
def test_skipped_thresholds_change_neither_bound_nor_threshold(case: int) -> None:
    """Skipping thresholds that cannot win gives the same bound, threshold and form as
    evaluating every distinct score (ties, rounded scores and both forms included)."""
    rng = np.random.default_rng(case)
    n = int(rng.integers(2, 400))
    labels = rng.integers(0, 2, n)
    labels[:2] = [0, 1]
    scores = rng.normal(size=n) + labels * rng.uniform(0, 3)
    if case % 2:
        scores = np.round(scores, 1)  # many ties between and within the classes
    if case % 5 == 0:
        scores = -scores  # members score low: the tnr/fnr form wins
    delta = [0.0, 1e-5, 0.05][case % 3]
    got = epsilon_lower_bound(scores, labels, delta=delta, confidence=0.95)
    want = _bound_at_every_threshold(scores, labels, delta, 0.95)
    assert (got.epsilon_lb, got.threshold, got.form) == want
