"""Leakage against queries: budgets respected, counted at the target, and a planted effect.

The planted effect: on a perfect matching (every node has exactly one neighbour) a 2-layer
GCN's receptive field of a node is itself and its partner, so LinkTeller's influence is
exactly zero on every non-edge and positive on every edge. A sample of ``n`` nodes holds at
most ``n / 2`` edges, and the whole graph's sample holds all of them: more queries provably
uncover more edges, at AUC 1.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphleaks.attacks.base import TargetView
from graphleaks.attacks.label_only_mia import LabelOnlyMIA
from graphleaks.attacks.linkteller import LinkTeller
from graphleaks.audit.query_curve import (
    CURVE_ATTACKS,
    CountingView,
    QueryBudgetExceeded,
    query_curve,
)
from graphleaks.audit.runner import train_target
from graphleaks.data import tiny_graph
from graphleaks.data.splits import SplitConfig
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.report.query_curves import (
    CURVE_ATTACK_NAMES,
    QueryCurves,
    check_budgets,
    parse_budgets,
)
from graphleaks.threat import ThreatModel

N = 60  # nodes of the matching: 30 edges
ANSWERING = ("posteriors", "logits", "predicted_labels", "embeddings", "query",
             "query_labels", "query_features", "query_features_rows")


@pytest.fixture(scope="module")
def matching_target():  # noqa: ANN201
    """A GCN on a perfect matching of 60 nodes, transductive: every edge is private."""
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(N, generator=g)
    a, b = perm[0::2], perm[1::2]
    edges = torch.stack([torch.cat([a, b]), torch.cat([b, a])])
    graph = Data(x=torch.randn(N, 8, generator=g), edge_index=edges,
                 y=torch.arange(N) % 2, num_nodes=N)
    split = SplitConfig(kind="transductive", train_frac=0.5, val_frac=0.1, test_frac=0.4)
    return train_target(graph, split=split, spec=ArchitectureSpec(epochs=30), seed=0)


@pytest.fixture(scope="module")
def tiny_target():  # noqa: ANN201
    return train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=30))


@pytest.fixture
def answers(monkeypatch):  # noqa: ANN001, ANN201
    """Every answer the target gives through any view, counted outside the curve runner."""
    counted = {"n": 0}
    for name in ANSWERING:
        original = getattr(TargetView, name)

        def counting(self, *args, _original=original, **kwargs):  # noqa: ANN001, ANN202
            counted["n"] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(TargetView, name, counting)
    return counted


def test_more_queries_uncover_more_edges_on_a_planted_matching(matching_target, answers):
    qc = query_curve(matching_target, [LinkTeller(sampler="random")], budgets=(21, 41, 61),
                     seed=0, n_bootstrap=50)
    (curve,) = qc.curves
    small, _, large = curve.points
    # one query per sampled node, plus the unperturbed one
    assert [p.queries for p in curve.points] == [21, 41, 61]
    assert answers["n"] == 21 + 41 + 61  # the target answered exactly that many
    assert [p.setting["n_nodes"] for p in curve.points] == [20, 40, 60]
    # 20 nodes of a matching hold at most 10 edges; the whole graph's sample holds all 30
    assert small.n_pos is not None and small.n_pos <= 10
    assert large.n_pos == N // 2 and large.n_neg == N * (N - 1) // 2 - N // 2
    # non-edges have exactly zero influence, edges a positive one: a perfect ranking
    assert large.auc is not None and large.auc.value == 1.0
    assert large.tpr_at_1fpr is not None and large.tpr_at_1fpr.value == 1.0
    assert large.level == "severe"
    assert curve.first_budget("severe") is not None and curve.first_budget("severe") <= 61


def test_each_budget_is_respected_and_counts_grow(tiny_target, answers):
    budgets = (2, 5, 17)
    qc = query_curve(tiny_target, ["label_only_mia"], budgets=budgets, seed=0, n_bootstrap=50)
    (curve,) = qc.curves
    made = [p.queries for p in curve.points]
    assert made == sorted(made) and all(q <= b for q, b in zip(made, budgets, strict=True))
    assert made == [2, 5, 17]  # one clean query plus num_queries perturbed ones
    assert answers["n"] == sum(made)
    assert [p.setting["num_queries"] for p in curve.points] == [1, 4, 16]
    # the same members and non-members at every budget: only the queries change
    assert len({(p.n_pos, p.n_neg) for p in curve.points}) == 1
    assert all(p.auc is not None and p.tpr_at_1fpr is not None for p in curve.points)


def test_a_budget_too_small_to_run_is_a_point_without_metric(tiny_target):
    qc = query_curve(tiny_target, ["label_only_mia"], budgets=(1, 3), seed=0, n_bootstrap=20)
    first, second = qc.curves[0].points
    assert first.queries == 0 and first.auc is None and "cannot run within 1" in first.note
    assert second.queries == 3


def test_same_seed_same_curve(tiny_target):
    def run(seed: int) -> str:
        qc = query_curve(tiny_target, ["label_only_mia"], budgets=(3, 9), seed=seed,
                         n_bootstrap=50)
        return json.dumps(qc.to_dict(), sort_keys=True)

    assert run(0) == run(0)


def test_counting_view_refuses_the_query_past_its_limit(tiny_target):
    view = CountingView(tiny_target, ThreatModel(outputs=LabelOnlyMIA.requires), limit=2,
                        attack="probe")
    nodes = np.arange(5)
    view.predicted_labels(nodes)
    view.predicted_labels(nodes)
    with pytest.raises(QueryBudgetExceeded, match="query 3 with a budget of 2"):
        view.predicted_labels(nodes)
    assert view.count == 2


def test_curves_round_trip_through_json(tiny_target):
    qc = query_curve(tiny_target, ["label_only_mia"], budgets=(3, 9), seed=0, n_bootstrap=20)
    again = QueryCurves.from_dict(json.loads(json.dumps(qc.to_dict())), "curves")
    assert again == qc


def test_an_attack_without_a_query_curve_is_refused(tiny_target):
    with pytest.raises(InvalidConfigError, match="lira_mia has no query-budget curve"):
        query_curve(tiny_target, ["lira_mia"], budgets=(10,), seed=0)


def test_a_target_that_cannot_serve_an_attack_gets_a_skipped_curve(tiny_target):
    from graphleaks.threat import Output

    qc = query_curve(tiny_target, budgets=(30,), seed=0, n_bootstrap=20,
                     exposed=frozenset({Output.LABELS}))
    by = {c.attack: c for c in qc.curves}
    assert "FEATURE_QUERIES" in by["linkteller"].skipped and not by["linkteller"].points
    assert by["label_only_mia"].points[0].queries == 30


@pytest.mark.parametrize(("text", "why"), [
    ("100,0,1000", "budget 2 must be > 0"),
    ("100,-5", "budget 2 must be > 0"),
    ("1000,100", "strictly increasing"),
    ("100,100", "strictly increasing"),
    ("100,,1000", "an item is empty"),
    ("10,1e3", "item 2 is not an integer"),
    ("", "an item is empty"),
])
def test_bad_grids_are_refused(text, why):  # noqa: ANN001
    with pytest.raises(InvalidConfigError, match=why):
        parse_budgets(text)


def test_good_grids_parse():
    assert parse_budgets("100, 1000,10_000") == (100, 1000, 10_000)
    assert check_budgets([5]) == (5,)


def test_curve_attack_names_agree():
    assert tuple(CURVE_ATTACKS) == CURVE_ATTACK_NAMES


@pytest.mark.parametrize("attack", [LinkTeller(sampler="random"), LabelOnlyMIA()])
def test_queries_made_equal_the_declared_cost_of_the_shrunk_attack(matching_target,  # noqa: ANN001
                                                                  attack):
    from graphleaks.audit.query_curve import lifted

    qc = query_curve(matching_target, [attack], budgets=(25, 45), seed=1, n_bootstrap=20)
    n, e = N, int(matching_target.graph.edge_index.size(1))
    for p in qc.curves[0].points:
        shrunk = lifted(attack).with_query_budget(p.budget)
        assert shrunk is not None and p.queries == shrunk.query_cost(n, e) <= p.budget
