"""The README's example CI thresholds pass a defended model and fail a leaky one."""

from __future__ import annotations

from graphleaks.audit.runner import run_audit, train_target
from graphleaks.report.gates import GateSpec
from graphleaks.report.regression import check_report, parse_threshold_option

#: The thresholds the README documents for a first CI gate (``graphleaks check --max ...``).
README_EXAMPLE = ("auc=0.6", "link_stealing.auc=0.7")


def _gate() -> GateSpec:
    return GateSpec(thresholds=tuple(parse_threshold_option(t) for t in README_EXAMPLE))


def _audit(target):  # noqa: ANN001, ANN202
    return run_audit(target, ["confidence_mia", "link_stealing"], seed=0, n_bootstrap=200)


def test_leaky_model_fails_the_example_gate(trained_target):
    result = check_report(_audit(trained_target), _gate())
    assert not result.passed
    assert any(c.attack == "confidence_mia" and not c.passed for c in result.checks)


def test_defended_model_passes_the_example_gate():
    from graphleaks.data.synthetic import csbm

    # 600 nodes: 120 members, enough for an AUC interval narrower than the 0.1 margin
    graph = csbm(600, num_classes=3, num_features=32, feature_signal=1.0, avg_degree=6,
                 seed=1)
    defended = train_target(graph, defense="gap_ndp", defense_params={"epsilon": 0.5},
                            seed=0, dataset={"name": "synthetic-test"})
    result = check_report(_audit(defended), _gate())
    assert result.passed, [c.message for c in result.checks]
