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
