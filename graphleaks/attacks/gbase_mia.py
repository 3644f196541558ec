"""G-BASE: the Bayes-optimal node membership score that accounts for the graph (Lassila et al.,
"Practical Bayes-optimal membership inference attacks", NeurIPS 2025,
https://arxiv.org/abs/2505.24089, §4).

A GNN's training loss couples a node with its neighbours, so the Bayes-optimal score of node
``v`` depends on which other nodes were members. G-BASE takes the expectation over sampled
membership masks ``M`` of the other nodes: with ``G_in`` the ``2L``-hop ball of ``v`` in the
graph induced by ``M ∪ {v}`` (L message-passing layers) and ``G_out = G_in − v``,

.. math::

    s_M(v) = Δ_θ(v) - a \\cdot \\log \\frac{1}{K}\\sum_k \\exp Δ_{θ_k}(v) + \\log\\frac{π}{1-π},
    \\qquad Δ_θ(v) = -\\mathcal{L}_θ(G_{in}) + \\mathcal{L}_θ(G_{out}),

where ``L_θ(G)`` is the summed cross-entropy of the nodes of ``G`` (the log of the Gibbs
likelihood). The score is ``logit E_M[σ(s_M(v))]``. Masks are drawn either uniformly
(``sampling="random"``, each node with probability ``frac``) or from the zero-hop BASE
membership probabilities (``sampling="base"``, the paper's practical choice); the adversary's
population nodes are known non-members and never enter a mask.

The references are BASE's (:mod:`graphleaks.attacks.base_mia`): trained offline on halves of
the population, or online on halves of ``population ∪ candidates``. With ``tune_scale`` the
offline ``a`` is chosen as the authors' audit chooses it, by the AUC of G-BASE itself against
reference 0 as a simulated target (:mod:`graphleaks.attacks._references`): its candidates are
population nodes (at most ``len(candidates)``), its masks come from zero-hop BASE with BASE's
tuned ``a``, each node is scored with the references 2..K−1 it is OUT of, and the chosen
``a`` then serves both the score and the zero-hop sampler (one factor, as in their code).

Threat model: the target is queried on subgraphs the adversary submits
(``FEATURE_QUERIES``: it needs the model's loss on ``G_in`` and ``G_out``); the adversary
knows the query graph's edges, all nodes' features and labels, auxiliary data and the
architecture. Cost: ``num_samples × (1 + K)`` batched forward passes per chunk of candidates.

Example:
    >>> from graphleaks.audit.runner import train_target
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.attacks.harness import run_attack
    >>> from graphleaks.models.gnn import ArchitectureSpec
    >>> t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=20))
    >>> r = run_attack(GBASEMIA(num_references=2, ref_epochs=20, num_samples=2), t, seed=0)
    >>> r.scores.shape == r.labels.shape
    True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F

from graphleaks.attacks._references import (
    ReferenceConfig,
    References,
    log_mean_exp,
    masked_log_mean_exp,
    scale_fields,
    simulated_offline,
    train_references,
    tune_scale,
)
from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    Challenge,
    Output,
    TargetView,
    Task,
)
from graphleaks.attacks.base_mia import simulated_base_scale
from graphleaks.attacks.capabilities import Capability
from graphleaks.attacks.lira_mia import LiRAMIA
from graphleaks.seeding import Rngs

Model = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class GBASEMIAConfig(ReferenceConfig):
    """Parameters of :class:`GBASEMIA` (with the reference budget of :class:`ReferenceConfig`).

    Attributes:
        offline_scale: The factor ``a`` on the reference term in the offline variant (and in
            the zero-hop BASE sampler); BASE's offline default 0.7, as in the authors' code,
            where G-BASE and its zero-hop BASE share one ``threshold_scale_factor``.
        prior: Prior membership probability π.
        sampling: ``base`` (masks from zero-hop BASE probabilities) or ``random``.
        frac: Inclusion probability of each node under ``random`` sampling.
        num_samples: Sampled membership masks (the expectation's Monte Carlo size).
        chunk: Candidates evaluated in one batched forward pass.
        tune_scale: Offline with 3 or more references only: choose ``a`` by G-BASE's AUC on
            a simulated target, as the authors' audit does; ``offline_scale`` is then unused.
    """

    offline_scale: float = field(default=0.7, metadata={"range": (0.0, 1.0)})
    prior: float = field(default=0.5, metadata={"range": (0.0, 1.0), "closed": "neither"})
    sampling: str = field(default="base", metadata={"choices": ("base", "random")})
    frac: float = field(default=0.5, metadata={"range": (0.0, 1.0)})
    num_samples: int = field(default=4, metadata={"range": (1, 10_000)})
    chunk: int = field(default=64, metadata={"range": (1, 100_000)})
    tune_scale: bool = False


def ball(adj: sp.csr_matrix, allowed: np.ndarray, v: int, hops: int) -> np.ndarray:
    """Nodes within ``hops`` of ``v`` in the graph induced by ``allowed`` (``v`` first).

    The centre comes first, then each hop's new nodes in increasing id order (one ball of
    :func:`balls`).
    """
    return balls(adj, allowed, np.array([v]), hops)[0]


#: Balls searched together share one visited bitmask per node: one bit per ball.
_BALLS_PER_GROUP = 64


def balls(adj: sp.csr_matrix, allowed: np.ndarray, centres: np.ndarray, hops: int
          ) -> list[np.ndarray]:
    """:func:`ball` of every centre, searched together.

    The breadth-first searches of up to 64 centres advance hop by hop as one: each hop
    gathers the whole frontier's CSR rows at once, and one ``uint64`` per node holds a
    visited bit per ball. The former search ran per ball, zeroed an N-sized visited array
    for each (40 % of G-BASE's time at 1M nodes) and looped in Python over the frontier's
    rows; this one allocates one N-sized bitmask per 64 balls and returns the same nodes in
    the same order.

    Args:
        adj: Symmetric CSR adjacency.
        allowed: Which nodes may enter a ball (a centre always does).
        centres: The centres, one ball each.
        hops: Radius.

    Returns:
        One array per centre: the centre, then each hop's new nodes in increasing id order.
    """
    centres = np.asarray(centres, dtype=np.int64)
    if len(centres) > _BALLS_PER_GROUP:
        return [b for lo in range(0, len(centres), _BALLS_PER_GROUP)
                for b in balls(adj, allowed, centres[lo:lo + _BALLS_PER_GROUP], hops)]
    if not len(centres):
        return []
    n = adj.shape[0]
    indptr, indices = adj.indptr, adj.indices
    bit = np.left_shift(np.uint64(1), np.arange(len(centres), dtype=np.uint64))
    visited = np.zeros(n, dtype=np.uint64)
    owner, frontier = np.arange(len(centres), dtype=np.int64), centres
    np.bitwise_or.at(visited, frontier, bit[owner])
    layers = [owner * n + frontier]
    for _ in range(hops):
        if not len(frontier):
            break
        slots, deg = csr_slots(indptr, frontier)
        o, v = np.repeat(owner, deg), indices[slots].astype(np.int64)
        new = allowed[v] & ((visited[v] & bit[o]) == 0)
        # unique (ball, node) keys, sorted by ball then node: each hop's order in ``ball``
        keys = np.unique(o[new] * n + v[new])
        owner, frontier = np.divmod(keys, n)
        np.bitwise_or.at(visited, frontier, bit[owner])
        layers.append(keys)
    # each layer is sorted by (ball, node): a stable sort by ball keeps hop, then node order
    every = np.concatenate(layers)
    owner, node = np.divmod(every, n)
    order = np.argsort(owner, kind="stable")
    ends = np.cumsum(np.bincount(owner, minlength=len(centres)))
    return np.split(node[order], ends[:-1])


def csr_slots(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in a CSR ``indices`` array of every entry of ``rows``, row by row.

    One vectorised gather in place of a Python loop of ``indptr[u]:indptr[u + 1]`` slices.

    Returns:
        The positions, and each row's entry count.
    """
    starts = indptr[rows].astype(np.int64)
    deg = indptr[rows + 1].astype(np.int64) - starts
    first = np.cumsum(deg) - deg
    return np.arange(int(deg.sum()), dtype=np.int64) + np.repeat(starts - first, deg), deg


def batched_pairs(adj: sp.csr_matrix, balls: list[np.ndarray]
                  ) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
    """Disjoint union of every ball (``G_in``) and the ball without its centre (``G_out``).

    The induced edges of all parts are found at once: every union node's neighbours are
    looked up in a sorted table of ``(part, global id)`` keys. Slicing ``adj[part][:, part]``
    per part (the former way) cost about 70 % of G-BASE's CPU in scipy's per-call overhead.
    Edges come out in the order that slicing gave (rows in part order, each row's neighbours
    in ``adj``'s order), so the scores are unchanged bit for bit.

    Returns:
        Global node id of each union node, its graph id (``2i`` in, ``2i + 1`` out for ball
        ``i``), and the union's edge index.
    """
    parts = [p for b in balls for p in (b, b[1:])]
    sizes = np.array([len(p) for p in parts], dtype=np.int64)
    nodes = np.concatenate(parts).astype(np.int64)
    gid = np.repeat(np.arange(len(parts), dtype=np.int64), sizes)
    slots, deg = csr_slots(adj.indptr, nodes)
    rows = np.repeat(np.arange(len(nodes), dtype=np.int64), deg)
    nbr = adj.indices[slots].astype(np.int64)
    n = adj.shape[0]
    keys = gid * n + nodes
    order = np.argsort(keys)
    table = keys[order]
    query = gid[rows] * n + nbr
    at = np.minimum(np.searchsorted(table, query), len(table) - 1)
    hit = table[at] == query
    ei = torch.as_tensor(np.vstack([rows[hit], order[at[hit]]]), dtype=torch.long)
    return nodes, torch.as_tensor(gid), ei


@torch.no_grad()
def loss_gaps(model: Model, x: torch.Tensor, y: torch.Tensor, nodes: np.ndarray,
              gid: torch.Tensor, ei: torch.Tensor, n_balls: int) -> np.ndarray:
    """``Δ(v) = −L(G_in) + L(G_out)`` for every ball, from one forward pass on the union."""
    idx = torch.as_tensor(nodes, dtype=torch.long)
    ce = F.cross_entropy(model(x[idx], ei).double(), y[idx], reduction="none")
    per_graph = torch.zeros(2 * n_balls, dtype=torch.float64).index_add_(0, gid, ce)
    return (per_graph[1::2] - per_graph[0::2]).numpy()


def sampled_gaps(models: list[Model], x: torch.Tensor, y: torch.Tensor, adj: sp.csr_matrix,
                 incl: np.ndarray, nodes: np.ndarray, *, hops: int, num_samples: int,
                 chunk: int, rng: np.random.Generator) -> np.ndarray:
    """``[num_samples, len(models), len(nodes)]``: Δ of every node under every model, for
    membership masks drawn with per-node probabilities ``incl`` (one mask per sample)."""
    out = np.empty((num_samples, len(models), len(nodes)))
    for s in range(num_samples):
        mask = rng.random(len(incl)) < incl
        for lo in range(0, len(nodes), chunk):
            part = nodes[lo:lo + chunk]
            # every model is sent the same union tensor: GCN models normalise it once
            # between them (graphleaks.models.gnn shares matrices per edge_index tensor)
            union, gid, uei = batched_pairs(adj, balls(adj, mask, part, hops))
            out[s, :, lo:lo + len(part)] = np.stack(
                [loss_gaps(m, x, y, union, gid, uei, len(part)) for m in models])
    return out


def expected_log_odds(samples: np.ndarray) -> np.ndarray:
    """``logit E[σ(s)]`` over the first axis, in log space so confident nodes stay ranked."""
    log_in = log_mean_exp(-np.logaddexp(0.0, -samples), 0)
    log_out = log_mean_exp(-np.logaddexp(0.0, samples), 0)
    return log_in - log_out


@torch.no_grad()
def zero_hop_log_true_class(model: Model, x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """Log posterior of every node's label under ``model`` with no edges (a 0-hop query)."""
    empty = torch.empty(2, 0, dtype=torch.long)
    return (torch.log_softmax(model(x, empty).double(), 1).gather(1, y.view(-1, 1)).view(-1)
            .numpy())


class GBASEMIA(Attack):
    """G-BASE with Monte Carlo membership masks, see the module docstring."""

    name = "gbase_mia"
    task = Task.MEMBERSHIP
    requires = frozenset({Output.FEATURE_QUERIES})
    # LiRA's knowledge, but the target answers queries on submitted subgraphs.
    threat_model = dataclasses.replace(LiRAMIA.threat_model,
                                       outputs=frozenset({Output.FEATURE_QUERIES}))
    Config = GBASEMIAConfig

    def needs(self) -> frozenset[Capability]:
        """The threat model's needs; zero-hop queries unless inclusion is sampled at random."""
        needs = super().needs()
        if self.config.sampling != "random":  # the BASE sampler queries the edgeless graph
            needs |= {Capability.GRAPH_QUERIES}
        return needs

    def query_cost(self, num_nodes: int, num_edges: int) -> int:
        """Submitted subgraphs: one per sampled mask and chunk of candidates (at most every
        node a candidate), plus the zero-hop query of the BASE sampler."""
        del num_edges
        cfg = self.config
        chunks = -(-int(num_nodes) // int(cfg.chunk))
        return int(cfg.num_samples) * chunks + int(cfg.sampling != "random")

    def unused_fields(self) -> dict[str, str]:
        """Fields the variant and sampling do not read (recorded None, refused if set)."""
        cfg = self.config
        out = scale_fields(cfg.variant, cfg.num_references, cfg.tune_scale)
        if self.config.sampling != "random":
            out["frac"] = "frac is the inclusion probability of sampling='random' only"
        return out

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        online = cfg.variant == "online"
        cands = np.asarray(challenge.candidates, dtype=np.int64)
        n = target.num_nodes
        y = target.true_labels(np.arange(n))
        refs = train_references(target, cands, y[torch.as_tensor(cands)],
                                num=cfg.num_references, online=online,
                                max_epochs=cfg.ref_epochs, rngs=rngs)
        scale = 1.0 if online else cfg.offline_scale
        log_prior = math.log(cfg.prior / (1.0 - cfg.prior))
        ei = refs.edges
        adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0].numpy(), ei[1].numpy())),
                            shape=(n, n))
        adj = ((adj + adj.T) > 0).astype(np.float64).tocsr()
        hops = 2 * (len(target.architecture().hidden) + 1)
        how = ""
        if "tune_scale" not in self.unused_fields() and cfg.tune_scale:
            scale, sim_auc = self._tuned_scale(refs, y, adj, hops, log_prior, len(cands),
                                               rngs.child("tune").numpy)
            how = f" (tuned: simulated-target AUC {sim_auc:.3f})"
        incl = self._inclusion(target, refs, y, scale, log_prior)
        models: list[Model] = [target.query, *refs.models]
        gaps = sampled_gaps(models, refs.x, y, adj, incl, cands, hops=hops,
                            num_samples=cfg.num_samples, chunk=cfg.chunk,
                            rng=rngs.child("masks").numpy)
        samples = gaps[:, 0] - scale * log_mean_exp(gaps[:, 1:], 1) + log_prior
        return AttackScores(expected_log_odds(samples), threshold=0.0, notes=(
            f"G-BASE {cfg.variant}, {cfg.num_references} reference model(s) (<= "
            f"{cfg.ref_epochs} epochs), {cfg.num_samples} '{cfg.sampling}' membership masks, "
            f"{hops}-hop balls, scale a={scale:g}{how}; target queried on submitted subgraphs",
            *refs.notes))

    def _tuned_scale(self, refs: References, y: torch.Tensor, adj: sp.csr_matrix, hops: int,
                     log_prior: float, size: int, rng: np.random.Generator
                     ) -> tuple[float, float]:
        """G-BASE's offline ``a`` by its AUC on reference 0 as a simulated target.

        Returns:
            The chosen ``a`` and its simulated AUC.
        """
        cfg = self.config
        pop = refs.population
        nodes = np.sort(rng.choice(pop, min(size, len(pop)), replace=False))
        members, out = simulated_offline(refs, nodes)
        keep = out.any(0)
        nodes, members, out = nodes[keep], members[keep], out[:, keep]
        sim_target, sim_refs = refs.models[0], list(refs.models[2:])
        # The simulated target trained on population nodes only: nothing else enters a mask.
        incl = np.zeros(len(y))
        if cfg.sampling == "random":
            incl[pop] = cfg.frac
        else:
            a0, _ = simulated_base_scale(refs)
            lt = zero_hop_log_true_class(sim_target, refs.x, y)[pop]
            lr = np.stack([zero_hop_log_true_class(m, refs.x, y)[pop] for m in sim_refs])
            _, pop_out = simulated_offline(refs, pop)
            has = pop_out.any(0)
            s0 = lt - a0 * np.where(has, masked_log_mean_exp(lr, pop_out), 0.0) + log_prior
            incl[pop] = np.where(has, 1.0 / (1.0 + np.exp(-s0)), 0.5)
        gaps = sampled_gaps([sim_target, *sim_refs], refs.x, y, adj, incl, nodes, hops=hops,
                            num_samples=cfg.num_samples, chunk=cfg.chunk, rng=rng)
        lme = np.stack([masked_log_mean_exp(g[1:], out) for g in gaps])

        def score_at(a: float) -> np.ndarray:
            return expected_log_odds(gaps[:, 0] - a * lme + log_prior)

        return tune_scale(score_at, members.astype(np.int64))

    def _inclusion(self, target: TargetView, refs: References, y: torch.Tensor, scale: float,
                   log_prior: float) -> np.ndarray:
        """Per-node probability of entering a sampled mask (0 for known non-members)."""
        n = target.num_nodes
        if self.config.sampling == "random":
            p = np.full(n, self.config.frac)
        else:
            # Zero-hop BASE probabilities, as the paper's practical sampler.
            empty = torch.empty(2, 0, dtype=torch.long)
            with torch.no_grad():
                lt = (torch.log_softmax(target.query(refs.x, empty).double(), 1)
                      .gather(1, y.view(-1, 1)).view(-1).numpy())
                lr = np.stack([torch.log_softmax(m(refs.x, empty).double(), 1)
                               .gather(1, y.view(-1, 1)).view(-1).numpy()
                               for m in refs.models])
            p = 1.0 / (1.0 + np.exp(-(lt - scale * log_mean_exp(lr, 0) + log_prior)))
        p[refs.population] = 0.0
        return p
