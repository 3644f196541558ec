"""Seeded percentile-bootstrap confidence intervals for attack metrics.

All bootstrap replicates in :mod:`graphleaks.metrics` are drawn here, from
``np.random.default_rng(seed)``, so the same seed always gives the same interval. Binary metrics
resample positives and negatives separately (*stratified*), so every replicate keeps the class
sizes of the evaluation set and both classes are always present.

A replicate is represented as a matrix of resampling *counts* (how often each original example
was drawn) rather than as resampled arrays. Rank statistics such as AUC are then cumulative sums
over the once-sorted scores, which is what makes 1000 replicates cost milliseconds
(:func:`bootstrap_auc_ci`).

Replicates are drawn and reduced in chunks of rows (:func:`binary_count_chunks`), so memory is
``O(n)`` whatever ``B``: never a ``B x n`` array. The chunks come from the same random stream,
in the same order, as one ``B x n`` draw, so the intervals are the same numbers as before
chunking. Numpy's ``Generator.integers`` gives the same values for one ``(B, n)`` call as for
consecutive ``(b_i, n)`` calls; a test pins this.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import numpy.typing as npt

from graphleaks.errors import DataError
from graphleaks.metrics._core import (
    IntArray,
    RocCounts,
    check_binary,
    check_bootstrap_args,
    chunk_rows,
    counts_from_indices,
    row_chunks,
)

__all__ = ["binary_count_chunks", "bootstrap_auc_ci", "bootstrap_ci", "percentile_interval"]

FloatArray = npt.NDArray[np.float64]


def percentile_interval(values: npt.ArrayLike, confidence: float) -> tuple[float, float]:
    """Return the two-sided percentile interval of bootstrap replicate values.

    Args:
        values: The statistic evaluated on each replicate, shape ``[B]``.
        confidence: Two-sided confidence level in (0, 1), e.g. 0.95 for the 2.5 % and 97.5 %
            percentiles.

    Returns:
        ``(lo, hi)``.

    Raises:
        InvalidConfigError: If ``confidence`` is not in (0, 1).
        DataError: If ``values`` is empty.

    Example:
        >>> percentile_interval([0.0, 1.0, 2.0, 3.0, 4.0], 0.5)
        (1.0, 3.0)
    """
    check_bootstrap_args(1, confidence, "percentile_interval")
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size == 0:
        raise DataError("percentile_interval needs at least one bootstrap value; got none.")
    alpha = 1.0 - float(confidence)
    lo, hi = np.quantile(arr, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def _index_chunks(
    seed: int, n_pos: int, n_neg: int, n_bootstrap: int, stratified: bool
) -> Iterator[tuple[IntArray, IntArray] | IntArray]:
    """Drawn indices, chunk by chunk, identical to one ``B x n`` draw from ``default_rng(seed)``.

    Stratified: chunks of ``(idx_pos [b, n_pos], idx_neg [b, n_neg])``. The one-shot draw took
    every replicate's positives before any negatives, so a second generator skips the
    positives' part of the stream (drawn and dropped chunk by chunk: ``O(chunk)`` memory, and
    only ``n_pos / n`` of the drawing work again). Not stratified: chunks of ``[b, n]``.
    """
    rows = chunk_rows(n_pos + n_neg, n_bootstrap)
    if stratified:
        g_pos = np.random.default_rng(seed)
        g_neg = np.random.default_rng(seed)
        for b in row_chunks(n_bootstrap, rows):
            g_neg.integers(0, n_pos, size=(b, n_pos), dtype=np.int64)
        for b in row_chunks(n_bootstrap, rows):
            yield (g_pos.integers(0, n_pos, size=(b, n_pos), dtype=np.int64),
                   g_neg.integers(0, n_neg, size=(b, n_neg), dtype=np.int64))
        return
    rng = np.random.default_rng(seed)
    n = n_pos + n_neg
    for b in row_chunks(n_bootstrap, rows):
        yield rng.integers(0, n, size=(b, n), dtype=np.int64)


def _too_few_with_both_classes() -> DataError:
    return DataError(
        "Too few bootstrap replicates contain both classes; use stratified=True or more data."
    )


def binary_count_chunks(
    labels01: npt.NDArray[np.bool_],
    *,
    n_bootstrap: int,
    seed: int,
    stratified: bool,
) -> Iterator[tuple[IntArray, IntArray]]:
    """Yield bootstrap counts for positives and negatives, a chunk of replicates at a time.

    Args:
        labels01: Boolean labels of the evaluation set (True = positive).
        n_bootstrap: Number of replicates ``B``.
        seed: Seed of ``np.random.default_rng``.
        stratified: Resample each class separately.

    Yields:
        ``(w_pos [b, n_pos], w_neg [b, n_neg])``: how often each positive / negative (in the
        order they appear in the data) was drawn, for ``b`` consecutive replicates. Without
        stratification, replicates that lack a class are dropped.

    Raises:
        DataError: If, without stratification, fewer than half of the replicates contain both
            classes (raised after the last chunk).
    """
    pos_idx = np.flatnonzero(labels01)
    neg_idx = np.flatnonzero(~labels01)
    n_pos, n_neg = pos_idx.size, neg_idx.size
    kept = 0
    for drawn in _index_chunks(seed, n_pos, n_neg, n_bootstrap, stratified):
        if isinstance(drawn, tuple):
            yield counts_from_indices(drawn[0], n_pos), counts_from_indices(drawn[1], n_neg)
            continue
        counts = counts_from_indices(drawn, n_pos + n_neg)
        w_pos, w_neg = counts[:, pos_idx], counts[:, neg_idx]
        keep = (w_pos.sum(axis=1) > 0) & (w_neg.sum(axis=1) > 0)
        kept += int(keep.sum())
        yield w_pos[keep], w_neg[keep]
    if not stratified and kept * 2 < n_bootstrap:
        raise _too_few_with_both_classes()


def bootstrap_ci(
    statistic: Callable[[FloatArray, IntArray], float],
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int,
    stratified: bool = True,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of any binary-score statistic.

    Each replicate resamples the examples with replacement and evaluates
    ``statistic(scores_b, labels_b)``. With ``stratified=True`` positives and negatives are
    resampled separately, so each replicate has the original class sizes. Without it, replicates
    that lack a class are skipped.

    This general version calls ``statistic`` once per replicate. For AUC use the vectorised
    :func:`bootstrap_auc_ci`, which draws the same replicates for the same seed;
    :func:`graphleaks.metrics.binary_metrics` vectorises all its metrics the same way.

    Args:
        statistic: Function of ``(scores, labels)`` returning a float, e.g.
            :func:`graphleaks.metrics.auc`.
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.
        n_bootstrap: Number of replicates (default: 1000).
        confidence: Two-sided confidence level (default: 0.95).
        seed: Seed of the resampling; the same seed gives the same interval.
        stratified: Resample positives and negatives separately (default: True).

    Returns:
        ``(lo, hi)``, the percentile interval of the replicate values.

    Raises:
        InvalidConfigError: If ``n_bootstrap`` or ``confidence`` is out of range.
        DataError: If the scores or labels are malformed or a class is missing.

    Example:
        >>> from graphleaks.metrics import auc
        >>> lo, hi = bootstrap_ci(auc, [0.9, 0.2, 0.8, 0.3, 0.4], [1, 0, 1, 0, 1],
        ...                       n_bootstrap=50, seed=0)
        >>> 0.0 <= lo <= hi <= 1.0
        True
    """
    check_bootstrap_args(n_bootstrap, confidence, "bootstrap_ci")
    s, y = check_binary(scores, labels, "bootstrap_ci")
    y_int = y.astype(np.int64)
    pos_idx = np.flatnonzero(y)
    neg_idx = np.flatnonzero(~y)
    values: list[float] = []
    for drawn in _index_chunks(seed, pos_idx.size, neg_idx.size, n_bootstrap, stratified):
        if isinstance(drawn, tuple):
            for b in range(drawn[0].shape[0]):
                idx = np.concatenate([pos_idx[drawn[0][b]], neg_idx[drawn[1][b]]])
                values.append(float(statistic(s[idx], y_int[idx])))
            continue
        for idx in drawn:
            n_pos_b = int(y_int[idx].sum())
            if 0 < n_pos_b < idx.size:
                values.append(float(statistic(s[idx], y_int[idx])))
    if not stratified and 2 * len(values) < n_bootstrap:
        raise _too_few_with_both_classes()
    return percentile_interval(values, confidence)


def bootstrap_auc_ci(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int,
    stratified: bool = True,
) -> tuple[float, float]:
    """Vectorised percentile-bootstrap confidence interval of the ROC AUC.

    Draws the same replicates as ``bootstrap_ci(auc, ...)`` with the same arguments, so it gives
    the same interval (up to floating-point rounding), but computes all replicates at once from
    resampling counts over the once-sorted scores (ties count half).

    Args:
        scores: 1-D scores, higher = more likely positive.
        labels: 1-D 0/1 labels.
        n_bootstrap: Number of replicates (default: 1000).
        confidence: Two-sided confidence level (default: 0.95).
        seed: Seed of the resampling; the same seed gives the same interval.
        stratified: Resample positives and negatives separately (default: True).

    Returns:
        ``(lo, hi)``.

    Raises:
        InvalidConfigError: If ``n_bootstrap`` or ``confidence`` is out of range.
        DataError: If the scores or labels are malformed or a class is missing.

    Example:
        >>> lo, hi = bootstrap_auc_ci([0.9, 0.2, 0.8, 0.3, 0.4], [1, 0, 1, 0, 1],
        ...                           n_bootstrap=50, seed=0)
        >>> 0.0 <= lo <= hi <= 1.0
        True
    """
    check_bootstrap_args(n_bootstrap, confidence, "bootstrap_auc_ci")
    s, y = check_binary(scores, labels, "bootstrap_auc_ci")
    values = [
        RocCounts.build(s[y], s[~y], w_pos, w_neg).auc()
        for w_pos, w_neg in binary_count_chunks(
            y, n_bootstrap=n_bootstrap, seed=seed, stratified=stratified)
    ]
    return percentile_interval(np.concatenate(values), confidence)
