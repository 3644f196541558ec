"""EdgeRand (LinkTeller's ``perturb_adj_discrete``), exact sparse form.

See ``defenses.md`` §6.1 and §6.5b.

Randomized response on every unordered pair {i, j}: with probability s = 2/(e^ε+1) the bit
is replaced by a fair coin, otherwise kept. Net flip probability 1/(e^ε+1), keep probability
e^ε/(1+e^ε): pure ε edge-DP for one undirected edge.

Sparse and exact: each existing edge survives with probability 1 − s/2; the number of added
edges is K ~ Binomial(M − m, s/2), placed at K uniformly random distinct non-edges. Memory
O(m + K). K ≈ s·M/2 is huge at small ε (EdgeRand densifies the graph), so releases above
``max_edges`` undirected edges are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from torch_geometric.data import Data

from graphleaks.data.splits import MembershipSplit
from graphleaks.defenses._edge_release import (
    check_release_size,
    keys_to_edge_index,
    num_pairs,
    pair_keys,
    private_input_edges,
    sample_non_edges,
    train_on_released,
)
from graphleaks.defenses.base import Defense
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.privacy.events import RandomizedResponseEvent
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit
from graphleaks.seeding import Rngs


def edgerand_replace_probability(epsilon: float) -> float:
    """s = 2/(e^ε+1): probability that a pair's bit is replaced by a fair coin."""
    return 2.0 / (math.exp(epsilon) + 1.0) if epsilon < 700 else 0.0


def edgerand_release(
    keys: np.ndarray, num_nodes: int, epsilon: float, rng: np.random.Generator,
    max_edges: int | None = None,
) -> np.ndarray:
    """Sorted pair keys of the EdgeRand release of the undirected edge set ``keys``."""
    s = edgerand_replace_probability(epsilon)
    m = len(keys)
    kept = keys[rng.random(m) >= s / 2.0]
    added = int(rng.binomial(num_pairs(num_nodes) - m, s / 2.0))
    if max_edges is not None:
        check_release_size(len(kept) + added, max_edges, "EdgeRand",
                           f"expected about {s / 2:.3g}·M added at eps={epsilon:g}")
    new = sample_non_edges(num_nodes, keys, added, rng)
    return np.union1d(kept, new)


@dataclass(frozen=True)
class EdgeRandConfig:
    """Parameters of EdgeRand.

    Attributes:
        epsilon: Edge-DP budget ε (per undirected edge).
        max_edges: Refuse releases with more undirected edges than this (memory guard).
    """

    epsilon: float = field(default=1.0, metadata={"range": (0, None), "closed": "neither"})
    max_edges: int = field(default=5_000_000, metadata={"range": (1, None)})


class EdgeRand(Defense):
    """Randomized response on the adjacency matrix, then a GNN on the released graph.

    Example:
        >>> from graphleaks.data import tiny_graph, MembershipSplit
        >>> g = tiny_graph()
        >>> t = EdgeRand(epsilon=2.0).fit(g, MembershipSplit.draw(g.num_nodes, seed=0),
        ...                               model=ArchitectureSpec(epochs=5), seed=0)
        >>> t.ledger.unit.value, round(t.ledger.epsilon, 6)
        ('edge', 2.0)
    """

    name = "edgerand"
    privacy_unit = PrivacyUnit.EDGE
    Config = EdgeRandConfig

    def _fit(
        self, graph: Data, split: MembershipSplit, spec: ArchitectureSpec, seed: int
    ) -> TrainedTarget:
        cfg = self.config
        n = graph.num_nodes
        keys = pair_keys(private_input_edges(graph, split), n)
        rng = Rngs.from_seed(seed, "edgerand").numpy
        out = edgerand_release(keys, n, cfg.epsilon, rng, cfg.max_edges)
        ledger = PrivacyLedger.from_event(
            PrivacyUnit.EDGE, RandomizedResponseEvent(cfg.epsilon, 2), 0.0,
            status=GuaranteeStatus.VERIFIED,
            notes=(f"EdgeRand: binary randomized response on every unordered pair, "
                   f"keep probability e^eps/(1+e^eps) at eps={cfg.epsilon:g}; unit: one "
                   "undirected edge; the released graph is a permanent post-processed view",
                   "exact sparse sampler (defenses.md 6.5b); hyperparameters not accounted"),
            components={"epsilon_edges": cfg.epsilon,
                        "replace_probability": edgerand_replace_probability(cfg.epsilon)},
        )
        return train_on_released(graph, split, spec, seed, keys_to_edge_index(out, n), ledger,
                                 {"input_undirected_edges": len(keys), "mode": "exact-sparse"})


__all__ = ["EdgeRand", "EdgeRandConfig", "edgerand_release", "edgerand_replace_probability"]
