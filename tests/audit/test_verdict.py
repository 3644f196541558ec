"""Verdict levels from the documented thresholds on upper confidence bounds."""

from __future__ import annotations

import pytest

from graphleaks.audit.verdict import attack_level, compute_verdict


def _binary(name, task, auc, auc_ci, tpr_ci):
    return {"attack": name, "task": task, "metrics": {"binary": {
        "auc": {"value": auc, "ci": auc_ci},
        "tpr_at_fpr": {"0.01": {"value": sum(tpr_ci) / 2, "ci": tpr_ci}}}}}


@pytest.mark.parametrize("auc_ci,tpr_ci,level", [
    ([0.48, 0.53], [0.0, 0.015], "none"),
    ([0.50, 0.56], [0.0, 0.015], "low"),
    ([0.50, 0.53], [0.0, 0.03], "low"),
    ([0.60, 0.72], [0.0, 0.03], "high"),
    ([0.80, 0.86], [0.0, 0.03], "severe"),
    ([0.52, 0.60], [0.1, 0.25], "severe"),
])
def test_binary_levels_use_upper_bounds(auc_ci, tpr_ci, level):
    a = _binary("confidence_mia", "membership", sum(auc_ci) / 2, auc_ci, tpr_ci)
    assert attack_level(a).level == level


def test_interval_below_chance_is_miscalibrated_never_no_leak():
    a = _binary("shadow_mia", "membership", 0.463, [0.431, 0.492], [0.0, 0.02])
    lv = attack_level(a)
    assert lv.level == "miscalibrated" and "below chance" in lv.basis
    v = {x.risk: x for x in compute_verdict({"attacks": [a]})}
    assert v["membership"].level == "miscalibrated"
    assert "MISCALIBRATED" in v["membership"].line()


def test_risk_takes_the_strongest_graded_attack_and_names_a_defense():
    weak = _binary("shadow_mia", "membership", 0.463, [0.431, 0.492], [0.0, 0.02])
    strong = _binary("confidence_mia", "membership", 0.8, [0.77, 0.83], [0.04, 0.08])
    recon = _binary("graph_reconstruction", "link", 0.9, [0.88, 0.92], [0.3, 0.4])
    v = {x.risk: x for x in compute_verdict({"attacks": [weak, strong, recon]})}
    assert (v["membership"].level, v["membership"].attack) == ("high", "confidence_mia")
    assert "graphleaks train --defense gap-ndp" in v["membership"].advice
    # graph reconstruction is its own risk, not "edges"
    assert v["reconstruction"].attack == "graph_reconstruction"
    assert v["edges"].level == "not assessed" and v["attributes"].level == "not assessed"


def test_attribute_level_from_gain_over_majority_baseline():
    a = {"attack": "attribute_inference", "task": "attribute", "metrics": {"multiclass": {
        "gain_over_baseline": {"value": 0.12, "ci": [0.08, 0.16]}}}}
    assert attack_level(a).level == "high"
    a["metrics"]["multiclass"]["gain_over_baseline"] = {"value": -0.1, "ci": [-0.15, -0.05]}
    assert attack_level(a).level == "miscalibrated"


def test_sweep_rows_turn_advice_into_the_measured_fix():
    a = _binary("confidence_mia", "membership", 0.8, [0.77, 0.83], [0.04, 0.08])
    rows = [
        {"defense": "none", "epsilon": None, "attack": "confidence_mia",
         "metrics": a["metrics"], "utility": {"test_accuracy": 0.80}},
        {"defense": "gap-ndp", "epsilon": 1.0, "attack": "confidence_mia",
         "metrics": _binary("c", "membership", 0.5, [0.47, 0.53], [0.0, 0.015])["metrics"],
         "utility": {"test_accuracy": 0.60}},
        {"defense": "gap-ndp", "epsilon": 8.0, "attack": "confidence_mia",
         "metrics": _binary("c", "membership", 0.6, [0.55, 0.66], [0.0, 0.03])["metrics"],
         "utility": {"test_accuracy": 0.75}},
    ]
    v = {x.risk: x for x in compute_verdict({"attacks": [a]}, sweep_rows=rows)}
    assert "gap-ndp at ε = 1.0" in v["membership"].advice
    assert "0.600 vs 0.800 undefended" in v["membership"].advice


def test_too_few_candidates_are_inconclusive_and_do_not_set_the_level():
    one_edge = _binary("linkteller", "link", 1.0, [1.0, 1.0], [1.0, 1.0])
    one_edge["metrics"]["binary"].update(n_pos=1, n_neg=4949)
    assert attack_level(one_edge).level == "inconclusive"
    real = _binary("link_stealing", "link", 0.6, [0.55, 0.62], [0.0, 0.015])
    real["metrics"]["binary"].update(n_pos=100, n_neg=100)
    v = {x.risk: x for x in compute_verdict({"attacks": [one_edge, real]})}
    assert (v["edges"].level, v["edges"].attack) == ("low", "link_stealing")
    v = {x.risk: x for x in compute_verdict({"attacks": [one_edge]})}
    assert v["edges"].level == "inconclusive"
