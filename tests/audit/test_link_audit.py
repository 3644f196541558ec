"""Auditing a pair scorer: the API path, the protocol record, slices, refusals, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import graphleaks
from graphleaks.audit.link_audit import audit_link_model, audit_link_split
from graphleaks.data import tiny_graph
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.data.pairs import undirected_pairs
from graphleaks.data.synthetic import bipartite_interactions
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.link_predictor import LinkPredictorSpec, fit_link_predictor
from graphleaks.report.report import AuditReport
from graphleaks.report.scores import scores_csv
from graphleaks.report.verdict import compute_verdict
from tests.audit.link_own_model import train_user_model

FAST = {"suite": "quick", "n_bootstrap": 50}


@pytest.fixture(scope="module")
def user_setup():
    """A user's own link predictor, trained by the user's loop on 80 % of the edges."""
    g = tiny_graph()
    pairs = undirected_pairs(g.edge_index)
    perm = np.random.default_rng(0).permutation(len(pairs))
    n_train = int(0.8 * len(pairs))
    train, held = pairs[perm[:n_train]], pairs[perm[n_train:]]
    model = train_user_model(g.x, torch.from_numpy(train).t(), epochs=200, seed=0)
    # the user serves the model on the training graph; non-members: held-out edges and as
    # many non-edges
    rng = np.random.default_rng(1)
    keys = set(map(tuple, pairs.tolist()))
    non_edges: list[tuple[int, int]] = []
    while len(non_edges) < len(held):
        a, b = sorted(rng.integers(0, g.num_nodes, 2).tolist())
        if a != b and (a, b) not in keys and (a, b) not in non_edges:
            non_edges.append((a, b))
    served = torch.from_numpy(train).t()
    data = g.clone()
    data.edge_index = torch.cat([served, served.flip(0)], dim=1)
    return model, data, train, np.concatenate([held, np.array(non_edges)])


def test_api_path_audits_a_users_own_link_predictor(user_setup):
    model, data, members, non = user_setup
    report = graphleaks.audit_model(model, data, members, non.T, task="link",
                                    embedding_layers=["conv2"], **FAST)
    names = {a.attack for a in report.attacks}
    assert names == {"edge_score_threshold", "edge_lira", "edge_rmia",
                     "edge_embedding_similarity"}
    assert all(a.task == "edge_membership" for a in report.attacks)
    proto = report.config["edge_protocol"]
    assert proto["member_edges_in_inference_graph"] == "all"
    assert proto["kind"] == "transductive" and proto["non_member_sampling"] == "not stated"
    thr = report.attack("edge_score_threshold").metrics.binary
    assert thr.auc.value > 0.6
    lines = compute_verdict(report)
    assert [v.risk for v in lines] == ["edge membership"]
    assert "own training loop" in lines[0].advice  # a user's model: pipeline advice
    assert AuditReport.from_json(report.to_json()).to_json() == report.to_json()


def test_without_embedding_layers_lmia_is_skipped_with_the_reason(user_setup):
    model, data, members, non = user_setup
    report = graphleaks.audit_model(model, data, members, non, task="link",
                                    attacks=None, **FAST)
    assert "edge_embedding_similarity" in report.config["skipped_attacks"]
    with pytest.raises(CapabilityError, match="requires EMBEDDINGS"):
        graphleaks.audit_model(model, data, members, non, task="link",
                               attacks=["edge_embedding_similarity"], **FAST)


def test_same_seed_same_report(user_setup):
    model, data, members, non = user_setup
    a = audit_link_model(model, data, members, non, attacks=["edge_score_threshold",
                                                             "edge_lira"], seed=5, **FAST)
    b = audit_link_model(model, data, members, non, attacks=["edge_score_threshold",
                                                             "edge_lira"], seed=5, **FAST)
    assert a.report.to_dict(include_timings=False) == b.report.to_dict(include_timings=False)
    assert scores_csv(a.tables) == scores_csv(b.tables)


def _bad(user_setup, **change):
    model, data, members, non = user_setup
    args = {"members": members, "non_members": non, **change}
    return lambda: graphleaks.audit_model(model, data, args["members"], args["non_members"],
                                          task="link", **FAST)


@pytest.mark.parametrize(("change", "error", "match"), [
    ("outside", DataError, r"member edges: row 0 names a node outside 0\.\.59"),
    ("self_loop", DataError, "member edges: row 0 is a self-loop"),
    ("duplicate", DataError, "are the same undirected pair"),
    ("overlap", DataError, "also a member edge"),
    ("empty", DataError, "non-member pairs are empty"),
])
def test_bad_edge_sets_are_refused_in_one_line(user_setup, change, error, match):
    _, _, members, non = user_setup
    m, n = members.copy(), non.copy()
    if change == "outside":
        m[0] = [0, 999]
    elif change == "self_loop":
        m[0] = [3, 3]
    elif change == "duplicate":
        m[1] = m[0][::-1]
    elif change == "overlap":
        n = np.concatenate([n, m[:1]])
    else:
        n = n[:0]
    with pytest.raises(error, match=match) as e:
        _bad(user_setup, members=m, non_members=n)()
    assert "\n" not in str(e.value) and "999" not in str(e.value)


def test_a_node_classifier_given_as_link_model_is_refused(user_setup):
    _, data, members, non = user_setup

    class NodeModel(torch.nn.Module):
        def forward(self, x, ei, pairs):
            return x.sum(1)

    with pytest.raises(InvalidConfigError, match="one score per node"):
        graphleaks.audit_model(NodeModel(), data, members, non, task="link", **FAST)
    with pytest.raises(InvalidConfigError, match="task 'hypergraph'"):
        graphleaks.audit_model(NodeModel(), data, members, non, task="hypergraph")
    with pytest.raises(InvalidConfigError, match="population does not apply to link"):
        graphleaks.audit_model(NodeModel(), data, members, non, task="link", population=[1])


def test_own_split_reports_protocol_utility_and_kind_slices():
    g = tiny_graph()
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    spec = LinkPredictorSpec.gae(hidden=(16,), embedding_dim=8, epochs=60, patience=0)
    model, _ = fit_link_predictor(g.x, split, spec, seed=0)
    run = audit_link_split(model, g.x, split, attacks=["edge_score_threshold"], **FAST)
    rep = run.report
    assert 0.0 <= rep.target.utility["test_link_auc"] <= 1.0
    assert rep.config["edge_protocol"]["split"]["non_member_sampling"] == "uniform"
    slices = rep.attacks[0].metrics.slices
    assert {"min_degree<=2", "max_degree>=11", "degree_product>100",
            "non_members=held_out_edges", "non_members=non_edges"} <= set(slices)
    csv = scores_csv(run.tables)
    header, first = csv.splitlines()[:2]
    assert header.startswith("attack,task,node,src,dst")
    assert first.split(",")[3] != "" and first.split(",")[4] != ""  # both endpoints
    parts = {line.split(",")[7] for line in csv.splitlines()[1:]}
    assert parts == {"member", "held_out_edge", "held_out_non_edge"}


def test_degree_matched_bipartite_split_is_stated_in_the_edge_protocol():
    from graphleaks.data.edge_splits import EdgeSplitConfig

    g = bipartite_interactions(60, 40, seed=0)
    cfg = EdgeSplitConfig(non_member_sampling="degree_matched", bipartite=True)
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=0,
                                     node_type=g.node_type)
    spec = LinkPredictorSpec.gae(hidden=(8,), embedding_dim=8, epochs=5, patience=0)
    model, _ = fit_link_predictor(g.x, split, spec, seed=0)
    run = audit_link_split(model, g.x, split, attacks=["edge_score_threshold"],
                           node_type=g.node_type.numpy(), **FAST)
    proto = run.report.config["edge_protocol"]
    assert proto["non_member_sampling"] == "degree_matched"
    assert proto["non_member_sampler"].startswith("degree_matched: each endpoint drawn in "
                                                  "proportion to its degree")
    assert "one user endpoint, one item endpoint" in proto["non_member_sampler"]
    assert proto["split"]["bipartite"] is True


def test_bipartite_graph_is_sliced_by_item_popularity():
    g = bipartite_interactions(60, 40, seed=0)
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    spec = LinkPredictorSpec.gae(hidden=(16,), embedding_dim=8, epochs=40, patience=0)
    model, _ = fit_link_predictor(g.x, split, spec, seed=0)
    run = audit_link_split(model, g.x, split, attacks=["edge_score_threshold"],
                           node_type=g.node_type.numpy(), **FAST)
    slices = run.report.attacks[0].metrics.slices
    assert {"item_popularity=head", "item_popularity=tail"} <= set(slices)
    assert set(run.tables[0].cls.tolist()) <= {"user-item", "item-user", "user-user",
                                               "item-item"}
