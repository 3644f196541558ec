"""Reference link predictors for edge-level LiRA and RMIA, trained on halves of the candidates.

The adversary knows the candidate pairs (not which are members) and the public part of the
graph (``known_edges``: the served graph's edges that are not candidates). Each reference is a
link predictor of the target's architecture (or a stated surrogate) trained from scratch:

* **online**: on ``known_edges ∪ H_r``, where ``H_r`` is a random half of the candidates
  drawn in complementary pairs (Carlini et al.'s "random halves"), so each candidate is IN
  exactly half of the references (a non-edge candidate is inserted as an edge: the world in
  which it was a training edge);
* **offline**: on ``known_edges`` only (every candidate OUT), each with its own seed.

A reference is served as the target is: on its own training graph, minus the queried pairs
when the target's protocol drops them. References train as the target's spec says (full-batch
up to ``batch_size`` member edges, mini-batches of that many beyond) with uniform negatives
for at most ``ref_epochs`` epochs, without early stopping (no validation pairs exist that
are not candidates). One :class:`EdgeReferencePool` per audit shares them between attacks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from graphleaks._progress import progress
from graphleaks.attacks.edge_membership.base import LinkTargetView
from graphleaks.attacks.lira_mia import _paired_halves
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.data.pairs import contains, pair_keys
from graphleaks.models.link_predictor import (
    LinkPredictor,
    LinkPredictorSpec,
    link_scores,
    train_link_predictor,
)
from graphleaks.seeding import derive_seed, torch_seeded


@dataclass(frozen=True)
class EdgeReferences:
    """Trained references and what each saw.

    Attributes:
        models: The reference link predictors.
        graphs: Each reference's training graph ``[E_r, 2]`` (its served graph).
        inside: ``[num_references, K]``: candidate ``k`` was a training edge of reference r.
        candidates: The candidate pairs ``[K, 2]``.
        notes: How they were trained (for the report).
    """

    models: tuple[LinkPredictor, ...]
    graphs: tuple[np.ndarray, ...]
    inside: np.ndarray
    candidates: np.ndarray
    notes: tuple[str, ...]
    #: Logits already computed, by (features, pairs, drop flag): edge LiRA and RMIA score the
    #: same candidates under the same shared references, and each reference's scoring is a
    #: full encoder pass over its graph (seconds per reference at 1M nodes).
    _memo: dict[tuple[object, ...], tuple[torch.Tensor, np.ndarray]] = field(
        default_factory=dict, compare=False, repr=False)

    def logits(self, x: torch.Tensor, pairs: np.ndarray, *, drop_queried: bool) -> np.ndarray:
        """``[num_references, P]`` logits of ``pairs`` under every reference, each served on
        its own training graph (minus the queried pairs when ``drop_queried``)."""
        p = np.ascontiguousarray(pairs, dtype=np.int64)
        key = (id(x), x._version, tuple(x.shape), p.shape,
               hashlib.sha256(p.tobytes()).hexdigest(), drop_queried)
        hit = self._memo.get(key)
        if hit is None or hit[0] is not x:  # the tensor itself is kept: an id is never reused
            hit = (x, self._logits(x, p, drop_queried=drop_queried))
            self._memo[key] = hit
        return hit[1].copy()

    def _logits(self, x: torch.Tensor, pairs: np.ndarray, *, drop_queried: bool) -> np.ndarray:
        n = int(x.shape[0])
        out = np.empty((len(self.models), len(pairs)))
        qkeys = np.unique(pair_keys(pairs, n)) if drop_queried else None
        for r, (model, graph) in enumerate(zip(self.models, self.graphs, strict=True)):
            g = graph
            if qkeys is not None:
                g = graph[~contains(qkeys, pair_keys(graph, n))]
            t = torch.from_numpy(np.ascontiguousarray(g, dtype=np.int64)).reshape(-1, 2).t()
            ei = torch.cat([t, t.flip(0)], dim=1).to(x.device)
            out[r] = link_scores(model, x, ei, pairs)
        return out


@dataclass
class EdgeReferencePool:
    """References of one audit, shared by every attack with the same configuration.

    Attributes:
        seed: Root seed of the references (independent of which attack asks first).
    """

    seed: int
    _cache: dict[tuple[object, ...], EdgeReferences] = field(default_factory=dict)

    def get(self, view: LinkTargetView, candidates: np.ndarray, known_edges: np.ndarray, *,
            num: int, online: bool, ref_epochs: int) -> EdgeReferences:
        """The references of this configuration (trained on first use)."""
        key = (num, online, ref_epochs, candidates.tobytes(), known_edges.tobytes())
        if key not in self._cache:
            self._cache[key] = train_edge_references(
                view, candidates, known_edges, num=num, online=online, ref_epochs=ref_epochs,
                seed=self.seed)
        return self._cache[key]


def train_edge_references(
    view: LinkTargetView, candidates: np.ndarray, known_edges: np.ndarray, *, num: int,
    online: bool, ref_epochs: int, seed: int,
) -> EdgeReferences:
    """Train ``num`` reference link predictors (see the module docstring)."""
    x = view.features()
    spec, source = view.architecture()
    spec = replace(spec, epochs=min(spec.epochs, ref_epochs), patience=0)
    n = view.num_nodes
    rng = np.random.default_rng(derive_seed(seed, "halves"))
    k = len(candidates)
    inside = np.zeros((num, k), dtype=bool)
    if online:
        halves = _paired_halves(k, num, rng)
        for r, h in enumerate(halves):
            inside[r, h] = True
    models: list[LinkPredictor] = []
    graphs: list[np.ndarray] = []
    for r in progress(range(num), desc="reference link predictors"):
        train = np.concatenate([known_edges, candidates[inside[r]]]) if online else known_edges
        graphs.append(train)
        models.append(_train_one(x, train, n, spec, seed=derive_seed(seed, "reference", r)))
    variant = "online" if online else "offline"
    what = ("known edges ∪ a random half of the candidates (complementary pairs: each "
            "candidate IN half of them)" if online else "the known edges only (every "
            "candidate OUT)")
    notes = (f"{num} {variant} reference link predictors ({source}; <= {spec.epochs} epochs, "
             f"no early stopping) trained on {what}",)
    return EdgeReferences(tuple(models), tuple(graphs), inside, candidates, notes)


def _train_one(x: torch.Tensor, train: np.ndarray, n: int, spec: LinkPredictorSpec, *,
               seed: int) -> LinkPredictor:
    empty = np.empty((0, 2), dtype=np.int64)
    split = EdgeMembershipSplit.from_pairs(n, train, empty, empty, seed=seed,
                                           source="reference training edges")
    with torch_seeded(derive_seed(seed, "init")):
        model = LinkPredictor(int(x.shape[1]), spec).to(x.device)
    train_link_predictor(model, x, split, lr=spec.lr, weight_decay=spec.weight_decay,
                         epochs=spec.epochs, patience=0, seed=derive_seed(seed, "train"),
                         negatives_per_positive=spec.negatives_per_positive,
                         edge_dropout=spec.edge_dropout, batch_size=spec.batch_size)
    return model


__all__ = ["EdgeReferencePool", "EdgeReferences", "train_edge_references"]
