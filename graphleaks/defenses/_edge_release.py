"""Shared helpers of the edge-perturbation defenses (EdgeRand, LapGraph, Eclipse, HeteroRR).

Every one of them releases a perturbed *undirected* graph once and trains a plain GNN on it;
the target is then served with that released graph (``TrainedTarget.released_edges``).
Edge sets are handled as sorted arrays of pair keys ``i·n + j`` with ``i < j`` (int64), so
memory stays O(edges); no helper here builds an N×N array.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks.data.graph import num_classes
from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import GNN, ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.models.training import train_node_classifier
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.seeding import derive_seed, torch_seeded


def pair_keys(edge_index: torch.Tensor, num_nodes: int) -> np.ndarray:
    """Sorted unique keys ``i·n + j`` (i < j) of the undirected pairs in ``edge_index``.

    Self-loops are dropped and both directions of an edge map to one key.
    """
    e = edge_index.detach().cpu().numpy().astype(np.int64)
    if e.size == 0:
        return np.empty(0, dtype=np.int64)
    lo, hi = np.minimum(e[0], e[1]), np.maximum(e[0], e[1])
    keep = lo != hi
    return np.unique(lo[keep] * int(num_nodes) + hi[keep])


def keys_to_edge_index(keys: np.ndarray, num_nodes: int) -> torch.Tensor:
    """A symmetric ``edge_index`` (both directions) from undirected pair keys."""
    keys = np.asarray(keys, dtype=np.int64)
    i, j = keys // int(num_nodes), keys % int(num_nodes)
    both = np.stack([np.concatenate([i, j]), np.concatenate([j, i])])
    return torch.from_numpy(both).long()


def num_pairs(num_nodes: int) -> int:
    """M = n(n−1)/2 unordered pairs."""
    return int(num_nodes) * (int(num_nodes) - 1) // 2


def sample_non_edges(
    num_nodes: int, existing: np.ndarray, count: int, rng: np.random.Generator
) -> np.ndarray:
    """``count`` distinct pair keys drawn uniformly among pairs not in ``existing``.

    Rejection sampling (§6.5b): draw random ordered pairs, fold them to i < j (uniform over
    unordered pairs), reject self-pairs, existing edges and duplicates, repeat. Expected cost
    O(count) while ``count + len(existing)`` is well below M.

    Raises:
        InvalidConfigError: If fewer than ``count`` non-edges exist.
    """
    n = int(num_nodes)
    count = int(count)
    free = num_pairs(n) - len(existing)
    if count > free:
        raise InvalidConfigError(f"cannot sample {count} non-edges: only {free} exist")
    if count == 0:
        return np.empty(0, dtype=np.int64)
    existing = np.asarray(existing, dtype=np.int64)
    if count > free // 2:  # dense regime: enumerate the complement (tiny graphs only)
        i, j = np.triu_indices(n, 1)
        allk = i.astype(np.int64) * n + j
        comp = np.setdiff1d(allk, existing, assume_unique=True)
        return np.sort(rng.choice(comp, size=count, replace=False))
    got = np.empty(0, dtype=np.int64)
    while len(got) < count:
        need = count - len(got)
        batch = int(need * 1.2) + 64
        a = rng.integers(0, n, size=batch)
        b = rng.integers(0, n, size=batch)
        ok = a != b
        k = np.minimum(a, b)[ok] * n + np.maximum(a, b)[ok]
        k = k[~np.isin(k, existing, assume_unique=False)]
        k = np.setdiff1d(np.unique(k), got, assume_unique=True)
        # keep a uniformly random subset of the fresh keys (order of np.unique is not random)
        if len(k) > need:
            k = rng.choice(k, size=need, replace=False)
        got = np.union1d(got, k)
    return got


def undirected_edge_count(edge_index: torch.Tensor, num_nodes: int) -> int:
    """Number of distinct undirected non-loop edges."""
    return len(pair_keys(edge_index, num_nodes))


def private_input_edges(graph: Data, split: MembershipSplit) -> torch.Tensor:
    """The graph the defense holds and perturbs: the split's training edges."""
    return split.training_edges(graph.edge_index)


def train_on_released(
    graph: Data,
    split: MembershipSplit,
    spec: ArchitectureSpec,
    seed: int,
    released: torch.Tensor,
    ledger: PrivacyLedger,
    training: dict[str, Any] | None = None,
    features: torch.Tensor | None = None,
) -> TrainedTarget:
    """Train a GNN of ``spec`` on the released graph; the target is served with it.

    Same protocol as :func:`graphleaks.defenses.none.train_plain_target` (init/train seeds,
    early stopping on val nodes), with ``released`` in place of the private edges.
    """
    dev = graph.x.device
    released = released.to(dev)
    x = graph.x if features is None else features.to(dev)
    with torch_seeded(derive_seed(seed, "init")):
        model = GNN(x.shape[1], num_classes(graph), spec).to(dev)
    log = train_node_classifier(
        model, x, released, graph.y, split.train,
        val_edges=released, val_nodes=split.val,
        lr=spec.lr, weight_decay=spec.weight_decay, epochs=spec.epochs,
        patience=spec.patience, seed=derive_seed(seed, "train"),
    )
    info = {"epochs_run": log.epochs_run, "best_epoch": log.best_epoch,
            "released_undirected_edges": int(released.shape[1] // 2)}
    info.update(training or {})
    return TrainedTarget(
        model=model, spec=spec, graph=graph, split=split, seed=seed, ledger=ledger,
        released_edges=released.detach(), features=None if features is None else x.detach(),
        training=info,
    )


def check_release_size(count: int, limit: int, owner: str, hint: str) -> None:
    """Refuse a release above ``limit`` undirected edges (EdgeRand densifies at small ε).

    Raises:
        InvalidConfigError: Naming ``max_edges``.
    """
    if count > limit:
        raise InvalidConfigError(
            f"The max_edges parameter of {owner} must be at least the released edge count "
            f"({count:,} undirected edges, {hint}). Got {limit!r} instead; raise max_edges "
            "or use a larger epsilon."
        )


__all__ = [
    "check_release_size", "keys_to_edge_index", "num_pairs", "pair_keys",
    "private_input_edges", "sample_non_edges", "train_on_released", "undirected_edge_count",
]
