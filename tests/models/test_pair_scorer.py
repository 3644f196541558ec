"""The pair-scorer target kind: declared interface, one score per pair, refusals in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphleaks.data import tiny_graph
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.link_predictor import LinkPredictor, LinkPredictorSpec
from graphleaks.models.pair_scorer import LinkTarget, PairScorer
from tests.audit.link_own_model import UserLinkModel

PAIRS = np.array([[0, 1], [2, 3], [4, 5], [1, 7]])


@pytest.fixture(scope="module")
def g():
    return tiny_graph()


def test_graphleaks_link_predictor_declares_rows_and_its_embedding(g):
    model = LinkPredictor(g.num_features, LinkPredictorSpec(embedding_dim=8))
    scorer = PairScorer(model).check(g.x, g.edge_index)
    assert scorer.interface.pairs_layout == "rows"
    out = scorer.logits(g.x, g.edge_index, PAIRS)
    direct = model(g.x, g.edge_index, torch.as_tensor(PAIRS)).detach().double().numpy()
    np.testing.assert_allclose(out, direct, rtol=1e-6)
    emb = scorer.embeddings(g.x, g.edge_index, "embedding")
    assert emb.shape == (g.num_nodes, 8)


def test_user_model_takes_columns_and_exposes_hooked_layers(g):
    torch.manual_seed(0)
    model = UserLinkModel(g.num_features).eval()
    scorer = PairScorer(model, embedding_layers=["conv2"]).check(g.x, g.edge_index)
    assert scorer.interface.pairs_layout == "columns"
    got = scorer.logits(g.x, g.edge_index, PAIRS)
    with torch.no_grad():
        want = model(g.x, g.edge_index, torch.as_tensor(PAIRS).t()).double().numpy()
    np.testing.assert_array_equal(got, want)
    z = scorer.embeddings(g.x, g.edge_index, "conv2")
    with torch.no_grad():
        np.testing.assert_allclose(z.numpy(), model.encode(g.x, g.edge_index).numpy())


def test_probabilities_are_read_as_their_logit(g):
    torch.manual_seed(0)
    model = UserLinkModel(g.num_features).eval()

    class Prob(torch.nn.Module):
        def forward(self, x, ei, pairs):
            return torch.sigmoid(model(x, ei, pairs))

    logit = PairScorer(model).check(g.x, g.edge_index).logits(g.x, g.edge_index, PAIRS)
    prob = PairScorer(Prob(), output="probabilities").check(g.x, g.edge_index)
    np.testing.assert_allclose(prob.logits(g.x, g.edge_index, PAIRS), logit, atol=1e-4)


def test_a_node_classifier_is_refused_in_one_line(g):
    class PerNode(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(g.num_features, 1)

        def forward(self, x, ei, pairs):
            return self.lin(x)[:, 0]  # one score per node

    with pytest.raises(InvalidConfigError, match="one score per node, not per pair") as e:
        PairScorer(PerNode()).check(g.x, g.edge_index)
    assert "\n" not in str(e.value)


def test_wrong_layout_and_several_scores_per_pair_are_refused(g):
    model = UserLinkModel(g.num_features)
    with pytest.raises(InvalidConfigError, match="pairs_layout='columns'"):
        PairScorer(model, pairs_layout="rows").check(g.x, g.edge_index)

    class TwoScores(torch.nn.Module):
        def forward(self, x, ei, pairs):
            return torch.zeros(pairs.shape[1], 2)

    with pytest.raises(InvalidConfigError, match="one score per pair"):
        PairScorer(TwoScores()).check(g.x, g.edge_index)


def test_bad_interface_values_are_refused(g):
    model = UserLinkModel(g.num_features)
    with pytest.raises(InvalidConfigError, match="unknown pair-scorer output"):
        PairScorer(model, output="posteriors").check(g.x, g.edge_index)
    with pytest.raises(InvalidConfigError, match="no submodule 'conv9'"):
        PairScorer(model, embedding_layers=["conv9"]).check(g.x, g.edge_index)
    with pytest.raises(CapabilityError, match="no embedding layer"):
        PairScorer(model).embeddings(g.x, g.edge_index, "conv1")


def test_probabilities_outside_the_unit_interval_are_refused(g):
    model = UserLinkModel(g.num_features)
    with pytest.raises(DataError, match="leave \\[0, 1\\]"):
        PairScorer(lambda x, ei, p: model(x, ei, p) * 100,
                   output="probabilities").check(g.x, g.edge_index)


def test_served_graph_drops_the_queried_pairs_when_so_served(g):
    model = LinkPredictor(g.num_features, LinkPredictorSpec(embedding_dim=8))
    scorer = PairScorer(model).check(g.x, g.edge_index)
    edge = g.edge_index[:, :1].t().numpy()
    kept = LinkTarget(scorer, g.x, g.edge_index)
    dropped = LinkTarget(scorer, g.x, g.edge_index, drop_queried=True)
    assert kept.served_graph(edge).shape == g.edge_index.shape
    assert dropped.served_graph(edge).shape[1] == g.edge_index.shape[1] - 2
