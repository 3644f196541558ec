"""Graph reconstruction with a GAE (Duddu et al.)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphleaks.attacks import Output
from graphleaks.attacks._pairs import pair_keys
from graphleaks.attacks.graph_reconstruction import GraphReconstruction
from graphleaks.attacks.harness import run_attack, sample_challenge
from graphleaks.audit.runner import train_target
from graphleaks.data import SplitConfig, csbm
from graphleaks.errors import CapabilityError
from graphleaks.metrics.binary import auc
from graphleaks.models.gnn import ArchitectureSpec


@pytest.fixture(autouse=True, scope="module")
def _one_thread():  # noqa: ANN202
    """One torch thread: tiny graphs gain nothing from two, and busy hosts lose a lot."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def target():  # noqa: ANN201
    g = csbm(200, num_features=16, avg_degree=8, homophily=0.95, seed=0)
    return train_target(g, seed=0, spec=ArchitectureSpec(hidden=(32,), epochs=30, patience=0),
                        split=SplitConfig(kind="transductive"))


def test_known_edges_are_not_candidates(target) -> None:  # noqa: ANN001
    lc = sample_challenge(GraphReconstruction(known_fraction=0.5), target, seed=0)
    ch = lc.challenge
    n = target.graph.num_nodes
    known = pair_keys(ch.hints["known_edges"], n)
    assert not np.isin(pair_keys(ch.candidates, n), known).any()
    assert lc.truth.mean() == 0.5


@pytest.mark.parametrize("mode", ["embeddings", "gae_partial"])
def test_reconstruction_beats_chance(target, mode: str) -> None:  # noqa: ANN001
    a = GraphReconstruction(mode=mode, known_fraction=0.5, max_epochs=60, patience=10)
    r = run_attack(a, target, seed=0)
    assert auc(r.scores, r.labels) > 0.6
    assert "best validation AUC" in r.notes[0]


def test_requires_embeddings(target) -> None:  # noqa: ANN001
    with pytest.raises(CapabilityError, match="EMBEDDINGS"):
        run_attack(GraphReconstruction(), target, seed=0, exposed=frozenset({Output.POSTERIORS}))


class _MessagePassingGAE(torch.nn.Module):
    """The former GAE: PyG's ``GCNConv`` message passing (the reference for equivalence)."""

    def __init__(self, in_dim: int, hidden: tuple[int, int]) -> None:
        super().__init__()
        from torch_geometric.nn import GCNConv

        self.c1 = GCNConv(in_dim, hidden[0], bias=False, cached=True)
        self.c2 = GCNConv(hidden[0], hidden[1], bias=False, cached=True)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.c2(torch.relu(self.c1(x, edge_index)), edge_index)


def test_sparse_product_gae_equals_message_passing() -> None:
    """Same parameters from the same seed; outputs and gradients equal to float rounding."""
    from graphleaks.attacks.graph_reconstruction import _GAE

    g = csbm(60, num_features=12, avg_degree=6, seed=1)
    x = g.x.float()
    torch.manual_seed(5)
    ours = _GAE(12, (8, 4))
    torch.manual_seed(5)
    ref = _MessagePassingGAE(12, (8, 4))
    assert ours.state_dict().keys() == ref.state_dict().keys()
    for k, v in ours.state_dict().items():
        assert torch.equal(v, ref.state_dict()[k])  # the same Glorot draw
    outs = []
    for model in (ours, ref):
        z = model(x, g.edge_index)
        z.square().sum().backward()
        outs.append((z.detach(), [p.grad.clone() for p in model.parameters()]))
    (z1, g1), (z2, g2) = outs
    assert z1.abs().max() > 0.1
    torch.testing.assert_close(z1, z2, rtol=1e-5, atol=1e-6)
    for a, b in zip(g1, g2, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["embeddings", "gae_partial"])
def test_scores_equal_message_passing_gae(target, monkeypatch, mode: str) -> None:  # noqa: ANN001
    """The attack's scores with the sparse-product GAE equal those of PyG's message passing
    up to float rounding (a short run, where rounding cannot move the chosen epoch)."""
    import graphleaks.attacks.graph_reconstruction as gr

    attack = GraphReconstruction(mode=mode, known_fraction=0.5, max_epochs=25, patience=5)
    new = run_attack(attack, target, seed=2)
    monkeypatch.setattr(gr, "_GAE", _MessagePassingGAE)
    old = run_attack(attack, target, seed=2)
    assert new.notes[-1] == old.notes[-1]  # same best epoch of the same number of epochs
    assert np.abs(old.scores).max() > 0.1
    np.testing.assert_allclose(new.scores, old.scores, rtol=1e-4, atol=1e-5)
