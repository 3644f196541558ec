"""Tests of graphleaks.metrics.binary."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics import (
    advantage_from_accuracy,
    auc,
    average_precision,
    best_balanced_accuracy,
    binary_metrics,
    duddu_onehot_confidence_accuracy,
    max_advantage,
    roc_curve,
    threshold_metrics,
    tpr_at_fpr,
)

TINY_S = [0.9, 0.8, 0.7, 0.6]
TINY_Y = [1, 0, 1, 0]


def _random_data(seed: int, n: int, shift: float = 0.7, decimals: int | None = 1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = rng.normal(size=n) + shift * y
    if decimals is not None:
        s = np.round(s, decimals)  # many ties
    return s, y


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("decimals", [None, 1])
def test_auc_and_ap_match_sklearn(seed: int, decimals: int | None) -> None:
    s, y = _random_data(seed, 300, decimals=decimals)
    assert auc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert average_precision(s, y) == pytest.approx(average_precision_score(y, s), abs=1e-12)


def test_auc_ties_count_half() -> None:
    assert auc([0.5, 0.5], [1, 0]) == 0.5
    assert auc([0.5, 0.5, 0.1], [1, 0, 0]) == 0.75


def test_auc_one_class_raises_one_line() -> None:
    with pytest.raises(DataError) as info:
        auc([0.1, 0.2, 0.3], [1, 1, 1])
    assert "\n" not in str(info.value)
    assert "only 1s" in str(info.value)


@pytest.mark.parametrize(
    ("scores", "labels"),
    [
        ([[0.1, 0.2]], [1, 0]),  # 2-D
        ([0.1, 0.2, 0.3], [1, 0]),  # length mismatch
        ([0.1, float("nan")], [1, 0]),  # non-finite
        ([0.1, 0.2], [1, 2]),  # not 0/1
    ],
)
def test_bad_inputs_raise_data_error(scores: list, labels: list) -> None:
    with pytest.raises(DataError):
        auc(scores, labels)


def test_bool_labels_accepted() -> None:
    assert auc(TINY_S, np.array(TINY_Y, dtype=bool)) == 0.75


def test_roc_curve_matches_sklearn_without_dropping_points() -> None:
    s, y = _random_data(1, 50)
    fpr, tpr, thr = roc_curve(s, y)
    sk_fpr, sk_tpr, sk_thr = sk_roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    np.testing.assert_allclose(thr, sk_thr)
    assert len(thr) == len(np.unique(s)) + 1


def test_tpr_at_fpr_hand_example() -> None:
    assert tpr_at_fpr(TINY_S, TINY_Y, 0.0) == 0.5
    assert tpr_at_fpr(TINY_S, TINY_Y, 0.49) == 0.5  # no interpolation towards (0.5, 1.0)
    assert tpr_at_fpr(TINY_S, TINY_Y, 0.5) == 1.0
    assert tpr_at_fpr(TINY_S, TINY_Y, 1.0) == 1.0


def test_tpr_at_fpr_below_one_over_n_neg() -> None:
    # 4 negatives: any fpr < 0.25 only allows FPR = 0, i.e. thresholds above the max negative.
    s = [0.95, 0.9, 0.85, 0.8, 0.3, 0.2, 0.1, 0.05, 0.7, 0.6]
    y = [1, 1, 0, 1, 0, 1, 0, 1, 0, 1]
    # max negative = 0.85; positives above it: 0.95, 0.9 -> 2 of 6
    assert tpr_at_fpr(s, y, 1e-3) == pytest.approx(2 / 6)
    assert tpr_at_fpr(s, y, 0.0) == pytest.approx(2 / 6)
    # fpr = 0.25 admits the threshold 0.8 (FP = 1): 3 of 6
    assert tpr_at_fpr(s, y, 0.25) == pytest.approx(3 / 6)


def test_tpr_at_fpr_zero_when_top_score_is_negative() -> None:
    assert tpr_at_fpr([0.9, 0.8, 0.1], [0, 1, 0], 0.01) == 0.0


@pytest.mark.parametrize("seed", range(3))
def test_tpr_at_fpr_matches_brute_force_without_ties(seed: int) -> None:
    # untied scores: the best real threshold with FPR <= target, as before the randomised rule
    s, y = _random_data(seed, 200, decimals=None)
    fpr, tpr, _ = sk_roc_curve(y, s, drop_intermediate=False)
    for target in (0.0, 0.003, 0.01, 0.1, 0.37):
        assert tpr_at_fpr(s, y, target) == tpr[fpr <= target].max()


def _randomised_brute_force(s, y, target: float) -> float:
    """Walk sklearn's ROC vertices: the last with FPR <= target, then along the next step."""
    fpr, tpr, _ = sk_roc_curve(y, s, drop_intermediate=False)
    k = int(np.flatnonzero(fpr <= target)[-1])
    if k == len(fpr) - 1 or fpr[k] == target:
        return float(tpr[k])
    p = (target - fpr[k]) / (fpr[k + 1] - fpr[k])
    return float(tpr[k] + p * (tpr[k + 1] - tpr[k]))


@pytest.mark.parametrize("seed", range(3))
def test_tpr_at_fpr_with_ties_matches_the_randomised_brute_force(seed: int) -> None:
    s, y = _random_data(seed, 200)  # rounded: many ties across the classes
    fpr, tpr, _ = sk_roc_curve(y, s, drop_intermediate=False)
    rose = False
    for target in (0.0, 0.003, 0.01, 0.1, 0.37):
        got = tpr_at_fpr(s, y, target)
        assert got == pytest.approx(_randomised_brute_force(s, y, target))
        best_real = tpr[fpr <= target].max()
        assert got >= best_real  # a randomised point is never below the real thresholds
        rose |= got > best_real + 1e-12
    assert rose  # the ties do change some point, so the comparison above has teeth


def test_tpr_at_1pct_fpr_inside_a_planted_tie() -> None:
    # 55 negatives and 47 positives all at softmax 1.0, above 4945 negatives and 200 positives:
    # the tie alone costs FPR 55/5000 = 1.1 % > 1 %, so no real threshold reaches any positive
    rng = np.random.default_rng(0)
    s = np.concatenate([np.ones(55), np.ones(47), rng.random(4945) * 0.9,
                        rng.random(200) * 0.9])
    y = np.concatenate([np.zeros(55), np.ones(47), np.zeros(4945), np.ones(200)])
    fpr, tpr, _ = sk_roc_curve(y, s, drop_intermediate=False)
    assert tpr[fpr <= 0.01].max() == 0.0  # the artefact of the former rule
    # by hand: flag the tie with p = 0.01 / (55 / 5000) = 50/55, expected TPR p * 47 / 247
    expected = (0.01 * 5000 / 55) * 47 / 247
    assert tpr_at_fpr(s, y, 0.01) == pytest.approx(expected, rel=1e-12)
    m = binary_metrics(s, y, n_bootstrap=200, seed=0)
    e = m.tpr_at_fpr[0.01]
    assert e.value == pytest.approx(expected, rel=1e-12)
    assert 0.0 < e.lo < e.value < e.hi  # the bootstrap replicates use the same rule
    assert m.tpr_at_fpr_rule == "randomised-at-ties"
    assert m.to_dict()["tpr_at_fpr_rule"] == "randomised-at-ties"
    # the analytic interval (above the size limit) holds the value, from floor/ceil counts;
    # since issue 29 it is the Clopper-Pearson box (it brackets the threshold too)
    a = binary_metrics(s, y, n_bootstrap=10, seed=0, analytic_above=100).tpr_at_fpr[0.01]
    assert a.method == "clopper-pearson-box" and a.lo < a.value < a.hi


@pytest.mark.parametrize("bad", [-0.1, 1.5, "0.1", True])
def test_tpr_at_fpr_rejects_bad_target(bad: object) -> None:
    with pytest.raises(InvalidConfigError):
        tpr_at_fpr(TINY_S, TINY_Y, bad)  # type: ignore[arg-type]


def test_max_advantage_and_best_balanced_accuracy() -> None:
    assert max_advantage(TINY_S, TINY_Y) == 0.5
    assert best_balanced_accuracy(TINY_S, TINY_Y) == (0.75, 0.9)
    # perfectly wrong scores: the oracle still never goes below chance
    assert max_advantage([0.1, 0.9], [1, 0]) == 0.0
    assert best_balanced_accuracy([0.1, 0.9], [1, 0])[0] == 0.5
    s, y = _random_data(3, 400)
    bal, _ = best_balanced_accuracy(s, y)
    assert max_advantage(s, y) == pytest.approx(2 * (bal - 0.5))


def test_best_balanced_accuracy_threshold_reproduces_value() -> None:
    s, y = _random_data(4, 300)
    bal, thr = best_balanced_accuracy(s, y)
    assert threshold_metrics(s, y, thr).balanced_accuracy == pytest.approx(bal)


def test_advantage_from_accuracy() -> None:
    assert advantage_from_accuracy(0.5) == 0.0
    assert advantage_from_accuracy(1.0) == 1.0
    assert advantage_from_accuracy(0.7828) == pytest.approx(0.5656)
    with pytest.raises(InvalidConfigError):
        advantage_from_accuracy(1.2)


def test_threshold_metrics_hand_example() -> None:
    # t = 0.7 -> predicted positive: 0.9 (1), 0.8 (0), 0.7 (1); TP=2 FP=1 TN=2 FN=0
    m = threshold_metrics([0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 1, 0, 0], 0.7)
    assert (m.n_pos, m.n_neg, m.threshold) == (2, 3, 0.7)
    assert m.accuracy == pytest.approx(0.8)
    assert m.balanced_accuracy == pytest.approx(0.5 * (1 + 2 / 3))
    assert m.precision == pytest.approx(2 / 3)
    assert m.recall == 1.0
    assert m.fpr == pytest.approx(1 / 3)
    assert m.f1 == pytest.approx(0.8)
    assert m.advantage == pytest.approx(2 / 3)
    assert m.advantage_paper == pytest.approx(0.6)
    json.dumps(m.to_dict())


def test_threshold_metrics_no_predicted_positive() -> None:
    m = threshold_metrics(TINY_S, TINY_Y, 2.0)
    assert (m.precision, m.recall, m.f1, m.fpr) == (0.0, 0.0, 0.0, 0.0)
    assert m.accuracy == 0.5


def test_duddu_bug_reproduction_exceeds_one() -> None:
    # 2 members x 2 classes, 2 non-members x 2 classes (one-hot indexing expands each node).
    member = [0.9, 0.9, 0.8, 0.9]
    nonmember = [0.1, 0.1, 0.9, 0.1]
    # delta = 0.8: TPR = 4/2 = 2, FPR = 1/2 -> 0.5 * (2 + 1 - 0.5) = 1.25
    value = duddu_onehot_confidence_accuracy(member + nonmember, [1] * 4 + [0] * 4, 2, 2)
    assert value == 1.25
    # with one entry per node it is the correct oracle balanced accuracy
    s, y = _random_data(5, 200)
    assert duddu_onehot_confidence_accuracy(s, y, int(y.sum()), int((1 - y).sum())) == (
        pytest.approx(best_balanced_accuracy(s, y)[0])
    )
    with pytest.raises(InvalidConfigError):
        duddu_onehot_confidence_accuracy(member + nonmember, [1] * 4 + [0] * 4, 0, 2)


def test_binary_metrics_point_values_match_functions() -> None:
    s, y = _random_data(6, 500)
    m = binary_metrics(s, y, threshold=0.3, n_bootstrap=200, seed=0)
    assert m.auc.value == pytest.approx(auc(s, y))
    assert m.average_precision.value == pytest.approx(average_precision(s, y))
    assert m.max_advantage.value == pytest.approx(max_advantage(s, y))
    for f in (1e-3, 1e-2, 1e-1):
        assert m.tpr_at_fpr[f].value == pytest.approx(tpr_at_fpr(s, y, f))
    tm = threshold_metrics(s, y, 0.3)
    assert m.at_threshold is not None
    for name in ("accuracy", "balanced_accuracy", "precision", "recall", "fpr", "f1", "advantage"):
        assert getattr(m.at_threshold, name).value == pytest.approx(getattr(tm, name))
    assert (m.n_pos, m.n_neg) == (int(y.sum()), int((1 - y).sum()))


def test_binary_metrics_cis_contain_estimate_and_narrow_with_n() -> None:
    s, y = _random_data(7, 2000, decimals=None)
    small = binary_metrics(s[:200], y[:200], threshold=0.3, n_bootstrap=300, seed=1)
    large = binary_metrics(s, y, threshold=0.3, n_bootstrap=300, seed=1)
    for m in (small, large):
        assert m.at_threshold is not None
        for e in (m.auc, m.average_precision, m.max_advantage, m.at_threshold.accuracy):
            assert e.lo <= e.value <= e.hi
    assert large.auc.hi - large.auc.lo < 0.6 * (small.auc.hi - small.auc.lo)


def test_binary_metrics_seed_determinism_and_to_dict() -> None:
    s, y = _random_data(8, 300)
    a = binary_metrics(s, y, n_bootstrap=100, seed=3)
    b = binary_metrics(s, y, n_bootstrap=100, seed=3)
    c = binary_metrics(s, y, n_bootstrap=100, seed=4)
    assert a == b
    assert a.auc.ci != c.auc.ci
    d = a.to_dict()
    assert set(d["tpr_at_fpr"]) == {"0.001", "0.01", "0.1"}
    assert d["auc"]["ci"] == [a.auc.lo, a.auc.hi]
    assert d["at_threshold"] is None
    assert json.loads(json.dumps(d, allow_nan=False)) == d


def test_binary_metrics_rejects_bad_config() -> None:
    with pytest.raises(InvalidConfigError):
        binary_metrics(TINY_S, TINY_Y, n_bootstrap=0, seed=0)
    with pytest.raises(InvalidConfigError):
        binary_metrics(TINY_S, TINY_Y, confidence=1.0, seed=0)
    with pytest.raises(InvalidConfigError):
        binary_metrics(TINY_S, TINY_Y, fpr_points=(2.0,), seed=0)


def test_auc_near_one_gets_the_score_interval_not_a_collapsed_bootstrap() -> None:
    # 31 positives above all but one of 5000 negatives: AUC 0.9999, the percentile bootstrap
    # piles up against 1 ([1.000, 1.000] at three decimals)
    s = np.concatenate([np.linspace(0.9, 1.0, 31), np.linspace(0.0, 0.8, 4999), [0.95]])
    y = np.concatenate([np.ones(31), np.zeros(5000)])
    m = binary_metrics(s, y, n_bootstrap=200, seed=0)
    assert 0.9998 < m.auc.value < 1.0
    assert m.auc.method == "newcombe-score-auc"
    assert round(m.auc.lo, 3) < 0.99 and m.auc.hi <= 1.0
    boot = binary_metrics(s, y, n_bootstrap=200, seed=0, analytic_above=None)
    assert boot.auc.method == "newcombe-score-auc"  # the rule does not depend on the size cap
    # far from the boundary the bootstrap stays (golden reports unchanged)
    rng = np.random.default_rng(0)
    yy = np.r_[np.ones(50), np.zeros(50)]
    far = binary_metrics(rng.normal(size=100) + yy, yy, n_bootstrap=50, seed=0)
    assert 0.6 < far.auc.value < 0.9
    assert far.auc.method == "percentile-bootstrap"


def test_miscalibrated_flag_follows_the_auc_interval() -> None:
    rng = np.random.default_rng(1)
    y = np.r_[np.ones(200), np.zeros(200)]
    s = rng.normal(size=400) - 1.0 * y  # inverted scores
    m = binary_metrics(s, y, n_bootstrap=100, seed=0)
    assert m.auc.hi < 0.5 and m.miscalibrated and m.to_dict()["miscalibrated"] is True
    ok = binary_metrics(-s, y, n_bootstrap=100, seed=0)
    assert not ok.miscalibrated and ok.to_dict()["miscalibrated"] is False


def test_evaluate_binary_reads_roc_and_oracle_from_the_metrics_sort() -> None:
    from graphleaks.metrics.binary import choose_intervals, evaluate_binary, roc_points

    rng = np.random.default_rng(11)
    y = np.r_[np.ones(300), np.zeros(500)]
    for s in (y + rng.normal(size=800), np.round(y + rng.normal(size=800), 1)):  # untied, tied
        ev = evaluate_binary(s, y, threshold=0.5, n_bootstrap=40, seed=2)
        choice = choose_intervals(s, y)
        assert ev.intervals == choice
        assert ev.metrics == binary_metrics(s, y, threshold=0.5, n_bootstrap=40, seed=2,
                                            intervals=choice.method)
        assert ev.roc == roc_points(s, y)  # scikit-learn's curve, to the last bit
        assert ev.oracle_balanced_accuracy == best_balanced_accuracy(s, y)
    assert ev.intervals.method == "bootstrap"  # the rounded scores are tied


def test_choose_intervals_keeps_the_bootstrap_for_small_or_tied_sets() -> None:
    from graphleaks.metrics.binary import choose_intervals

    rng = np.random.default_rng(0)
    y = np.r_[np.ones(250), np.zeros(250)]
    s = y + rng.normal(size=500)
    assert choose_intervals(s, y).method == "analytic"
    assert choose_intervals(s[50:450], y[50:450]).method == "analytic"  # 200 a side
    assert choose_intervals(s[51:450], y[51:450]).method == "bootstrap"  # 199 positives
    tied = s.copy()
    tied[:6] = tied[-6:] = 0.25  # 12 of 500 (2.4 %) share one value
    assert choose_intervals(tied, y).method == "bootstrap"
    assert choose_intervals(s[::4], y[::4], analytic_above=100).method == "analytic"
    # the forced methods, and the boundary rule under both
    assert binary_metrics(s, y, n_bootstrap=20, seed=0, intervals="auto").interval == "analytic"
    with pytest.raises(InvalidConfigError):
        binary_metrics(s, y, n_bootstrap=20, seed=0, intervals="delong")


def test_vectorised_intervals_equal_the_scalar_ones() -> None:
    from graphleaks.metrics import intervals as ci

    rng = np.random.default_rng(4)
    values = np.r_[0.0, 1.0, 0.99995, rng.uniform(0.3, 0.99, 20)]
    n_pos, n_neg = rng.integers(10, 500, values.size), rng.integers(10, 5000, values.size)
    lo, hi = ci.newcombe_auc_many(values, n_pos, n_neg, 0.95)
    for i, v in enumerate(values):
        assert (lo[i], hi[i]) == ci.newcombe_auc(float(v), int(n_pos[i]), int(n_neg[i]), 0.95)
    pos, neg = rng.normal(1, 1, 40), rng.normal(0, 1, 60)
    a = auc(np.r_[pos, neg], np.r_[np.ones(40), np.zeros(60)])
    d_lo, d_hi = ci.delong_auc_many([a], [ci.delong_variance(pos, neg)], 0.95)
    assert (d_lo[0], d_hi[0]) == ci.delong_auc(pos, neg, a, 0.95)


def test_analytic_tpr_box_covers_the_true_tpr_at_low_fpr() -> None:
    # Binormal scores with a known ROC: TPR(f) = 1 - Phi(z_{1-f} - 1.5). With 300 negatives
    # the 1 % threshold is the 3rd highest negative; the positives' Clopper-Pearson interval
    # alone ignores that and covers 57 % of these draws; the box must cover >= 95 % (sound,
    # so usually more). 200 seeded draws: a binomial 95 % band around 0.95 starts at ~0.92.
    from scipy.stats import norm

    truth = 1.0 - norm.cdf(norm.ppf(0.99) - 1.5)
    rng = np.random.default_rng(29)
    y = np.r_[np.ones(300), np.zeros(300)]
    hits = 0
    for _ in range(200):
        s = rng.normal(size=600) + 1.5 * y
        e = binary_metrics(s, y, fpr_points=(0.01,), n_bootstrap=1, seed=0,
                           intervals="analytic").tpr_at_fpr[0.01]
        hits += e.lo <= truth <= e.hi
    assert hits >= 0.92 * 200
