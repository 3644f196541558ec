"""Edge-membership splits: disjoint, complete, seeded, protocol-faithful, O(E), and strict
about user-given pair lists."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphleaks.data.edge_splits import (
    HELD_OUT_EDGE,
    HELD_OUT_NON_EDGE,
    MEMBER,
    EdgeMembershipSplit,
    EdgeSplitConfig,
)
from graphleaks.data.pairs import contains, edge_keys, pair_keys
from graphleaks.data.synthetic import bipartite_interactions, csbm, tiny_graph
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics.binary import auc

LISTS = ("members", "val_edges", "val_non_edges", "held_out_edges", "held_out_non_edges",
         "context_edges")


def _keys(split: EdgeMembershipSplit, name: str) -> np.ndarray:
    return pair_keys(getattr(split, name), split.num_nodes)


def _assert_disjoint(split: EdgeMembershipSplit) -> None:
    seen = np.concatenate([_keys(split, n) for n in LISTS])
    assert len(np.unique(seen)) == len(seen)


def test_transductive_split_partitions_the_edges() -> None:
    g = csbm(300, seed=0)
    s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=1)
    graph = edge_keys(g.edge_index, g.num_nodes)
    positives = np.sort(np.concatenate([_keys(s, n) for n in
                                        ("members", "val_edges", "held_out_edges")]))
    assert np.array_equal(positives, graph)  # every edge exactly once
    for name in ("val_non_edges", "held_out_non_edges"):
        assert not contains(graph, _keys(s, name)).any()
    _assert_disjoint(s)
    e = len(graph)
    assert len(s.held_out_edges) == round(0.10 * e) and len(s.val_edges) == round(0.05 * e)
    assert len(s.held_out_non_edges) == len(s.held_out_edges)
    for name in LISTS:
        p = getattr(s, name)
        assert p.dtype == np.int64 and (p[:, 0] < p[:, 1]).all()


def test_same_seed_same_split_other_seed_other_split() -> None:
    g = tiny_graph()
    a = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=4)
    b = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=4)
    c = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=5)
    for name in LISTS:
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.held_out_edges, c.held_out_edges)


def test_graphs_the_target_trains_and_is_served_with() -> None:
    g = tiny_graph()
    s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    mp = s.message_passing_edge_index()
    assert mp.shape == (2, 2 * len(s.members))
    assert np.array_equal(edge_keys(mp, s.num_nodes), np.sort(_keys(s, "members")))
    held = _keys(s, "held_out_edges")
    assert not contains(edge_keys(mp, s.num_nodes), held).any()
    # default protocol: the inference graph is the member graph, queried members included
    query = np.concatenate([s.members[:5], s.held_out_edges[:5]])
    assert torch.equal(s.inference_edge_index(query), mp)


def test_queried_members_leave_the_inference_graph_when_asked() -> None:
    g = tiny_graph()
    cfg = EdgeSplitConfig(member_edges_in_inference_graph=False)
    s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=0)
    query = s.members[:5][:, ::-1]  # either orientation names the pair
    served = edge_keys(s.inference_edge_index(query), s.num_nodes)
    assert len(served) == len(s.members) - 5
    assert not contains(served, pair_keys(query, s.num_nodes)).any()
    assert s.record()["member_edges_in_inference_graph"] is False


def test_inductive_split_keeps_the_parts_apart() -> None:
    g = csbm(400, avg_degree=8.0, seed=0)
    cfg = EdgeSplitConfig(kind="inductive", held_out_node_frac=0.3, test_frac=0.5)
    s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=2)
    held = np.zeros(s.num_nodes, dtype=bool)
    held[s.held_out_nodes] = True
    assert len(s.held_out_nodes) == 120
    for name in ("members", "val_edges", "val_non_edges"):
        assert not held[getattr(s, name)].any()
    for name in ("held_out_edges", "held_out_non_edges", "context_edges"):
        assert held[getattr(s, name)].all()
    _assert_disjoint(s)
    # context edges are served but never trained on; cross edges are nowhere
    served = edge_keys(s.inference_edge_index(), s.num_nodes)
    trained = edge_keys(s.message_passing_edge_index(), s.num_nodes)
    assert contains(served, _keys(s, "context_edges")).all()
    assert not contains(trained, _keys(s, "context_edges")).any()
    cross = g.edge_index[:, held[g.edge_index[0]] != held[g.edge_index[1]]]
    assert cross.shape[1] > 0
    assert not contains(served, pair_keys(cross.t().numpy(), s.num_nodes)).any()
    assert np.array_equal(s.training_nodes(), np.flatnonzero(~held))
    assert s.record()["held_out_node_frac"] == 0.3


def test_degree_matched_non_edges_defeat_a_degree_score() -> None:
    """On a long-tail graph, the degree product tells uniform non-edges from held-out edges;
    degree-matched non-edges take most of that signal away."""
    g = bipartite_interactions(400, 300, interactions_per_user=6, zipf_exponent=1.2, seed=0)
    deg = np.bincount(g.edge_index[0].numpy(), minlength=g.num_nodes).astype(float)

    def degree_auc(sampling: str) -> float:
        cfg = EdgeSplitConfig(non_member_sampling=sampling, test_frac=0.2)
        s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=0)
        pairs = np.concatenate([s.held_out_edges, s.held_out_non_edges])
        labels = np.r_[np.ones(len(s.held_out_edges)), np.zeros(len(s.held_out_non_edges))]
        return auc(deg[pairs[:, 0]] * deg[pairs[:, 1]], labels)

    uniform, matched = degree_auc("uniform"), degree_auc("degree_matched")
    assert uniform > 0.85
    assert matched < uniform - 0.15


def test_candidates_label_members_and_both_kinds_of_non_members() -> None:
    g = tiny_graph()
    s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    pairs, kind = s.candidates()
    assert len(pairs) == len(s.members) + len(s.held_out_edges) + len(s.held_out_non_edges)
    assert np.array_equal(pairs[kind == MEMBER], s.members)
    assert np.array_equal(pairs[kind == HELD_OUT_EDGE], s.held_out_edges)
    assert np.array_equal(pairs[kind == HELD_OUT_NON_EDGE], s.held_out_non_edges)


def test_record_states_the_protocol() -> None:
    g = tiny_graph()
    cfg = EdgeSplitConfig(non_member_sampling="degree_matched", negatives_per_positive=2)
    r = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=9).record()
    assert r["unit"] == "edge" and r["kind"] == "transductive" and r["seed"] == 9
    assert r["non_member_sampling"] == "degree_matched"
    assert r["member_edges_in_inference_graph"] is True
    assert r["counts"]["held_out_non_edges"] == 2 * r["counts"]["held_out_edges"]
    assert r["counts"]["val_non_edges"] == 2 * r["counts"]["val_edges"]


def test_memory_grows_with_edges_not_nodes() -> None:
    """Ten million nodes and a few thousand edges: an N×N array would need 800 TB."""
    rng = np.random.default_rng(0)
    n = 10_000_000
    ei = torch.from_numpy(rng.integers(0, n, size=(2, 5000)))
    s = EdgeMembershipSplit.draw(ei, n, EdgeSplitConfig(non_member_sampling="degree_matched"),
                                 seed=0)
    assert len(s.held_out_non_edges) == len(s.held_out_edges) == 500


@pytest.mark.parametrize("bad", [
    {"val_frac": 0.5, "test_frac": 0.5}, {"test_frac": 0.0}, {"kind": "semi"},
    {"non_member_sampling": "popular"}, {"negatives_per_positive": 0},
])
def test_bad_config_is_refused(bad) -> None:
    g = tiny_graph()
    with pytest.raises(InvalidConfigError):
        EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, EdgeSplitConfig(**bad), seed=0)


def test_too_small_graph_is_one_error() -> None:
    with pytest.raises(DataError, match="at least 3"):
        EdgeMembershipSplit.draw(torch.tensor([[0, 1], [1, 0]]), 2, seed=0)


# --- user-given pair lists ----------------------------------------------------------------

N = 5000
SECRET = 4242  # a node id planted where a message might quote it


def _valid() -> dict[str, np.ndarray]:
    return {"members": np.array([[0, 1], [1, 2], [2, 3]]),
            "held_out_edges": np.array([[3, 4]]),
            "held_out_non_edges": np.array([[0, 4]])}


def test_valid_pairs_make_a_split() -> None:
    ei = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    s = EdgeMembershipSplit.from_pairs(N, **_valid(), val_edges=np.empty((0, 2)),
                                       edge_index=ei)
    assert len(s.members) == 3 and s.record()["counts"]["held_out_non_edges"] == 1


@pytest.mark.parametrize(("change", "expected"), [
    ({"members": np.array([[0, 1], [1, N + SECRET]])}, "row 1 names a node outside"),
    ({"members": np.array([[0, 1], [-SECRET, 1]])}, "row 1 names a node outside"),
    ({"members": np.array([[0, 1], [SECRET, SECRET]])}, "row 1 is a self-loop"),
    ({"members": np.array([[0, 1], [SECRET, 7], [7, SECRET]])}, "rows 1 and 2 are the same"),
    ({"held_out_non_edges": np.array([[2, 1]])},
     "member edges and held-out non-edges share a pair"),
    ({"held_out_edges": np.array([[0, 1]])}, "member edges and held-out edges share a pair"),
    ({"members": np.array([[0, 1], [0.5, SECRET]])}, "row 1 holds a node id that is not"),
    ({"members": np.array([[0, 1], [np.nan, SECRET]])}, "row 1 holds a node id that is not"),
    ({"members": np.array([[0, 1, SECRET]])}, "two-column array"),
    ({"members": np.array([["a", "b"]])}, "integer node ids"),
    ({"members": np.empty((0, 2))}, "member edges are empty"),
])
def test_bad_pair_lists_are_one_line_that_quotes_nothing(change, expected) -> None:
    with pytest.raises(DataError) as info:
        EdgeMembershipSplit.from_pairs(N, **{**_valid(), **change}, source="pairs.csv")
    msg = str(info.value)
    assert expected in msg and msg.startswith("pairs.csv: ")
    assert "\n" not in msg and str(SECRET) not in msg


def test_pairs_are_checked_against_the_graph() -> None:
    ei = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 4]])
    with pytest.raises(DataError, match="row 0 of the held-out non-edges is an edge"):
        EdgeMembershipSplit.from_pairs(N, **_valid(), edge_index=ei)
    ei = torch.tensor([[0, 1, 2], [1, 2, 3]])
    with pytest.raises(DataError, match="row 0 of the held-out edges is not an edge"):
        EdgeMembershipSplit.from_pairs(N, **_valid(), edge_index=ei)


def test_validation_lists_are_checked_too() -> None:
    with pytest.raises(DataError, match="validation edges and held-out edges share"):
        EdgeMembershipSplit.from_pairs(N, **_valid(), val_edges=np.array([[4, 3]]))


# --- the degree-matched sampler, plain and bipartite ----------------------------------------
def _endpoint_degree_gap(g, s) -> float:
    """Mean |log-degree| gap between the held-out edges' and non-edges' endpoints (sorted
    endpoint degrees compared quantile by quantile): 0 when their laws match."""
    deg = np.bincount(g.edge_index[0].numpy(), minlength=g.num_nodes).astype(float) + 1
    e = np.sort(np.log(deg[s.held_out_edges].ravel()))
    ne = np.sort(np.log(deg[s.held_out_non_edges].ravel()))
    q = np.linspace(0, 1, 101)
    return float(np.abs(np.quantile(e, q) - np.quantile(ne, q)).mean())


@pytest.mark.parametrize("bipartite", [False, True])
def test_degree_matched_endpoint_degrees_follow_the_edges(bipartite) -> None:
    """The non-edges' endpoint degree law is much closer to the edges' than uniform's is."""
    g = bipartite_interactions(400, 300, interactions_per_user=6, zipf_exponent=1.2, seed=0)
    gaps = {}
    for sampling in ("uniform", "degree_matched"):
        cfg = EdgeSplitConfig(non_member_sampling=sampling, test_frac=0.2, bipartite=bipartite)
        s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=0,
                                     node_type=g.node_type)
        gaps[sampling] = _endpoint_degree_gap(g, s)
    assert gaps["degree_matched"] < 0.25 and gaps["uniform"] > 4 * gaps["degree_matched"]


def test_bipartite_non_edges_join_one_user_and_one_item() -> None:
    g = bipartite_interactions(80, 60, seed=1)
    item = g.node_type.numpy().astype(bool)
    for sampling in ("uniform", "degree_matched"):
        cfg = EdgeSplitConfig(non_member_sampling=sampling, bipartite=True,
                              negatives_per_positive=3)
        s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=0,
                                     node_type=g.node_type)
        for name in ("held_out_non_edges", "val_non_edges"):
            assert item[getattr(s, name)].sum(axis=1).tolist() == [1] * len(getattr(s, name))
        _assert_disjoint(s)
        r = s.record()
        assert r["bipartite"] is True and r["non_member_sampling"] == sampling
        assert r["non_member_sampler"].startswith(sampling) and "one item" in r[
            "non_member_sampler"]
    # the plain (non-bipartite) uniform draw does pair users with users: what bipartite fixes
    s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    assert (item[s.held_out_non_edges].sum(axis=1) != 1).any()


@pytest.mark.parametrize("bipartite", [False, True])
def test_degree_matched_sampler_is_seeded(bipartite) -> None:
    g = bipartite_interactions(80, 60, seed=1)
    cfg = EdgeSplitConfig(non_member_sampling="degree_matched", bipartite=bipartite)

    def draw(seed):
        return EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=seed,
                                        node_type=g.node_type).held_out_non_edges

    assert np.array_equal(draw(4), draw(4))
    assert not np.array_equal(draw(4), draw(5))


def test_bipartite_split_needs_a_valid_node_type() -> None:
    g = bipartite_interactions(30, 20, seed=0)
    cfg = EdgeSplitConfig(bipartite=True)
    with pytest.raises(DataError, match="needs node_type"):
        EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=0)
    with pytest.raises(DataError, match="0 \\(user\\) or 1 \\(item\\)"):
        EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=0,
                                 node_type=np.full(g.num_nodes, 2))
    with pytest.raises(DataError, match="both sides"):
        EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=0,
                                 node_type=np.zeros(g.num_nodes, dtype=np.int64))
