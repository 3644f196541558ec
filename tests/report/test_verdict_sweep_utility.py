"""Sweep rows without a measured utility: the advice says so instead of crashing."""

from __future__ import annotations

import pytest

from graphleaks.report.records import MetricReading, Readings
from graphleaks.report.verdict import compact_sweep_rows, verdict_of


def _binary(name, auc, auc_ci, tpr_ci):
    return (name, "membership", Readings({
        "auc": MetricReading(auc, tuple(auc_ci)),
        "tpr@1%fpr": MetricReading(sum(tpr_ci) / 2, tuple(tpr_ci))}))


LEAKY = _binary("confidence_mia", 0.8, [0.77, 0.83], [0.04, 0.08])
SAFE = _binary("confidence_mia", 0.5, [0.47, 0.53], [0.0, 0.015])[2].to_dict()


@pytest.mark.parametrize("utility", [{"test_accuracy": None}, {}, None])
def test_defended_row_without_utility_is_advised_as_not_measured(utility):
    rows = [{"defense": "none", "epsilon": None, "attack": "confidence_mia",
             "metrics": LEAKY[2].to_dict(), "utility": {"test_accuracy": None}},
            {"defense": "gap_ndp", "epsilon": 1.0, "attack": "confidence_mia",
             "metrics": SAFE, "utility": utility}]
    v = {x.risk: x for x in verdict_of([LEAKY], sweep_rows=rows)}
    advice = v["membership"].advice
    assert "gap_ndp at ε = 1.0" in advice and "utility not measured" in advice
    assert "undefended" not in advice  # no undefended utility was measured either


def test_compacted_store_rows_without_utility_reach_the_verdict():
    # the results store's form: compact_sweep_rows turns a missing utility into None
    rows = compact_sweep_rows([{"defense": "gap_ndp", "epsilon": 1.0,
                                "attack": "confidence_mia", "seed": 0, "metrics": SAFE}])
    assert rows[0]["utility"] == {"test_accuracy": None}
    v = {x.risk: x for x in verdict_of([LEAKY], sweep_rows=rows)}
    assert "utility not measured" in v["membership"].advice


def test_measured_utility_still_preferred_and_named():
    rows = [{"defense": "gap_ndp", "epsilon": 1.0, "attack": "confidence_mia",
             "metrics": SAFE, "utility": {"test_accuracy": None}},
            {"defense": "gap_edp", "epsilon": 1.0, "attack": "confidence_mia",
             "metrics": SAFE, "utility": {"test_accuracy": 0.7}}]
    advice = {x.risk: x for x in verdict_of([LEAKY], sweep_rows=rows)}["membership"].advice
    assert "gap_edp at ε = 1.0" in advice and "test accuracy 0.700" in advice
