"""Link defenses: ledgers in the edge unit, the released graph, the executed sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphleaks.data import tiny_graph
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.data.pairs import contains, edge_keys, pair_keys
from graphleaks.defenses.edgerand import edgerand_release
from graphleaks.defenses.lapgraph import lapgraph_release
from graphleaks.defenses.link import (
    LinkDPSGD,
    LinkEdgeRand,
    LinkGAPEDP,
    LinkLapGraph,
    edge_free_spec,
    gap_link_event,
    get_link_defense,
    link_registry,
)
from graphleaks.errors import InvalidConfigError
from graphleaks.models.link_predictor import LinkPredictorSpec
from graphleaks.privacy import accounting
from graphleaks.privacy.events import event_from_dict
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyUnit
from graphleaks.seeding import Rngs

SPEC = LinkPredictorSpec(epochs=4, embedding_dim=8)


@pytest.fixture(scope="module")
def graph_split():
    g = tiny_graph()
    return g, EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)


def test_registry_names():
    assert link_registry.names() == ["dp_sgd", "edgerand", "gap_edp", "lapgraph", "none"]


@pytest.mark.parametrize("bad", [0.0, -1.0])
@pytest.mark.parametrize("name", ["edgerand", "lapgraph", "dp_sgd", "gap_edp"])
def test_nonpositive_epsilon_refused(name, bad):
    with pytest.raises(InvalidConfigError, match="epsilon"):
        get_link_defense(name, {"epsilon": bad})


def test_unknown_link_defense_names_the_valid_ones():
    with pytest.raises(InvalidConfigError, match="link task.*dp_sgd, edgerand"):
        get_link_defense("lpgnn")


def test_none_is_non_private(graph_split):
    g, split = graph_split
    t = get_link_defense("none").fit(g, split, spec=SPEC, seed=0)
    assert not t.ledger.is_private and t.released_edges is None
    assert set(t.utility) == {"val_auc", "test_auc"}


@pytest.mark.parametrize("cls,release", [(LinkEdgeRand, "edgerand"), (LinkLapGraph, "lapgraph")])
def test_edge_release_is_the_node_mechanism_on_members(graph_split, cls, release):
    g, split = graph_split
    t = cls(epsilon=2.0).fit(g, split, spec=SPEC, seed=3)
    n = g.num_nodes
    keys = np.sort(pair_keys(split.members, n))
    rng = Rngs.from_seed(3, release).numpy
    want = (edgerand_release(keys, n, 2.0, rng) if release == "edgerand"
            else lapgraph_release(keys, n, 2.0, rng)[0])
    assert np.array_equal(edge_keys(t.released_edges, n), want)
    # served and trained on the release, never on the member graph
    assert t.served_edges() is t.released_edges
    led = t.ledger
    assert led.unit is PrivacyUnit.EDGE and led.status is GuaranteeStatus.VERIFIED
    assert led.epsilon == pytest.approx(2.0) and led.delta == 0.0
    assert any("member graph" in note for note in led.notes)


def test_edgerand_input_is_the_members_only(graph_split):
    g, split = graph_split
    # at a huge epsilon the release is the member graph: no validation or held-out edge leaks
    t = LinkEdgeRand(epsilon=60.0).fit(g, split, spec=SPEC, seed=0)
    n = g.num_nodes
    assert np.array_equal(edge_keys(t.released_edges, n), np.sort(pair_keys(split.members, n)))
    assert not contains(edge_keys(t.released_edges, n), pair_keys(split.held_out_edges, n)).any()


def test_edgerand_noise_changes_the_served_graph(graph_split):
    g, split = graph_split
    t = LinkEdgeRand(epsilon=0.5).fit(g, split, spec=SPEC, seed=0)
    released = edge_keys(t.released_edges, g.num_nodes)
    members = np.sort(pair_keys(split.members, g.num_nodes))
    assert not np.array_equal(released, members)
    assert (~contains(members, released)).sum() > 10  # random pairs were added


def test_dp_sgd_ledger_is_the_executed_sampler(graph_split):
    g, split = graph_split
    d = LinkDPSGD(epsilon=2.0, epochs=3, batch_size=32)
    t = d.fit(g, split, seed=0)
    led = t.ledger
    assert led.unit is PrivacyUnit.EDGE and led.accountant.startswith("dp_accounting.rdp")
    m = len(split.members)
    steps = 3 * math.ceil(m / 32)
    assert t.training["steps"] == steps and led.components["steps"] == steps
    assert led.components["sample_rate"] == pytest.approx(32 / m)
    ev = event_from_dict(led.events[0])
    assert accounting.epsilon(ev, led.delta, accountant="rdp") == pytest.approx(led.epsilon)
    assert led.epsilon <= 2.0 * (1 + 1e-3)
    assert led.delta == pytest.approx(10.0 ** -len(str(m)))
    assert t.model.spec.encoder == "mlp" and t.model.spec.propagation == 0


def test_dp_sgd_refuses_message_passing(graph_split):
    g, split = graph_split
    with pytest.raises(InvalidConfigError, match="reads no edges"):
        LinkDPSGD(epsilon=2.0, epochs=1).fit(g, split, spec=LinkPredictorSpec(encoder="gcn"),
                                             seed=0)
    assert edge_free_spec(LinkPredictorSpec(encoder="gcn")).encoder == "mlp"


@pytest.mark.slow
def test_gap_edp_releases_noisy_aggregates(graph_split):
    g, split = graph_split
    t = LinkGAPEDP(epsilon=4.0, hops=2, hidden=6, epochs=2, batch_size=64).fit(g, split, seed=0)
    assert t.features.shape == (g.num_nodes, 3 * 6)
    blocks = t.features.view(g.num_nodes, 3, 6).norm(dim=-1)
    assert np.allclose(blocks.numpy(), 1.0, atol=1e-4)  # every hop row-normalised
    led = t.ledger
    ev = event_from_dict(led.events[0])
    mult = led.components["noise_multiplier"]
    assert led.components["sigma_pma"] == pytest.approx(mult * math.sqrt(2))
    again = gap_link_event(mult, hops=2, rate=led.components["sample_rate"],
                           steps=int(led.components["steps"]))
    assert ev == again
    assert led.epsilon == pytest.approx(4.0, rel=1e-2)
    # a fixed release: the head reads no edges, so any query graph gives the same scores
    pairs = split.held_out_edges
    import torch

    a = t.model(t.features, torch.empty(2, 0, dtype=torch.long), torch.as_tensor(pairs))
    assert np.allclose(a.detach().numpy(), t.score_pairs(pairs))


def test_same_seed_same_target(graph_split):
    g, split = graph_split
    a = LinkEdgeRand(epsilon=2.0).fit(g, split, spec=SPEC, seed=1)
    b = LinkEdgeRand(epsilon=2.0).fit(g, split, spec=SPEC, seed=1)
    pairs = split.held_out_non_edges
    assert np.array_equal(a.score_pairs(pairs), b.score_pairs(pairs))
