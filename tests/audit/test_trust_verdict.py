"""Issue 24: every verdict line right for the target in front of it.

One quick-suite default audit per defense on a tiny synthetic graph: no line recommends the
applied defense at a weaker ε, each line states its ledger coverage, a defended report
carries an audited ε by default, and defended models serve their hidden layers to the
white-box attacks. Uninformative targets are flagged first.
"""

from __future__ import annotations

import math
import re

import pytest

from graphleaks.audit.runner import run_audit, train_target
from graphleaks.data.synthetic import csbm
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.report.markdown import render_markdown
from graphleaks.report.report import AuditReport
from graphleaks.report.verdict import compute_verdict, verdict_notes

DEFENSES = {
    "gap_edp": {"epsilon": 1.0},
    "gap_ndp": {"epsilon": 4.0},
    "lpgnn": {"epsilon": 1.0, "epochs": 30},
    "edgerand": {"epsilon": 4.0},
}


@pytest.fixture(scope="module")
def graph():  # noqa: ANN201 - a PyG Data
    return csbm(300, num_classes=3, num_features=32, feature_signal=1.0, avg_degree=6, seed=1)


@pytest.fixture(scope="module", params=sorted(DEFENSES))
def defended(request, graph) -> tuple[str, AuditReport]:  # noqa: ANN001
    name = request.param
    t = train_target(graph, defense=name, defense_params=DEFENSES[name],
                     spec=ArchitectureSpec(epochs=20), seed=0)
    return name, run_audit(t, seed=0, suite="quick")


def _train_commands(text: str) -> list[tuple[str, float]]:
    return [(d, float(e)) for d, e in
            re.findall(r"graphleaks train --defense (\S+) --epsilon ([0-9.e+-]+)", text)]


def test_no_line_recommends_the_applied_defense_at_a_weaker_epsilon(defended) -> None:  # noqa: ANN001
    name, report = defended
    eps = report.ledger.epsilon
    assert math.isfinite(eps)
    lines = compute_verdict(report)
    for v in lines:
        for defense, e in _train_commands(v.advice):
            assert defense != name or e < eps, v.line()
    # the case: an edge-DP target's edge risk is covered, so the next step is a
    # tighter ε of the same defense (or nothing), never ε = 4
    if name == "gap_edp":
        edges = next(v for v in lines if v.risk == "edges" and v.artefact is None)
        assert edges.coverage.startswith("covered: edge unit at ε = 1")
        membership = next(v for v in lines if v.risk == "membership")
        assert membership.coverage.startswith("not covered: the ledger protects the edge unit")
        if membership.level in ("low", "high", "severe"):
            assert "--defense gap_ndp" in membership.advice


def test_each_line_states_its_coverage(defended) -> None:  # noqa: ANN001
    _, report = defended
    unit = report.ledger.unit.value
    for v in compute_verdict(report):
        if v.risk == "target":
            continue
        assert v.coverage.startswith(("covered: ", "not covered: ")), v.line()
        if v.coverage.startswith("covered"):
            assert f"{unit} unit at ε = " in v.coverage
        assert f"[{v.coverage}]" in v.line()
    md = render_markdown(report)
    assert "| risk | level | strongest attack | basis | ledger | next step |" in md


def test_the_deepwalk_release_is_its_own_line(defended) -> None:  # noqa: ANN001
    _, report = defended
    lines = compute_verdict(report)
    release = [v for v in lines if v.artefact is not None]
    assert [v.attack for v in release] == ["attribute_inference"]
    assert release[0].label == "attributes (DeepWalk release of the graph, not the model)"
    assert "Try local DP" not in release[0].advice and "lpgnn" not in release[0].advice
    model_line = next(v for v in lines if v.risk == "attributes" and v.artefact is None)
    assert model_line.attack is None


def test_audited_epsilon_by_default(defended) -> None:  # noqa: ANN001
    name, report = defended
    (audit,) = report.canary_audits
    assert audit.unit == report.ledger.unit.value
    assert audit.bound.num_canaries == 100  # the quick suite's budget
    md = render_markdown(report)
    assert "canary-audited ε ≥" in md and "## Canary audits (one run)" in md
    if name == "gap_edp":  # the page draws figures: one defense is enough
        from graphleaks.report.html import render_html

        assert "canary-audited ε ≥" in render_html(report)
    assert "audited ε ≥" in next(v.coverage for v in compute_verdict(report)
                                 if v.coverage.startswith("covered"))
    # and the JSON keeps it
    again = AuditReport.from_json(report.to_json())
    assert again.canary_audits == report.canary_audits


def test_defended_models_run_the_white_box_attacks(defended) -> None:  # noqa: ANN001
    _, report = defended
    ran = {a.attack for a in report.attacks}
    assert {"embedding_cluster_mia", "graph_reconstruction"} <= ran
    assert not ({"embedding_cluster_mia", "graph_reconstruction"}
                & set(report.config.get("skipped_attacks", {})))


def test_defended_bundle_runs_the_white_box_attacks(graph, tmp_path) -> None:  # noqa: ANN001
    from graphleaks.bundles import load_bundle, save_bundle

    t = train_target(graph, defense="gap_edp", defense_params={"epsilon": 1.0},
                     spec=ArchitectureSpec(epochs=20), seed=0)
    save_bundle(t, tmp_path / "b")
    back = load_bundle(tmp_path / "b", graph=graph)
    assert back.iface.embedding_layers == ("hidden_out",)
    report = run_audit(back, ["embedding_cluster_mia", "graph_reconstruction"], seed=0,
                       suite="quick")
    assert [a.attack for a in report.attacks] == ["embedding_cluster_mia",
                                                  "graph_reconstruction"]
    gae = report.attack("graph_reconstruction").metrics.binary
    assert gae is not None and 0.0 <= gae.auc.value <= 1.0


def test_an_uninformative_target_is_flagged_first(graph) -> None:  # noqa: ANN001
    # one epoch of training: the best epoch is 1
    t = train_target(graph, spec=ArchitectureSpec(epochs=1), seed=0)
    report = run_audit(t, ["confidence_mia"], seed=0, suite="quick")
    first = compute_verdict(report)[0]
    assert (first.risk, first.level) == ("target", "uninformative")
    assert "best epoch 1" in first.basis
    assert first.line().startswith("target: UNINFORMATIVE")
    assert "**Uninformative target**" in render_markdown(report)
    # a trained one is not
    good = train_target(graph, spec=ArchitectureSpec(epochs=60, patience=0), seed=0)
    good_report = run_audit(good, ["confidence_mia"], seed=0, suite="quick")
    assert good_report.target.utility["test_accuracy"] > \
        good_report.target.utility["test_majority_baseline"] + 0.05
    assert compute_verdict(good_report)[0].risk == "membership"


def test_a_user_model_gets_pipeline_advice() -> None:
    from graphleaks.audit.model_audit import audit_model
    from graphleaks.data import tiny_graph
    from graphleaks.models.gnn import GNN

    g = tiny_graph()
    spec = ArchitectureSpec(epochs=80, patience=0, dropout=0.0, weight_decay=0.0)
    trained = train_target(g, spec=spec, seed=0)
    model = GNN(g.num_features, int(g.y.max()) + 1, spec)
    model.load_state_dict(trained.model.state_dict())
    report = audit_model(model, g, trained.split.train, trained.split.test,
                         attacks=["confidence_mia"], n_bootstrap=50, seed=0)
    membership = next(v for v in compute_verdict(report) if v.risk == "membership")
    assert membership.coverage.startswith("no ledger: a model trained outside graphleaks")
    if membership.level in ("low", "high", "severe"):
        assert "In your own training loop: DP-SGD with per-node gradient clipping" \
            in membership.advice
    assert any("cannot retrain a model from another pipeline" in n
               for n in verdict_notes(report))


def test_skipped_and_ungraded_attacks_are_in_the_notes() -> None:
    from dataclasses import replace

    from graphleaks.report.report import load_report

    report = load_report("tests/report/data/report_v1.json")
    report = replace(report, config={**report.config,
                                     "skipped_attacks": {"tia": "tia requires X"}})
    notes = verdict_notes(report)
    assert "tia was skipped: tia requires X" in notes
    assert any(n.startswith("link_stealing was not graded: only 5 positives") for n in notes)
    assert report.to_dict()["verdict_notes"] == notes


@pytest.mark.dataset
def test_linkteller_is_graded_on_amazon_photo(data_root, tmp_path) -> None:  # noqa: ANN001
    """The issue's case: 100 uniform nodes of Amazon Photo held 6 edges."""
    from graphleaks.attacks.harness import run_attack
    from graphleaks.audit.suite import build_attack, get_suite
    from graphleaks.data.datasets import load_dataset
    from graphleaks.report.verdict import MIN_PER_SIDE

    g = load_dataset("amazon-photo", data_root=data_root, cache_dir=tmp_path)
    t = train_target(g, spec=ArchitectureSpec(epochs=20), seed=0)
    r = run_attack(build_attack("linkteller", get_suite("standard")), t, seed=0)
    assert int(r.labels.sum()) >= MIN_PER_SIDE


def test_the_target_card_names_the_architecture_that_ran(defended) -> None:  # noqa: ANN001
    name, report = defended
    expected = {"gap_edp": "gap_edp", "gap_ndp": "gap_ndp", "lpgnn": "lpgnn-sage",
                "edgerand": "gcn"}[name]  # EdgeRand trains the GCN spec on its released graph
    assert report.target.architecture["arch"] == expected
    assert f"Target: **{expected.upper()}**" in render_markdown(report)
