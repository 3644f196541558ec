"""Attack metrics on slices of the candidates (degree bucket, class, train/test part).

Leakage is not uniform over a graph: low-degree nodes and nodes of rare classes are often
more exposed. A slice is a boolean mask over one attack's candidates; its metrics are the
same AUC and TPR at 1 % FPR as the whole attack's (TF Privacy's slicing, LeakPro's per-record
view), with intervals of the method the attack's whole candidate set chose: stratified
bootstrap intervals from :func:`graphleaks.metrics.binary.auc_tpr_estimates`, or analytic
ones computed for all slices at once.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> labels = np.r_[np.ones(50), np.zeros(50)].astype(int)
    >>> scores = labels + rng.normal(size=100)
    >>> low = np.arange(100) % 2 == 0
    >>> out = slice_metrics(scores, labels, {"degree<=2": low}, n_bootstrap=50, seed=0)
    >>> out["degree<=2"].too_few, sorted(out["degree<=2"].tpr_at_fpr)
    (False, [0.01])
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.errors import InvalidConfigError
from graphleaks.metrics import intervals as ci
from graphleaks.metrics._core import BoolArray, FloatArray, RocCounts
from graphleaks.metrics.binary import ANALYTIC, BOOTSTRAP, Estimate, auc_tpr_estimates
from graphleaks.metrics.privacy_bound import clopper_pearson_many

#: Fewest positives and negatives a slice needs before it gets an interval. Below this a
#: bootstrap interval of TPR at 1 % FPR is meaningless (one negative is already 1 % of 100).
MIN_PER_SIDE = 10
SLICE_FPR = 0.01


@dataclass(frozen=True)
class SliceMetrics:
    """AUC and TPR at 1 % FPR on one slice of the candidates, or counts only (too few).

    Attributes:
        n_pos: Positives in the slice.
        n_neg: Negatives in the slice.
        auc: ROC AUC with its interval, or None when the slice has too few candidates.
        tpr_at_fpr: ``{fpr: TPR}`` with intervals (empty when too few).
    """

    n_pos: int
    n_neg: int
    auc: Estimate | None = None
    tpr_at_fpr: Mapping[float, Estimate] = field(default_factory=dict)

    @property
    def too_few(self) -> bool:
        """True when the slice had too few positives or negatives for an interval."""
        return self.auc is None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: counts, then ``too_few`` or ``binary``."""
        if self.auc is None:
            return {"n_pos": self.n_pos, "n_neg": self.n_neg, "too_few": True}
        return {"n_pos": self.n_pos, "n_neg": self.n_neg,
                "binary": {"auc": self.auc.to_dict(),
                           "tpr_at_fpr": {repr(float(f)): e.to_dict()
                                          for f, e in self.tpr_at_fpr.items()}}}


def slice_metrics(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    masks: Mapping[str, npt.ArrayLike],
    *,
    n_bootstrap: int,
    seed: int,
    min_per_side: int = MIN_PER_SIDE,
    intervals: str = BOOTSTRAP,
    confidence: float = 0.95,
) -> dict[str, SliceMetrics]:
    """AUC and TPR at 1 % FPR, with intervals, on each slice of the candidates.

    Only what a slice shows is computed: its counts, AUC and TPR@1%FPR. ``intervals`` is
    the attack's own choice (:func:`graphleaks.metrics.binary.choose_intervals`, made once
    on its whole candidate set), so a slice never bootstraps when its attack did not:

    * ``"bootstrap"``: each slice's stratified percentile bootstrap, with its own seed (the
      same replicates and numbers as :func:`~graphleaks.metrics.binary.binary_metrics` on
      the slice);
    * ``"analytic"``: DeLong's AUC interval (Newcombe's score interval near 0 or 1) and the
      Clopper-Pearson box of the TPR (the threshold's and the positives' uncertainty, see
      :func:`graphleaks.metrics.intervals.threshold_fpr_range`), for every slice at once.

    Each estimate records its method. Point estimates are the same either way.

    Args:
        scores: One score per candidate, higher = more likely positive.
        labels: The 0/1 truth per candidate.
        masks: Slice key (e.g. ``"degree<=2"``) to a boolean mask over the candidates.
        n_bootstrap: Bootstrap replicates per interval (unused for analytic intervals).
        seed: Seed of the bootstrap (each slice derives its own from it and its key).
        min_per_side: Slices with fewer positives or negatives get counts only and
            ``"too_few": True`` instead of metrics.
        intervals: ``"bootstrap"`` (default) or ``"analytic"``.
        confidence: Two-sided confidence level.

    Returns:
        Per slice key, its :class:`SliceMetrics` (counts only when too few).
    """
    from graphleaks.seeding import derive_seed

    if intervals not in (ANALYTIC, BOOTSTRAP):
        raise InvalidConfigError(f"The 'intervals' parameter of slice_metrics must be "
                                 f"'analytic' or 'bootstrap'. Got {intervals!r} instead.")
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(np.int64)
    out: dict[str, SliceMetrics] = {}
    kept: dict[str, BoolArray] = {}
    for key, mask in masks.items():
        m = np.asarray(mask, dtype=bool)
        n_pos = int(y[m].sum())
        n_neg = int(m.sum()) - n_pos
        if min(n_pos, n_neg) < min_per_side:
            out[key] = SliceMetrics(n_pos, n_neg)
        elif intervals == BOOTSTRAP:
            a, tpr = auc_tpr_estimates(s[m], y[m], fpr_points=(SLICE_FPR,),
                                       n_bootstrap=n_bootstrap, confidence=confidence,
                                       seed=derive_seed(seed, "slice", key), intervals=BOOTSTRAP)
            out[key] = SliceMetrics(n_pos, n_neg, auc=a, tpr_at_fpr=tpr)
        else:
            out[key] = SliceMetrics(n_pos, n_neg)  # placeholder, filled below in order
            kept[key] = m
    if kept:
        for key, sm in _analytic_slices(s, y.astype(bool), kept, confidence).items():
            out[key] = sm
    return out


def _analytic_slices(
    s: FloatArray, y: BoolArray, masks: Mapping[str, BoolArray], confidence: float
) -> dict[str, SliceMetrics]:
    """Analytic AUC and TPR@1%FPR intervals of every slice, the quantiles in one call each.

    The same numbers as ``auc_tpr_estimates(s[m], y[m], intervals="analytic")`` per slice;
    only the per-slice point estimates and DeLong variances loop (a sort of each slice).
    """
    keys = list(masks)
    n = len(keys)
    n_pos = np.array([np.count_nonzero(y[masks[k]]) for k in keys], dtype=np.float64)
    n_neg = np.array([np.count_nonzero(masks[k]) for k in keys], dtype=np.float64) - n_pos
    level = ci.box_level(confidence)
    f_lo, f_hi = ci.threshold_fpr_range(SLICE_FPR, n_neg, level)
    auc_v, tpr_v, var = np.empty(n), np.empty(n), np.empty(n)
    k_lo, k_hi = np.empty(n), np.empty(n)
    for i, key in enumerate(keys):
        sm, ym = s[masks[key]], y[masks[key]]
        roc = RocCounts.single(sm, ym)
        auc_v[i], tpr_v[i] = roc.auc()[0], roc.tpr_at(SLICE_FPR)[0]
        k_lo[i] = math.floor(float(roc.tpr_at(float(f_lo[i]))[0]) * n_pos[i] + 1e-9)
        k_hi[i] = math.ceil(float(roc.tpr_at(float(f_hi[i]))[0]) * n_pos[i] - 1e-9)
        var[i] = ci.delong_variance(sm[ym], sm[~ym])
    d_lo, d_hi = ci.delong_auc_many(auc_v, var, confidence)
    s_lo, s_hi = ci.newcombe_auc_many(auc_v, n_pos, n_neg, confidence)
    near = (auc_v - s_lo > 1.0 - auc_v) | (s_hi - auc_v > auc_v)  # auc_near_boundary
    # the threshold's bracket and the positives, each side at sqrt(confidence) (a box)
    t_lo, _ = clopper_pearson_many(k_lo, n_pos, level)
    _, t_hi = clopper_pearson_many(k_hi, n_pos, level)
    out = {}
    for i, key in enumerate(keys):
        if near[i] or not 0.0 < auc_v[i] < 1.0:
            a = Estimate(float(auc_v[i]), float(s_lo[i]), float(s_hi[i]), ci.NEWCOMBE_AUC)
        else:
            a = Estimate(float(auc_v[i]), float(d_lo[i]), float(d_hi[i]), ci.DELONG)
        t = Estimate(float(tpr_v[i]), float(t_lo[i]), float(t_hi[i]),
                     ci.CLOPPER_PEARSON_BOX)
        out[key] = SliceMetrics(int(n_pos[i]), int(n_neg[i]), auc=a, tpr_at_fpr={SLICE_FPR: t})
    return out
