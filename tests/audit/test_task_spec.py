"""Specs of the link and graph tasks: ``[target] task`` (or a link/graph bundle) makes the
defense, the model fields and the attacks resolve in that task's registries; anything of
another task is refused in one line naming the field."""

from __future__ import annotations

import pytest

from graphleaks.audit.spec import load_spec, parse_spec
from graphleaks.errors import InvalidConfigError

GRAPH = {"task": "graph", "dataset": "motif", "synthetic": {"num_graphs": 40},
         "architecture": {"hidden": 8, "epochs": 2}}
LINK = {"task": "link", "dataset": "synthetic", "synthetic": {"num_nodes": 100},
        "architecture": {"epochs": 3}}


def test_graph_spec_resolves_in_the_graph_task() -> None:
    spec = parse_spec({"target": {**GRAPH, "defense": "dp-sgd",
                                  "defense_params": {"epsilon": 4.0}},
                       "attacks": {"graph_lira_mia": {}}})
    t = spec.target
    assert (t.task, t.defense, t.arch, t.defense_params) == ("graph", "dp_sgd", "gin",
                                                             {"epsilon": 4.0})
    assert list(spec.attacks) == ["graph_lira_mia"]
    assert spec.to_dict()["target"]["task"] == "graph"


def test_link_spec_defaults_to_its_own_attack_and_encoder() -> None:
    spec = parse_spec({"target": {**LINK, "defense": "lapgraph",
                                  "defense_params": {"epsilon": 2.0}}})
    assert list(spec.attacks) == ["edge_score_threshold"]
    assert spec.target.arch in ("gcn", "sage", "gat", "mlp")


def test_a_node_spec_keeps_its_hash() -> None:
    """Specs written before tasks hash as before: the node task is not in their record."""
    spec = parse_spec({"target": {"dataset": "synthetic"}, "attacks": {"confidence_mia": {}}})
    assert spec.target.task == "node" and "task" not in spec.to_dict()["target"]
    explicit = parse_spec({"target": {"dataset": "synthetic", "task": "node"},
                           "attacks": {"confidence_mia": {}}})
    assert explicit.hash() == spec.hash()


@pytest.mark.parametrize("target,attacks,needle", [
    (GRAPH, {"confidence_mia": {}}, "attacks.confidence_mia: not an attack of the graph task"),
    (LINK, {"graph_lira_mia": {}}, "attacks.graph_lira_mia: not an attack of the link task"),
    ({**GRAPH, "defense": "edgerand"}, {},
     "target.defense: 'edgerand' is not a defense of the graph task"),
    ({**LINK, "defense": "gap"}, {}, "'gap' is not a defense of the link task"),
    ({**GRAPH, "architecture": {"hidden": [64]}}, {}, "hidden is one width"),
    ({**GRAPH, "architecture": {"hiden": 4}}, {}, "target.architecture.gin.hiden"),
    ({**GRAPH, "arch": "sage"}, {}, "must be one of gin, gcn"),
    ({**LINK, "arch": "tagcn"}, {}, "'tagcn' is not a link encoder"),
    ({**GRAPH, "synthetic": {"num_nodes": 4}}, {}, "target.synthetic: unknown key"),
    ({**GRAPH, "task": "edges"}, {}, "target.task must be one of node, link, graph"),
    ({**GRAPH, "defense": "dp_sgd", "defense_params": {"epsilon": -1.0}}, {},
     "target.defense_params"),
    ({**LINK, "split": {"kind": "sideways"}}, {}, "target.split.kind must be one of"),
    ({**LINK, "split": {"val_frac": 0.6, "test_frac": 0.5}}, {}, "target.split: "),
    ({**GRAPH, "split": {"train_frac": 0.9, "val_frac": 0.2}}, {}, "with a sum below 1"),
    ({**GRAPH, "split": {"kind": "inductive"}}, {}, "target.split: unknown key 'kind'"),
    ({"dataset": "synthetic", "split": {"kind": "inductive"}}, {},
     "target.split applies to link and graph targets"),
])
def test_other_tasks_refused_in_one_line(target, attacks, needle) -> None:
    raw = {"target": target, **({"attacks": attacks} if attacks else {})}
    with pytest.raises(InvalidConfigError) as e:
        parse_spec(raw)
    assert needle in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("audit,needle", [
    ({"query_graph": "full"}, "audit.query_graph does not apply to the graph task"),
    ({"defense_aware": False}, "audit.defense_aware does not apply"),
    ({"compare_unit": "edge"}, "audit.compare_unit does not apply"),
])
def test_node_audit_keys_refused(audit, needle) -> None:
    with pytest.raises(InvalidConfigError, match=needle):
        parse_spec({"target": GRAPH, "audit": audit})


def test_bundle_task_read_from_its_manifest(tmp_path) -> None:
    """A spec naming a graph bundle (relative to the spec file) takes the graph task, so its
    graph attacks validate; a task that disagrees with the bundle is refused."""
    from graphleaks.bundles import save_bundle
    from graphleaks.data.graphsets import motif_graphs
    from graphleaks.defenses.graph_base import graph_registry
    from graphleaks.models.graph_classifier import GraphClassifierSpec
    from graphleaks.models.trained_graph_target import GraphSplit

    gs = motif_graphs(30, seed=0)
    t = graph_registry.get("none")().fit(gs, GraphSplit.draw(30, seed=0), seed=0,
                                         model=GraphClassifierSpec(hidden=4, epochs=1))
    save_bundle(t, tmp_path / "b")
    (tmp_path / "s.toml").write_text('[target]\nbundle = "b"\n[audit]\nn_bootstrap = 20\n'
                                     '[attacks.graph_confidence_mia]\n')
    spec = load_spec(tmp_path / "s.toml")
    assert spec.target.task == "graph" and spec.target.bundle == "b"
    from graphleaks.audit.task_spec import run_task_spec

    run = run_task_spec(spec)
    assert run.report.config["spec_hash"] == spec.hash()
    assert [a.attack for a in run.report.attacks] == ["graph_confidence_mia"]
    (tmp_path / "s.toml").write_text('[target]\nbundle = "b"\ntask = "link"\n')
    with pytest.raises(InvalidConfigError, match="the bundle holds a graph target"):
        load_spec(tmp_path / "s.toml")


def test_split_tables_reach_the_targets() -> None:
    """``[target.split]``: an inductive, degree-matched link split and a graph split's
    member and validation fractions are the ones trained and reported."""
    from graphleaks.audit.task_spec import run_task_spec

    link = run_task_spec(parse_spec({"target": {**LINK, "split": {
        "kind": "inductive", "non_member_sampling": "degree_matched"}},
        "audit": {"n_bootstrap": 20}}))
    proto = link.report.config["edge_protocol"]
    assert (proto["kind"], proto["non_member_sampling"]) == ("inductive", "degree_matched")
    graph = run_task_spec(parse_spec({"target": {**GRAPH, "split": {
        "train_frac": 0.3, "val_frac": 0.2}}, "audit": {"n_bootstrap": 20}}))
    sizes = graph.report.target.split_sizes
    assert (sizes["train"], sizes["test"]) == (12, 20)  # of 40 graphs: 30 % members, 50 % out


def test_link_spec_on_the_bipartite_dataset_draws_user_item_non_edges() -> None:
    """A spec's link target on ``dataset = "bipartite"`` gets bipartite non-edges without
    ``split.bipartite = true`` (the graph has ``node_type``); ``false`` still turns it off."""
    from graphleaks.audit.task_spec import build_task_target

    for split, want in (({}, True), ({"bipartite": False}, False)):
        spec = parse_spec({"target": {"task": "link", "dataset": "bipartite",
                                      "architecture": {"epochs": 1}, "split": split}})
        t = build_task_target(spec.target, seed=0)
        item = t.graph.node_type.numpy().astype(bool)
        one_each = item[t.split.held_out_non_edges].sum(axis=1) == 1
        assert t.split.config.bipartite is want and bool(one_each.all()) is want
