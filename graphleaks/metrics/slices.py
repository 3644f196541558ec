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
    >>> sorted(out["degree<=2"]["binary"])
    ['auc', 'tpr_at_fpr']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.metrics.binary import binary_metrics

#: Fewest positives and negatives a slice needs before it gets an interval. Below this a
#: bootstrap interval of TPR at 1 % FPR is meaningless (one negative is already 1 % of 100).
MIN_PER_SIDE = 10
SLICE_FPR = 0.01


def slice_metrics(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    masks: Mapping[str, npt.ArrayLike],
    *,
    n_bootstrap: int,
    seed: int,
    min_per_side: int = MIN_PER_SIDE,
) -> dict[str, dict[str, Any]]:
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
        Per slice key: ``n_pos``, ``n_neg`` and either ``binary`` (``auc`` and
        ``tpr_at_fpr["0.01"]`` as ``{"value", "ci"}``) or ``too_few``.
    """
    from graphleaks.seeding import derive_seed

    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(np.int64)
    out: dict[str, dict[str, Any]] = {}
    for key, mask in masks.items():
        m = np.asarray(mask, dtype=bool)
        n_pos, n_neg = int(y[m].sum()), int((1 - y[m]).sum())
        entry: dict[str, Any] = {"n_pos": n_pos, "n_neg": n_neg}
        if min(n_pos, n_neg) < min_per_side:
            entry["too_few"] = True
        else:
            bm = binary_metrics(s[m], y[m], fpr_points=(SLICE_FPR,), n_bootstrap=n_bootstrap,
                                seed=derive_seed(seed, "slice", key)).to_dict()
            entry["binary"] = {"auc": bm["auc"], "tpr_at_fpr": bm["tpr_at_fpr"]}
        out[key] = entry
    return out
