"""Seeded synthetic graphs: contextual stochastic block models, and bipartite user–item graphs
with long-tail item popularity."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, to_undirected

from graphleaks.errors import InvalidConfigError


def csbm(
    num_nodes: int = 60,
    *,
    num_classes: int = 3,
    num_features: int = 8,
    avg_degree: float = 6.0,
    homophily: float = 0.8,
    feature_signal: float = 1.0,
    seed: int,
) -> Data:
    """Sample a contextual stochastic block model.

    Nodes are split evenly into ``num_classes`` blocks. Edges are sampled block pair by block
    pair, so memory grows with the number of edges, never with ``num_nodes**2``. Features are
    the class mean (a random unit direction scaled by ``feature_signal``) plus standard
    Gaussian noise.

    Args:
        num_nodes: Number of nodes.
        num_classes: Number of blocks, which are also the labels.
        num_features: Feature dimension.
        avg_degree: Expected average degree.
        homophily: Expected fraction of edges inside a block.
        feature_signal: Distance of class means from the origin, in noise units.
        seed: Seed of every random choice.

    Returns:
        An undirected graph with ``x``, ``edge_index`` and ``y``.

    Example:
        >>> g = csbm(40, seed=0)
        >>> g.num_nodes, g.x.shape[1], int(g.y.max()) + 1
        (40, 8, 3)
    """
    for name, value, hi in (("num_nodes", num_nodes, 10_000_000),
                            ("num_classes", num_classes, 10_000),
                            ("num_features", num_features, 100_000)):
        # checked before anything is allocated: specs may come from untrusted files
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
            raise InvalidConfigError(f"csbm {name} must be an integer in [1, {hi}]; got "
                                     f"{str(value)[:40]}")
    for name, number in (("avg_degree", avg_degree), ("homophily", homophily),
                         ("feature_signal", feature_signal)):
        if (isinstance(number, bool) or not isinstance(number, (int, float))
                or not math.isfinite(number)):
            raise InvalidConfigError(f"csbm {name} must be a finite number; got "
                                     f"{str(number)[:40]}")
    if not 0.0 < avg_degree <= 1000.0:
        raise InvalidConfigError(f"csbm avg_degree must be in (0, 1000]; got {avg_degree}")
    if num_nodes < 2 * num_classes:
        raise InvalidConfigError(f"csbm needs num_nodes >= 2 * num_classes; got {num_nodes}")
    if not 0.0 <= homophily <= 1.0:
        raise InvalidConfigError(f"csbm homophily must be in [0, 1]; got {homophily}")
    rng = np.random.default_rng(seed)
    y = np.arange(num_nodes) % num_classes
    rng.shuffle(y)
    blocks = [np.flatnonzero(y == c) for c in range(num_classes)]
    num_undirected = avg_degree * num_nodes / 2.0
    intra_pairs = sum(len(b) * (len(b) - 1) / 2 for b in blocks)
    inter_pairs = num_nodes * (num_nodes - 1) / 2 - intra_pairs
    p_in = min(1.0, homophily * num_undirected / max(intra_pairs, 1.0))
    p_out = min(1.0, (1 - homophily) * num_undirected / max(inter_pairs, 1.0))
    src_parts, dst_parts = [], []
    for a in range(num_classes):
        for b in range(a, num_classes):
            na, nb = len(blocks[a]), len(blocks[b])
            pairs = na * (na - 1) // 2 if a == b else na * nb
            m = rng.binomial(pairs, p_in if a == b else p_out)
            src_parts.append(blocks[a][rng.integers(0, na, m)])
            dst_parts.append(blocks[b][rng.integers(0, nb, m)])
    src = np.concatenate(src_parts)
    dst = np.concatenate(dst_parts)
    keep = src != dst
    edge_index = torch.from_numpy(np.stack([src[keep], dst[keep]])).long()
    edge_index = coalesce(to_undirected(edge_index, num_nodes=num_nodes), num_nodes=num_nodes)
    means = rng.normal(size=(num_classes, num_features))
    means *= feature_signal / np.linalg.norm(means, axis=1, keepdims=True)
    x = means[y] + rng.normal(size=(num_nodes, num_features))
    return Data(
        x=torch.from_numpy(x).float(),
        edge_index=edge_index,
        y=torch.from_numpy(y).long(),
        num_nodes=num_nodes,
    )


def tiny_graph(seed: int = 0) -> Data:
    """A 60-node, 3-class, 8-feature CSBM: the fixture every unit test and doctest uses."""
    return csbm(60, num_classes=3, num_features=8, avg_degree=6.0, seed=seed)


def bipartite_interactions(
    num_users: int = 60,
    num_items: int = 40,
    *,
    interactions_per_user: float = 5.0,
    zipf_exponent: float = 1.0,
    num_communities: int = 3,
    affinity: float = 0.8,
    num_features: int = 8,
    feature_signal: float = 1.0,
    seed: int,
) -> Data:
    """Sample a user–item interaction graph with Zipf (long-tail) item popularity.

    Users are nodes ``0..num_users-1``, items ``num_users..num_users+num_items-1``. Item
    ``r`` (a random popularity rank) has weight ``(r + 1) ** -zipf_exponent``. Users and
    items belong to ``num_communities`` taste communities; each user makes ``1 + Poisson(
    interactions_per_user - 1)`` draws, each from its own community's items with probability
    ``affinity`` and from all items otherwise, in both cases in proportion to popularity.
    Repeated draws count once. Memory grows with the interactions, never ``users × items``.
    Features are the community mean plus Gaussian noise, as in :func:`csbm`.

    Args:
        num_users: Number of users.
        num_items: Number of items.
        interactions_per_user: Mean draws per user (at least 1).
        zipf_exponent: Popularity exponent (0 is uniform; larger is a heavier head).
        num_communities: Taste communities (also the labels).
        affinity: Probability that a draw stays in the user's community.
        num_features: Feature dimension.
        feature_signal: Distance of community means from the origin, in noise units.
        seed: Seed of every random choice.

    Returns:
        An undirected graph with ``x``, ``edge_index``, ``y`` (community), ``node_type`` (0
        user, 1 item), ``num_users`` and ``item_popularity`` (each item's Zipf weight,
        normalised to sum to 1; zero for users).

    Raises:
        InvalidConfigError: If a parameter is out of range.

    Example:
        >>> g = bipartite_interactions(30, 20, seed=0)
        >>> g.num_nodes, int(g.node_type.sum()), bool((g.edge_index[0] < 30).any())
        (50, 20, True)
    """
    for name, value, hi in (("num_users", num_users, 10_000_000),
                            ("num_items", num_items, 10_000_000),
                            ("num_communities", num_communities, 10_000),
                            ("num_features", num_features, 100_000)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
            raise InvalidConfigError(f"bipartite_interactions {name} must be an integer in "
                                     f"[1, {hi}]; got {str(value)[:40]}")
    for name, number, lo, top in (("interactions_per_user", interactions_per_user, 1.0, 10_000.0),
                                  ("zipf_exponent", zipf_exponent, 0.0, 10.0),
                                  ("affinity", affinity, 0.0, 1.0),
                                  ("feature_signal", feature_signal, -1e6, 1e6)):
        if (isinstance(number, bool) or not isinstance(number, (int, float))
                or not math.isfinite(number) or not lo <= number <= top):
            raise InvalidConfigError(f"bipartite_interactions {name} must be a number in "
                                     f"[{lo}, {top}]; got {str(number)[:40]}")
    if num_communities > min(num_users, num_items):
        raise InvalidConfigError("bipartite_interactions num_communities must not exceed "
                                 "num_users or num_items")
    rng = np.random.default_rng(seed)
    user_c = np.arange(num_users) % num_communities
    item_c = np.arange(num_items) % num_communities
    rng.shuffle(user_c)
    rng.shuffle(item_c)
    weight = (rng.permutation(num_items) + 1.0) ** -float(zipf_exponent)
    # one cumulative table per community plus one over all items: a draw is a binary search
    tables = [np.flatnonzero(item_c == c) for c in range(num_communities)]
    cums = [np.cumsum(weight[t]) for t in tables]
    all_cum = np.cumsum(weight)
    draws = 1 + rng.poisson(float(interactions_per_user) - 1.0, size=num_users)
    users = np.repeat(np.arange(num_users), draws)
    local = rng.random(len(users)) < affinity
    u01 = rng.random(len(users))
    items = np.searchsorted(all_cum, u01 * all_cum[-1], side="right")
    for c in range(num_communities):
        pick = local & (user_c[users] == c)
        idx = np.searchsorted(cums[c], u01[pick] * cums[c][-1], side="right")
        items[pick] = tables[c][np.minimum(idx, len(tables[c]) - 1)]
    items = np.minimum(items, num_items - 1) + num_users
    edge_index = torch.from_numpy(np.stack([users, items])).long()
    n = num_users + num_items
    edge_index = coalesce(to_undirected(edge_index, num_nodes=n), num_nodes=n)
    y = np.concatenate([user_c, item_c])
    means = rng.normal(size=(num_communities, num_features))
    means *= feature_signal / np.linalg.norm(means, axis=1, keepdims=True)
    x = means[y] + rng.normal(size=(n, num_features))
    popularity = np.concatenate([np.zeros(num_users), weight / weight.sum()])
    return Data(
        x=torch.from_numpy(x).float(),
        edge_index=edge_index,
        y=torch.from_numpy(y).long(),
        node_type=torch.cat([torch.zeros(num_users, dtype=torch.long),
                             torch.ones(num_items, dtype=torch.long)]),
        num_users=num_users,
        item_popularity=torch.from_numpy(popularity).float(),
        num_nodes=n,
    )
