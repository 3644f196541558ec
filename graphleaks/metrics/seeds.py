"""Summaries of one figure measured over independent seeds (repeated audits)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def seed_mean_interval(values: Sequence[float],
                       confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of per-seed figures and its two-sided Student-t interval.

    With one value the interval is that value (no spread is measured). The interval covers
    the mean over the seeds' randomness (split, training, attack), not each run's own
    sampling error, which the per-run intervals state.

    Example:
        >>> m, lo, hi = seed_mean_interval([0.1, 0.2, 0.3])
        >>> round(m, 3), round(lo, 3), round(hi, 3)
        (0.2, -0.048, 0.448)
    """
    from scipy.stats import t

    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean())
    if x.size < 2:
        return mean, mean, mean
    half = float(t.ppf(0.5 + confidence / 2, x.size - 1)) * float(x.std(ddof=1)) / math.sqrt(
        x.size)
    return mean, mean - half, mean + half


__all__ = ["seed_mean_interval"]
