"""LapGraph (LinkTeller's ``perturb_adj_continuous``), exact sparse form.

See ``defenses.md`` §6.2 and §6.5b.

ε₁ = 0.01ε releases the edge count T = max(0, round(m + Lap(1/ε₁))); ε₂ = 0.99ε adds
Lap(1/ε₂) to every upper-triangle entry of A, and the T largest entries become the released
edges. Pure ε edge-DP (basic composition), unit: one undirected edge.

Sparse and exact: edges get 1 + Lap(b), and only the top-T order statistics of the M₀ = M − m
i.i.d. Lap(b) non-edge scores are drawn, through log F(Y₍ⱼ₎) = Σ_{i≤j} log(U_i)/(M₀−i+1)
(a cumulative sum, so vectorised). The T best of the merged list win; non-edge winners are
placed at uniformly random distinct non-edge positions (exchangeability). Cost
O((m+T) log(m+T)); no N×N array.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from torch_geometric.data import Data

from graphleaks.data.splits import MembershipSplit
from graphleaks.defenses._edge_release import (
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
from graphleaks.privacy.events import ComposedEvent, LaplaceEvent
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit
from graphleaks.seeding import Rngs


def laplace_inverse_cdf_from_log(log_p: np.ndarray, scale: float) -> np.ndarray:
    """F⁻¹ of Lap(0, b) at p = exp(log_p), accurate for p close to 1."""
    log_p = np.asarray(log_p, dtype=np.float64)
    p = np.exp(log_p)
    upper = p >= 0.5
    out = np.empty_like(log_p)
    one_minus = -np.expm1(log_p[upper])
    out[upper] = -scale * np.log(2.0 * np.maximum(one_minus, np.finfo(float).tiny))
    out[~upper] = scale * (np.log(2.0) + log_p[~upper])
    return out


def top_laplace_order_statistics(
    count: int, population: int, scale: float, rng: np.random.Generator
) -> np.ndarray:
    """The ``count`` largest of ``population`` i.i.d. Lap(0, scale) values, descending."""
    count = min(int(count), int(population))
    if count <= 0:
        return np.empty(0)
    j = np.arange(count, dtype=np.float64)
    u = rng.random(count)
    u = np.maximum(u, np.finfo(float).tiny)
    log_f = np.cumsum(np.log(u) / (float(population) - j))
    return laplace_inverse_cdf_from_log(log_f, scale)


def lapgraph_release(
    keys: np.ndarray, num_nodes: int, epsilon: float, rng: np.random.Generator,
    count_fraction: float = 0.01,
) -> tuple[np.ndarray, int]:
    """Sorted pair keys of the LapGraph release of ``keys`` and the noisy count T."""
    m = len(keys)
    total = num_pairs(num_nodes)
    eps1, eps2 = count_fraction * epsilon, (1.0 - count_fraction) * epsilon
    t = int(np.clip(round(m + rng.laplace(0.0, 1.0 / eps1)), 0, total))
    b = 1.0 / eps2
    edge_scores = 1.0 + rng.laplace(0.0, b, size=m)
    non_scores = top_laplace_order_statistics(t, total - m, b, rng)
    scores = np.concatenate([edge_scores, non_scores])
    is_edge = np.concatenate([np.ones(m, bool), np.zeros(len(non_scores), bool)])
    if t < len(scores):
        win = np.argpartition(-scores, t - 1)[:t] if t > 0 else np.empty(0, np.int64)
    else:
        win = np.arange(len(scores))
    win_edges = keys[win[is_edge[win]]]
    n_new = int((~is_edge[win]).sum())
    new = sample_non_edges(num_nodes, keys, n_new, rng)
    return np.union1d(win_edges, new), t


@dataclass(frozen=True)
class LapGraphConfig:
    """Parameters of LapGraph.

    Attributes:
        epsilon: Edge-DP budget ε (per undirected edge), split 1 % / 99 % between the edge
            count and the entries, as in LinkTeller and Eclipse.
        count_fraction: Share of ε spent on the edge count.
    """

    epsilon: float = field(default=1.0, metadata={"range": (0, None), "closed": "neither"})
    count_fraction: float = field(default=0.01, metadata={"range": (0.0, 1.0),
                                                          "closed": "neither"})


class LapGraph(Defense):
    """Laplace noise on the adjacency, top-T selection, then a GNN on the released graph.

    Example:
        >>> from graphleaks.data import tiny_graph, MembershipSplit
        >>> g = tiny_graph()
        >>> t = LapGraph(epsilon=2.0).fit(g, MembershipSplit.draw(g.num_nodes, seed=0),
        ...                               model=ArchitectureSpec(epochs=5), seed=0)
        >>> t.ledger.unit.value, round(t.ledger.epsilon, 6)
        ('edge', 2.0)
    """

    name = "lapgraph"
    privacy_unit = PrivacyUnit.EDGE
    Config = LapGraphConfig

    def _fit(
        self, graph: Data, split: MembershipSplit, spec: ArchitectureSpec, seed: int
    ) -> TrainedTarget:
        cfg = self.config
        n = graph.num_nodes
        keys = pair_keys(private_input_edges(graph, split), n)
        rng = Rngs.from_seed(seed, "lapgraph").numpy
        out, t = lapgraph_release(keys, n, cfg.epsilon, rng, cfg.count_fraction)
        eps1 = cfg.count_fraction * cfg.epsilon
        eps2 = cfg.epsilon - eps1
        event = ComposedEvent((LaplaceEvent(1.0 / eps1), LaplaceEvent(1.0 / eps2)))
        ledger = PrivacyLedger.from_event(
            PrivacyUnit.EDGE, event, 0.0, status=GuaranteeStatus.VERIFIED,
            notes=(f"LapGraph: edge count with Lap(1/{eps1:g}), every upper-triangle entry "
                   f"with Lap(1/{eps2:g}), top-T selection; unit: one undirected edge",
                   "exact sparse sampler (defenses.md 6.5b); hyperparameters not accounted"),
            components={"epsilon_count": eps1, "epsilon_entries": eps2},
        )
        return train_on_released(graph, split, spec, seed, keys_to_edge_index(out, n), ledger,
                                 {"input_undirected_edges": len(keys), "noisy_edge_count": t,
                                  "mode": "exact-sparse"})


__all__ = ["LapGraph", "LapGraphConfig", "lapgraph_release", "top_laplace_order_statistics"]
