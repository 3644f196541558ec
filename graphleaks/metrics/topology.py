"""Topology privacy leakage (TPL) of topology inference attacks (the CCS 2025 TIA paper,
code ``JeffffffFu/PGR``, ``TIAs/util.py``).

The adversary predicts the ``K̂`` highest-scored pairs of a subgraph as its edges; with ``K``
true edges and ``C`` of them predicted, ``TPL = C / (K + K̂ − C)``, the Jaccard index of the
predicted and true edge sets. graphleaks sets ``K̂ = K`` (the paper does so for GAP; for
edge-release defenses it counts the released graph's edges inside the subgraph instead).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from graphleaks.metrics.ranking import top_k_hits

__all__ = ["topology_leakage"]


def topology_leakage(scores: npt.ArrayLike, labels: npt.ArrayLike,
                     k_hat: int | None = None) -> float:
    """TPL of one subgraph's pair scores: Jaccard of the top-``k_hat`` pairs and the edges.

    Args:
        scores: One score per candidate pair, higher = more likely an edge.
        labels: 0/1 truth per pair.
        k_hat: Number of predicted edges (default: the number of true edges).

    Returns:
        TPL in [0, 1] (0 when the subgraph has no edges).

    Example:
        >>> topology_leakage([0.9, 0.8, 0.1, 0.0], [1, 0, 1, 0])
        0.3333333333333333
    """
    y = np.asarray(labels).astype(bool).reshape(-1)
    k = int(y.sum())
    k_hat = k if k_hat is None else int(k_hat)
    if k == 0 or k_hat == 0:
        return 0.0
    c = top_k_hits(scores, y, k_hat)
    return c / (k + k_hat - c)
