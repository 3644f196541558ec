"""Unit-aware comparisons of ε lower bounds with ledgers (issue 15, item 2)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.attacks.link_stealing import LinkStealingAttack
from graphleaks.audit.runner import run_audit, train_target
from graphleaks.cli import app
from graphleaks.data.synthetic import csbm
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.privacy_bound import compare_with_claim, epsilon_lower_bound
from graphleaks.report.html import render_html
from graphleaks.report.markdown import render_markdown


@pytest.fixture(scope="module")
def graph():
    return csbm(160, seed=0)


@pytest.fixture(scope="module")
def lpgnn_target(graph):
    # Its node-unit membership bound (about 0.7 at the shadow threshold) exceeds the claimed
    # feature-unit ε: the former report flagged that as a VIOLATION. Cora's table, named,
    # keeps that model (an untuned graph otherwise gets a validation search).
    return train_target(csbm(160, seed=0, num_features=16), defense="lpgnn", seed=0,
                        defense_params={"epsilon": 0.5, "epochs": 100, "dataset": "cora"})


@pytest.fixture(scope="module")
def edp_target(graph):
    return train_target(graph, defense="gap_edp", seed=0,
                        defense_params={"epsilon": 0.05, "encoder_epochs": 30, "epochs": 30})


def _texts(report) -> str:  # noqa: ANN001
    return render_markdown(report) + render_html(report)


def test_feature_ldp_target_has_no_cross_unit_violation(lpgnn_target):
    report = run_audit(lpgnn_target, [ConfidenceMIA()], seed=0, n_bootstrap=20)
    m = report.attacks[0].metrics
    lb = m.epsilon_lower_bound
    assert lb.bound.unit == "node" and lb.bound.epsilon_lb > 0.5  # it would have been flagged
    cmp = lb.ledger_comparison
    assert cmp.comparable is False and cmp.violation is None
    text = _texts(report)
    assert "not comparable: the attack tests unit node, the ledger protects unit node_feature" \
        in text
    # the verdict may grade the leak "severe" (a red badge); no badge may flag the ε claim
    assert "VIOLATION" not in text and not re.search(r'badge bad">[^<]*ε', text)
    assert "claimed ε is below" not in text


def test_edge_target_compares_link_bounds_only(edp_target):
    report = run_audit(edp_target, [ConfidenceMIA(), LinkStealingAttack(attack=0)], seed=0,
                       n_bootstrap=20)
    mia, link = report.attacks
    mia_cmp = mia.metrics.epsilon_lower_bound_max_over_thresholds.ledger_comparison
    assert mia_cmp.comparable is False and mia_cmp.ledger_unit == "edge"
    link_lb = link.metrics.epsilon_lower_bound_max_over_thresholds
    # same unit, but an optimistic bound on the graph's own edges is not compared (issue 24)
    assert link_lb.bound.unit == "edge" and link_lb.ledger_comparison.comparable is False
    assert link_lb.ledger_comparison.text.startswith("not compared: an optimistic bound")
    text = _texts(report)
    assert "not comparable: the attack tests unit node, the ledger protects unit edge" in text
    assert "VIOLATION" not in text  # no sound same-unit bound exceeds the claim here


def test_optimistic_alarm_only_where_members_were_drawn_at_random():
    # a perfectly separating attack: its optimistic bound exceeds a small claimed ε
    scores, labels = [1.0] * 200 + [0.0] * 200, [1] * 200 + [0] * 200
    node = epsilon_lower_bound(scores, labels, unit="node")
    cmp = compare_with_claim(node, ledger_unit="node", claimed_epsilon=0.5)
    assert cmp["comparable"] and cmp["violation"]
    assert cmp["text"].startswith("claimed ε is below this optimistic bound")
    # the same bound on edges (link stealing on a GAP-EDP target): no alarm, not compared
    edge = epsilon_lower_bound(scores, labels, unit="edge")
    cmp = compare_with_claim(edge, ledger_unit="edge", claimed_epsilon=0.5)
    assert not cmp["comparable"] and cmp["violation"] is None
    assert "claimed ε is below" not in cmp["text"]
    # a sound edge bound (threshold fixed without the labels) is still compared
    sound = epsilon_lower_bound(scores, labels, unit="edge", threshold=0.5)
    cmp = compare_with_claim(sound, ledger_unit="edge", claimed_epsilon=0.5)
    assert cmp["comparable"] and cmp["text"].startswith("VIOLATION")


def test_same_unit_violation_is_still_flagged():
    b = epsilon_lower_bound([1.0] * 200 + [0.0] * 200, [1] * 200 + [0] * 200, threshold=0.5)
    cmp = compare_with_claim(b, ledger_unit="node", claimed_epsilon=0.5)
    assert cmp["comparable"] and cmp["violation"] and cmp["text"].startswith("VIOLATION")
    cmp = compare_with_claim(b, ledger_unit="none", claimed_epsilon=float("inf"))
    assert not cmp["comparable"] and cmp["violation"] is None


def test_compare_unit_the_ledger_lacks_is_refused(lpgnn_target, edp_target):
    with pytest.raises(InvalidConfigError, match="no epsilon for unit 'edge'"):
        run_audit(lpgnn_target, [ConfidenceMIA()], seed=0, n_bootstrap=5, compare_unit="edge")
    with pytest.raises(InvalidConfigError, match="tests unit node"):
        run_audit(edp_target, [ConfidenceMIA()], seed=0, n_bootstrap=5, compare_unit="edge")
    with pytest.raises(InvalidConfigError, match="unknown privacy unit"):
        run_audit(edp_target, [ConfidenceMIA()], seed=0, n_bootstrap=5, compare_unit="edges")


def test_cli_compare_unit_exit_2(tmp_path):
    r = CliRunner().invoke(app, [
        "audit", "--dataset", "synthetic", "--defense", "lpgnn", "--param", "lpgnn.epochs=2",
        "--compare-unit", "edge", "--n-bootstrap", "5", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert "no epsilon for unit 'edge'" in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_spec_carries_defense_awareness_and_compare_unit():
    from graphleaks.audit.spec import parse_spec, run_spec

    spec = parse_spec({"target": {"dataset": "synthetic", "defense": "lpgnn",
                                  "defense_params": {"epochs": 2}},
                       "audit": {"defense_aware": False, "n_bootstrap": 10},
                       "attacks": {"confidence_mia": {}}})
    report = run_spec(spec)
    assert report.attacks[0].threat_model.defense_knowledge is False
    bad = parse_spec({"target": {"dataset": "synthetic", "defense": "lpgnn",
                                 "defense_params": {"epochs": 2}},
                      "audit": {"compare_unit": "edge", "n_bootstrap": 10}})
    with pytest.raises(InvalidConfigError, match="no epsilon for unit 'edge'"):
        run_spec(bad)
    with pytest.raises(InvalidConfigError, match="audit.defense_aware"):
        parse_spec({"audit": {"defense_aware": "yes"}})
