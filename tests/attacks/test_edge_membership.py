"""Edge-membership attacks: signal on an overfit link predictor, none where membership is
independent of the model, and the contract every edge attack keeps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphleaks.attacks.base import Challenge
from graphleaks.attacks.edge_membership import EdgeAttack, LinkTargetView, edge_registry
from graphleaks.attacks.edge_membership.harness import edge_challenge, run_edge_attack
from graphleaks.data import tiny_graph
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.data.pairs import undirected_pairs
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.metrics.binary import evaluate_binary
from graphleaks.models.link_predictor import LinkPredictorSpec, fit_link_predictor
from graphleaks.models.pair_scorer import LinkTarget, PairScorer
from graphleaks.threat import Output, Task

BUDGET = {"edge_lira": {"num_references": 4, "ref_epochs": 60},
          "edge_rmia": {"num_references": 4, "ref_epochs": 60}}


def _attack(name: str) -> EdgeAttack:
    return edge_registry.get(name)(**BUDGET.get(name, {}))


@pytest.fixture(scope="module")
def overfit():
    """A GAE trained 200 epochs without early stopping on the tiny graph's members."""
    g = tiny_graph()
    split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
    spec = LinkPredictorSpec.gae(hidden=(32,), embedding_dim=16, epochs=200, patience=0)
    model, _ = fit_link_predictor(g.x, split, spec, seed=0)
    target = LinkTarget(PairScorer(model).check(g.x, split.inference_edge_index()), g.x,
                        split.inference_edge_index(), spec=spec)
    non = np.concatenate([split.held_out_edges, split.held_out_non_edges])
    lc, _ = edge_challenge(target, split.members, non, seed=0)
    return target, lc


@pytest.fixture(scope="module")
def exchangeable():
    """Membership independent of the model: a fixed feature-only scorer (trained on nothing)
    and the graph's edges split at random into 'members' and 'non-members'."""
    g = tiny_graph(seed=1)

    class FeatureCosine(torch.nn.Module):
        embedding_layers = ("proj",)

        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Identity()

        def forward(self, x, ei, pairs):
            z = self.proj(x)
            return torch.nn.functional.cosine_similarity(z[pairs[0]], z[pairs[1]], dim=1)

    pairs = undirected_pairs(g.edge_index)
    perm = np.random.default_rng(0).permutation(len(pairs))
    half = len(pairs) // 2
    members, non = pairs[perm[:half]], pairs[perm[half:]]
    served = torch.from_numpy(members).t()
    served = torch.cat([served, served.flip(0)], dim=1)
    target = LinkTarget(PairScorer(FeatureCosine()).check(g.x, served), g.x, served)
    lc, _ = edge_challenge(target, members, non, seed=0)
    return target, lc


@pytest.mark.parametrize("name", ["edge_score_threshold", "edge_lira", "edge_rmia",
                                  "edge_embedding_similarity"])
def test_overfit_link_predictor_leaks_its_training_edges(overfit, name):
    target, lc = overfit
    r = run_edge_attack(_attack(name), target, lc, seed=0)
    m = evaluate_binary(r.scores, r.labels, n_bootstrap=200, seed=0).metrics
    assert r.task == Task.EDGE_MEMBERSHIP
    assert m.auc.lo > 0.6, (name, m.auc)


@pytest.mark.parametrize("name", ["edge_score_threshold", "edge_lira", "edge_rmia",
                                  "edge_embedding_similarity"])
def test_no_signal_where_membership_is_independent_of_the_model(exchangeable, name):
    target, lc = exchangeable
    r = run_edge_attack(_attack(name), target, lc, seed=0)
    m = evaluate_binary(r.scores, r.labels, n_bootstrap=200, seed=0).metrics
    assert m.auc.lo < 0.5 < m.auc.hi, (name, m.auc)


def test_same_seed_same_scores(overfit):
    target, lc = overfit
    a = run_edge_attack(_attack("edge_lira"), target, lc, seed=3).scores
    b = run_edge_attack(_attack("edge_lira"), target, lc, seed=3).scores
    np.testing.assert_array_equal(a, b)


def test_threshold_scores_are_the_models_logits(overfit):
    target, lc = overfit
    r = run_edge_attack(_attack("edge_score_threshold"), target, lc, seed=0)
    np.testing.assert_array_equal(r.scores, target.logits(lc.challenge.candidates))
    assert r.threshold == 0.0


def test_every_edge_attack_has_a_paper_and_the_link_target_kind():
    assert set(edge_registry.names()) >= {"edge_score_threshold", "edge_lira", "edge_rmia",
                                          "edge_embedding_similarity"}
    for name in edge_registry.names():
        cls = edge_registry.get(name)
        assert cls.task == Task.EDGE_MEMBERSHIP and cls.target_kind == "link"
        assert cls.paper and cls.__module__.endswith(name)


def test_capability_and_challenge_checks(overfit):
    target, lc = overfit
    view = LinkTargetView(target, _attack("edge_score_threshold").threat_model,
                          exposed=frozenset({Output.EMBEDDINGS}))
    with pytest.raises(CapabilityError, match="requires LOGITS"):
        _attack("edge_score_threshold").score(view, lc.challenge, seed=0)
    nodes = Challenge(task=Task.EDGE_MEMBERSHIP, candidates=np.arange(3))
    with pytest.raises(InvalidConfigError, match=r"candidate pairs \[K, 2\]"):
        _attack("edge_score_threshold").score(view, nodes, seed=0)
    with pytest.raises(InvalidConfigError, match="num_references"):
        edge_registry.get("edge_lira")(num_references=1).validate()


def test_reference_logits_are_computed_once_per_pair_list(overfit, monkeypatch):
    """LiRA and RMIA score the same candidates under the shared references: the second ask
    is served from memory, with the same numbers, and a caller's edits never leak back."""
    from graphleaks.attacks.edge_membership._references import (
        EdgeReferences,
        train_edge_references,
    )

    target, lc = overfit
    view = LinkTargetView(target, _attack("edge_lira").threat_model, attack="edge_lira")
    cands = np.asarray(lc.challenge.candidates)
    refs = train_edge_references(view, cands, lc.challenge.hints["known_edges"], num=2,
                                 online=True, ref_epochs=3, seed=0)
    calls = []
    plain = EdgeReferences._logits

    def spy(self, x, pairs, *, drop_queried):
        calls.append(len(pairs))
        return plain(self, x, pairs, drop_queried=drop_queried)

    monkeypatch.setattr(EdgeReferences, "_logits", spy)
    first = refs.logits(target.x, cands, drop_queried=False)
    first[:] = 0.0  # the caller's copy
    again = refs.logits(target.x, cands.copy(), drop_queried=False)
    assert calls == [len(cands)]
    np.testing.assert_array_equal(again, plain(refs, target.x, cands, drop_queried=False))
    assert np.any(again != 0.0)
    refs.logits(target.x, cands[:5], drop_queried=False)  # other pairs: computed
    refs.logits(target.x, cands, drop_queried=True)  # other protocol: computed
    assert calls == [len(cands), 5, len(cands)]


@pytest.mark.parametrize("kind", ["cosine", "dot", "euclidean"])
def test_pair_similarity_in_chunks_is_the_one_shot_value(kind):
    """LMIA's similarities gather endpoint rows a chunk at a time (memory at 1M nodes);
    each row's value is its own, so chunking changes no number."""
    from graphleaks.attacks.edge_membership.edge_embedding_similarity import pair_similarity

    gen = torch.Generator().manual_seed(0)
    emb = torch.randn(50, 16, generator=gen)
    pairs = np.random.default_rng(0).integers(0, 50, size=(101, 2))
    whole = pair_similarity(emb, pairs, kind, chunk=10**6)
    np.testing.assert_array_equal(pair_similarity(emb, pairs, kind, chunk=7), whole)
    a, b = emb.double()[pairs[:, 0]], emb.double()[pairs[:, 1]]
    expected = {"dot": (a * b).sum(1), "euclidean": -(a - b).norm(dim=1),
                "cosine": torch.nn.functional.cosine_similarity(a, b, dim=1, eps=1e-12)}[kind]
    np.testing.assert_array_equal(whole, expected.numpy())
