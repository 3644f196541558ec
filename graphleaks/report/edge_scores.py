"""Per-pair tables and slices of an edge-membership audit.

Every candidate pair gets its endpoints, the smaller endpoint degree and its kind (member,
held-out edge, non-edge) in ``scores.csv``. Slices group pairs by endpoint degree (the
smaller, the larger, and their product) and, on a bipartite user–item graph, by the item's
popularity (MINER, CIKM 2024: interactions with long-tail items are the most exposed).

Degrees are counted in the served graph *without the candidate pairs* (the public graph), so
a member edge does not raise its own endpoints' degrees and a slice never encodes the truth.
"""

from __future__ import annotations

import numpy as np

from graphleaks.attacks.base import AttackResult
from graphleaks.report.scores import DEGREE_BUCKETS, CandidateTable

#: Buckets (inclusive) of the endpoint-degree product.
PRODUCT_BUCKETS: tuple[tuple[int, float, str], ...] = (
    (0, 4, "<=4"), (5, 25, "=5-25"), (26, 100, "=26-100"), (101, float("inf"), ">100"))
#: Share of items (the most interacted-with) forming the popularity head; the rest is the tail.
HEAD_SHARE = 0.2
#: Candidate kinds, as ``scores.csv`` names them.
KIND_NAMES = ("member", "held_out_edge", "held_out_non_edge", "non_member")


def public_degree(known_edges: np.ndarray, num_nodes: int) -> np.ndarray:
    """Degree of every node in the public graph (undirected ``[E, 2]`` pairs, each once)."""
    e = np.asarray(known_edges, dtype=np.int64).reshape(-1, 2)
    return (np.bincount(e[:, 0], minlength=num_nodes)
            + np.bincount(e[:, 1], minlength=num_nodes)).astype(np.int64)


def edge_candidate_table(result: AttackResult, degree: np.ndarray, kinds: np.ndarray, *,
                         node_type: np.ndarray | None = None,
                         names: np.ndarray | None = None) -> CandidateTable:
    """The pairs of ``result`` with their smaller endpoint degree and kind.

    ``kinds`` indexes :data:`KIND_NAMES` per candidate; ``cls`` is ``user-item`` etc. on a
    bipartite graph, else ``-``.
    """
    pairs = np.asarray(result.candidates, dtype=np.int64)
    a, b = pairs[:, 0], pairs[:, 1]
    if node_type is not None:
        side = np.where(np.asarray(node_type) == 1, "item", "user").astype(object)
        cls = np.asarray([f"{s}-{t}" for s, t in zip(side[a], side[b], strict=True)],
                         dtype=object)
    else:
        cls = np.full(len(pairs), "-", dtype=object)
    part = np.asarray(KIND_NAMES, dtype=object)[np.asarray(kinds, dtype=np.int64)]
    return CandidateTable(result.attack, result.task.value, pairs, result.scores,
                          result.labels, np.minimum(degree[a], degree[b]), cls, part,
                          names=names)


def edge_slice_masks(pairs: np.ndarray, degree: np.ndarray, kinds: np.ndarray, *,
                     node_type: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Slice key to candidate mask: endpoint degree (min, max, product), item popularity,
    and the non-member kind (members against held-out edges only, or non-edges only)."""
    p = np.asarray(pairs, dtype=np.int64)
    da, db = degree[p[:, 0]], degree[p[:, 1]]
    lo, hi, prod = np.minimum(da, db), np.maximum(da, db), da.astype(np.int64) * db
    masks: dict[str, np.ndarray] = {}
    # DEGREE_BUCKETS keys read "degree<=2": the endpoint statistic replaces "degree"
    degree_buckets = tuple((a, b, key[len("degree"):]) for a, b, key in DEGREE_BUCKETS)
    for name, values, buckets in (("min_degree", lo, degree_buckets),
                                  ("max_degree", hi, degree_buckets),
                                  ("degree_product", prod, PRODUCT_BUCKETS)):
        for a, b, key in buckets:
            masks[f"{name}{key}"] = (values >= a) & (values <= b)
    if node_type is not None:
        items = np.flatnonzero(np.asarray(node_type) == 1)
        if len(items):
            item_of = np.where(np.asarray(node_type)[p[:, 0]] == 1, p[:, 0], p[:, 1])
            k = max(1, int(round(HEAD_SHARE * len(items))))
            head = items[np.argsort(-degree[items], kind="stable")[:k]]
            is_head = np.isin(item_of, head)
            masks["item_popularity=head"] = is_head
            masks["item_popularity=tail"] = ~is_head
    kinds = np.asarray(kinds, dtype=np.int64)
    if (kinds == 1).any() and (kinds == 2).any():
        masks["non_members=held_out_edges"] = kinds != 2
        masks["non_members=non_edges"] = kinds != 1
    return masks


__all__ = ["HEAD_SHARE", "KIND_NAMES", "PRODUCT_BUCKETS", "edge_candidate_table",
           "edge_slice_masks", "public_degree"]
