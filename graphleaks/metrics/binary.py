"""Metrics of binary attack scores: membership, link and other yes/no inference tasks.

Every function takes ``scores`` (1-D floats, higher = more likely positive) and ``labels``
(1-D, 0/1, 1 = positive, e.g. member or edge) and predicts *positive* when
``score >= threshold``. ROC quantities are computed exactly from the sorted scores; tied scores
move together, so ties count half in the AUC.

Metrics that choose their threshold with the labels (:func:`max_advantage`,
:func:`best_balanced_accuracy`, the ``tpr_at_fpr`` points) are *oracle* values: an attacker
would have to pick the threshold without the labels, e.g. on shadow data. Report them as upper
bounds of what a fixed-threshold attack achieves, next to the threshold-free AUC.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.errors import InvalidConfigError
from graphleaks.metrics import intervals as ci
from graphleaks.metrics._core import (
    FloatArray,
    RocCounts,
    check_binary,
    check_bootstrap_args,
)
from graphleaks.metrics.bootstrap import binary_count_chunks, percentile_interval

__all__ = [
    "BinaryEvaluation",
    "BinaryMetrics",
    "Estimate",
    "IntervalChoice",
    "ThresholdEstimates",
    "ThresholdMetrics",
    "advantage_from_accuracy",
    "auc",
    "auc_tpr_estimates",
    "average_precision",
    "best_balanced_accuracy",
    "binary_metrics",
    "choose_intervals",
    "duddu_onehot_confidence_accuracy",
    "evaluate_binary",
    "max_advantage",
    "roc_curve",
    "threshold_metrics",
    "tpr_at_fpr",
]



# --------------------------------------------------------------------------- validation


def _check_fpr(fpr: float, owner: str) -> float:
    """Validate a false-positive-rate target in [0, 1]."""
    if isinstance(fpr, bool) or not isinstance(fpr, (int, float, np.integer, np.floating)):
        raise InvalidConfigError(
            f"The 'fpr' parameter of {owner} must be a float in [0, 1]. Got {fpr!r} instead."
        )
    if not 0.0 <= float(fpr) <= 1.0:
        raise InvalidConfigError(
            f"The 'fpr' parameter of {owner} must be a float in [0, 1]. Got {fpr!r} instead."
        )
    return float(fpr)


# --------------------------------------------------------------------------- rates


def _rates_at_counts(
    tp: FloatArray, fp: FloatArray, n_pos: FloatArray, n_neg: FloatArray
) -> dict[str, FloatArray]:
    """Fixed-threshold metrics from (weighted) confusion counts, elementwise."""
    fn = n_pos - tp
    tn = n_neg - fp
    recall = tp / n_pos
    fpr = fp / n_neg
    accuracy = (tp + tn) / (n_pos + n_neg)
    precision = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=(tp + fp) > 0)
    f1_den = 2.0 * tp + fp + fn
    f1 = np.divide(2.0 * tp, f1_den, out=np.zeros_like(tp), where=f1_den > 0)
    return {
        "accuracy": accuracy,
        "balanced_accuracy": 0.5 * (recall + 1.0 - fpr),
        "precision": precision,
        "recall": recall,
        "fpr": fpr,
        "f1": f1,
        "advantage": recall - fpr,
    }


# --------------------------------------------------------------------------- point metrics


def roc_curve(
    scores: npt.ArrayLike, labels: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """ROC curve with every threshold kept (sklearn's ``roc_curve(drop_intermediate=False)``).

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.

    Returns:
        ``(fpr, tpr, thresholds)``; thresholds are decreasing and the first is ``inf``
        (nothing predicted positive), so the curve starts at (0, 0) and ends at (1, 1).

    Raises:
        DataError: If the inputs are malformed or a class is missing.

    Example:
        >>> fpr, tpr, thr = roc_curve([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0])
        >>> tpr.tolist()
        [0.0, 0.5, 0.5, 1.0, 1.0]
    """
    from sklearn.metrics import roc_curve as _sk_roc_curve

    s, y = check_binary(scores, labels, "roc_curve")
    fpr, tpr, thr = _sk_roc_curve(y.astype(np.int64), s, drop_intermediate=False)
    return (
        np.asarray(fpr, dtype=np.float64),
        np.asarray(tpr, dtype=np.float64),
        np.asarray(thr, dtype=np.float64),
    )


def roc_points(
    scores: npt.ArrayLike, labels: npt.ArrayLike, *, max_points: int = 200
) -> dict[str, list[float]]:
    """A compact ROC curve for reports and log-log plots.

    Keeps the ROC vertices whose FPR is nearest to ``max_points`` log-spaced targets in
    ``[1/n_neg, 1]`` plus the end points, so the low-FPR region stays resolved.

    Returns:
        ``{"fpr": [...], "tpr": [...]}``, sorted by FPR.

    Example:
        >>> roc_points([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0])["tpr"]
        [0.5, 1.0, 1.0]
    """
    fpr, tpr, _ = roc_curve(scores, labels)
    n_neg = max(1, int(np.sum(np.asarray(labels) == 0)))
    return _compact_roc(fpr, tpr, n_neg, max_points)


def _compact_roc(
    fpr: FloatArray, tpr: FloatArray, n_neg: int, max_points: int
) -> dict[str, list[float]]:
    """The :func:`roc_points` of a full ROC curve (``fpr``/``tpr`` at every threshold)."""
    # The upper envelope: for each distinct FPR keep the best TPR.
    uniq, first = np.unique(fpr, return_index=True)
    best = np.maximum.reduceat(tpr, first)
    targets = np.geomspace(1.0 / n_neg, 1.0, num=max(2, max_points))
    idx = np.unique(np.concatenate([[0, len(uniq) - 1],
                                    np.searchsorted(uniq, targets, side="right") - 1]))
    idx = idx[idx >= 0]
    return {"fpr": uniq[idx].tolist(), "tpr": best[idx].tolist()}


def auc(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Area under the ROC curve; tied scores count half.

    Equals the probability that a random positive scores higher than a random negative
    (Mann-Whitney U / (n_pos * n_neg)).

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.

    Returns:
        The AUC in [0, 1]; 0.5 is chance.

    Raises:
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> auc([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0])
        0.75
    """
    s, y = check_binary(scores, labels, "auc")
    return float(RocCounts.single(s, y).auc()[0])


def average_precision(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Average precision: sum over thresholds of (recall increment) x precision.

    Same definition as ``sklearn.metrics.average_precision_score`` (no interpolation). Its
    chance level is the positive fraction, not 0.5.

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.

    Returns:
        The average precision in [0, 1].

    Raises:
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> round(average_precision([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]), 4)
        0.8333
    """
    s, y = check_binary(scores, labels, "average_precision")
    return float(RocCounts.single(s, y).average_precision()[0])


def tpr_at_fpr(scores: npt.ArrayLike, labels: npt.ArrayLike, fpr: float) -> float:
    """True-positive rate at a false-positive rate of ``fpr``: the randomised operating point.

    Without ties this is the largest TPR of a real threshold with FPR <= ``fpr``. When the
    ``fpr`` point falls inside a group of tied scores that holds negatives and positives (e.g.
    55 non-members and 47 members at softmax 1.0), no real threshold reaches it and the
    largest such TPR can be exactly 0 although the attack separates well. The value is then
    the expected TPR of the randomised classifier that flags every score above the group and
    each member of the group with probability ``p``, chosen so that its expected FPR is
    ``fpr`` exactly: the interpolation along that ROC segment (the randomised decision rule
    of Neyman-Pearson testing; Fawcett 2006, "An introduction to ROC analysis", §7). Such a
    classifier is achievable, so this does not overstate the attack; interpolation between
    *distinct* thresholds is never done (a tie-free step moves FPR alone). If ``fpr`` is
    below ``1 / n_neg`` on untied scores, the only feasible points have FPR = 0. The threshold
    is chosen with the labels, so this is an oracle value at the given FPR.

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.
        fpr: Target false-positive rate in [0, 1].

    Returns:
        The TPR in [0, 1].

    Raises:
        InvalidConfigError: If ``fpr`` is not in [0, 1].
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> tpr_at_fpr([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], 0.0)
        0.5
        >>> tpr_at_fpr([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], 0.5)
        1.0

        Two of four negatives and two of four positives tied at the top: at FPR 0.25 half
        the tie is flagged (no real threshold gives more than TPR 0 there).

        >>> tpr_at_fpr([1.0, 1.0, 1.0, 1.0, 0.5, 0.4, 0.3, 0.2],
        ...            [1, 1, 0, 0, 1, 0, 1, 0], 0.25)
        0.25
    """
    target = _check_fpr(fpr, "tpr_at_fpr")
    s, y = check_binary(scores, labels, "tpr_at_fpr")
    return float(RocCounts.single(s, y).tpr_at(target)[0])


def max_advantage(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Maximum membership advantage ``max_t TPR(t) - FPR(t)`` (Yeom et al. 2018; He et al.).

    The threshold is chosen with the labels, so this is an **oracle** advantage: an upper bound
    of what an attacker with a fixed, label-free threshold achieves. It equals
    ``2 * (best_balanced_accuracy - 0.5)`` and is at least 0 (the empty threshold).

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.

    Returns:
        The advantage in [0, 1].

    Raises:
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> max_advantage([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0])
        0.5
    """
    s, y = check_binary(scores, labels, "max_advantage")
    return float(RocCounts.single(s, y).max_advantage()[0])


def advantage_from_accuracy(accuracy: float) -> float:
    """Membership advantage from a balanced attack accuracy: ``2 * (accuracy - 0.5)``.

    This is how Duddu et al. (GraphLeaks) turn an attack accuracy on a balanced evaluation set
    into an advantage over random guessing.

    Args:
        accuracy: Attack accuracy in [0, 1], on a balanced set (or a balanced accuracy).

    Returns:
        The advantage in [-1, 1].

    Raises:
        InvalidConfigError: If ``accuracy`` is not in [0, 1].

    Example:
        >>> round(advantage_from_accuracy(0.7828), 4)
        0.5656
    """
    if (
        isinstance(accuracy, bool)
        or not isinstance(accuracy, (int, float, np.integer, np.floating))
        or not 0.0 <= float(accuracy) <= 1.0
    ):
        raise InvalidConfigError(
            "The 'accuracy' parameter of advantage_from_accuracy must be a float in [0, 1]. "
            f"Got {accuracy!r} instead."
        )
    return 2.0 * (float(accuracy) - 0.5)


@dataclass(frozen=True)
class ThresholdMetrics:
    """Metrics of the fixed decision rule ``score >= threshold`` -> positive.

    Attributes:
        threshold: The decision threshold.
        accuracy: (TP + TN) / n.
        balanced_accuracy: (TPR + TNR) / 2.
        precision: TP / (TP + FP); 0.0 when nothing is predicted positive.
        recall: TP / n_pos (the TPR).
        fpr: FP / n_neg.
        f1: Harmonic mean of precision and recall; 0.0 when TP = 0.
        advantage: TPR - FPR at this threshold.
        advantage_paper: ``2 * (accuracy - 0.5)``, the Duddu et al. convention (equals
            ``advantage`` only on balanced data).
        n_pos: Number of positives.
        n_neg: Number of negatives.
    """

    threshold: float
    accuracy: float
    balanced_accuracy: float
    precision: float
    recall: float
    fpr: float
    f1: float
    advantage: float
    advantage_paper: float
    n_pos: int
    n_neg: int

    def to_dict(self) -> dict[str, float | int]:
        """Return the fields as a JSON-safe dict."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def threshold_metrics(
    scores: npt.ArrayLike, labels: npt.ArrayLike, threshold: float
) -> ThresholdMetrics:
    """Confusion-matrix metrics of predicting positive when ``score >= threshold``.

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.
        threshold: Decision threshold (e.g. chosen on shadow data).

    Returns:
        The :class:`ThresholdMetrics`. Precision is 0.0 when no example is predicted positive.

    Raises:
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> m = threshold_metrics([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], 0.7)
        >>> m.accuracy, m.precision, m.recall, m.fpr
        (0.75, 0.6666666666666666, 1.0, 0.5)
    """
    s, y = check_binary(scores, labels, "threshold_metrics")
    t = float(threshold)
    hit = s >= t
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    rates = _rates_at_counts(
        np.array([float(np.sum(hit & y))]),
        np.array([float(np.sum(hit & ~y))]),
        np.array([float(n_pos)]),
        np.array([float(n_neg)]),
    )
    values = {k: float(v[0]) for k, v in rates.items()}
    return ThresholdMetrics(
        threshold=t,
        advantage_paper=2.0 * (values["accuracy"] - 0.5),
        n_pos=n_pos,
        n_neg=n_neg,
        **values,
    )


def best_balanced_accuracy(scores: npt.ArrayLike, labels: npt.ArrayLike) -> tuple[float, float]:
    """Best balanced accuracy over all score thresholds: an **oracle upper bound**.

    This is the threshold search of Duddu et al.'s confidence attack (after Song et al.'s
    ``inference_via_confidence``), computed correctly: for every score value ``t``,
    ``0.5 * (TPR(t) + 1 - FPR(t))``, maximised and floored at 0.5. The threshold is picked on
    the evaluation set with the labels, so the value upper-bounds any attacker that must fix the
    threshold beforehand; select thresholds on shadow data for an honest estimate.

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.

    Returns:
        ``(balanced_accuracy, threshold)``; among equally good thresholds the highest is
        returned.

    Raises:
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> best_balanced_accuracy([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0])
        (0.75, 0.9)
    """
    s, y = check_binary(scores, labels, "best_balanced_accuracy")
    return _best_balanced(RocCounts.single(s, y))


def _best_balanced(roc: RocCounts) -> tuple[float, float]:
    """:func:`best_balanced_accuracy` from the ROC counts of the data (one row)."""
    bal = 0.5 * (roc.tpr[0, 1:] + 1.0 - roc.fpr[0, 1:])
    best = int(np.argmax(bal))
    return max(float(bal[best]), 0.5), float(roc.thresholds[1 + best])


def duddu_onehot_confidence_accuracy(
    expanded_scores: npt.ArrayLike,
    expanded_labels: npt.ArrayLike,
    n_members: int,
    n_nonmembers: int,
) -> float:
    """Reproduce GraphLeaks' **buggy** confidence-attack accuracy (compatibility only).

    The original notebooks index the posterior with one-hot label vectors, so each node
    contributes ``C`` "confidence" entries (p_0 repeated ``C - 1`` times and p_1 once, whatever
    its class), while the rates are still divided by the number of nodes (``attacks.md`` §1.2,
    bug P1-1). For each threshold ``d`` in the sorted union of entries this computes
    ``TPR = #(member entries >= d) / n_members`` and ``FPR = #(nonmember entries >= d) /
    n_nonmembers`` (both may exceed 1), ``acc = 0.5 * (TPR + 1 - FPR)``, and returns the maximum
    floored at 0.5. The result is **not** a membership-inference accuracy and can exceed 1; use
    it only to reproduce the published Duddu et al. numbers. Use
    :func:`best_balanced_accuracy` on true-class confidences for the correct (oracle) value.

    Args:
        expanded_scores: The flattened ``n * C`` entries of members and non-members.
        expanded_labels: 1 for entries that come from a member, 0 for a non-member.
        n_members: Number of member nodes (the original TPR denominator).
        n_nonmembers: Number of non-member nodes (the original FPR denominator).

    Returns:
        The maximum "accuracy" over thresholds, floored at 0.5.

    Raises:
        InvalidConfigError: If ``n_members`` or ``n_nonmembers`` is not a positive int.
        DataError: If the inputs are malformed or a class is missing.

    Example:
        >>> duddu_onehot_confidence_accuracy(
        ...     [0.9, 0.9, 0.8, 0.9, 0.1, 0.1, 0.9, 0.1], [1, 1, 1, 1, 0, 0, 0, 0], 2, 2)
        1.25
    """
    for name, value in (("n_members", n_members), ("n_nonmembers", n_nonmembers)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidConfigError(
                f"The '{name}' parameter of duddu_onehot_confidence_accuracy must be an int in "
                f"[1, inf). Got {value!r} instead."
            )
    s, y = check_binary(expanded_scores, expanded_labels, "duddu_onehot_confidence_accuracy")
    member = np.sort(s[y])
    nonmember = np.sort(s[~y])
    deltas = np.unique(s)
    tpr = (member.size - np.searchsorted(member, deltas, side="left")) / n_members
    fpr = (nonmember.size - np.searchsorted(nonmember, deltas, side="left")) / n_nonmembers
    return max(float(np.max(0.5 * (tpr + 1.0 - fpr))), 0.5)


# --------------------------------------------------------------------------- with intervals


_BOOTSTRAP = ci.BOOTSTRAP  # the class body's own ``ci`` property hides the module


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval and the method that gave the interval.

    Attributes:
        value: The metric on the evaluation set.
        lo: Lower end of the interval.
        hi: Upper end of the interval.
        method: How the interval was computed: ``"percentile-bootstrap"`` by default, or one
            of the analytic methods of :mod:`graphleaks.metrics.intervals` (at the boundary of
            the metric's range, or above the bootstrap size limit).

    A percentile-bootstrap interval is built with :meth:`covering`: it always holds its own
    point estimate. The percentile interval alone need not: when every replicate falls on
    one side of the estimate (a statistic biased under resampling, such as the oracle
    ``max_advantage`` or a TPR at a low FPR, or few replicates), both percentiles do, and
    an interval that excludes the number it qualifies reads as a contradiction (and broke
    the report's error bars). The interval is then stretched to the estimate, which only
    widens it.
    """

    value: float
    lo: float
    hi: float
    method: str = ci.BOOTSTRAP

    @property
    def ci(self) -> tuple[float, float]:
        """The interval ``(lo, hi)``."""
        return (self.lo, self.hi)

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"value": v, "ci": [lo, hi], "method": m}``."""
        return {"value": self.value, "ci": [self.lo, self.hi], "method": self.method}

    @classmethod
    def covering(cls, value: float, lo: float, hi: float, method: str = _BOOTSTRAP
                 ) -> Estimate:
        """An estimate whose interval is ``[lo, hi]`` stretched to hold ``value``.

        Example:
            >>> Estimate.covering(0.80, 0.81, 0.93)
            Estimate(value=0.8, lo=0.8, hi=0.93, method='percentile-bootstrap')
        """
        value = float(value)
        return cls(value, min(float(lo), value), max(float(hi), value), method)

    @classmethod
    def from_replicates(cls, values: FloatArray, confidence: float) -> Estimate:
        """Build from ``values[0]`` (the data) and ``values[1:]`` (bootstrap replicates)."""
        lo, hi = percentile_interval(values[1:], confidence)
        return cls.covering(float(values[0]), lo, hi)


@dataclass(frozen=True)
class ThresholdEstimates:
    """Fixed-threshold metrics with bootstrap intervals (see :class:`ThresholdMetrics`).

    Attributes:
        threshold: The decision threshold (``score >= threshold`` -> positive).
        accuracy: Accuracy.
        balanced_accuracy: Balanced accuracy.
        precision: Precision (0.0 when nothing is predicted positive).
        recall: Recall (TPR).
        fpr: False-positive rate.
        f1: F1 score.
        advantage: TPR - FPR at the threshold.
    """

    threshold: float
    accuracy: Estimate
    balanced_accuracy: Estimate
    precision: Estimate
    recall: Estimate
    fpr: Estimate
    f1: Estimate
    advantage: Estimate

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict."""
        out: dict[str, Any] = {"threshold": self.threshold}
        for name in self.__dataclass_fields__:
            if name != "threshold":
                out[name] = getattr(self, name).to_dict()
        return out


def _fpr_key(fpr: float) -> str:
    """JSON key of an FPR point: the shortest round-tripping repr, e.g. ``"0.001"``."""
    return repr(float(fpr))


#: How ``tpr_at_fpr`` treats a target FPR inside a tie (recorded in every report).
TPR_AT_FPR_RANDOMISED = "randomised-at-ties"
#: The rule of reports written before it: the largest TPR of a real threshold.
TPR_AT_FPR_THRESHOLD = "real-threshold"
#: One line for reports on the rule of :data:`TPR_AT_FPR_RANDOMISED`.
TPR_AT_FPR_NOTE = (
    "TPR@x FPR is read at FPR = x exactly: where x falls inside a group of tied scores, the "
    "tied group is flagged with the probability that makes the expected FPR x (a randomised "
    "threshold), and the TPR is interpolated along that ROC segment; without ties it is the "
    "TPR of the best real threshold with FPR <= x.")

# Above this many scored candidates the bootstrap is replaced by analytic intervals: drawing
# B x n counts then costs far more than the attack (1000 x 400k draws at a 1M-node audit).
ANALYTIC_ABOVE = 200_000
#: Fewest positives and negatives for which :func:`choose_intervals` picks analytic
#: intervals below :data:`ANALYTIC_ABOVE`: DeLong's and the binomial intervals are large-
#: sample intervals, and on fewer candidates the bootstrap is the more honest choice.
ANALYTIC_MIN_PER_SIDE = 200
#: Largest share of the candidates one group of tied scores may hold for analytic intervals.
#: A big tie puts TPR@FPR on a randomised operating point whose interval the analytic
#: floor/ceil Clopper-Pearson rule only brackets; the bootstrap resamples the tie itself.
TIED_SHARE = 0.01
#: Values of ``intervals`` (:func:`binary_metrics`, :func:`choose_intervals`).
ANALYTIC = "analytic"
BOOTSTRAP = "bootstrap"


@dataclass(frozen=True)
class IntervalChoice:
    """How one attack's intervals are computed, chosen once on its whole candidate set.

    Attributes:
        method: :data:`ANALYTIC` or :data:`BOOTSTRAP`; the attack's metrics and its slices
            all follow it (each estimate still records its own method, e.g. at a boundary).
        reason: Why, in words (for logs and benchmarks).
    """

    method: str
    reason: str


def choose_intervals(
    scores: npt.ArrayLike, labels: npt.ArrayLike, *, analytic_above: int | None = ANALYTIC_ABOVE,
    min_per_side: int = ANALYTIC_MIN_PER_SIDE, tied_share: float = TIED_SHARE,
) -> IntervalChoice:
    """Choose analytic or bootstrap intervals for one attack, on its whole candidate set.

    Analytic (DeLong for the AUC, Clopper-Pearson for rates, Newcombe for differences,
    logit for the AP; Newcombe's score interval for an AUC near 0 or 1) when the set is
    above ``analytic_above`` candidates, or when it has at least ``min_per_side`` positives
    and negatives and no group of tied scores holds more than ``tied_share`` of it. The
    percentile bootstrap otherwise: on small sets and on tied scores it is the honest
    choice. The analytic intervals cost a sort; the bootstrap costs ``n_bootstrap`` sorts
    per metric set, and for every slice again.

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.
        analytic_above: Candidate count above which intervals are always analytic; None
            never forces them.
        min_per_side: Fewest positives and negatives for analytic intervals below it.
        tied_share: Largest share of the candidates one tie may hold for analytic intervals.

    Returns:
        The :class:`IntervalChoice`.

    Raises:
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> import numpy as np
        >>> y = np.r_[np.ones(300), np.zeros(300)]
        >>> s = y + np.random.default_rng(0).normal(size=600)
        >>> choose_intervals(s, y).method, choose_intervals(s[::3], y[::3]).method
        ('analytic', 'bootstrap')
        >>> choose_intervals(np.round(s), y).method  # a few distinct values: ties
        'bootstrap'
    """
    s, y = check_binary(scores, labels, "choose_intervals")
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if analytic_above is not None and y.size > analytic_above:
        return IntervalChoice(ANALYTIC, f"more than {analytic_above} candidates")
    if min(n_pos, n_neg) < min_per_side:
        return IntervalChoice(BOOTSTRAP, f"fewer than {min_per_side} positives or negatives")
    ordered = np.sort(s)
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True])
    largest = int(np.max(np.diff(starts)))
    if largest > tied_share * y.size:
        return IntervalChoice(BOOTSTRAP, f"tied scores: one value holds more than "
                              f"{tied_share:.0%} of the candidates")
    return IntervalChoice(ANALYTIC, f"at least {min_per_side} positives and negatives, "
                          "untied scores")


@dataclass(frozen=True)
class BinaryMetrics:
    """All metrics of one binary attack evaluation, each with a confidence interval.

    Attributes:
        auc: ROC AUC.
        average_precision: Average precision.
        max_advantage: Oracle ``max_t TPR - FPR``.
        tpr_at_fpr: ``{fpr: TPR at FPR <= fpr}`` (oracle threshold per point).
        at_threshold: Metrics at the fixed ``threshold`` given to :func:`binary_metrics`, or
            None.
        n_pos: Number of positives.
        n_neg: Number of negatives.
        n_bootstrap: Number of bootstrap replicates (0 when every interval is analytic).
        confidence: Two-sided confidence level of the intervals.
        seed: Seed of the bootstrap.
        interval: ``"percentile-bootstrap"`` (analytic only at the boundary) or
            ``"analytic"`` (above the size limit); each estimate names its own method.
        tpr_at_fpr_rule: How ``tpr_at_fpr`` reads a target FPR inside a tie:
            :data:`TPR_AT_FPR_RANDOMISED` (see :func:`tpr_at_fpr`), or
            :data:`TPR_AT_FPR_THRESHOLD` in reports written before that rule.
    """

    auc: Estimate
    average_precision: Estimate
    max_advantage: Estimate
    tpr_at_fpr: Mapping[float, Estimate]
    at_threshold: ThresholdEstimates | None
    n_pos: int
    n_neg: int
    n_bootstrap: int
    confidence: float
    seed: int
    interval: str = ci.BOOTSTRAP
    tpr_at_fpr_rule: str = TPR_AT_FPR_RANDOMISED

    @property
    def miscalibrated(self) -> bool:
        """Whether the AUC interval lies entirely below chance (0.5).

        Such an attack ranks positives *below* negatives more often than chance: its scores
        are inverted or badly calibrated, which is never evidence of "no leak".
        """
        return self.auc.hi < 0.5

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict: intervals as ``[lo, hi]``, FPR keys as strings."""
        return {
            "auc": self.auc.to_dict(),
            "average_precision": self.average_precision.to_dict(),
            "max_advantage": self.max_advantage.to_dict(),
            "tpr_at_fpr": {_fpr_key(f): e.to_dict() for f, e in self.tpr_at_fpr.items()},
            "at_threshold": None if self.at_threshold is None else self.at_threshold.to_dict(),
            "n_pos": self.n_pos,
            "n_neg": self.n_neg,
            "n_bootstrap": self.n_bootstrap,
            "confidence": self.confidence,
            "seed": self.seed,
            "interval": self.interval,
            "tpr_at_fpr_rule": self.tpr_at_fpr_rule,
            "miscalibrated": self.miscalibrated,
        }


def _reduce_chunk(
    roc: RocCounts, targets: list[float], s_pos: FloatArray, s_neg: FloatArray,
    w_pos: FloatArray, w_neg: FloatArray, threshold: float | None, full: bool = True,
) -> dict[str, FloatArray]:
    """Every metric of a chunk of weightings (rows), reduced at once to one value per row.

    With ``full=False`` only the AUC and the TPR points (what a slice reports).
    """
    out = {"auc": roc.auc()}
    if full:
        out.update(average_precision=roc.average_precision(),
                   max_advantage=roc.max_advantage())
    for f in targets:
        out[f"tpr@{f!r}"] = roc.tpr_at(f)
    if threshold is not None:
        tp = w_pos @ (s_pos >= threshold).astype(np.float64)
        fp = w_neg @ (s_neg >= threshold).astype(np.float64)
        for k, v in _rates_at_counts(tp, fp, roc.n_pos, roc.n_neg).items():
            out[f"at:{k}"] = v
    return out


def _f1(p: float, r: float) -> float:
    return 2.0 * p * r / (p + r) if p + r > 0 else 0.0


def _analytic_intervals(
    roc: RocCounts, s_pos: FloatArray, s_neg: FloatArray, targets: list[float],
    counts_at: tuple[float, float] | None, confidence: float, full: bool = True,
) -> dict[str, tuple[float, float, str]]:
    """Closed-form ``(lo, hi, method)`` of every metric (see :mod:`.intervals`).

    With ``full=False`` only the AUC and the TPR points.

    Args:
        roc: ROC counts of the data itself (one row).
        s_pos: Scores of the positives.
        s_neg: Scores of the negatives.
        targets: FPR points of ``tpr_at_fpr``.
        counts_at: ``(tp, fp)`` at the fixed threshold, or None.
        confidence: Two-sided confidence level.
    """
    n_pos, n_neg = float(roc.n_pos[0]), float(roc.n_neg[0])
    out: dict[str, tuple[float, float, str]] = {}
    a = float(roc.auc()[0])
    # the score interval also serves near the boundary, where the bootstrap is truncated
    out["auc:score"] = (*ci.newcombe_auc(a, int(n_pos), int(n_neg), confidence),
                        ci.NEWCOMBE_AUC)
    if 0.0 < a < 1.0:
        out["auc"] = (*ci.delong_auc(s_pos, s_neg, a, confidence), ci.DELONG)
    else:  # complete separation: DeLong's variance is 0, the score interval is not
        out["auc"] = (*ci.newcombe_auc(a, int(n_pos), int(n_neg), confidence), ci.NEWCOMBE_AUC)
    if full:
        _analytic_full(out, roc, counts_at, confidence)
    level = ci.box_level(confidence)
    for f in targets:
        # the threshold of FPR f is itself estimated from the negatives: bracket it by two
        # empirical thresholds, then bound the TPR at each over the positives (a box, each
        # side at sqrt(confidence)). A randomised operating point has a fractional expected
        # count k: floor(k)'s lower and ceil(k)'s upper bound hold both real thresholds.
        f_lo, f_hi = ci.threshold_fpr_range(f, n_neg, level)
        k_lo = math.floor(float(roc.tpr_at(float(f_lo))[0]) * n_pos + 1e-9)
        k_hi = math.ceil(float(roc.tpr_at(float(f_hi))[0]) * n_pos - 1e-9)
        out[f"tpr@{f!r}"] = (ci.clopper_pearson_rate(k_lo, n_pos, level)[0],
                             ci.clopper_pearson_rate(k_hi, n_pos, level)[1],
                             ci.CLOPPER_PEARSON_BOX)
    return out


def _analytic_full(
    out: dict[str, tuple[float, float, str]], roc: RocCounts,
    counts_at: tuple[float, float] | None, confidence: float,
) -> None:
    """The analytic intervals of the AP, the advantage and the fixed-threshold rates."""
    n_pos, n_neg = float(roc.n_pos[0]), float(roc.n_neg[0])
    ap = float(roc.average_precision()[0])
    out["average_precision"] = (
        (*ci.logit_ap(ap, int(n_pos), confidence), ci.LOGIT_AP) if 0.0 < ap < 1.0 else
        (*ci.clopper_pearson_rate(ap * n_pos, n_pos, confidence), ci.CLOPPER_PEARSON))
    best = int(np.argmax(roc.tp[0] / n_pos - roc.fp[0] / n_neg))
    lo, hi = ci.newcombe_difference(roc.tp[0, best], n_pos, roc.fp[0, best], n_neg, confidence)
    out["max_advantage"] = (max(0.0, lo), hi, ci.NEWCOMBE_DIFF)
    if counts_at is not None:
        tp, fp = counts_at
        cp = ci.CLOPPER_PEARSON
        out["at:accuracy"] = (*ci.clopper_pearson_rate(tp + n_neg - fp, n_pos + n_neg,
                                                       confidence), cp)
        out["at:recall"] = (*ci.clopper_pearson_rate(tp, n_pos, confidence), cp)
        out["at:fpr"] = (*ci.clopper_pearson_rate(fp, n_neg, confidence), cp)
        out["at:precision"] = (*ci.clopper_pearson_rate(tp, tp + fp, confidence), cp)
        lo, hi = ci.newcombe_difference(tp, n_pos, fp, n_neg, confidence)
        out["at:advantage"] = (lo, hi, ci.NEWCOMBE_DIFF)
        out["at:balanced_accuracy"] = ((1.0 + lo) / 2.0, (1.0 + hi) / 2.0, ci.NEWCOMBE_DIFF)
        # F1 increases in precision and recall: the F1 of their bounds bounds it.
        p_lo, p_hi = out["at:precision"][:2]
        r_lo, r_hi = out["at:recall"][:2]
        out["at:f1"] = (_f1(p_lo, r_lo), _f1(p_hi, r_hi), ci.MONOTONE_F1)


def _at_boundary(key: str, value: float) -> bool:
    """Whether ``value`` is at an end of the metric's range, where percentile intervals collapse."""
    low = -1.0 if key == "at:advantage" else 0.0
    return value <= low or value >= 1.0


def auc_near_boundary(value: float, score_lo: float, score_hi: float) -> bool:
    """Whether an AUC is so near 0 or 1 that its percentile bootstrap is truncated.

    Near the boundary the resampled AUCs pile up against it (an AUC of 0.99995 from 31
    positives gave ``[1.000, 1.000]``). The rule: the AUC is near the boundary when the score
    interval (Newcombe 2006) reaches farther into the range than the estimate is from the
    boundary, i.e. an interval of that half-width centred on the estimate would cross 0 or 1.
    """
    return value - score_lo > 1.0 - value or score_hi - value > value


def binary_metrics(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    *,
    threshold: float | None = None,
    fpr_points: Sequence[float] = (1e-3, 1e-2, 1e-1),
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int,
    analytic_above: int | None = ANALYTIC_ABOVE,
    intervals: str | None = None,
) -> BinaryMetrics:
    """Compute every binary attack metric with confidence intervals.

    Intervals are stratified percentile-bootstrap intervals: all metrics share the same
    replicates (drawn as in :func:`graphleaks.metrics.bootstrap_ci` with ``stratified=True``),
    drawn and reduced a chunk of replicates at a time, so memory is ``O(n)`` whatever
    ``n_bootstrap``. Two exceptions, each recorded as the estimate's ``method``:

    * a metric whose value is at an end of its range (an AUC or rate of 0 or 1) gets the
      analytic interval of :mod:`graphleaks.metrics.intervals`, since every replicate of it
      is then at that end too and the percentile interval collapses to a point; an AUC
      *near* an end (see :func:`auc_near_boundary`) gets Newcombe's score interval too;
    * above ``analytic_above`` candidates (or with ``intervals="analytic"``) every interval
      is analytic (DeLong for the AUC, Clopper-Pearson for rates, Newcombe for differences,
      logit for the AP; Newcombe's score interval for an AUC near 0 or 1) and no replicate
      is drawn.

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.
        threshold: Optional fixed decision threshold, e.g. chosen on shadow data; adds
            :class:`ThresholdEstimates` (default: None).
        fpr_points: FPR targets for ``tpr_at_fpr`` (default: 0.1 %, 1 %, 10 %).
        n_bootstrap: Number of bootstrap replicates (default: 1000).
        confidence: Two-sided confidence level (default: 0.95).
        seed: Seed of the bootstrap; the same seed gives the same intervals.
        analytic_above: Candidate count above which the intervals are analytic (default:
            200,000); None always bootstraps.
        intervals: None (default) bootstraps up to ``analytic_above`` candidates;
            ``"analytic"`` or ``"bootstrap"`` forces the method (an audit chooses it once
            per attack with :func:`choose_intervals`, for the attack and its slices);
            ``"auto"`` applies :func:`choose_intervals` here. The boundary rules above hold
            in every case.

    Returns:
        The :class:`BinaryMetrics`.

    Raises:
        InvalidConfigError: If an FPR point, ``n_bootstrap`` or ``confidence`` is out of range.
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> m = binary_metrics([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], n_bootstrap=20, seed=0)
        >>> m.auc.value, m.tpr_at_fpr[0.1].value
        (0.75, 0.5)
    """
    check_bootstrap_args(n_bootstrap, confidence, "binary_metrics")
    targets = [_check_fpr(f, "binary_metrics") for f in fpr_points]
    s, y = check_binary(scores, labels, "binary_metrics")
    use_analytic = _use_analytic(s, y, intervals, analytic_above, "binary_metrics")
    t = None if threshold is None else float(threshold)
    est, _ = _estimates(s, y, targets, t, n_bootstrap=n_bootstrap, confidence=float(confidence),
                        seed=seed, use_analytic=use_analytic, full=True)
    return _assemble(est, y, targets, t, n_bootstrap, float(confidence), seed, use_analytic)


def _assemble(
    est: Mapping[str, Estimate], y: npt.NDArray[np.bool_], targets: list[float],
    t: float | None, n_bootstrap: int, confidence: float, seed: int, use_analytic: bool,
) -> BinaryMetrics:
    at_threshold = None
    if t is not None:
        rates = ("accuracy", "balanced_accuracy", "precision", "recall", "fpr", "f1",
                 "advantage")
        at_threshold = ThresholdEstimates(t, **{k: est[f"at:{k}"] for k in rates})
    n_pos = int(y.sum())
    return BinaryMetrics(
        auc=est["auc"],
        average_precision=est["average_precision"],
        max_advantage=est["max_advantage"],
        tpr_at_fpr={f: est[f"tpr@{f!r}"] for f in targets},
        at_threshold=at_threshold,
        n_pos=n_pos,
        n_neg=int(y.size - n_pos),
        n_bootstrap=0 if use_analytic else n_bootstrap,
        confidence=confidence,
        seed=seed,
        interval="analytic" if use_analytic else ci.BOOTSTRAP,
    )


@dataclass(frozen=True)
class BinaryEvaluation:
    """One attack's binary metrics, ROC curve and oracle accuracy, from one ROC computation.

    Attributes:
        metrics: The :class:`BinaryMetrics`, intervals of the method in ``intervals``.
        roc: The compact ROC curve of :func:`roc_points`.
        oracle_balanced_accuracy: ``(accuracy, threshold)`` of
            :func:`best_balanced_accuracy`.
        intervals: The interval method chosen on the whole candidate set; the attack's
            slices follow it (:func:`graphleaks.metrics.slices.slice_metrics`).
    """

    metrics: BinaryMetrics
    roc: dict[str, list[float]]
    oracle_balanced_accuracy: tuple[float, float]
    intervals: IntervalChoice


def evaluate_binary(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    *,
    threshold: float | None = None,
    fpr_points: Sequence[float] = (1e-3, 1e-2, 1e-1),
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int,
    analytic_above: int | None = ANALYTIC_ABOVE,
    max_roc_points: int = 200,
) -> BinaryEvaluation:
    """Everything an audit reports of one binary attack, computed once.

    The interval method is chosen once on the whole candidate set
    (:func:`choose_intervals`); the data is sorted once, and the ROC curve and the oracle
    accuracy are read from the same counts as the metrics. The values equal those of
    :func:`binary_metrics` (with that method), :func:`roc_points` and
    :func:`best_balanced_accuracy`.

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.
        threshold: Optional fixed decision threshold (see :func:`binary_metrics`).
        fpr_points: FPR targets for ``tpr_at_fpr``.
        n_bootstrap: Bootstrap replicates, when the bootstrap is chosen.
        confidence: Two-sided confidence level.
        seed: Seed of the bootstrap.
        analytic_above: See :func:`choose_intervals`.
        max_roc_points: See :func:`roc_points`.

    Returns:
        The :class:`BinaryEvaluation`.

    Raises:
        InvalidConfigError: If an FPR point, ``n_bootstrap`` or ``confidence`` is out of range.
        DataError: If the inputs are malformed or only one class is present.

    Example:
        >>> e = evaluate_binary([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], n_bootstrap=20, seed=0)
        >>> e.metrics.auc.value, e.roc["tpr"], e.oracle_balanced_accuracy, e.intervals.method
        (0.75, [0.5, 1.0, 1.0], (0.75, 0.9), 'bootstrap')
    """
    check_bootstrap_args(n_bootstrap, confidence, "evaluate_binary")
    targets = [_check_fpr(f, "evaluate_binary") for f in fpr_points]
    s, y = check_binary(scores, labels, "evaluate_binary")
    choice = choose_intervals(s, y, analytic_above=analytic_above)
    use_analytic = choice.method == ANALYTIC
    t = None if threshold is None else float(threshold)
    est, roc0 = _estimates(s, y, targets, t, n_bootstrap=n_bootstrap,
                           confidence=float(confidence), seed=seed, use_analytic=use_analytic,
                           full=True)
    metrics = _assemble(est, y, targets, t, n_bootstrap, float(confidence), seed, use_analytic)
    n_neg = max(1, int(roc0.n_neg[0]))
    roc = _compact_roc(roc0.fpr[0], roc0.tpr[0], n_neg, max_roc_points)
    return BinaryEvaluation(metrics, roc, _best_balanced(roc0), choice)


def auc_tpr_estimates(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    *,
    fpr_points: Sequence[float],
    n_bootstrap: int,
    confidence: float = 0.95,
    seed: int,
    intervals: str,
) -> tuple[Estimate, dict[float, Estimate]]:
    """The AUC and TPR@FPR of :func:`binary_metrics`, and nothing else (what a slice shows).

    The same numbers as ``binary_metrics(..., intervals=intervals)``'s ``auc`` and
    ``tpr_at_fpr``: the same replicates for the same seed, reduced to these metrics only.

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.
        fpr_points: FPR targets.
        n_bootstrap: Bootstrap replicates (unused for analytic intervals).
        confidence: Two-sided confidence level.
        seed: Seed of the bootstrap.
        intervals: ``"analytic"`` or ``"bootstrap"`` (see :func:`binary_metrics`).

    Returns:
        ``(auc, {fpr: tpr})`` estimates.

    Example:
        >>> a, t = auc_tpr_estimates([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], fpr_points=(0.1,),
        ...                          n_bootstrap=20, seed=0, intervals="bootstrap")
        >>> a.value, t[0.1].value
        (0.75, 0.5)
    """
    check_bootstrap_args(n_bootstrap, confidence, "auc_tpr_estimates")
    targets = [_check_fpr(f, "auc_tpr_estimates") for f in fpr_points]
    s, y = check_binary(scores, labels, "auc_tpr_estimates")
    use_analytic = _use_analytic(s, y, intervals, None, "auc_tpr_estimates")
    est, _ = _estimates(s, y, targets, None, n_bootstrap=n_bootstrap,
                        confidence=float(confidence), seed=seed, use_analytic=use_analytic,
                        full=False)
    return est["auc"], {f: est[f"tpr@{f!r}"] for f in targets}


def _use_analytic(
    s: FloatArray, y: npt.NDArray[np.bool_], intervals: str | None,
    analytic_above: int | None, owner: str,
) -> bool:
    if intervals is None:
        return analytic_above is not None and y.size > analytic_above
    if intervals == "auto":
        return choose_intervals(s, y, analytic_above=analytic_above).method == ANALYTIC
    if intervals not in (ANALYTIC, BOOTSTRAP):
        raise InvalidConfigError(
            f"The 'intervals' parameter of {owner} must be one of 'analytic', 'bootstrap', "
            f"'auto' or None. Got {intervals!r} instead.")
    return intervals == ANALYTIC


def _estimates(
    s: FloatArray, y: npt.NDArray[np.bool_], targets: list[float], t: float | None, *,
    n_bootstrap: int, confidence: float, seed: int, use_analytic: bool, full: bool,
) -> tuple[dict[str, Estimate], RocCounts]:
    """Every estimate, by key (``auc``, ``tpr@0.01``, ``at:recall``...), and the data's ROC
    counts they were read from (for the ROC curve and oracle accuracy, without a new sort)."""
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    s_pos, s_neg = s[y], s[~y]
    roc0 = RocCounts.build(s_pos, s_neg, np.ones((1, n_pos)), np.ones((1, n_neg)))
    point = {k: float(v[0]) for k, v in _reduce_chunk(
        roc0, targets, s_pos, s_neg, np.ones((1, n_pos)), np.ones((1, n_neg)), t,
        full).items()}
    counts_at = None
    if t is not None:
        counts_at = (float(np.sum(s_pos >= t)), float(np.sum(s_neg >= t)))
    analytic = _analytic_intervals(roc0, s_pos, s_neg, targets, counts_at, confidence, full)

    replicates: dict[str, list[FloatArray]] = {k: [] for k in point}
    if not use_analytic:
        for w_pos, w_neg in binary_count_chunks(y, n_bootstrap=n_bootstrap, seed=seed,
                                                stratified=True):
            wp, wn = w_pos.astype(np.float64), w_neg.astype(np.float64)
            roc = RocCounts.build(s_pos, s_neg, wp, wn)
            for k, v in _reduce_chunk(roc, targets, s_pos, s_neg, wp, wn, t, full).items():
                replicates[k].append(v)

    def est(key: str) -> Estimate:
        value = point[key]
        # near 0 or 1 the AUC gets the score interval whatever the method: the percentile
        # bootstrap piles up against the boundary and DeLong's Wald interval shrinks there
        if key == "auc" and auc_near_boundary(value, *analytic["auc:score"][:2]):
            lo, hi, method = analytic["auc:score"]
            return Estimate(value, float(lo), float(hi), method)
        if use_analytic or _at_boundary(key, value):
            lo, hi, method = analytic[key]
            return Estimate(value, float(lo), float(hi), method)
        lo, hi = percentile_interval(np.concatenate(replicates[key]), confidence)
        return Estimate.covering(value, lo, hi)

    return {k: est(k) for k in point}, roc0
