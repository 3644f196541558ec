"""Tests of graphleaks.metrics.bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics import (
    auc,
    bootstrap_auc_ci,
    bootstrap_ci,
    percentile_interval,
    tpr_at_fpr,
)


def _data(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (np.arange(n) % 2).astype(np.int64)
    return rng.normal(size=n) + 0.5 * y, y


def test_percentile_interval() -> None:
    assert percentile_interval(np.arange(101.0), 0.9) == pytest.approx((5.0, 95.0))
    with pytest.raises(DataError):
        percentile_interval([], 0.9)
    with pytest.raises(InvalidConfigError):
        percentile_interval([1.0], 0.0)


@pytest.mark.parametrize("stratified", [True, False])
def test_fast_auc_ci_equals_general_ci(stratified: bool) -> None:
    s, y = _data(0, 300)
    slow = bootstrap_ci(auc, s, y, n_bootstrap=200, seed=5, stratified=stratified)
    fast = bootstrap_auc_ci(s, y, n_bootstrap=200, seed=5, stratified=stratified)
    assert fast == pytest.approx(slow, abs=1e-12)


def test_same_seed_same_ci_exactly() -> None:
    s, y = _data(1, 200)
    assert bootstrap_auc_ci(s, y, n_bootstrap=100, seed=7) == bootstrap_auc_ci(
        s, y, n_bootstrap=100, seed=7
    )
    assert bootstrap_ci(auc, s, y, n_bootstrap=50, seed=7) == bootstrap_ci(
        auc, s, y, n_bootstrap=50, seed=7
    )
    assert bootstrap_auc_ci(s, y, n_bootstrap=100, seed=7) != bootstrap_auc_ci(
        s, y, n_bootstrap=100, seed=8
    )


def test_stratified_replicates_keep_class_sizes() -> None:
    s, y = _data(2, 40)
    seen: list[tuple[int, int]] = []

    def stat(scores: np.ndarray, labels: np.ndarray) -> float:
        seen.append((int(labels.sum()), int(labels.size)))
        return float(scores.mean())

    bootstrap_ci(stat, s, y, n_bootstrap=20, seed=0)
    assert seen == [(20, 40)] * 20


def test_ci_contains_estimate_and_narrows_with_n() -> None:
    s, y = _data(3, 4000)
    lo_s, hi_s = bootstrap_auc_ci(s[:400], y[:400], n_bootstrap=300, seed=0)
    lo_l, hi_l = bootstrap_auc_ci(s, y, n_bootstrap=300, seed=0)
    assert lo_s <= auc(s[:400], y[:400]) <= hi_s
    assert lo_l <= auc(s, y) <= hi_l
    assert hi_l - lo_l < 0.5 * (hi_s - lo_s)


def test_wider_confidence_gives_wider_interval() -> None:
    s, y = _data(4, 300)
    lo90, hi90 = bootstrap_auc_ci(s, y, confidence=0.9, seed=0)
    lo99, hi99 = bootstrap_auc_ci(s, y, confidence=0.99, seed=0)
    assert lo99 <= lo90 and hi90 <= hi99


def test_general_statistic() -> None:
    s, y = _data(5, 300)
    lo, hi = bootstrap_ci(lambda a, b: tpr_at_fpr(a, b, 0.1), s, y, n_bootstrap=100, seed=0)
    assert 0.0 <= lo <= tpr_at_fpr(s, y, 0.1) <= hi <= 1.0


def test_bad_arguments() -> None:
    s, y = _data(6, 20)
    with pytest.raises(InvalidConfigError):
        bootstrap_auc_ci(s, y, n_bootstrap=0, seed=0)
    with pytest.raises(InvalidConfigError):
        bootstrap_auc_ci(s, y, n_bootstrap=10.0, seed=0)  # type: ignore[arg-type]
    with pytest.raises(DataError):
        bootstrap_auc_ci(s, np.ones(20), seed=0)


def test_every_bootstrap_interval_holds_its_own_estimate() -> None:
    """Few replicates and an upward-biased statistic (the oracle max advantage): the
    percentile interval alone can miss its estimate (`audit --n-bootstrap 10` crashed the
    report's error bars); the reported interval is stretched to hold it."""
    from graphleaks.metrics.binary import binary_metrics
    from graphleaks.metrics.multiclass import multiclass_metrics

    for seed in range(40):
        rng = np.random.default_rng(seed)
        y = np.r_[np.ones(15), np.zeros(15)].astype(np.int64)
        s = rng.normal(size=30) + 0.8 * y
        m = binary_metrics(s, y, n_bootstrap=10, seed=seed)
        ests = {"auc": m.auc, "average_precision": m.average_precision,
                "max_advantage": m.max_advantage,
                **{f"tpr@{f}": e for f, e in m.tpr_at_fpr.items()}}
        for name, e in ests.items():
            assert e.lo <= e.value <= e.hi, (seed, name, e)
        true = rng.integers(0, 3, size=30)
        pred = np.where(rng.random(30) < 0.5, true, rng.integers(0, 3, size=30))
        mc = multiclass_metrics(true, pred, n_bootstrap=10, seed=seed)
        for e in (mc.accuracy, mc.f1_macro, mc.f1_micro):
            assert e.lo <= e.value <= e.hi, (seed, e)


def test_covering_only_widens() -> None:
    from graphleaks.metrics.binary import Estimate

    assert Estimate.covering(0.5, 0.4, 0.6).ci == (0.4, 0.6)
    assert Estimate.covering(0.3, 0.4, 0.6).ci == (0.3, 0.6)
    assert Estimate.covering(0.7, 0.4, 0.6).ci == (0.4, 0.7)
