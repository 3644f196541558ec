"""Topology inference attacks (TIAs) against edge-DP GNNs: M-TIA, C-TIA and I-TIA (CCS 2025;
authors' code ``JeffffffFu/PGR``, ``TIAs/``).

The adversary attacks dense parts of the private graph: a few BFS-grown subgraphs of about
``subgraph_size`` nodes (``TIAs/util.py``: 5 subgraphs of 100 nodes), and scores every pair
inside them. Three scorers:

* **metric** (M-TIA): similarity of the two nodes' posteriors in the served graph, as minus
  a distance (``cosine``, ``chebyshev`` or ``euclidean``; the paper keeps the best of the
  three per subgraph, which picks on the truth, so graphleaks makes it a parameter);
* **classifier** (C-TIA): a logistic regression on pair features of the posteriors (|p_u −
  p_v|, p_u ⊙ p_v and the three distances), trained on the adversary's auxiliary subgraph,
  whose edges it knows and whose nodes it queries in the served graph;
* **influence** (I-TIA): LinkTeller-style influence of one node's features on the other's
  logits through the inference API, symmetrised by the maximum.

The truth is the private (training) graph, as for LinkTeller; report TPL per subgraph
(:func:`graphleaks.metrics.topology.topology_leakage`) beside AUC.

Threat model: black box; posteriors (metric, classifier) or feature queries (influence);
node features; auxiliary data with its edges (classifier).

Example:
    >>> from graphleaks.audit.runner import train_target
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.attacks.harness import run_attack
    >>> t = train_target(tiny_graph(), seed=0)
    >>> r = run_attack(TIA(n_subgraphs=1, subgraph_size=8, min_size=4), t, seed=0)
    >>> r.scores.shape == r.labels.shape
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphleaks.attacks._pairs import (
    edge_keys,
)
from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    Challenge,
    Output,
    SubgraphPairsSpec,
    TargetView,
    Task,
    ThreatModel,
)
from graphleaks.attacks.linkteller import influence_matrix
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.seeding import Rngs

VARIANTS = ("metric", "classifier", "influence")
DISTANCES = ("cosine", "chebyshev", "euclidean")


@dataclass(frozen=True)
class TIAConfig:
    """Parameters of :class:`TIA`.

    Attributes:
        variant: ``metric`` (M-TIA), ``classifier`` (C-TIA) or ``influence`` (I-TIA).
        distance: Posterior distance of M-TIA.
        n_subgraphs: Number of BFS subgraphs attacked (paper: 5).
        subgraph_size: Nodes per subgraph (paper: 100).
        min_size: Smallest accepted subgraph (a BFS that stops earlier is redrawn).
        influence: Relative feature perturbation Δ of I-TIA.
    """

    variant: str = field(default="metric", metadata={"choices": VARIANTS})
    distance: str = field(default="cosine", metadata={"choices": DISTANCES})
    n_subgraphs: int = field(default=5, metadata={"range": (1, 1000)})
    subgraph_size: int = field(default=100, metadata={"range": (2, 10_000)})
    min_size: int = field(default=10, metadata={"range": (2, 10_000)})
    influence: float = field(default=1e-4, metadata={"range": (0.0, None), "closed": "neither"})


def pair_distance(p: np.ndarray, q: np.ndarray, kind: str) -> np.ndarray:
    """Row-wise distance between posterior rows."""
    if kind == "cosine":
        num = (p * q).sum(1)
        den = np.linalg.norm(p, axis=1) * np.linalg.norm(q, axis=1)
        return 1.0 - num / np.maximum(den, 1e-12)
    if kind == "chebyshev":
        return np.abs(p - q).max(1)
    return np.linalg.norm(p - q, axis=1)


def pair_features(post: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """C-TIA features of node pairs from their posteriors (symmetric in the pair)."""
    p, q = post[pairs[:, 0]], post[pairs[:, 1]]
    dists = [pair_distance(p, q, k)[:, None] for k in DISTANCES]
    return np.hstack([np.abs(p - q), p * q, *dists])


class TIA(Attack):
    """M-TIA / C-TIA / I-TIA topology inference on BFS subgraphs (module docstring)."""

    name = "tia"
    task = Task.LINK
    threat_model = ThreatModel(
        access="blackbox", outputs=frozenset({Output.POSTERIORS, Output.FEATURE_QUERIES}),
        feature_knowledge=True, shadow_data="disjoint_subgraph",
    )
    Config = TIAConfig

    def unused_fields(self) -> dict[str, str]:
        """Fields the chosen variant does not read (recorded as None, refused if set)."""
        v = self.config.variant
        out: dict[str, str] = {}
        if v != "metric":
            out["distance"] = f"distance scores only variant='metric'; variant={v!r} is chosen"
        if v != "influence":
            out["influence"] = (f"influence (Δ) perturbs only variant='influence'; "
                                f"variant={v!r} is chosen")
        return out

    def check_scale(self, num_nodes: int, num_edges: int) -> None:
        """Refuse, before any training, a graph with no room for one BFS subgraph of
        ``min_size`` nodes (that many nodes, joined by at least ``min_size - 1`` edges).

        Raises:
            InvalidConfigError: Naming the sizes and the parameter to lower.
        """
        m = self.config.min_size
        if num_nodes < m or num_edges < m - 1:
            raise InvalidConfigError(
                f"tia: its subgraphs need at least min_size={m} connected nodes, and the "
                f"graph has {num_nodes} nodes and {num_edges} directed edges; lower "
                f"--param tia.min_size (and tia.subgraph_size) or audit a larger graph")

    def challenge_spec(self) -> SubgraphPairsSpec:
        """All pairs inside each of ``n_subgraphs`` BFS subgraphs of the private graph."""
        cfg = self.config
        return SubgraphPairsSpec(n_subgraphs=cfg.n_subgraphs, subgraph_size=cfg.subgraph_size,
                                 min_size=cfg.min_size)

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        pairs = np.asarray(challenge.candidates, dtype=np.int64).reshape(-1, 2)
        if cfg.variant == "influence":
            target.require(Output.FEATURE_QUERIES)
            nodes, inv = np.unique(pairs, return_inverse=True)
            inv = inv.reshape(-1, 2)
            m = influence_matrix(target.query_features_rows, target.features().float(), nodes,
                                 delta=cfg.influence)
            s = np.maximum(m[inv[:, 0], inv[:, 1]], m[inv[:, 1], inv[:, 0]]).astype(np.float64)
            return AttackScores(np.nan_to_num(s, nan=0.0, posinf=0.0),
                                notes=(f"I-TIA: influence, Δ={cfg.influence}",))
        target.require(Output.POSTERIORS)
        post = target.posteriors(np.arange(target.num_nodes)).double().numpy()
        if cfg.variant == "metric":
            s = -pair_distance(post[pairs[:, 0]], post[pairs[:, 1]], cfg.distance)
            return AttackScores(s, notes=(f"M-TIA: minus {cfg.distance} distance of the "
                                          "posteriors",))
        return AttackScores(self._classifier(target, post, pairs, rngs),
                            notes=("C-TIA: logistic regression on posterior pair features, "
                                   "trained on the auxiliary subgraph's known edges",))

    def _classifier(self, target: TargetView, post: np.ndarray, pairs: np.ndarray,
                    rngs: Rngs) -> np.ndarray:
        population, aux = target.population()
        aux = np.asarray(aux, dtype=np.int64)
        n_aux = len(aux)
        pos = edge_keys(population.edge_index, n_aux)
        if len(pos) == 0:
            raise DataError("the auxiliary subgraph has no edges to train C-TIA on")
        rng = rngs.child("negatives").numpy
        neg = rng.integers(0, n_aux, (4 * len(pos), 2))
        neg = neg[neg[:, 0] != neg[:, 1]]
        neg_keys = np.minimum(neg[:, 0], neg[:, 1]) * n_aux + np.maximum(neg[:, 0], neg[:, 1])
        neg = neg[~np.isin(neg_keys, pos)][: len(pos)]
        local = np.vstack([np.stack([pos // n_aux, pos % n_aux], 1), neg])
        y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
        # imported here: scikit-learn costs ~0.7 CPU-s of start-up that every process
        # importing the attack registry paid, C-TIA or not
        from sklearn.linear_model import LogisticRegression

        clf = LogisticRegression(max_iter=1000)
        clf.fit(pair_features(post, aux[local]), y)
        return clf.decision_function(pair_features(post, pairs)).astype(np.float64)
