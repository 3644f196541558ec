"""The seeded bipartite user-item generator: bipartite, long-tailed, community-structured."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphleaks.data.synthetic import bipartite_interactions
from graphleaks.errors import InvalidConfigError


def test_every_edge_joins_a_user_and_an_item() -> None:
    g = bipartite_interactions(200, 100, seed=0)
    src, dst = g.edge_index
    assert g.num_nodes == 300 and g.num_users == 200
    assert bool(((src < 200) != (dst < 200)).all())  # no user-user or item-item edge
    assert torch.equal(g.node_type, (torch.arange(300) >= 200).long())
    assert g.x.shape == (300, 8) and int(g.y.max()) == 2
    # undirected and without repeats
    keys = (src * 300 + dst).numpy()
    assert len(np.unique(keys)) == len(keys)
    assert set(keys) == set((dst * 300 + src).numpy())


def test_same_seed_same_graph() -> None:
    a, b = bipartite_interactions(50, 40, seed=3), bipartite_interactions(50, 40, seed=3)
    c = bipartite_interactions(50, 40, seed=4)
    assert torch.equal(a.edge_index, b.edge_index) and torch.equal(a.x, b.x)
    assert not torch.equal(a.edge_index, c.edge_index)


def test_item_popularity_is_long_tailed() -> None:
    g = bipartite_interactions(3000, 1000, interactions_per_user=8, zipf_exponent=1.2, seed=0)
    deg = np.bincount(g.edge_index[0].numpy(), minlength=4000)[3000:]
    top = np.sort(deg)[::-1]
    assert top[:100].sum() > 0.5 * deg.sum()  # the top 10% of items hold most interactions
    assert np.median(deg) < deg.mean() / 2
    flat = bipartite_interactions(3000, 1000, interactions_per_user=8, zipf_exponent=0.0,
                                  seed=0)
    flat_deg = np.bincount(flat.edge_index[0].numpy(), minlength=4000)[3000:]
    assert np.sort(flat_deg)[::-1][:100].sum() < 0.2 * flat_deg.sum()
    # the recorded popularity is the law the draws follow: the most popular item is busiest
    pop = g.item_popularity.numpy()[3000:]
    assert pop.sum() == pytest.approx(1.0, abs=1e-5) and deg[pop.argmax()] == deg.max()


def test_users_prefer_their_community() -> None:
    g = bipartite_interactions(2000, 600, affinity=0.9, zipf_exponent=0.5, seed=0)
    src, dst = g.edge_index.numpy()
    same = (g.y.numpy()[src] == g.y.numpy()[dst]).mean()
    assert same > 0.85  # 0.9 + 0.1 x (about a third by chance)


@pytest.mark.parametrize("bad", [
    {"num_users": 0}, {"num_items": 2.5}, {"interactions_per_user": 0.5},
    {"zipf_exponent": float("nan")}, {"affinity": 1.5}, {"num_communities": 1000},
    {"num_users": True},
])
def test_bad_parameters_are_refused(bad) -> None:
    with pytest.raises(InvalidConfigError):
        bipartite_interactions(**{"num_users": 30, "num_items": 20, **bad}, seed=0)
