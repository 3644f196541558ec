"""Label-only membership inference over whole graphs, by robustness to graph perturbation.

GLO-MIA's idea (graph-level label-only MIA, 2025; after Choquette-Choo et al.'s label-only
attacks, ICML 2021, https://arxiv.org/abs/2007.14321): a classifier fits its training graphs
with a margin, so a member's predicted label survives random perturbations of its structure
and features that flip a non-member's. Each candidate graph is queried ``num_queries`` times
with, at strengths spread over ``(0, 1]`` times the configured maxima, a share of its edges
dropped and as many random node pairs joined (``edge_rate``), and Gaussian noise on its node
features (``noise_scale`` times their standard deviation over the candidates). The score is
the share of these queries, plus the unperturbed one, whose predicted label equals the
graph's true label. The adversary reads labels only.

Threat model: black box, labels only, through an API that accepts submitted graphs; the
candidate graphs and their class labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.graph_membership.base import GraphAttack, GraphTargetView
from graphleaks.seeding import Rngs
from graphleaks.threat import Output, ThreatModel


@dataclass(frozen=True)
class GraphLabelOnlyMIAConfig:
    """Parameters of :class:`GraphLabelOnlyMIA`.

    Attributes:
        num_queries: Perturbed queries per candidate graph.
        edge_rate: Largest share of a graph's edges dropped (and as many pairs added).
        noise_scale: Largest feature noise, in feature standard deviations.
    """

    num_queries: int = field(default=30, metadata={"range": (1, 10_000)})
    edge_rate: float = field(default=0.2, metadata={"range": (0.0, 1.0)})
    noise_scale: float = field(default=0.5, metadata={"range": (0.0, None)})


def perturb(g: Data, strength: float, edge_rate: float, sigma: torch.Tensor,
            rng: np.random.Generator, gen: torch.Generator) -> Data:
    """One perturbed copy of ``g``: undirected edges dropped and added, features noised."""
    n = int(g.num_nodes)
    ei = g.edge_index.numpy()
    und = ei[:, ei[0] < ei[1]]
    rate = strength * edge_rate
    keep = und[:, rng.random(und.shape[1]) >= rate]
    n_add = int(round(rate * und.shape[1]))
    if n_add and n > 1:
        a = rng.integers(0, n, n_add)
        b = rng.integers(0, n, n_add)
        new = np.stack([np.minimum(a, b), np.maximum(a, b)])
        keep = np.concatenate([keep, new[:, new[0] != new[1]]], axis=1)
    if keep.size:
        # one key per pair (u < v < n), so a 1-D unique gives np.unique(axis=1)'s sorted
        # columns at a fraction of its cost, which dominated the attack on molecules
        code = np.unique(keep[0].astype(np.int64) * n + keep[1])
        keep = np.stack([code // n, code % n])
    else:
        keep = keep.reshape(2, 0)
    edges = torch.as_tensor(np.concatenate([keep, keep[::-1]], axis=1), dtype=torch.long)
    noise = torch.randn(g.x.shape, generator=gen, dtype=g.x.dtype) * sigma * strength
    return Data(x=g.x + noise, edge_index=edges, num_nodes=n)


class GraphLabelOnlyMIA(GraphAttack):
    """Label robustness under random edge and feature perturbation (GLO-MIA's idea)."""

    name = "graph_label_only_mia"
    Config = GraphLabelOnlyMIAConfig
    config: GraphLabelOnlyMIAConfig
    requires = frozenset({Output.LABELS})
    threat_model = ThreatModel(outputs=frozenset({Output.LABELS}), label_knowledge=True,
                               defense_knowledge=False)
    paper = "GLO-MIA 2025 / Choquette-Choo et al. ICML'21 (label-only)"

    def _score(self, view: GraphTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        ids = np.asarray(challenge.candidates, dtype=np.int64)
        y = torch.as_tensor(view.true_labels(ids))
        graphs = view.graphs(ids)
        sigma = cfg.noise_scale * torch.cat([g.x for g in graphs]).std(0)
        strengths = (np.arange(cfg.num_queries) + 1) / cfg.num_queries
        hits = (view.query_labels(graphs) == y).double()
        for s in strengths:
            copies = [perturb(g, float(s), cfg.edge_rate, sigma, rngs.numpy, rngs.torch)
                      for g in graphs]
            hits += (view.query_labels(copies) == y).double()
        scores = (hits / (cfg.num_queries + 1)).numpy()
        return AttackScores(scores, notes=(
            f"{cfg.num_queries} perturbed queries per graph (edge rate <= {cfg.edge_rate:g}, "
            f"feature noise <= {cfg.noise_scale:g} std), labels only",))
