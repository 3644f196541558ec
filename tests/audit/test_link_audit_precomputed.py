"""A link audit of a precomputed-propagation predictor states the model that ran."""

from __future__ import annotations

from graphleaks.audit.link_audit import audit_link_split
from graphleaks.data import tiny_graph
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.models.link_predictor import LinkPredictorSpec, fit_link_predictor
from graphleaks.report.markdown import render_markdown


def test_report_and_markdown_state_the_precomputed_mode_and_references_use_it():
    g = tiny_graph()
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    spec = LinkPredictorSpec.precomputed(embedding_dim=8, epochs=5, patience=0)
    model, _ = fit_link_predictor(g.x, split, spec, seed=0)
    run = audit_link_split(model, g.x, split, attacks=["edge_lira"], suite="quick",
                           n_bootstrap=20,
                           params={"edge_lira": {"num_references": 2, "ref_epochs": 5}})
    arch = run.report.target.architecture
    assert arch["propagation_mode"] == "precomputed"
    assert arch["edge_dropout"] == 0 and arch["input_dropout"] == 0
    assert "precomputed once per graph" in arch["arch"]
    assert "PRECOMPUTED ONCE PER GRAPH" in render_markdown(run.report)
    # the references are trained with the target's spec: the precomputed mode too
    assert any("reference link predictors" in n for n in run.report.attacks[0].notes)


def test_a_full_propagation_target_card_is_unchanged():
    g = tiny_graph()
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    model, _ = fit_link_predictor(g.x, split, LinkPredictorSpec(embedding_dim=8, epochs=3),
                                  seed=0)
    run = audit_link_split(model, g.x, split, attacks=["edge_score_threshold"],
                           suite="quick", n_bootstrap=20)
    assert run.report.target.architecture["arch"] == "link predictor (mlp encoder, dot decoder)"
    assert run.report.target.architecture["propagation_mode"] == "full"
