"""Verdict levels from the documented thresholds on upper confidence bounds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from graphleaks.report.records import MetricReading, Readings
from graphleaks.report.report import load_report
from graphleaks.report.verdict import attack_level, compute_verdict, verdict_dicts, verdict_of

V1 = Path(__file__).parent / "data" / "report_v1.json"


def _binary(name, task, auc, auc_ci, tpr_ci):
    return (name, task, Readings({"auc": MetricReading(auc, tuple(auc_ci)),
                                  "tpr@1%fpr": MetricReading(sum(tpr_ci) / 2, tuple(tpr_ci))}))


@pytest.mark.parametrize("auc_ci,tpr_ci,level", [
    ([0.48, 0.53], [0.0, 0.015], "none"),
    ([0.50, 0.56], [0.0, 0.015], "low"),
    ([0.50, 0.53], [0.0, 0.03], "low"),
    ([0.60, 0.72], [0.0, 0.03], "high"),
    ([0.80, 0.86], [0.0, 0.03], "severe"),
    ([0.52, 0.60], [0.1, 0.25], "severe"),
])
def test_binary_levels_use_upper_bounds(auc_ci, tpr_ci, level):
    name, _, r = _binary("confidence_mia", "membership", sum(auc_ci) / 2, auc_ci, tpr_ci)
    assert attack_level(name, r).level == level


def test_interval_below_chance_is_miscalibrated_never_no_leak():
    a = _binary("shadow_mia", "membership", 0.463, [0.431, 0.492], [0.0, 0.02])
    lv = attack_level(a[0], a[2])
    assert lv.level == "miscalibrated" and "below chance" in lv.basis
    v = {x.risk: x for x in verdict_of([a])}
    assert v["membership"].level == "miscalibrated"
    assert "MISCALIBRATED" in v["membership"].line()


def test_risk_takes_the_strongest_graded_attack_and_names_a_defense():
    weak = _binary("shadow_mia", "membership", 0.463, [0.431, 0.492], [0.0, 0.02])
    strong = _binary("confidence_mia", "membership", 0.8, [0.77, 0.83], [0.04, 0.08])
    recon = _binary("graph_reconstruction", "link", 0.9, [0.88, 0.92], [0.3, 0.4])
    v = {x.risk: x for x in verdict_of([weak, strong, recon])}
    assert (v["membership"].level, v["membership"].attack) == ("high", "confidence_mia")
    assert "graphleaks train --defense gap_ndp" in v["membership"].advice
    # graph reconstruction is its own risk, not "edges"
    assert v["reconstruction"].attack == "graph_reconstruction"
    assert v["edges"].level == "not assessed" and v["attributes"].level == "not assessed"


def test_attribute_level_from_gain_over_majority_baseline():
    r = Readings({"gain_over_baseline": MetricReading(0.12, (0.08, 0.16))}, multiclass=True)
    assert attack_level("attribute_inference", r).level == "high"
    r = Readings({"gain_over_baseline": MetricReading(-0.1, (-0.15, -0.05))}, multiclass=True)
    assert attack_level("attribute_inference", r).level == "miscalibrated"


def test_sweep_rows_turn_advice_into_the_measured_fix():
    a = _binary("confidence_mia", "membership", 0.8, [0.77, 0.83], [0.04, 0.08])
    # sweep rows come from the results store as JSON: the readings' JSON form
    rows = [
        {"defense": "none", "epsilon": None, "attack": "confidence_mia",
         "metrics": a[2].to_dict(), "utility": {"test_accuracy": 0.80}},
        {"defense": "gap_ndp", "epsilon": 1.0, "attack": "confidence_mia",
         "metrics": _binary("c", "membership", 0.5, [0.47, 0.53], [0.0, 0.015])[2].to_dict(),
         "utility": {"test_accuracy": 0.60}},
        {"defense": "gap_ndp", "epsilon": 8.0, "attack": "confidence_mia",
         "metrics": _binary("c", "membership", 0.6, [0.55, 0.66], [0.0, 0.03])[2].to_dict(),
         "utility": {"test_accuracy": 0.75}},
    ]
    v = {x.risk: x for x in verdict_of([a], sweep_rows=rows)}
    assert "gap_ndp at ε = 1.0" in v["membership"].advice
    assert "0.600 vs 0.800 undefended" in v["membership"].advice


def test_too_few_candidates_are_inconclusive_and_do_not_set_the_level():
    name, task, r = _binary("linkteller", "link", 1.0, [1.0, 1.0], [1.0, 1.0])
    one_edge = (name, task, replace(r, n_pos=1, n_neg=4949))
    assert attack_level(name, one_edge[2]).level == "inconclusive"
    name, task, r = _binary("link_stealing", "link", 0.6, [0.55, 0.62], [0.0, 0.015])
    real = (name, task, replace(r, n_pos=100, n_neg=100))
    v = {x.risk: x for x in verdict_of([one_edge, real])}
    assert (v["edges"].level, v["edges"].attack) == ("low", "link_stealing")
    v = {x.risk: x for x in verdict_of([one_edge])}
    assert v["edges"].level == "inconclusive"


def test_verdict_of_a_v1_report_is_the_one_it_recorded():
    # the committed report was written by schema-1 graphleaks from its metrics dictionaries:
    # its levels, attacks and bases are derived again; the advice is now computed for the
    # target (coverage, origin), and its one-epoch target is flagged first
    recorded = json.loads(V1.read_text())["verdict"]
    derived = verdict_dicts(compute_verdict(load_report(V1)))
    assert derived[0]["risk"] == "target" and derived[0]["level"] == "uninformative"
    keys = ("risk", "level", "attack", "basis")
    # attribute inference attacked the simulated DeepWalk release: its own line, and the
    # model's attributes line says that no attack of the model's attributes ran
    model_attr, release_attr = (d for d in derived if d["risk"] == "attributes")
    assert model_attr["level"] == "not assessed" and "attribute_inference" in model_attr["advice"]
    assert release_attr["artefact"] == "DeepWalk release of the graph, not the model"
    assert release_attr["coverage"].startswith("not covered")
    kept = [d for d in derived[1:] if d is not model_attr]
    assert [{k: d[k] for k in keys} for d in kept] == [{k: r[k] for k in keys} for r in recorded]
    # an EdgeRand ε = 1 target: edges covered, membership not (node-level DP is advised at
    # the same ε, never EdgeRand at a weaker one)
    cov = {d["risk"]: d["coverage"] for d in kept if d is not release_attr}
    assert cov["edges"] == "covered: edge unit at ε = 1"
    assert cov["membership"].startswith("not covered: the ledger protects the edge unit")
    membership = next(d for d in kept if d["risk"] == "membership")
    assert "--defense gap_ndp --epsilon 1 " in membership["advice"]


def test_a_level_reached_by_the_bound_alone_says_so_and_never_claims_a_leak():
    # a DP graph classifier on 50 members: AUC at chance, but 50 candidates leave the
    # 1%-FPR bound wide enough to reach "high"
    from graphleaks.report.verdict import TargetContext

    chance = ("graph_lira_mia", "graph_membership",
              Readings({"auc": MetricReading(0.503, (0.446, 0.560)),
                        "tpr@1%fpr": MetricReading(0.0, (0.0, 0.071))}))
    lv = attack_level(chance[0], chance[2])
    assert (lv.level, lv.estimate_level, lv.bound_only) == ("high", "none", True)
    ctx = TargetContext(defense="dp_sgd", ledger_unit="graph", epsilon=1.0)
    line = verdict_of([chance], context=ctx, risks=("graph membership",))[0]
    assert line.level == "high" and line.advice.startswith("Only the 95% bound reaches")
    assert "not ruled out" in line.advice and "yet it leaks" not in line.advice
    # an estimate at the level: the leak is measured, and the advice says so
    leak = ("graph_lira_mia", "graph_membership",
            Readings({"auc": MetricReading(0.74, (0.70, 0.78)),
                      "tpr@1%fpr": MetricReading(0.08, (0.05, 0.11))}))
    lv = attack_level(leak[0], leak[2])
    assert (lv.level, lv.estimate_level, lv.bound_only) == ("high", "high", False)
    line = verdict_of([leak], context=ctx, risks=("graph membership",))[0]
    assert "yet it leaks at this level" in line.advice and "Only the 95%" not in line.advice
