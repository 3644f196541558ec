"""Per-graph DP-SGD: per-graph gradients are each graph's own, clipping, noise, the sampler."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
import torch.nn.functional as F

from graphleaks.data.graphsets import motif_graphs
from graphleaks.models.dp_sgd import DPSGDPlan
from graphleaks.models.graph_classifier import (
    GraphClassifierSpec,
    graph_accuracy,
    new_graph_classifier,
    predict_graph_logits,
)
from graphleaks.models.graph_dp_sgd import (
    clip_and_sum,
    pad_graphs,
    per_graph_gradients,
    train_graph_dp_sgd,
)


def _alone(model: torch.nn.Module, g: object) -> dict[str, torch.Tensor]:
    """The gradient of one graph's loss, by plain autograd on that graph alone."""
    model.zero_grad()
    n = int(g.num_nodes)  # type: ignore[attr-defined]
    out = model(g.x, g.edge_index, torch.zeros(n, dtype=torch.long), 1)  # type: ignore[attr-defined]
    F.cross_entropy(out, g.y, reduction="sum").backward()  # type: ignore[attr-defined]
    return {k: p.grad.clone() for k, p in model.named_parameters()}  # type: ignore[union-attr]


@pytest.mark.parametrize("per_sample", ["vmap", "loop"])
@pytest.mark.parametrize(("arch", "pooling"), [("gin", "mean"), ("gin", "sum"), ("gin", "max"),
                                               ("gcn", "mean"), ("gcn", "max")])
def test_each_per_graph_gradient_is_that_graph_alone(per_sample: str, arch: str,
                                                     pooling: str) -> None:
    # graphs of different sizes: the vmap path pads them, the padding must not leak in
    gs = motif_graphs(5, num_classes=4, base_nodes=(1, 9), seed=2)
    model = new_graph_classifier(GraphClassifierSpec(arch=arch, pooling=pooling, hidden=8),
                                 gs.num_features, gs.num_classes, seed=0)
    grads = per_graph_gradients(model, gs.graphs, per_sample=per_sample)  # type: ignore[arg-type]
    assert set(grads) == {k for k, _ in model.named_parameters()}
    for i, g in enumerate(gs.graphs):
        for k, expected in _alone(model, g).items():
            assert grads[k].shape[0] == 5
            torch.testing.assert_close(grads[k][i], expected, rtol=1e-4, atol=1e-6)


def test_padding_is_a_separate_graph_with_its_own_edges() -> None:
    gs = motif_graphs(3, seed=0)
    p = pad_graphs(gs.graphs)
    n_max = max(int(g.num_nodes) for g in gs.graphs) + 1
    assert p.x.shape[:2] == (3, n_max) and p.batch.shape == (3, n_max)
    for i, g in enumerate(gs.graphs):
        n, e = int(g.num_nodes), g.edge_index.shape[1]
        assert (p.batch[i, :n] == 0).all() and (p.batch[i, n:] == 1).all()
        assert (p.edge_index[i, :, e:] == n_max - 1).all()  # padding edges stay in padding


def test_clipping_bounds_each_graph_and_keeps_small_gradients() -> None:
    grads = {"w": torch.tensor([[3.0, 4.0], [0.3, 0.4]]), "b": torch.tensor([[0.0], [0.0]])}
    summed = clip_and_sum(grads, max_grad_norm=1.0)
    # graph 0 (norm 5) is scaled to norm 1; graph 1 (norm 0.5) is kept
    torch.testing.assert_close(summed["w"], torch.tensor([0.6 + 0.3, 0.8 + 0.4]), rtol=1e-5,
                               atol=1e-5)


def test_the_run_executes_the_plan_and_is_seeded() -> None:
    gs = motif_graphs(40, seed=0)
    plan = DPSGDPlan(num_samples=40, batch_size=8, epochs=2)
    spec = GraphClassifierSpec(hidden=8)

    def run(seed: int) -> tuple[torch.Tensor, object]:
        model = new_graph_classifier(spec, gs.num_features, 2, seed=0)
        out = train_graph_dp_sgd(model, gs.graphs, plan=plan, lr=0.01, noise_multiplier=1.0,
                                 max_grad_norm=1.0, seed=seed)
        return predict_graph_logits(model, gs.graphs), out

    a, ra = run(1)
    b, _ = run(1)
    c, _ = run(2)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert ra.executed.rate == plan.rate and ra.executed.steps == plan.steps  # type: ignore[attr-defined]


def test_an_empty_batch_is_still_a_noised_step(monkeypatch: pytest.MonkeyPatch) -> None:
    import graphleaks.models.graph_dp_sgd as mod

    def empty_batches(self: mod.PoissonBatchSampler) -> Iterator[torch.Tensor]:
        for _ in range(self.steps):
            self.draws += 1
            yield torch.empty(0, dtype=torch.long)

    monkeypatch.setattr(mod.PoissonBatchSampler, "__iter__", empty_batches)
    gs = motif_graphs(10, seed=0)
    model = new_graph_classifier(GraphClassifierSpec(hidden=8), gs.num_features, 2, seed=0)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    plan = DPSGDPlan(num_samples=10, batch_size=2, epochs=1)
    run = train_graph_dp_sgd(model, gs.graphs, plan=plan, lr=0.01, noise_multiplier=1.0,
                             max_grad_norm=1.0, seed=0)
    assert run.executed.steps == plan.steps == 5
    # no graph was ever sampled, yet every weight moved: the steps were pure noise
    assert all(not torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_without_noise_or_clipping_it_learns_the_motifs() -> None:
    gs = motif_graphs(120, seed=0)
    train, test = gs.graphs[:80], gs.graphs[80:]
    plan = DPSGDPlan(num_samples=80, batch_size=16, epochs=15)
    spec = GraphClassifierSpec(hidden=16, pooling="sum")
    model = new_graph_classifier(spec, gs.num_features, 2, seed=0)
    train_graph_dp_sgd(model, train, plan=plan, lr=0.01, noise_multiplier=0.0,
                       max_grad_norm=1e6, seed=0)
    assert graph_accuracy(model, test) >= 0.8
