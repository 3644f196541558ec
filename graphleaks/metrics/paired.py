"""Paired comparison of two attacks on the same candidates: is attack A's TPR above B's?

Two attacks scored on one candidate set are not independent: their per-attack intervals
overlap far more often than the interval of their difference straddles zero. The honest
comparison resamples the candidates once per replicate and evaluates *both* attacks on that
replicate (a paired bootstrap), so the difference's interval carries only the variation that
is not shared. Runs of several seeds (each its own candidate set) are pooled as the mean of
their per-run differences; each replicate resamples every run independently (stratified,
as :func:`graphleaks.metrics.bootstrap.binary_count_chunks` does), so the pooled interval
reflects the candidate noise of all runs, not the spread across seeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics._core import RocCounts, check_binary, check_bootstrap_args
from graphleaks.metrics.bootstrap import binary_count_chunks, percentile_interval

__all__ = ["PairedDifference", "paired_tpr_difference"]


@dataclass(frozen=True)
class PairedDifference:
    """TPR(A) − TPR(B) at one FPR, pooled over runs, with a paired-bootstrap interval.

    Attributes:
        fpr: The false-positive rate of both operating points.
        value: Mean over runs of the per-run difference.
        lo: Lower bound of the percentile interval of the pooled difference.
        hi: Upper bound.
        per_run: Per-run ``(difference, lo, hi)``, each from that run's own replicates.
        confidence: Two-sided confidence level.
        n_bootstrap: Replicates per run.
    """

    fpr: float
    value: float
    lo: float
    hi: float
    per_run: tuple[tuple[float, float, float], ...]
    confidence: float
    n_bootstrap: int


def _run_replicates(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64],
                    y: npt.NDArray[np.bool_], fpr: float, n_bootstrap: int,
                    seed: int) -> tuple[float, npt.NDArray[np.float64]]:
    """One run's point difference and its ``[n_bootstrap]`` paired replicate differences."""
    point = float(RocCounts.single(a, y).tpr_at(fpr)[0] - RocCounts.single(b, y).tpr_at(fpr)[0])
    reps: list[npt.NDArray[np.float64]] = []
    # the same draw counts weight both attacks: that is what makes the bootstrap paired
    for w_pos, w_neg in binary_count_chunks(y, n_bootstrap=n_bootstrap, seed=seed,
                                            stratified=True):
        ta = RocCounts.build(a[y], a[~y], w_pos, w_neg).tpr_at(fpr)
        tb = RocCounts.build(b[y], b[~y], w_pos, w_neg).tpr_at(fpr)
        reps.append(ta - tb)
    return point, np.concatenate(reps)


def paired_tpr_difference(
    scores_a: Sequence[npt.ArrayLike], scores_b: Sequence[npt.ArrayLike],
    labels: Sequence[npt.ArrayLike], *, fpr: float, n_bootstrap: int = 1000,
    confidence: float = 0.95, seed: int,
) -> PairedDifference:
    """TPR at ``fpr`` of attack A minus attack B, per run and pooled, by a paired bootstrap.

    Each run (one seed's candidate set) gives A's and B's scores of the same candidates
    and their 0/1 truth. Replicate ``r`` resamples every run's positives and negatives
    (stratified) with one set of draw counts shared by both attacks and records the mean
    over runs of ``TPR_A − TPR_B`` (the randomised operating point of
    :func:`graphleaks.metrics.tpr_at_fpr`). Run ``i`` uses the seed ``seed + i``.

    Args:
        scores_a: Per run, attack A's scores (higher = more likely a member).
        scores_b: Per run, attack B's scores of the same candidates, in the same order.
        labels: Per run, the candidates' 0/1 truth.
        fpr: The false-positive rate, in [0, 1].
        n_bootstrap: Replicates per run.
        confidence: Two-sided confidence level.
        seed: Seed of the resampling.

    Returns:
        A :class:`PairedDifference`.

    Raises:
        DataError: If the runs' lengths disagree, a run's arrays are malformed or lack a
            class, or no run is given.
        InvalidConfigError: If ``fpr``, ``n_bootstrap`` or ``confidence`` is out of range.

    Example:
        >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
        >>> a = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]   # separates perfectly
        >>> b = [0.9, 0.1, 0.7, 0.1, 0.8, 0.4, 0.3, 0.2]   # does not
        >>> d = paired_tpr_difference([a], [b], [y], fpr=0.0, n_bootstrap=200, seed=0)
        >>> d.value  # B ranks one member above every non-member, A all four
        0.75
        >>> d.lo <= d.value <= d.hi
        True
    """
    if isinstance(fpr, bool) or not isinstance(fpr, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(fpr) <= 1.0:
        raise InvalidConfigError("The 'fpr' parameter of paired_tpr_difference must be a float "
                                 f"in [0, 1]. Got {fpr!r} instead.")
    target = float(fpr)
    check_bootstrap_args(n_bootstrap, confidence, "paired_tpr_difference")
    if not len(scores_a) == len(scores_b) == len(labels) or len(labels) == 0:
        raise DataError("paired_tpr_difference needs one array of A scores, B scores and "
                        "labels per run, at least one run; the three lists differ in length "
                        "or are empty")
    points: list[float] = []
    runs: list[npt.NDArray[np.float64]] = []
    per_run: list[tuple[float, float, float]] = []
    for i, (sa, sb, lab) in enumerate(zip(scores_a, scores_b, labels, strict=True)):
        a, y = check_binary(sa, lab, "paired_tpr_difference")
        if np.shape(sb) != a.shape:
            raise DataError(f"paired_tpr_difference: run {i} has {a.size} A scores and "
                            f"{np.size(sb)} B scores; both attacks must score the same "
                            "candidates")
        b, _ = check_binary(sb, lab, "paired_tpr_difference")
        point, reps = _run_replicates(a, b, y, target, n_bootstrap, seed + i)
        points.append(point)
        runs.append(reps)
        per_run.append((point, *percentile_interval(reps, confidence)))
    pooled = np.mean(np.stack(runs), axis=0)
    lo, hi = percentile_interval(pooled, confidence)
    return PairedDifference(fpr=target, value=float(np.mean(points)), lo=lo, hi=hi,
                            per_run=tuple(per_run), confidence=float(confidence),
                            n_bootstrap=int(n_bootstrap))
