"""Label-only membership inference for nodes, by robustness to perturbation.

After Choquette-Choo, Tramèr, Carlini, Papernot ("Label-only membership inference attacks",
ICML 2021, https://arxiv.org/abs/2007.14321): a model fits its training points with a margin,
so a member's predicted label survives perturbations that flip a non-member's. For a node the
perturbations are the two inputs of a GNN: Gaussian noise on the node's features (scaled to
the features' standard deviation) and random dropping of the edges of the query graph
(which removes part of its neighbourhood). The adversary sees only the predicted label.

Score of node ``v``: the fraction of ``num_queries`` perturbed queries, at noise scales
spread over ``(0, noise_scale]``, whose predicted label equals ``v``'s true label (or the
unperturbed prediction when labels are unknown), plus the unperturbed query.

Threat model: black box, **labels only** (``Output.LABELS``), through an API that accepts
submitted features and graph; the query nodes' features and labels and the query graph's
edges; no auxiliary data, no reference models.

Example:
    >>> from graphleaks.audit.runner import train_target
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.attacks.harness import run_attack
    >>> t = train_target(tiny_graph(), seed=0)
    >>> r = run_attack(LabelOnlyMIA(num_queries=8), t, seed=0)
    >>> bool(((0 <= r.scores) & (r.scores <= 1)).all())
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    Challenge,
    Output,
    TargetView,
    Task,
    ThreatModel,
)
from graphleaks.attacks.capabilities import Capability
from graphleaks.seeding import Rngs, torch_seeded


@dataclass(frozen=True)
class LabelOnlyMIAConfig:
    """Parameters of :class:`LabelOnlyMIA`.

    Attributes:
        num_queries: Perturbed queries per node.
        noise_scale: Largest feature-noise standard deviation, in units of the features'
            per-dimension standard deviation.
        edge_drop: Largest probability of dropping each edge of the query graph.
        reference: ``true_label`` (the threat model grants labels) or ``prediction``.
    """

    num_queries: int = field(default=32, metadata={"range": (1, 10_000)})
    noise_scale: float = field(default=1.0, metadata={"range": (0.0, None)})
    edge_drop: float = field(default=0.5, metadata={"range": (0.0, 1.0)})
    reference: str = field(default="true_label",
                           metadata={"choices": ("true_label", "prediction")})


class LabelOnlyMIA(Attack):
    """Robustness of the predicted label to feature noise and edge dropping."""

    name = "label_only_mia"
    task = Task.MEMBERSHIP
    requires = frozenset({Output.LABELS})
    threat_model = ThreatModel(
        access="blackbox", outputs=frozenset({Output.LABELS}), graph_knowledge="full",
        feature_knowledge=True, label_knowledge=True,
    )
    Config = LabelOnlyMIAConfig

    def needs(self) -> frozenset[Capability]:
        """The threat model's needs; queries on other graphs when edges are dropped."""
        needs = super().needs()
        if self.config.edge_drop > 0:  # a dropped edge is a query graph of another size
            needs |= {Capability.GRAPH_QUERIES}
        return needs

    def query_cost(self, num_nodes: int, num_edges: int) -> int:
        """One clean query and ``num_queries`` perturbed ones, each a submitted graph."""
        del num_nodes, num_edges
        return 1 + int(self.config.num_queries)

    def with_query_budget(self, max_queries: int) -> LabelOnlyMIA | None:
        """Fewer perturbed queries: one clean query plus ``max_queries - 1`` perturbed ones
        (each one request answering every candidate), or None below two queries."""
        num_queries = min(max_queries - 1, self.config.num_queries)
        if num_queries < 1:
            return None
        return LabelOnlyMIA(self.config, num_queries=num_queries)

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        cands = np.asarray(challenge.candidates, dtype=np.int64)
        idx = torch.as_tensor(cands)
        x = target.features().float()
        edges = target.query_edges()
        clean = target.query_labels(x, edges)[idx]
        ref = target.true_labels(cands) if cfg.reference == "true_label" else clean
        hits = (clean == ref).double()
        std = x[idx].std(0, keepdim=True).clamp_min(1e-6)
        gen = torch.Generator().manual_seed(rngs.child("perturb").seed)
        with torch_seeded(rngs.child("torch").seed):
            for q in range(cfg.num_queries):
                # Spread the strength over (0, max]: a margin shows as survival at large scales.
                level = (q + 1) / cfg.num_queries
                xp = x.clone()
                noise = torch.randn(len(cands), x.shape[1], generator=gen)
                xp[idx] = x[idx] + level * cfg.noise_scale * std * noise
                keep = torch.rand(edges.shape[1], generator=gen) >= level * cfg.edge_drop
                hits += (target.query_labels(xp, edges[:, keep])[idx] == ref).double()
        scores = (hits / (cfg.num_queries + 1)).numpy()
        return AttackScores(scores, notes=(
            f"label-only: {cfg.num_queries} perturbed queries (feature noise <= "
            f"{cfg.noise_scale:g} std, edge drop <= {cfg.edge_drop:g}), agreement with the "
            f"{cfg.reference.replace('_', ' ')}",))
