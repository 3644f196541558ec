"""Multiclass metrics: attribute-inference attacks and the utility of target models.

An attribute-inference attack leaks only if it beats the trivial attacker that always guesses
the most frequent attribute value. :func:`multiclass_metrics` therefore reports the gain over
that majority baseline with a bootstrap interval and calls it a leak only when the whole
interval is above zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.errors import DataError
from graphleaks.metrics._core import (
    check_bootstrap_args,
    chunk_rows,
    counts_from_indices,
    row_chunks,
)
from graphleaks.metrics.binary import Estimate

__all__ = [
    "MulticlassMetrics",
    "accuracy",
    "f1_macro",
    "f1_micro",
    "majority_baseline",
    "multiclass_metrics",
]

FloatArray = npt.NDArray[np.float64]


def _check_pair(
    y_true: npt.ArrayLike, y_pred: npt.ArrayLike, owner: str
) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """Validate two 1-D label arrays of equal, non-zero length.

    Raises:
        DataError: On wrong shapes, different lengths, or empty inputs.
    """
    t = np.asarray(y_true)
    p = np.asarray(y_pred)
    if t.ndim != 1 or p.ndim != 1:
        raise DataError(f"{owner} needs 1-D label arrays; got shapes {t.shape} and {p.shape}.")
    if t.size != p.size:
        raise DataError(
            f"{owner} needs as many predictions as true labels; got {t.size} and {p.size}."
        )
    if t.size == 0:
        raise DataError(f"{owner} needs at least one example; got none.")
    return t, p


def accuracy(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Fraction of exact matches (``sklearn.metrics.accuracy_score``).

    Args:
        y_true: 1-D true labels (any hashable values).
        y_pred: 1-D predicted labels.

    Returns:
        The accuracy in [0, 1].

    Raises:
        DataError: If the arrays are not 1-D, differ in length, or are empty.

    Example:
        >>> accuracy([0, 1, 2, 2], [0, 1, 1, 2])
        0.75
    """
    from sklearn.metrics import accuracy_score

    t, p = _check_pair(y_true, y_pred, "accuracy")
    return float(accuracy_score(t, p))


def f1_micro(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Micro-averaged F1 (``sklearn.metrics.f1_score(average="micro")``).

    For single-label multiclass data it equals the accuracy.

    Args:
        y_true: 1-D true labels.
        y_pred: 1-D predicted labels.

    Returns:
        The micro F1 in [0, 1].

    Raises:
        DataError: If the arrays are not 1-D, differ in length, or are empty.

    Example:
        >>> f1_micro([0, 1, 2, 2], [0, 1, 1, 2])
        0.75
    """
    from sklearn.metrics import f1_score

    t, p = _check_pair(y_true, y_pred, "f1_micro")
    return float(f1_score(t, p, average="micro"))


def f1_macro(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """Macro-averaged F1 over the labels present in ``y_true`` or ``y_pred``.

    Wraps ``sklearn.metrics.f1_score(average="macro", zero_division=0)``: a class that is never
    predicted (or never true) has F1 = 0.

    Args:
        y_true: 1-D true labels.
        y_pred: 1-D predicted labels.

    Returns:
        The macro F1 in [0, 1].

    Raises:
        DataError: If the arrays are not 1-D, differ in length, or are empty.

    Example:
        >>> round(f1_macro([0, 1, 2, 2], [0, 1, 1, 2]), 4)
        0.7778
    """
    from sklearn.metrics import f1_score

    t, p = _check_pair(y_true, y_pred, "f1_macro")
    return float(f1_score(t, p, average="macro", zero_division=0))


def _majority_class(y_train: npt.NDArray[Any]) -> Any:
    """Most frequent value; ties go to the smallest value in sorted order."""
    values, counts = np.unique(y_train, return_counts=True)
    return values[int(np.argmax(counts))]


def majority_baseline(y_train: npt.ArrayLike, y_test: npt.ArrayLike) -> float:
    """Accuracy on ``y_test`` of always predicting the most frequent class of ``y_train``.

    This is the trivial attribute-inference attacker that ignores the target model. Ties
    between equally frequent classes go to the smallest label.

    Args:
        y_train: 1-D labels the baseline attacker knows (e.g. the auxiliary/training set).
        y_test: 1-D labels it is evaluated on.

    Returns:
        The baseline accuracy in [0, 1].

    Raises:
        DataError: If either array is not 1-D or is empty.

    Example:
        >>> majority_baseline([0, 0, 1], [0, 1, 1, 1])
        0.25
    """
    tr = np.asarray(y_train)
    te = np.asarray(y_test)
    if tr.ndim != 1 or te.ndim != 1 or tr.size == 0 or te.size == 0:
        raise DataError(
            "majority_baseline needs non-empty 1-D label arrays; "
            f"got shapes {tr.shape} and {te.shape}."
        )
    return float(np.mean(te == _majority_class(tr)))


@dataclass(frozen=True)
class MulticlassMetrics:
    """Multiclass metrics with bootstrap intervals and a leak verdict.

    Attributes:
        accuracy: Accuracy.
        f1_micro: Micro F1 (equals accuracy for single-label data).
        f1_macro: Macro F1 over the labels present.
        majority_baseline: Accuracy of the best constant guess on the evaluated examples (the
            larger of their most frequent class's share and the training majority's accuracy).
        gain_over_baseline: ``f1_micro - majority_baseline``; the interval comes from the same
            replicates (the baseline is re-evaluated on each resampled test set).
        leaks: True only when ``gain_over_baseline.lo > 0``.
        baseline_from_train: Whether the majority class came from ``y_train`` (False: from
            ``y_true`` itself, which slightly favours the baseline).
        n: Number of evaluated examples.
        n_classes: Number of distinct labels in ``y_true`` and ``y_pred``.
        n_bootstrap: Number of bootstrap replicates.
        confidence: Two-sided confidence level of the intervals.
        seed: Seed of the bootstrap.
    """

    accuracy: Estimate
    f1_micro: Estimate
    f1_macro: Estimate
    majority_baseline: float
    gain_over_baseline: Estimate
    leaks: bool
    baseline_from_train: bool
    n: int
    n_classes: int
    n_bootstrap: int
    confidence: float
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict with intervals as ``[lo, hi]`` lists."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = value.to_dict() if isinstance(value, Estimate) else value
        return out


def multiclass_metrics(
    y_true: npt.ArrayLike,
    y_pred: npt.ArrayLike,
    *,
    y_train: npt.ArrayLike | None = None,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int,
) -> MulticlassMetrics:
    """Accuracy, micro/macro F1 and gain over the majority baseline, with bootstrap intervals.

    Examples are resampled with replacement (not stratified); all metrics use the same
    replicates, computed vectorised from per-class counts.

    Args:
        y_true: 1-D true labels (e.g. the hidden attribute).
        y_pred: 1-D predicted labels.
        y_train: Labels that define the majority class (default: None, use ``y_true``, which is
            an in-sample baseline and slightly favours it).
        n_bootstrap: Number of bootstrap replicates (default: 1000).
        confidence: Two-sided confidence level (default: 0.95).
        seed: Seed of the bootstrap; the same seed gives the same intervals.

    Returns:
        The :class:`MulticlassMetrics`.

    Raises:
        InvalidConfigError: If ``n_bootstrap`` or ``confidence`` is out of range.
        DataError: If the label arrays are malformed.

    Example:
        >>> m = multiclass_metrics([0, 1, 2, 2] * 10, [0, 1, 2, 2] * 10, n_bootstrap=50, seed=0)
        >>> m.accuracy.value, m.leaks
        (1.0, True)
    """
    check_bootstrap_args(n_bootstrap, confidence, "multiclass_metrics")
    t_raw, p_raw = _check_pair(y_true, y_pred, "multiclass_metrics")
    if y_train is not None:
        tr = np.asarray(y_train)
        if tr.ndim != 1 or tr.size == 0:
            raise DataError(
                f"multiclass_metrics needs a non-empty 1-D y_train; got shape {tr.shape}."
            )
    else:
        tr = t_raw
    n = t_raw.size
    _, inverse = np.unique(np.concatenate([t_raw, p_raw]), return_inverse=True)
    t, p = inverse[:n], inverse[n:]
    n_classes = int(inverse.max()) + 1
    is_majority = (t_raw == _majority_class(tr)).astype(np.float64)
    correct = t == p

    eye = np.eye(n_classes)
    onehot_true = eye[t]
    onehot_pred = eye[p]
    true_tp = onehot_true * correct[:, None]
    correct_f = correct.astype(np.float64)

    def reduce(weights: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Accuracy, macro F1 and baseline of a chunk of weightings (one row each)."""
        tp_k = weights @ true_tp
        support_k = weights @ onehot_true + weights @ onehot_pred
        present = support_k > 0
        f1_k = np.divide(2.0 * tp_k, support_k, out=np.zeros_like(tp_k), where=present)
        macro = f1_k.sum(axis=1) / present.sum(axis=1)
        acc = weights @ correct_f / n
        # The gain is measured against the best constant guess on the evaluated nodes, which
        # is never below the training-majority guess: a rare training-majority class would
        # otherwise make a random attribute look like a leak.
        train_majority = weights @ is_majority / n
        baseline = np.maximum((weights @ onehot_true).max(axis=1) / n, train_majority)
        return acc, macro, baseline

    # Row 0 is the data itself; the replicates follow, drawn and reduced a chunk at a time
    # from the same stream as one B x n draw (O(n) memory, the same numbers).
    parts = [reduce(np.ones((1, n)))]
    rows = chunk_rows(n, n_bootstrap)
    rng = np.random.default_rng(seed)
    for b in row_chunks(n_bootstrap, rows):
        idx = rng.integers(0, n, size=(b, n), dtype=np.int64)
        parts.append(reduce(counts_from_indices(idx, n).astype(np.float64)))
    acc, macro, baseline = (np.concatenate(x) for x in zip(*parts, strict=True))
    gain = acc - baseline

    def est(values: FloatArray) -> Estimate:
        return Estimate.from_replicates(values, confidence)

    gain_est = est(gain)
    return MulticlassMetrics(
        accuracy=est(acc),
        f1_micro=est(acc),
        f1_macro=est(macro),
        majority_baseline=float(baseline[0]),
        gain_over_baseline=gain_est,
        leaks=bool(gain_est.lo > 0.0),
        baseline_from_train=y_train is not None,
        n=n,
        n_classes=n_classes,
        n_bootstrap=n_bootstrap,
        confidence=float(confidence),
        seed=seed,
    )
