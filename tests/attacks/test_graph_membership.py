"""Graph-membership attacks: signal on a memorising GIN, none on a target that never saw
the candidates, the truth boundary, and the registry."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import graphleaks
from graphleaks.attacks import registry
from graphleaks.attacks.graph_membership import graph_registry, run_graph_attack
from graphleaks.attacks.graph_membership.graph_label_only_mia import perturb
from graphleaks.audit.graph_audit import graph_target
from graphleaks.data.graphsets import GraphSet, motif_graphs
from graphleaks.metrics import binary
from graphleaks.models.graph_classifier import GraphClassifierSpec, fit_graph_classifier
from graphleaks.threat import Task

SPEC = GraphClassifierSpec(hidden=32, layers=2, epochs=60, patience=0, batch_size=8)
FAST = {"graph_lira_mia": {"num_references": 2, "ref_epochs": 30},
        "graph_rmia_mia": {"num_references": 2, "ref_epochs": 30},
        "graph_shadow_mia": {"shadow_epochs": 30},
        "graph_label_only_mia": {"num_queries": 6}}


def random_label_set(n: int = 48, seed: int = 0) -> GraphSet:
    """Motif graphs with shuffled labels: a model can only memorise them."""
    gs = motif_graphs(n, seed=seed)
    y = np.random.default_rng(seed).permutation(gs.y.numpy())
    graphs = []
    for g, label in zip(gs.graphs, y, strict=True):
        h = g.clone()
        h.y = h.y.new_tensor([int(label)])
        graphs.append(h)
    return GraphSet.from_graphs(graphs, gs.class_names, source="random-label motifs")


@pytest.fixture(scope="module")
def memorising():
    gs = random_label_set()
    members, non, pop = np.arange(16), np.arange(16, 32), np.arange(32, 48)
    model, _ = fit_graph_classifier(SPEC, [gs[i] for i in members], gs.num_classes, seed=0)
    return graph_target(model, gs, members, non, population=pop)


@pytest.fixture(scope="module")
def unseen():
    # trained on the population only: members and non-members are equally new to it
    gs = random_label_set()
    members, non, pop = np.arange(16), np.arange(16, 32), np.arange(32, 48)
    model, _ = fit_graph_classifier(SPEC, [gs[i] for i in pop], gs.num_classes, seed=0)
    return graph_target(model, gs, members, non, population=pop)


def _auc(result) -> float:
    return binary.auc(result.scores, result.labels)


@pytest.mark.parametrize("name", ["graph_confidence_mia", "graph_lira_mia", "graph_rmia_mia",
                                  "graph_label_only_mia"])
def test_memorising_gin_leaks(memorising, name):
    attack = graph_registry.get(name)(**FAST.get(name, {}))
    r = run_graph_attack(attack, memorising, seed=0)
    assert r.task == Task.GRAPH_MEMBERSHIP and r.labels.sum() == 16 and len(r.scores) == 32
    assert _auc(r) > 0.7, (name, _auc(r))


def test_shadow_attack_runs_and_is_a_probability(memorising):
    r = run_graph_attack(graph_registry.get("graph_shadow_mia")(**FAST["graph_shadow_mia"]),
                         memorising, seed=0)
    assert r.threshold == 0.5 and ((0 <= r.scores) & (r.scores <= 1)).all()
    # the shadow's fit is stated: its 0.5 threshold transfers only if it fits as the target
    fit = [n for n in r.notes if n.startswith("shadow model accuracy: ")]
    assert len(fit) == 1 and "on its members" in fit[0] and "on its non-members" in fit[0]


def test_target_that_never_saw_the_candidates_gives_no_signal(unseen):
    r = run_graph_attack(graph_registry.get("graph_confidence_mia")(), unseen, seed=0)
    ev = binary.evaluate_binary(r.scores, r.labels, n_bootstrap=200, seed=0)
    auc = ev.metrics.auc
    assert auc.ci[0] <= 0.5 <= auc.ci[1], auc


def test_candidate_order_carries_no_truth(memorising):
    r = run_graph_attack(graph_registry.get("graph_confidence_mia")(), memorising, seed=3)
    assert not (r.labels[:16] == 1).all()  # members are not listed first
    r2 = run_graph_attack(graph_registry.get("graph_confidence_mia")(), memorising, seed=3)
    np.testing.assert_array_equal(r.scores, r2.scores)


def test_references_are_shared_between_lira_and_rmia(memorising):
    from graphleaks.attacks.graph_membership import GraphReferencePool

    pool = GraphReferencePool(0)
    run_graph_attack(graph_registry.get("graph_lira_mia")(**FAST["graph_lira_mia"]),
                     memorising, seed=1, references=pool)
    run_graph_attack(graph_registry.get("graph_rmia_mia")(**FAST["graph_rmia_mia"]),
                     memorising, seed=2, references=pool)
    assert len(pool._pool) == 1


def test_perturbation_keeps_graph_valid():
    import torch

    g = motif_graphs(2, seed=0)[0]
    p = perturb(g, 1.0, 0.5, torch.ones(g.x.shape[1]), np.random.default_rng(0),
                torch.Generator().manual_seed(0))
    assert p.x.shape == g.x.shape and int(p.edge_index.max()) < g.num_nodes
    assert p.edge_index.shape[1] % 2 == 0  # undirected: both directions


def test_graph_attacks_are_not_node_attacks():
    assert not set(graph_registry.names()) & set(registry.names())
    for name in graph_registry:
        cls = graph_registry.get(name)
        assert cls.task == Task.GRAPH_MEMBERSHIP and cls.paper


PACKAGE = Path(graphleaks.__file__).parent / "attacks" / "graph_membership"
SPLIT_PARTS = {"members", "non_members"}  # the view's population() is the adversary's


@pytest.mark.parametrize("path", sorted(p.name for p in PACKAGE.glob("graph_*.py")))
def test_graph_attack_modules_never_reach_the_truth(path):
    # only base.py (the view and the harness) holds the target; attacks see the view
    tree = ast.parse((PACKAGE / path).read_text(encoding="utf-8"))
    bad = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute)
           and (n.attr in {"_target", "truth"} or n.attr in SPLIT_PARTS)]
    bad += [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name)
            and n.id in {"run_graph_attack", "GraphTarget"}]
    assert bad == []


def test_perturbation_dedups_pairs_as_unique_over_columns():
    import torch

    for seed in range(5):
        g = motif_graphs(3, seed=seed)[seed % 3]
        rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
        p = perturb(g, 1.0, 0.9, torch.ones(g.x.shape[1]), rng_a,
                    torch.Generator().manual_seed(0))
        # the same draws, deduplicated as the attack first did (np.unique over columns)
        ei = g.edge_index.numpy()
        und = ei[:, ei[0] < ei[1]]
        keep = und[:, rng_b.random(und.shape[1]) >= 0.9]
        n, n_add = int(g.num_nodes), int(round(0.9 * und.shape[1]))
        a, b = rng_b.integers(0, n, n_add), rng_b.integers(0, n, n_add)
        new = np.stack([np.minimum(a, b), np.maximum(a, b)])
        keep = np.unique(np.concatenate([keep, new[:, new[0] != new[1]]], axis=1), axis=1)
        assert np.array_equal(p.edge_index.numpy(), np.concatenate([keep, keep[::-1]], axis=1))
