"""The graph DP-SGD defense: its ledger (graph unit, verified, recomputed from the executed
sampler), its bad input, the undefended option, and seeding."""

from __future__ import annotations

import math

import dp_accounting
import pytest
import torch
from dp_accounting.rdp import RdpAccountant

from graphleaks.data.graphsets import motif_graphs
from graphleaks.defenses.graph_base import NoGraphDefense, graph_registry, train_graph_target
from graphleaks.defenses.graph_dp_sgd import GraphDPSGD
from graphleaks.errors import InvalidConfigError
from graphleaks.models.graph_classifier import GraphClassifierSpec
from graphleaks.models.trained_graph_target import GraphSplit
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyUnit

SPEC = GraphClassifierSpec(hidden=8, epochs=3, batch_size=8)
DELTA = 1e-3


@pytest.fixture(scope="module")
def graphs():  # noqa: ANN201
    return motif_graphs(60, seed=0)


def _recomputed(training: dict[str, float]) -> float:
    acc = RdpAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(
        training["sampling_rate"], dp_accounting.GaussianDpEvent(training["noise_multiplier"])),
        int(training["steps"]))
    return float(acc.get_epsilon(DELTA))


@pytest.mark.parametrize("epsilon", [1.0, pytest.param(4.0, marks=pytest.mark.slow),
                                     pytest.param(8.0, marks=pytest.mark.slow)])
def test_the_ledger_is_the_executed_mechanism(graphs, epsilon: float) -> None:
    t = train_graph_target(graphs, defense="dp_sgd",
                           defense_params={"epsilon": epsilon, "delta": DELTA}, spec=SPEC,
                           seed=0)
    led = t.ledger
    assert led.unit is PrivacyUnit.GRAPH and led.status is GuaranteeStatus.VERIFIED
    assert led.delta == DELTA and led.epsilon <= epsilon * (1 + 1e-9)
    assert led.accountant.startswith("dp_accounting")
    members = len(t.split.members)
    # Poisson rate B/N over the member graphs, ceil(N/B) steps per epoch, as executed
    assert t.training["sampling_rate"] == pytest.approx(8 / members)
    assert t.training["steps"] == 3 * math.ceil(members / 8)
    assert abs(led.epsilon - _recomputed(t.training)) <= 1e-3
    assert t.defense == "dp_sgd" and t.defense_config["epsilon"] == epsilon


@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.inf, math.nan])
def test_a_non_positive_or_infinite_epsilon_is_refused(graphs, epsilon: float) -> None:
    with pytest.raises(InvalidConfigError, match="epsilon"):
        train_graph_target(graphs, defense="dp_sgd", defense_params={"epsilon": epsilon},
                           spec=SPEC, seed=0)


@pytest.mark.parametrize("params", [{"delta": 0.0}, {"delta": 1.0}, {"max_grad_norm": 0.0},
                                    {"accountant": "moments"}])
def test_other_bad_parameters_are_refused(graphs, params: dict[str, object]) -> None:
    with pytest.raises(InvalidConfigError):
        GraphDPSGD(**params).fit(graphs, GraphSplit.draw(60, seed=0), model=SPEC, seed=0)


def test_the_undefended_option_states_no_guarantee(graphs) -> None:
    t = train_graph_target(graphs, defense="none", spec=SPEC, seed=0)
    assert not t.ledger.is_private and t.ledger.unit is PrivacyUnit.NONE
    assert isinstance(graph_registry.get("none")(), NoGraphDefense)
    assert graph_registry.names() == ["dp_sgd", "none"]


def test_training_is_seeded(graphs) -> None:
    def logits(seed: int) -> torch.Tensor:
        return train_graph_target(graphs, defense="dp_sgd", defense_params={"delta": DELTA},
                                  spec=SPEC, seed=seed).logits()

    assert torch.equal(logits(1), logits(1)) and not torch.equal(logits(1), logits(2))


def test_a_split_of_another_set_is_refused(graphs) -> None:
    from graphleaks.errors import DataError

    with pytest.raises(DataError, match="61 graphs"):
        GraphDPSGD().fit(graphs, GraphSplit.draw(61, seed=0), model=SPEC, seed=0)
