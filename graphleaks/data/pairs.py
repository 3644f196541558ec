"""Undirected node pairs as sorted int64 keys: the edge-set arithmetic of every edge unit.

An undirected pair ``{u, v}`` over ``N`` nodes is the key ``min(u, v) * N + max(u, v)``; an
edge set is a sorted array of such keys, so memory grows with the number of edges (never
``N²``) and membership is a binary search (:func:`numpy.searchsorted`). Pure geometry: which
pairs are private is decided by the callers (edge attacks, edge-membership splits).

Example:
    >>> import numpy as np
    >>> keys = edge_keys(np.array([[0, 1, 2], [1, 0, 3]]), 4)
    >>> keys.tolist(), contains(keys, pair_keys(np.array([[1, 0], [0, 2]]), 4)).tolist()
    ([1, 11], [True, False])
"""

from __future__ import annotations

import numpy as np
import torch

from graphleaks._arrays import unique_sorted
from graphleaks.errors import DataError


def undirected_pairs(edge_index: torch.Tensor | np.ndarray) -> np.ndarray:
    """Every undirected edge once as ``[E, 2]`` with ``u < v``; self-loops dropped, sorted."""
    ei = np.asarray(edge_index.cpu().numpy() if isinstance(edge_index, torch.Tensor)
                    else edge_index, dtype=np.int64)
    if ei.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    u, v = np.minimum(ei[0], ei[1]), np.maximum(ei[0], ei[1])
    keep = u != v
    u, v = u[keep], v[keep]
    if len(u) == 0:
        return np.empty((0, 2), dtype=np.int64)
    # One sort of int64 keys u·m + v gives the lexicographic order of a row-wise unique,
    # without its cost on millions of edges.
    m = np.int64(v.max()) + 1
    keys = unique_sorted(u * m + v)
    return np.stack([keys // m, keys % m], axis=1)


def pair_keys(pairs: np.ndarray, num_nodes: int) -> np.ndarray:
    """Hash undirected pairs (any order) to ``min * N + max``."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    lo, hi = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    return lo * np.int64(num_nodes) + hi


def edge_keys(edge_index: torch.Tensor | np.ndarray, num_nodes: int) -> np.ndarray:
    """Sorted unique keys of the undirected edges of ``edge_index``."""
    return unique_sorted(pair_keys(undirected_pairs(edge_index), num_nodes))


def contains(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``keys`` are in ``sorted_keys``."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    pos = np.searchsorted(sorted_keys, keys)
    pos = np.minimum(pos, len(sorted_keys) - 1)
    return sorted_keys[pos] == keys


def label_pairs(pairs: np.ndarray, sorted_edge_keys: np.ndarray, num_nodes: int) -> np.ndarray:
    """0/1 truth of each pair: 1 when it is an edge."""
    return contains(sorted_edge_keys, pair_keys(pairs, num_nodes)).astype(np.int64)


def sample_non_edges(
    count: int,
    num_nodes: int,
    sorted_edge_keys: np.ndarray,
    rng: np.random.Generator,
    *,
    nodes: np.ndarray | None = None,
    exclude_keys: np.ndarray | None = None,
    max_rounds: int = 100,
    other: np.ndarray | None = None,
) -> np.ndarray:
    """``count`` distinct uniformly random non-edges ``[count, 2]`` (``u < v``).

    Args:
        count: How many pairs.
        num_nodes: Number of nodes (for hashing).
        sorted_edge_keys: Keys of the edges to avoid (see :func:`edge_keys`).
        rng: The generator.
        nodes: Node pool to draw both endpoints from (all nodes when None).
        exclude_keys: Further sorted keys to avoid (e.g. pairs already used).
        max_rounds: Rejection-sampling rounds before giving up.
        other: Pool of the second endpoint (bipartite graphs: ``nodes`` one side, ``other``
            the other); None draws both endpoints from ``nodes``. A pool may repeat a node
            (a degree-weighted pool lists a node once per incident edge).

    Raises:
        DataError: If the pool has too few non-edges.
    """
    pool = np.arange(num_nodes) if nodes is None else np.asarray(nodes, dtype=np.int64)
    if count <= 0:
        return np.empty((0, 2), dtype=np.int64)
    second = pool if other is None else np.asarray(other, dtype=np.int64)
    if len(pool) < (2 if other is None else 1) or len(second) < 1:
        raise DataError("sampling non-edges needs at least 2 nodes")
    got = np.empty(0, dtype=np.int64)
    for _ in range(max_rounds):
        need = count - len(got)
        if need <= 0:
            break
        m = int(need * 1.3) + 16
        a, b = pool[rng.integers(0, len(pool), m)], second[rng.integers(0, len(second), m)]
        keep = a != b
        keys = pair_keys(np.stack([a[keep], b[keep]], axis=1), num_nodes)
        keys = keys[~contains(sorted_edge_keys, keys)]
        if exclude_keys is not None:
            keys = keys[~contains(exclude_keys, keys)]
        keys = keys[~contains(np.sort(got), keys)] if len(got) else keys
        _, first = np.unique(keys, return_index=True)
        keys = keys[np.sort(first)][:need]
        got = np.concatenate([got, keys])
    if len(got) < count:
        raise DataError(f"could only sample {len(got)} of {count} non-edges; the graph is too "
                        "dense or too small for a balanced pair set")
    return np.stack([got // num_nodes, got % num_nodes], axis=1)


def keys_to_pairs(keys: np.ndarray, num_nodes: int) -> np.ndarray:
    """Inverse of :func:`pair_keys`: ``[K, 2]`` pairs with ``u < v``."""
    keys = np.asarray(keys, dtype=np.int64)
    return np.stack([keys // np.int64(num_nodes), keys % np.int64(num_nodes)], axis=1)


__all__ = ["contains", "edge_keys", "keys_to_pairs", "label_pairs", "pair_keys",
           "sample_non_edges", "undirected_pairs"]
