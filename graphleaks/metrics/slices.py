"""Attack metrics on slices of the candidates (degree bucket, class, train/test part).

Leakage is not uniform over a graph: low-degree nodes and nodes of rare classes are often
more exposed. A slice is a boolean mask over one attack's candidates; its metrics are the
same AUC and TPR at 1 % FPR as the whole attack's, with stratified bootstrap intervals from
:func:`graphleaks.metrics.binary.binary_metrics` (TF Privacy's slicing, LeakPro's per-record
view).

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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.metrics.binary import Estimate, binary_metrics

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
) -> dict[str, SliceMetrics]:
    """AUC and TPR at 1 % FPR, with intervals, on each slice of the candidates.

    Args:
        scores: One score per candidate, higher = more likely positive.
        labels: The 0/1 truth per candidate.
        masks: Slice key (e.g. ``"degree<=2"``) to a boolean mask over the candidates.
        n_bootstrap: Bootstrap replicates per interval.
        seed: Seed of the bootstrap (each slice derives its own from it and its key).
        min_per_side: Slices with fewer positives or negatives get counts only and
            ``"too_few": True`` instead of metrics.

    Returns:
        Per slice key, its :class:`SliceMetrics` (counts only when too few).
    """
    from graphleaks.seeding import derive_seed

    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(np.int64)
    out: dict[str, SliceMetrics] = {}
    for key, mask in masks.items():
        m = np.asarray(mask, dtype=bool)
        n_pos, n_neg = int(y[m].sum()), int((1 - y[m]).sum())
        if min(n_pos, n_neg) < min_per_side:
            out[key] = SliceMetrics(n_pos, n_neg)
            continue
        bm = binary_metrics(s[m], y[m], fpr_points=(SLICE_FPR,), n_bootstrap=n_bootstrap,
                            seed=derive_seed(seed, "slice", key))
        out[key] = SliceMetrics(n_pos, n_neg, auc=bm.auc, tpr_at_fpr=dict(bm.tpr_at_fpr))
    return out
