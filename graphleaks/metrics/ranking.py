"""Ranking metrics of edge attacks: precision, recall and F1 of the top-k scored pairs.

LinkTeller (attacks.md §6.3) reports them at k set by the adversary's belief about the
graph's density: ``k = ⌈ρ'·#pairs⌉`` for ``ρ' ∈ {ρ/4, ρ/2, ρ, 2ρ, 4ρ}``, with the density ρ
rounded to one significant digit (:func:`density_ks`).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from graphleaks.errors import DataError

__all__ = ["density_ks", "f1_at_k", "precision_at_k", "recall_at_k", "top_k_hits"]


def top_k_hits(scores: npt.ArrayLike, labels: npt.ArrayLike, k: int) -> int:
    """Number of positives among the ``k`` highest scores (ties broken by order, stable).

    Example:
        >>> top_k_hits([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 1], k=2)
        1
        >>> top_k_hits([0.5, 0.5, 0.5], [0, 1, 1], k=1)  # a tie keeps the first candidate
        0
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(labels).reshape(-1).astype(bool)
    if s.shape != y.shape:
        raise DataError(f"scores and labels differ in length: {s.shape[0]} vs {y.shape[0]}")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise DataError(f"k must be a positive integer; got {k!r}")
    k = min(int(k), len(s))
    top = np.argsort(-s, kind="stable")[:k]
    return int(y[top].sum())


def precision_at_k(scores: npt.ArrayLike, labels: npt.ArrayLike, k: int) -> float:
    """Fraction of the top-``k`` pairs that are positives (TP / k).

    Example:
        >>> precision_at_k([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 1], k=2)
        0.5
    """
    return top_k_hits(scores, labels, k) / k


def recall_at_k(scores: npt.ArrayLike, labels: npt.ArrayLike, k: int) -> float:
    """Fraction of all positives found in the top ``k`` (0 when there are no positives).

    Example:
        >>> round(recall_at_k([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 1], k=2), 4)  # 1 of 3 positives
        0.3333
    """
    n_pos = int(np.asarray(labels).astype(bool).sum())
    return top_k_hits(scores, labels, k) / n_pos if n_pos else 0.0


def f1_at_k(scores: npt.ArrayLike, labels: npt.ArrayLike, k: int) -> float:
    """Harmonic mean of :func:`precision_at_k` and :func:`recall_at_k`.

    Example:
        >>> round(f1_at_k([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 1], k=2), 4)  # 2 * 1/2 * 1/3 / (5/6)
        0.4
    """
    p, r = precision_at_k(scores, labels, k), recall_at_k(scores, labels, k)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def density_ks(n_positive: int, n_pairs: int,
               factors: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)) -> dict[float, int]:
    """LinkTeller's k per density belief: ``{factor: ⌈factor·ρ₁·n_pairs⌉}``.

    ρ₁ is the density ``n_positive / n_pairs`` rounded to one significant digit.

    Example:
        >>> density_ks(130, 124750)
        {0.25: 32, 0.5: 63, 1.0: 125, 2.0: 250, 4.0: 499}
    """
    if n_pairs < 1:
        raise DataError("density_ks needs at least one pair")
    rho = n_positive / n_pairs
    if rho > 0:
        digits = -int(math.floor(math.log10(rho)))
        rho = round(rho, digits)
    return {f: max(1, math.ceil(f * rho * n_pairs - 1e-9)) for f in factors}
