"""The ``graph`` privacy unit: per-graph DP-SGD ledgers, recomputed independently.

The recomputation calls dp_accounting directly (not through graphleaks.privacy) from the
sampler the run *executed* (its rate and its number of draws), so a ledger that accounted
the plan instead of the run, or the wrong event, would disagree.
"""

from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting.rdp import RdpAccountant

from graphleaks.data.graphsets import motif_graphs
from graphleaks.models.dp_sgd import DPSGDPlan
from graphleaks.models.graph_classifier import GraphClassifierSpec, new_graph_classifier
from graphleaks.models.graph_dp_sgd import (
    calibrate_graph_noise,
    graph_dp_sgd_ledger,
    train_graph_dp_sgd,
)
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit

DELTA = 1e-3


def _independent_epsilon(rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    acc = RdpAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(
        rate, dp_accounting.GaussianDpEvent(noise_multiplier)), steps)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize("epsilon", [1.0, pytest.param(4.0, marks=pytest.mark.slow),
                                     pytest.param(8.0, marks=pytest.mark.slow)])
def test_the_ledger_of_a_run_matches_an_independent_recomputation(epsilon: float) -> None:
    gs = motif_graphs(40, seed=0)
    plan = DPSGDPlan(num_samples=40, batch_size=8, epochs=3)
    mult = calibrate_graph_noise(plan, epsilon=epsilon, delta=DELTA)
    model = new_graph_classifier(GraphClassifierSpec(hidden=8), gs.num_features, 2, seed=0)
    run = train_graph_dp_sgd(model, gs.graphs, plan=plan, lr=0.01, noise_multiplier=mult,
                             max_grad_norm=1.0, seed=0)
    ledger = graph_dp_sgd_ledger(run.executed, run.noise_multiplier, DELTA)
    assert ledger.unit is PrivacyUnit.GRAPH and ledger.status is GuaranteeStatus.VERIFIED
    assert ledger.delta == DELTA and ledger.epsilon <= epsilon * (1 + 1e-9)
    assert run.executed.steps == plan.steps and run.executed.rate == 8 / 40
    recomputed = _independent_epsilon(run.executed.rate, mult, run.executed.steps, DELTA)
    assert abs(ledger.epsilon - recomputed) <= 1e-3
    assert abs(recomputed - epsilon) <= 0.02 * epsilon  # calibrated to the target, not far below


def test_the_ledger_accounts_the_executed_steps_not_the_plan() -> None:
    from graphleaks.models.dp_sgd import ExecutedSGM

    short = graph_dp_sgd_ledger(ExecutedSGM(0.2, 10), 1.0, DELTA)
    long = graph_dp_sgd_ledger(ExecutedSGM(0.2, 40), 1.0, DELTA)
    assert long.epsilon > short.epsilon
    assert abs(long.epsilon - _independent_epsilon(0.2, 1.0, 40, DELTA)) <= 1e-3


def test_a_graph_ledger_round_trips_through_its_record() -> None:
    from graphleaks.models.dp_sgd import ExecutedSGM

    ledger = graph_dp_sgd_ledger(ExecutedSGM(0.1, 30), 1.2, 1e-5)
    back = PrivacyLedger.from_dict(ledger.to_dict())
    assert back == ledger and back.to_dict()["unit"] == "graph"
    assert math.isfinite(back.epsilon) and back.events[0]["kind"] == "self_composed"
