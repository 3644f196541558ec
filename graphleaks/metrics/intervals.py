"""Analytic confidence intervals: for large evaluation sets and for estimates at the boundary.

The percentile bootstrap is the default interval of :mod:`graphleaks.metrics`. It has two
weak spots, and these closed-form intervals cover them:

* **At the boundary** (an estimate of exactly 0 or 1) every replicate gives the same value, so
  the percentile interval collapses to a point: LinkTeller's AUC of 1 from 28 positives was
  reported as ``[1.000, 1.000]``, an interval that excludes the published 0.9987. Score-type
  intervals do not collapse there: Clopper-Pearson for rates, Newcombe's score interval for
  the AUC, Newcombe's hybrid score interval for a difference of two rates.
* **At scale** drawing ``B x n`` resampling counts costs ``B`` times the work of the metric
  itself. Above a size the bootstrap is replaced by DeLong's interval for the AUC, the logit
  interval of Boyd et al. (2013) for the average precision and the binomial intervals above
  for rates; the interval of each metric records which method produced it.

References: DeLong, DeLong & Clarke-Pearson (1988), Biometrics 44:837; Newcombe (1998),
Statistics in Medicine 17:873 (method 10) and (2006) 25:559 (score-type AUC interval);
Hanley & McNeil (1982), Radiology 143:29; Boyd, Eng & Page (2013), ECML-PKDD.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = [
    "BOOTSTRAP",
    "CLOPPER_PEARSON",
    "CLOPPER_PEARSON_BOX",
    "DELONG",
    "LOGIT_AP",
    "NEWCOMBE_AUC",
    "NEWCOMBE_DIFF",
    "box_level",
    "clopper_pearson_rate",
    "threshold_fpr_range",
    "delong_auc",
    "delong_auc_many",
    "delong_variance",
    "logit_ap",
    "newcombe_auc",
    "newcombe_auc_many",
    "newcombe_difference",
    "wilson",
]

FloatArray = npt.NDArray[np.float64]

# Names recorded next to every interval (the ``method`` of an Estimate).
BOOTSTRAP = "percentile-bootstrap"
CLOPPER_PEARSON = "clopper-pearson"
DELONG = "delong"
LOGIT_AP = "logit-boyd2013"
NEWCOMBE_AUC = "newcombe-score-auc"
NEWCOMBE_DIFF = "newcombe-hybrid-score"
MONOTONE_F1 = "f1-of-clopper-pearson-bounds"
CLOPPER_PEARSON_BOX = "clopper-pearson-box"


def _z(confidence: float) -> float:
    """Two-sided normal quantile of the confidence level."""
    # imported here: scipy.stats costs ~0.5 s of start-up that reading a report never needs
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2.0))


def _clip(lo: float, hi: float) -> tuple[float, float]:
    return max(0.0, float(lo)), min(1.0, float(hi))


def clopper_pearson_rate(k: float, n: float, confidence: float) -> tuple[float, float]:
    """Exact binomial interval of a rate ``k / n`` (``k`` rounded to the nearest count).

    Args:
        k: Number of successes (a rate times ``n`` is accepted; it is rounded).
        n: Number of trials; ``n < 1`` gives the uninformative ``(0, 1)``.
        confidence: Two-sided confidence level in (0, 1).

    Returns:
        ``(lo, hi)``; never a single point, also at ``k = 0`` or ``k = n``.

    Example:
        >>> lo, hi = clopper_pearson_rate(28, 28, 0.95)
        >>> round(lo, 4), hi
        (0.8766, 1.0)
    """
    from graphleaks.metrics.privacy_bound import clopper_pearson

    n_int = int(round(n))
    if n_int < 1:
        return 0.0, 1.0
    k_int = min(max(int(round(k)), 0), n_int)
    return clopper_pearson(k_int, n_int, confidence)


def box_level(confidence: float) -> float:
    """Level of each side of a box interval: two independent sides at ``sqrt(confidence)``
    hold jointly with probability ``confidence``."""
    return math.sqrt(confidence)


def threshold_fpr_range(
    fpr: float, n_neg: npt.ArrayLike, level: float
) -> tuple[FloatArray, FloatArray]:
    """FPRs of two empirical thresholds that bracket the true ``fpr`` threshold.

    The TPR at a target FPR is read at a threshold set by the negatives, so its interval
    must hold the threshold's own uncertainty, not only the positives' binomial noise (at
    1 % FPR of 542 negatives the threshold is the 5th or 6th highest negative score). The
    number ``K`` of negatives at or above the true threshold is Binomial(``n_neg``,
    ``fpr``); with probability at least ``level`` it lies in ``[k_lo, k_hi]`` (its
    quantiles), and then the empirical threshold at FPR ``k_lo / n_neg`` is at or above the
    true one and the one at ``(k_hi + 1) / n_neg`` below it. The TPRs at those two
    thresholds (Clopper-Pearson over the positives at the same level, independent of the
    negatives) bound the TPR at the true threshold: the Clopper-Pearson box of a ROC point
    (Pepe 2003, *The Statistical Evaluation of Medical Tests*, rectangular regions with
    each side at ``sqrt(confidence)``), read vertically at a fixed FPR.

    Args:
        fpr: Target false-positive rate in [0, 1].
        n_neg: Negatives (one count, or one per set).
        level: Two-sided level of the bracket (:func:`box_level` of the confidence).

    Returns:
        ``(fpr_lo, fpr_hi)``, in [0, 1].

    Example:
        >>> lo, hi = threshold_fpr_range(0.01, 542, box_level(0.95))
        >>> float(lo[()]) * 542, round(float(hi[()]) * 542)
        (1.0, 12)
    """
    from scipy.stats import binom

    m = np.asarray(n_neg, dtype=np.float64)
    k_lo = binom.ppf((1.0 - level) / 2.0, m, fpr)
    k_hi = binom.ppf((1.0 + level) / 2.0, m, fpr)
    return (np.asarray(np.clip(k_lo / m, 0.0, 1.0), dtype=np.float64),
            np.asarray(np.clip((k_hi + 1.0) / m, 0.0, 1.0), dtype=np.float64))


def wilson(k: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson score interval of a rate ``k / n`` (the building block of Newcombe's method).

    Example:
        >>> lo, hi = wilson(0, 10, 0.95)
        >>> lo, round(hi, 4)
        (0.0, 0.2775)
    """
    if n <= 0:
        return 0.0, 1.0
    z = _z(confidence)
    p = k / n
    den = 1.0 + z * z / n
    mid = (p + z * z / (2.0 * n)) / den
    half = z * math.sqrt(max(p * (1.0 - p) / n + z * z / (4.0 * n * n), 0.0)) / den
    return _clip(mid - half, mid + half)


def newcombe_difference(
    k1: float, n1: float, k2: float, n2: float, confidence: float
) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``k1/n1 - k2/n2`` (method 10 of Newcombe 1998).

    Used for TPR - FPR (an advantage) from two independent samples: positives and negatives.

    Example:
        >>> lo, hi = newcombe_difference(28, 28, 0, 100, 0.95)
        >>> round(lo, 3), hi
        (0.874, 1.0)
    """
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, confidence)
    l2, u2 = wilson(k2, n2, confidence)
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, lo), min(1.0, hi)


def _hanley_mcneil_var(theta: float, n_pos: int, n_neg: int) -> float:
    """Newcombe's (2006) variance of the AUC at ``theta`` with ``N* = (n_pos + n_neg) / 2``."""
    n_star = (n_pos + n_neg) / 2.0
    bracket = 1.0 + (n_star - 1.0) * (1.0 - theta) / (2.0 - theta) \
        + (n_star - 1.0) * theta / (1.0 + theta)
    return theta * (1.0 - theta) * bracket / (n_pos * n_neg)


def newcombe_auc(value: float, n_pos: int, n_neg: int, confidence: float) -> tuple[float, float]:
    """Score-type interval of the AUC (Newcombe 2006): never a point, also at 0 or 1.

    Solves ``(value - theta)^2 = z^2 V(theta)`` on each side of ``value``, where ``V`` is the
    Hanley-McNeil variance evaluated at ``theta`` rather than at the estimate; at an AUC of 1
    the Wald variance is 0 but ``V(theta < 1)`` is not.

    Args:
        value: The AUC estimate in [0, 1].
        n_pos: Number of positives.
        n_neg: Number of negatives.
        confidence: Two-sided confidence level.

    Returns:
        ``(lo, hi)``.

    Example:
        >>> lo, hi = newcombe_auc(1.0, 28, 124722, 0.95)
        >>> round(lo, 3), hi
        (0.965, 1.0)
    """
    z2 = _z(confidence) ** 2

    def f(theta: float) -> float:
        return (value - theta) ** 2 - z2 * _hanley_mcneil_var(theta, n_pos, n_neg)

    def root(a: float, b: float) -> float:
        # f(a) >= 0 at the far end, f(b) <= 0 at the estimate: plain bisection, 60 halvings.
        for _ in range(60):
            m = 0.5 * (a + b)
            if f(m) > 0.0:
                a = m
            else:
                b = m
        return 0.5 * (a + b)

    lo = 0.0 if value <= 0.0 or f(0.0) <= 0.0 else root(0.0, value)
    hi = 1.0 if value >= 1.0 or f(1.0) <= 0.0 else root(1.0, value)
    return _clip(lo, hi)


def newcombe_auc_many(
    values: npt.ArrayLike, n_pos: npt.ArrayLike, n_neg: npt.ArrayLike, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """:func:`newcombe_auc` of many AUCs at once (e.g. one per slice): the same numbers.

    The bisection runs on arrays, the same 60 halvings in the same order as the scalar
    version, so each pair ``(lo[i], hi[i])`` equals ``newcombe_auc(values[i], ...)``.

    Example:
        >>> lo, hi = newcombe_auc_many([1.0, 0.8], [28, 50], [124722, 50], 0.95)
        >>> (float(lo[0]), float(hi[0])) == newcombe_auc(1.0, 28, 124722, 0.95)
        True
    """
    v = np.asarray(values, dtype=np.float64)
    npos = np.asarray(n_pos, dtype=np.float64)
    nneg = np.asarray(n_neg, dtype=np.float64)
    z2 = _z(confidence) ** 2
    n_star = (npos + nneg) / 2.0

    def f(theta: FloatArray) -> FloatArray:
        bracket = 1.0 + (n_star - 1.0) * (1.0 - theta) / (2.0 - theta) \
            + (n_star - 1.0) * theta / (1.0 + theta)
        var = theta * (1.0 - theta) * bracket / (npos * nneg)
        return np.asarray((v - theta) ** 2 - z2 * var, dtype=np.float64)

    def root(a: FloatArray, b: FloatArray) -> FloatArray:
        for _ in range(60):
            m = 0.5 * (a + b)
            right = f(m) > 0.0
            a, b = np.where(right, m, a), np.where(right, b, m)
        return np.asarray(0.5 * (a + b), dtype=np.float64)

    zeros, ones = np.zeros_like(v), np.ones_like(v)
    lo = np.where((v <= 0.0) | (f(zeros) <= 0.0), 0.0, root(zeros, v))
    hi = np.where((v >= 1.0) | (f(ones) <= 0.0), 1.0, root(ones, v))
    return np.maximum(lo, 0.0), np.minimum(hi, 1.0)


def delong_auc_many(
    values: npt.ArrayLike, variances: npt.ArrayLike, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """:func:`delong_auc` of many AUCs from their :func:`delong_variance`: the same numbers.

    Example:
        >>> import numpy as np
        >>> pos, neg = np.array([0.9, 0.8, 0.4]), np.array([0.7, 0.3, 0.2])
        >>> lo, hi = delong_auc_many([8 / 9], [delong_variance(pos, neg)], 0.95)
        >>> (float(lo[0]), float(hi[0])) == delong_auc(pos, neg, 8 / 9, 0.95)
        True
    """
    v = np.asarray(values, dtype=np.float64)
    half = _z(confidence) * np.sqrt(np.maximum(np.asarray(variances, dtype=np.float64), 0.0))
    return np.maximum(v - half, 0.0), np.minimum(v + half, 1.0)


def delong_variance(pos_scores: FloatArray, neg_scores: FloatArray) -> float:
    """DeLong's variance of the AUC from the structural components (``O(n log n)``)."""
    neg_sorted = np.sort(neg_scores)
    pos_sorted = np.sort(pos_scores)
    # V10: for each positive, the share of negatives below it (ties half); V01 likewise.
    below = np.searchsorted(neg_sorted, pos_scores, side="left")
    tied = np.searchsorted(neg_sorted, pos_scores, side="right") - below
    v10 = (below + 0.5 * tied) / neg_sorted.size
    above = pos_sorted.size - np.searchsorted(pos_sorted, neg_scores, side="right")
    tied_n = np.searchsorted(pos_sorted, neg_scores, side="right") \
        - np.searchsorted(pos_sorted, neg_scores, side="left")
    v01 = (above + 0.5 * tied_n) / pos_sorted.size
    var = 0.0
    if v10.size > 1:
        var += float(np.var(v10, ddof=1)) / v10.size
    if v01.size > 1:
        var += float(np.var(v01, ddof=1)) / v01.size
    return var


def delong_auc(
    pos_scores: FloatArray, neg_scores: FloatArray, value: float, confidence: float
) -> tuple[float, float]:
    """DeLong's interval of the AUC from the structural components (``O(n log n)``).

    Args:
        pos_scores: Scores of the positives.
        neg_scores: Scores of the negatives.
        value: The AUC of these scores (ties count half).
        confidence: Two-sided confidence level.

    Returns:
        ``(lo, hi)``, the Wald interval clipped to [0, 1]. Where the variance is 0 (complete
        separation) the caller uses :func:`newcombe_auc` instead.

    Example:
        Eight of the nine positive-negative pairs are ordered right (AUC 8/9); the upper end
        is clipped at 1:

        >>> import numpy as np
        >>> pos, neg = np.array([0.9, 0.8, 0.4]), np.array([0.7, 0.3, 0.2])
        >>> lo, hi = delong_auc(pos, neg, 8 / 9, 0.95)
        >>> round(lo, 3), hi
        (0.581, 1.0)
    """
    var = delong_variance(pos_scores, neg_scores)
    half = _z(confidence) * math.sqrt(max(var, 0.0))
    return _clip(value - half, value + half)


def logit_ap(value: float, n_pos: int, confidence: float) -> tuple[float, float]:
    """Logit interval of the average precision (Boyd, Eng & Page 2013).

    ``logit(AP) +- z / sqrt(n_pos * AP * (1 - AP))``, mapped back; at AP of 0 or 1 it is
    undefined and the caller uses the Clopper-Pearson interval over the positives instead.

    Example:
        At AP = 0.5 with 100 positives, ``logit(AP) = 0`` and ``tau = 1 / sqrt(25) = 0.2``:

        >>> lo, hi = logit_ap(0.5, 100, 0.95)
        >>> round(lo, 3), round(hi, 3)
        (0.403, 0.597)
    """
    if not 0.0 < value < 1.0:
        return clopper_pearson_rate(value * n_pos, n_pos, confidence)
    eta = math.log(value / (1.0 - value))
    tau = 1.0 / math.sqrt(n_pos * value * (1.0 - value))
    z = _z(confidence)
    return 1.0 / (1.0 + math.exp(-(eta - z * tau))), 1.0 / (1.0 + math.exp(-(eta + z * tau)))
