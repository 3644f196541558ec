"""The scalable link predictor: propagation precomputed once per graph on the input features."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphleaks.data.edge_splits import EdgeMembershipSplit, EdgeSplitConfig
from graphleaks.data.synthetic import csbm
from graphleaks.errors import InvalidConfigError
from graphleaks.models.link_predictor import (
    LinkPredictor,
    LinkPredictorSpec,
    fit_link_predictor,
    held_out_link_auc,
    link_scores,
)


@pytest.fixture(scope="module")
def homophilous():
    """Link prediction with signal: a homophilous CSBM with informative features."""
    g = csbm(240, num_classes=6, avg_degree=8.0, homophily=0.95, feature_signal=3.0, seed=0)
    return g, EdgeMembershipSplit.draw(g.edge_index, g.num_nodes,
                                       EdgeSplitConfig(test_frac=0.15, val_frac=0.1), seed=0)


def _appnp_dense(x: torch.Tensor, edge_index: torch.Tensor, steps: int,
                 alpha: float) -> torch.Tensor:
    """The reference: D^-1/2 (A + I) D^-1/2 as a dense matrix (240 nodes), then APPNP."""
    n = x.shape[0]
    a = torch.zeros(n, n, dtype=torch.float64)
    a[edge_index[0], edge_index[1]] = 1.0
    a += torch.eye(n, dtype=torch.float64)
    d = a.sum(1).rsqrt()
    a = d[:, None] * a * d[None, :]
    h0 = x.double()
    h = h0
    for _ in range(steps):
        h = (1 - alpha) * (a @ h) + alpha * h0
    return h


def test_the_defaults_stay_the_full_propagation() -> None:
    spec = LinkPredictorSpec()
    assert spec.propagation_mode == "full"
    assert spec.to_dict()["propagation_mode"] == "full"
    pre = LinkPredictorSpec.precomputed()
    assert (pre.propagation_mode, pre.edge_dropout, pre.input_dropout) == ("precomputed", 0, 0)
    # every other field is the default's
    assert dataclasses.replace(pre, propagation_mode="full", edge_dropout=0.5,
                               input_dropout=0.3) == spec


def test_scores_are_the_precomputed_model_formula(homophilous) -> None:
    """logit = <c·n(W P x_u + b), c·n(W P x_v + b)> + bias, P the APPNP steps on x."""
    g, split = homophilous
    spec = LinkPredictorSpec.precomputed(embedding_dim=8, propagation=4, teleport=0.2)
    torch.manual_seed(0)
    model = LinkPredictor(g.x.shape[1], spec).eval()
    with torch.no_grad():
        model.decoder.bias.fill_(0.25)  # type: ignore[union-attr]
    ei = split.inference_edge_index()
    pairs = np.array([[0, 1], [5, 17], [3, 200], [239, 0]])
    lin = model.encoder.layers[0]
    with torch.no_grad():
        h = _appnp_dense(g.x, ei, 4, 0.2) @ lin.weight.double().t() + lin.bias.double()
        z = F.normalize(h, dim=1) * spec.embedding_norm
        expected = (z[pairs[:, 0]] * z[pairs[:, 1]]).sum(1) + 0.25
    got = link_scores(model, g.x, ei, pairs)  # the row path
    assert np.allclose(got, expected.numpy(), atol=1e-4)
    with torch.no_grad():
        full = model(g.x, ei, torch.from_numpy(pairs)).double().numpy()  # every node encoded
    assert np.allclose(full, expected.numpy(), atol=1e-4)


def test_wide_features_take_the_distinct_endpoint_path_with_the_same_scores(homophilous) -> None:
    g, split = homophilous
    spec = LinkPredictorSpec.precomputed(embedding_dim=4, propagation=2)  # features: 16 > 4
    assert g.x.shape[1] > spec.embedding_dim
    torch.manual_seed(0)
    model = LinkPredictor(g.x.shape[1], spec).eval()
    ei = split.inference_edge_index()
    pairs = np.concatenate([split.held_out_edges, split.held_out_non_edges])
    with torch.no_grad():
        full = model(g.x, ei, torch.from_numpy(pairs)).double().numpy()
    assert np.allclose(link_scores(model, g.x, ei, pairs), full, atol=1e-5)


def test_the_propagation_follows_the_graph_it_is_given(homophilous) -> None:
    g, split = homophilous
    spec = LinkPredictorSpec.precomputed(embedding_dim=8)
    torch.manual_seed(0)
    model = LinkPredictor(g.x.shape[1], spec).eval()
    ei = split.inference_edge_index()
    pairs = split.members[:20]
    first = link_scores(model, g.x, ei, pairs)
    assert model.propagated_features(g.x, ei) is model.propagated_features(g.x, ei)  # cached
    fewer = ei[:, ei.shape[1] // 2:]  # another graph: recomputed, other scores
    assert not np.allclose(link_scores(model, g.x, fewer, pairs), first)
    assert np.array_equal(link_scores(model, g.x, ei, pairs), first)


def test_precomputed_training_learns_links_and_is_seeded(homophilous) -> None:
    g, split = homophilous
    spec = LinkPredictorSpec.precomputed(epochs=60, patience=20, embedding_dim=16)
    model, log = fit_link_predictor(g.x, split, spec, seed=0)
    assert held_out_link_auc(model, g.x, split) > 0.8
    assert log.best_val_auc is not None
    again, _ = fit_link_predictor(g.x, split, spec, seed=0)
    for (k, a), b in zip(model.state_dict().items(), again.state_dict().values(), strict=True):
        assert torch.equal(a, b), k


def test_mini_batches_and_chunks_train_in_precomputed_mode(homophilous) -> None:
    g, split = homophilous
    spec = LinkPredictorSpec.precomputed(epochs=40, patience=0, embedding_dim=16,
                                         batch_size=128)
    model, log = fit_link_predictor(g.x, split, spec, seed=0)
    assert log.epochs_run == 40
    assert held_out_link_auc(model, g.x, split) > 0.8


@pytest.mark.parametrize(("bad", "named"), [
    ({"edge_dropout": 0.5}, "edge_dropout=0"),
    ({"input_dropout": 0.3}, "input_dropout=0"),
    ({"encoder": "gcn"}, "encoder=mlp"),
    ({"variational": True}, "variational=false"),
])
def test_what_a_precomputed_propagation_cannot_run_is_refused(homophilous, bad, named) -> None:
    g, split = homophilous
    with pytest.raises(InvalidConfigError, match=named) as info:
        fit_link_predictor(g.x, split, LinkPredictorSpec.precomputed(**bad), seed=0)
    assert "\n" not in str(info.value)


def test_chunked_precomputed_steps_give_the_one_shot_training(homophilous, monkeypatch) -> None:
    import graphleaks.models.link_predictor as lp

    g, split = homophilous
    spec = LinkPredictorSpec.precomputed(epochs=5, patience=0, embedding_dim=8)
    one, _ = fit_link_predictor(g.x, split, spec, seed=0)
    monkeypatch.setattr(lp, "ROW_CHUNK", 97)  # many chunks of a few pairs each
    chunked, _ = fit_link_predictor(g.x, split, spec, seed=0)
    ei = split.inference_edge_index()
    pairs = split.held_out_edges
    assert np.allclose(link_scores(one, g.x, ei, pairs), link_scores(chunked, g.x, ei, pairs),
                       atol=1e-4)
    assert not np.array_equal(link_scores(one, g.x, ei, pairs),
                              link_scores(LinkPredictor(g.x.shape[1], spec), g.x, ei, pairs))
