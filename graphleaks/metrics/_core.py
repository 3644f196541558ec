"""Private helpers shared by the metric modules (binary, bootstrap, privacy_bound, multiclass).

They live here, in one private module of :mod:`graphleaks.metrics`, so that no metric module
imports another's private names: the input checks, the exact weighted ROC counts and the
chunking of bootstrap replicates are written once. Nothing outside ``graphleaks.metrics``
imports this module (``tests/metrics/test_layering.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.errors import DataError, InvalidConfigError

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

# Elements of one chunk of resampling counts (rows x n): about 8 MB per float64 array.
CHUNK_ELEMENTS = 1 << 20


def check_binary(
    scores: npt.ArrayLike, labels: npt.ArrayLike, owner: str
) -> tuple[FloatArray, BoolArray]:
    """Validate scores and 0/1 labels and return them as float64 and bool arrays.

    Args:
        scores: 1-D finite scores.
        labels: 1-D labels with values in {0, 1} (bools allowed).
        owner: Name of the calling function, used in error messages.

    Returns:
        ``(scores, labels)`` as a float64 array and a boolean array (True = positive).

    Raises:
        DataError: On wrong shapes, non-finite scores, labels outside {0, 1}, or a missing class.
    """
    try:
        s = np.asarray(scores, dtype=np.float64)
        y_raw = np.asarray(labels)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{owner} needs numeric scores and 0/1 labels: {exc}") from exc
    if s.ndim != 1 or y_raw.ndim != 1:
        raise DataError(
            f"{owner} needs 1-D scores and labels; got shapes {s.shape} and {y_raw.shape}."
        )
    if s.shape != y_raw.shape:
        raise DataError(
            f"{owner} needs as many labels as scores; got {s.size} scores and {y_raw.size} labels."
        )
    if not np.all(np.isfinite(s)):
        raise DataError(f"{owner} needs finite scores; got {int((~np.isfinite(s)).sum())} NaN/inf.")
    if y_raw.dtype == np.bool_:
        y = y_raw
    else:
        try:
            y_num = y_raw.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{owner} needs 0/1 labels; got dtype {y_raw.dtype}.") from exc
        if not np.all((y_num == 0.0) | (y_num == 1.0)):
            bad = np.unique(y_raw[(y_num != 0.0) & (y_num != 1.0)])[:5].tolist()
            raise DataError(f"{owner} needs 0/1 labels; got other values such as {bad}.")
        y = y_num == 1.0
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.size:
        present = "1" if n_pos else "0"
        raise DataError(
            f"{owner} needs both positive and negative labels; got only {present}s (n={y.size})."
        )
    return s, y


def check_bootstrap_args(n_bootstrap: int, confidence: float, owner: str) -> None:
    """Validate the bootstrap size and the confidence level.

    Args:
        n_bootstrap: Number of bootstrap replicates.
        confidence: Two-sided confidence level.
        owner: Name of the calling function, used in the error message.

    Raises:
        InvalidConfigError: If ``n_bootstrap`` is not an int >= 1 or ``confidence`` is not in
            the open interval (0, 1).
    """
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise InvalidConfigError(
            f"The 'n_bootstrap' parameter of {owner} must be an int in [1, inf). "
            f"Got {n_bootstrap!r} instead."
        )
    if n_bootstrap < 1:
        raise InvalidConfigError(
            f"The 'n_bootstrap' parameter of {owner} must be an int in [1, inf). "
            f"Got {n_bootstrap!r} instead."
        )
    if not isinstance(confidence, (float, int, np.floating)) or not 0.0 < confidence < 1.0:
        raise InvalidConfigError(
            f"The 'confidence' parameter of {owner} must be a float in (0, 1). "
            f"Got {confidence!r} instead."
        )


def row_sums(x: FloatArray) -> FloatArray:
    """Sum each row left to right, whatever the number of rows.

    ``np.sum(axis=1)`` adds pairwise in a one-row (contiguous) array but left to right in the
    column-major arrays that fancy indexing makes of several rows, so the same row would sum
    to a different last bit in a chunk of one replicate than in a chunk of many. A cumulative
    sum is always left to right: the same numbers for any chunking, and the same as the
    former all-replicates-at-once computation.
    """
    # A copy, not a view: a view would keep each chunk's whole [rows, n] cumsum alive.
    return np.array(np.cumsum(x, axis=1)[:, -1], dtype=np.float64)


@dataclass(frozen=True)
class RocCounts:
    """Exact ROC points of several weightings (bootstrap replicates) of one data set.

    Row ``r`` weights each positive/negative by ``w_pos[r]``/``w_neg[r]`` (1 for the data
    itself, draw counts for a bootstrap replicate). Column ``g`` is the threshold
    ``thresholds[g]`` (descending; column 0 is ``+inf``, i.e. nothing predicted positive), and
    ``tp[r, g]``/``fp[r, g]`` are the weighted counts of positives/negatives with
    ``score >= thresholds[g]``; ``tpr``/``fpr`` are the same divided by the row totals
    ``n_pos``/``n_neg``.
    """

    thresholds: FloatArray
    tp: FloatArray
    fp: FloatArray
    tpr: FloatArray
    fpr: FloatArray
    n_pos: FloatArray
    n_neg: FloatArray

    @classmethod
    def build(
        cls,
        pos_scores: FloatArray,
        neg_scores: FloatArray,
        w_pos: npt.NDArray[Any],
        w_neg: npt.NDArray[Any],
    ) -> RocCounts:
        """Sort once and accumulate the weights of every row.

        Args:
            pos_scores: Scores of the positives, shape ``[n_pos]``.
            neg_scores: Scores of the negatives, shape ``[n_neg]``.
            w_pos: Weights of the positives, shape ``[R, n_pos]``.
            w_neg: Weights of the negatives, shape ``[R, n_neg]``.

        Returns:
            The ROC counts, one row per weighting.
        """
        uniq = np.unique(np.concatenate([pos_scores, neg_scores]))[::-1]
        thresholds = np.concatenate([[np.inf], uniq])

        def cumulative(scores: FloatArray, weights: npt.NDArray[Any]) -> FloatArray:
            order = np.argsort(-scores, kind="stable")
            asc = scores[order][::-1]
            # number of examples with score >= t, for every threshold t
            k = scores.size - np.searchsorted(asc, thresholds, side="left")
            cum = np.zeros((weights.shape[0], scores.size + 1), dtype=np.float64)
            np.cumsum(weights[:, order], axis=1, out=cum[:, 1:])
            return cum[:, k]

        tp = cumulative(pos_scores, w_pos)
        fp = cumulative(neg_scores, w_neg)
        n_pos, n_neg = tp[:, -1].copy(), fp[:, -1].copy()
        return cls(thresholds, tp, fp, tp / n_pos[:, None], fp / n_neg[:, None], n_pos, n_neg)

    @classmethod
    def single(cls, scores: FloatArray, labels: BoolArray) -> RocCounts:
        """ROC counts of the unweighted data (one row)."""
        n_pos = int(labels.sum())
        return cls.build(
            scores[labels], scores[~labels], np.ones((1, n_pos)), np.ones((1, labels.size - n_pos))
        )

    def auc(self) -> FloatArray:
        """Trapezoidal ROC AUC per row (exact; ties count half)."""
        tpr, fpr = self.tpr, self.fpr
        area = row_sums(np.diff(fpr, axis=1) * (tpr[:, 1:] + tpr[:, :-1])) / 2.0
        return np.asarray(area, dtype=np.float64)

    def average_precision(self) -> FloatArray:
        """Average precision per row: sum of recall increments times precision."""
        predicted = self.tp + self.fp
        precision = np.divide(self.tp, predicted, out=np.zeros_like(self.tp), where=predicted > 0)
        ap = row_sums(np.diff(self.tpr, axis=1) * precision[:, 1:])
        return np.asarray(ap, dtype=np.float64)

    def max_advantage(self) -> FloatArray:
        """Maximum of TPR - FPR over thresholds per row (>= 0, from the empty threshold)."""
        return np.asarray(np.max(self.tpr - self.fpr, axis=1), dtype=np.float64)

    def tpr_at(self, fpr: float) -> FloatArray:
        """Expected TPR of the randomised operating point at FPR = ``fpr``, per row.

        Column ``g`` is the last threshold with FPR <= ``fpr``. When ``fpr`` falls strictly
        between it and the next threshold, the next step of the curve is one group of tied
        scores; flagging that whole group with probability
        ``p = (fpr - FPR[g]) / (FPR[g+1] - FPR[g])`` gives an expected FPR of exactly ``fpr``
        and an expected TPR of ``TPR[g] + p * (TPR[g+1] - TPR[g])``, the point on the ROC
        segment. Only a step that holds negatives *and* positives (a tie across the classes)
        rises along that segment, so on untied scores this is the largest TPR of a real
        threshold with FPR <= ``fpr``, as before.
        """
        rows = np.arange(self.tp.shape[0])
        # TPR and FPR are non-decreasing along the columns, so the feasible set is a prefix.
        last = np.sum(self.fpr <= fpr, axis=1) - 1
        nxt = np.minimum(last + 1, self.fpr.shape[1] - 1)
        f0, f1 = self.fpr[rows, last], self.fpr[rows, nxt]
        t0, t1 = self.tpr[rows, last], self.tpr[rows, nxt]
        step = f1 - f0
        p = np.divide(fpr - f0, step, out=np.zeros_like(step), where=step > 0)
        # a tie-free step moves FPR alone (t1 == t0): the value is unchanged to the last bit
        out = np.where(t1 > t0, t0 + p * (t1 - t0), t0)
        return np.asarray(out, dtype=np.float64)


def counts_from_indices(indices: IntArray, n: int) -> IntArray:
    """Turn a ``[B, m]`` matrix of drawn indices in ``[0, n)`` into ``[B, n]`` draw counts."""
    n_rep = indices.shape[0]
    offsets = (np.arange(n_rep, dtype=np.int64) * n)[:, None]
    flat = np.bincount((indices + offsets).ravel(), minlength=n_rep * n)
    return flat.reshape(n_rep, n).astype(np.int64, copy=False)


def chunk_rows(n: int, n_bootstrap: int) -> int:
    """Replicates per chunk: as many rows of ``n`` counts as fit the chunk budget."""
    return max(1, min(n_bootstrap, CHUNK_ELEMENTS // max(1, n)))


def row_chunks(n_bootstrap: int, rows: int) -> Iterator[int]:
    """Sizes of consecutive chunks of ``rows`` replicates covering ``n_bootstrap``."""
    for start in range(0, n_bootstrap, rows):
        yield min(rows, n_bootstrap - start)
