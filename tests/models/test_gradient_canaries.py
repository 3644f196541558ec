"""Dirac gradient canaries inside per-graph DP-SGD: what the probe adds and observes.

The white-box audit is only as good as this plumbing: a drawn canary must add exactly ``C``
on its own coordinate, never reach the model, be drawn by the executed sampler like a graph,
and the probe must see every noised step (its count is also an independent record of the
executed steps, which the ledger is recomputed from here with dp_accounting directly).
"""

from __future__ import annotations

import dp_accounting
import numpy as np
import pytest
import torch
from dp_accounting.rdp import RdpAccountant
from torch_geometric.data import Data

from graphleaks.data.graphsets import motif_graphs
from graphleaks.errors import InvalidConfigError
from graphleaks.models.dp_sgd import DPSGDPlan
from graphleaks.models.gradient_canaries import (
    GradientCanaryProbe,
    active_probe,
    gradient_canaries,
)
from graphleaks.models.graph_classifier import GraphClassifierSpec, new_graph_classifier
from graphleaks.models.graph_dp_sgd import graph_dp_sgd_ledger, train_graph_dp_sgd


def _placeholders(m: int, width: int) -> list[Data]:
    return [Data(x=torch.zeros(1, width), edge_index=torch.zeros(2, 0, dtype=torch.long),
                 y=torch.tensor([0]), num_nodes=1) for _ in range(m)]


def _flat(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters() if p.requires_grad])


def test_without_noise_a_canary_scores_exactly_c_per_draw_and_moves_only_its_coordinate() -> None:
    gs = motif_graphs(10, seed=0)
    model = new_graph_classifier(GraphClassifierSpec(hidden=8), gs.num_features, 2, seed=0)
    before = _flat(model).clone()
    samples = _placeholders(12, gs.num_features)
    probe = GradientCanaryProbe(samples, seed=1)
    inserted = samples[:8]  # the last four are absent: not in the training list
    plan = DPSGDPlan(num_samples=8, batch_size=4, epochs=3)
    run = train_graph_dp_sgd(model, inserted, plan=plan, lr=0.01, noise_multiplier=0.0,
                             max_grad_norm=2.5, seed=0, probe=probe)
    assert probe.steps == run.executed.steps == plan.steps
    assert probe.draws[:8].sum() > 0 and not probe.draws[8:].any()
    assert np.array_equal(probe.scores, 2.5 * probe.draws)
    moved = torch.nonzero(_flat(model) != before).view(-1).numpy()
    drawn = probe.coordinates[probe.draws > 0]
    assert set(moved.tolist()) == set(drawn.tolist())  # no forward pass of a canary


def test_the_context_probe_is_consulted_and_reset() -> None:
    gs = motif_graphs(10, seed=0)
    model = new_graph_classifier(GraphClassifierSpec(hidden=8), gs.num_features, 2, seed=0)
    samples = _placeholders(3, gs.num_features)
    probe = GradientCanaryProbe(samples, seed=0)
    assert active_probe() is None
    with gradient_canaries(probe):
        assert active_probe() is probe
        train_graph_dp_sgd(model, list(gs.graphs) + samples,
                           plan=DPSGDPlan(num_samples=13, batch_size=4, epochs=2), lr=0.01,
                           noise_multiplier=1.0, max_grad_norm=1.0, seed=0)
    assert active_probe() is None and probe.steps == 2 * 4 and probe.draws.sum() > 0


def test_more_canaries_than_parameters_are_refused() -> None:
    probe = GradientCanaryProbe(_placeholders(5, 2), seed=0)
    with pytest.raises(InvalidConfigError, match="at most 4 for this model"):
        probe.bind(4)


@pytest.mark.parametrize("noise_multiplier", [0.8, 3.0])
def test_the_ledger_matches_the_steps_the_probe_saw(noise_multiplier: float) -> None:
    # the probe counts the noised releases itself, so this recomputation (dp_accounting
    # directly, rate B/N from the plan's inputs) does not rest on the sampler's own counter
    gs = motif_graphs(16, seed=0)
    model = new_graph_classifier(GraphClassifierSpec(hidden=8), gs.num_features, 2, seed=0)
    probe = GradientCanaryProbe([], seed=0)
    run = train_graph_dp_sgd(model, gs.graphs, plan=DPSGDPlan(num_samples=16, batch_size=4,
                                                              epochs=3),
                             lr=0.01, noise_multiplier=noise_multiplier, max_grad_norm=1.0,
                             seed=0, probe=probe)
    ledger = graph_dp_sgd_ledger(run.executed, run.noise_multiplier, 1e-5)
    acc = RdpAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(
        4 / 16, dp_accounting.GaussianDpEvent(noise_multiplier)), probe.steps)
    assert probe.steps == 3 * 4
    assert abs(ledger.epsilon - acc.get_epsilon(1e-5)) <= 1e-3
