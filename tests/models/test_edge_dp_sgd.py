"""Per-edge DP-SGD: one edge is one clipped example, the sampler runs the plan it accounts,
and models that pass messages are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphleaks.data.edge_splits import EdgeMembershipSplit, EdgeSplitConfig
from graphleaks.data.synthetic import csbm
from graphleaks.errors import InvalidConfigError
from graphleaks.models.dp_sgd import DPSGDPlan
from graphleaks.models.edge_dp_sgd import (
    clip_and_sum,
    edge_sgm_event,
    per_edge_gradients,
    train_edge_dp_sgd,
)
from graphleaks.models.link_predictor import LinkPredictor, LinkPredictorSpec, held_out_link_auc
from graphleaks.privacy.accounting import epsilon

EDGE_FREE = LinkPredictorSpec.gae(encoder="mlp", hidden=(), embedding_dim=16)


@pytest.fixture(scope="module")
def setting():
    g = csbm(240, num_classes=6, avg_degree=8.0, homophily=0.95, feature_signal=3.0, seed=0)
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes,
                                     EdgeSplitConfig(test_frac=0.15), seed=0)
    return g, split


def _model(spec: LinkPredictorSpec = EDGE_FREE, seed: int = 0) -> LinkPredictor:
    torch.manual_seed(seed)
    return LinkPredictor(8, spec)


@pytest.mark.parametrize("bad", [
    {"encoder": "gcn"}, {"encoder": "sage"}, {"encoder": "mlp", "propagation": 1},
    {"encoder": "mlp", "variational": True},
])
def test_models_that_read_edges_are_refused(setting, bad) -> None:
    g, split = setting
    model = _model(LinkPredictorSpec.gae(**{"hidden": (), "embedding_dim": 8, **bad}))
    plan = DPSGDPlan(len(split.members), 16, 1)
    with pytest.raises(InvalidConfigError, match="per-edge DP-SGD"):
        train_edge_dp_sgd(model, g.x, split, plan=plan, lr=0.01, noise_multiplier=1.0,
                          max_grad_norm=1.0, seed=0)


def test_per_edge_gradients_equal_autograd_on_each_example(setting) -> None:
    g, split = setting
    model = _model()
    pos = torch.as_tensor(split.members[:4])
    neg = torch.randint(0, g.num_nodes, (4, 2, 2), generator=torch.Generator().manual_seed(0))
    grads = per_edge_gradients(model, g.x, pos, neg)
    no_edges = torch.empty(2, 0, dtype=torch.long)
    for i in range(4):
        model.zero_grad()
        pairs = torch.cat([pos[i:i + 1], neg[i]])
        target = torch.tensor([1.0, 0.0, 0.0])
        F.binary_cross_entropy_with_logits(model(g.x, no_edges, pairs), target,
                                           reduction="sum").backward()
        for name, p in model.named_parameters():
            torch.testing.assert_close(grads[name][i], p.grad)


def test_one_edge_moves_the_clipped_sum_by_at_most_the_clipping_norm(setting) -> None:
    g, split = setting
    model = _model()
    pos = torch.as_tensor(split.members[:32])
    neg = torch.randint(0, g.num_nodes, (32, 1, 2), generator=torch.Generator().manual_seed(1))
    grads = per_edge_gradients(model, g.x, pos, neg)
    c = 0.05  # below every example's norm: clipping binds
    full = clip_and_sum(grads, c)
    for drop in (0, 7, 31):
        keep = torch.arange(32) != drop
        less = clip_and_sum({n: v[keep] for n, v in grads.items()}, c)
        diff = torch.sqrt(sum(((full[n] - less[n]) ** 2).sum() for n in full))
        assert float(diff) == pytest.approx(c, rel=1e-4)


def test_the_sampler_runs_the_accounted_plan_and_training_is_seeded(setting) -> None:
    g, split = setting
    plan = DPSGDPlan(len(split.members), 64, 3)
    state = torch.get_rng_state()
    runs = []
    for seed in (5, 5, 6):
        model = _model()
        run = train_edge_dp_sgd(model, g.x, split, plan=plan, lr=0.01, noise_multiplier=1.0,
                                max_grad_norm=1.0, seed=seed)
        assert run.steps == plan.steps and run.rate == plan.rate
        runs.append(torch.cat([p.detach().ravel() for p in model.parameters()]))
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])
    eps = epsilon(edge_sgm_event(plan, 1.0), 1e-5)
    assert math.isfinite(eps) and eps > 0
    assert epsilon(edge_sgm_event(plan, 2.0), 1e-5) < eps


def test_plan_must_match_the_member_edges(setting) -> None:
    g, split = setting
    with pytest.raises(InvalidConfigError, match="member edges"):
        train_edge_dp_sgd(_model(), g.x, split, plan=DPSGDPlan(10, 4, 1), lr=0.01,
                          noise_multiplier=1.0, max_grad_norm=1.0, seed=0)


@pytest.mark.slow
def test_learns_with_modest_noise_and_not_under_heavy_noise() -> None:
    """64 features, 8 of them carrying the communities: a random projection sees little, a
    trained one finds the signal; noise 200 times larger leaves it near the untrained."""
    g = csbm(300, num_classes=6, num_features=64, avg_degree=8.0, homophily=0.95,
             feature_signal=3.0, seed=0)
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes,
                                     EdgeSplitConfig(test_frac=0.15), seed=0)
    plan = DPSGDPlan(len(split.members), 128, 20)
    spec = LinkPredictorSpec.gae(encoder="mlp", hidden=(), embedding_dim=16)

    def run(noise: float | None) -> float:
        torch.manual_seed(0)
        model = LinkPredictor(64, spec)
        if noise is not None:
            train_edge_dp_sgd(model, g.x, split, plan=plan, lr=0.05, noise_multiplier=noise,
                              max_grad_norm=1.0, seed=0)
        return held_out_link_auc(model, g.x, split)

    untrained, modest, heavy = run(None), run(0.5), run(100.0)
    assert modest > untrained + 0.07 and modest > heavy + 0.04
    assert np.isfinite(epsilon(edge_sgm_event(plan, 0.5), 1e-5))
