"""Edge-membership splits: which edges trained a link predictor, which were held out.

The private unit is an edge (an interaction). The undirected edges of a graph are split into

* **members**: training edges, seen by the target as loss positives *and* in message passing;
* **validation** edges and non-edges: early stopping only (neither members nor candidates);
* **held-out edges**: true edges the target never saw, the hard **non-members**;
* **held-out non-edges**: pairs that are not edges of the graph, the easy **non-members**,
  drawn ``negatives_per_positive`` per held-out edge.

The protocol choices an edge audit depends on are config fields, stated in :meth:`record`:

``kind``
    ``transductive``: every node is in the training graph; held-out edges join training
    nodes. ``inductive``: a random ``held_out_node_frac`` of the nodes is held out with all
    its edges; members and validation edges lie among the other nodes, held-out edges and
    non-edges among the held-out nodes, edges between the two parts are dropped, and the
    held-out part's remaining edges (*context* edges, neither members nor candidates) are
    in the inference graph only.
``member_edges_in_inference_graph``
    True: the target is served with the graph it trained on, member edges included (the
    production setting: a known interaction is in the graph). False: the pairs an
    adversary queries are dropped from the inference graph before scoring, so a member
    edge is never visible through message passing and a score measures what the weights
    memorised.
``non_member_sampling``
    ``uniform``: held-out non-edges are uniform among non-edges. ``degree_matched``: each
    endpoint is drawn with probability proportional to its degree (the endpoint law of a
    random edge; members are a uniform sample of the edges, so this is also the endpoint
    degree law of the member edges), so degree alone does not tell held-out edges from
    non-edges. Validation non-edges are always uniform (a training choice, like the
    trainer's negatives).
``bipartite``
    User–item graphs (``node_type`` 0 user, 1 item): every drawn non-edge, held-out and
    validation alike, joins one user and one item, under either sampling (degree-matched:
    the user in proportion to its degree among users, the item among items). Without it a
    uniform non-edge of a user–item graph is often a user–user pair, which no model would
    ever score as an interaction: a give-away, not a non-member. Front ends (``graphleaks
    train --task link``, audit specs) turn it on by default for a graph with ``node_type``
    (:func:`split_params_for_graph`); an explicit ``bipartite=False`` is kept.

Edges are sorted int64 pair keys (:mod:`graphleaks.data.pairs`); non-edges are drawn by
rejection against them, so memory is O(edges), never N×N.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from graphleaks._arrays import unique_sorted
from graphleaks._validation import validate
from graphleaks.data.pairs import contains, edge_keys, keys_to_pairs, pair_keys, sample_non_edges
from graphleaks.errors import DataError, InvalidConfigError

EDGE_SPLIT_KINDS = ("transductive", "inductive")
NON_MEMBER_SAMPLING = ("uniform", "degree_matched")
#: The pair lists of a split, in the order overlaps are checked and reported.
PAIR_LISTS = ("members", "val_edges", "val_non_edges", "held_out_edges", "held_out_non_edges")
_LIST_NAMES = {
    "members": "member edges", "val_edges": "validation edges",
    "val_non_edges": "validation non-edges", "held_out_edges": "held-out edges",
    "held_out_non_edges": "held-out non-edges", "context_edges": "context edges",
}

#: Candidate kinds returned by :meth:`EdgeMembershipSplit.candidates`.
MEMBER, HELD_OUT_EDGE, HELD_OUT_NON_EDGE = 0, 1, 2


@dataclass(frozen=True)
class EdgeSplitConfig:
    """How to draw an edge-membership split (see the module docstring for the protocol).

    Attributes:
        kind: ``transductive`` (default) or ``inductive``.
        val_frac: Fraction of the training part's edges kept for early stopping.
        test_frac: Fraction of the candidate part's edges held out (all edges in
            ``transductive``, the held-out nodes' edges in ``inductive``).
        held_out_node_frac: ``inductive`` only: fraction of the nodes held out.
        non_member_sampling: ``uniform`` or ``degree_matched`` held-out non-edges.
        negatives_per_positive: Held-out (and validation) non-edges per held-out edge.
        member_edges_in_inference_graph: Whether queried member edges stay in the graph the
            target is served with.
        bipartite: Drawn non-edges join one user and one item (``node_type`` needed by
            :meth:`EdgeMembershipSplit.draw`).
    """

    kind: str = field(default="transductive", metadata={"choices": EDGE_SPLIT_KINDS})
    val_frac: float = field(default=0.05, metadata={"range": (0.0, 1.0), "closed": "left"})
    test_frac: float = field(default=0.10, metadata={"range": (0.0, 1.0), "closed": "neither"})
    held_out_node_frac: float = field(default=0.2,
                                      metadata={"range": (0.0, 1.0), "closed": "neither"})
    non_member_sampling: str = field(default="uniform", metadata={"choices": NON_MEMBER_SAMPLING})
    negatives_per_positive: int = field(default=1, metadata={"range": (1, 100)})
    member_edges_in_inference_graph: bool = True
    bipartite: bool = False

    def check(self) -> None:
        """Cross-field rule: in ``transductive`` the held-out and validation edges leave
        members."""
        if self.kind == "transductive" and self.val_frac + self.test_frac >= 1.0:
            raise InvalidConfigError(
                "EdgeSplitConfig val_frac + test_frac must be below 1 (members are the rest); "
                f"got {self.val_frac + self.test_frac:.3f}")


def _as_pairs(values: npt.ArrayLike, name: str, source: str, num_nodes: int) -> np.ndarray:
    """A user's pair list as ``[K, 2]`` int64, or one :class:`DataError` line.

    Messages name the list, the row and the rule, never a value read from it.
    """
    what = f"{source}: {_LIST_NAMES.get(name, name)}"
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise DataError(f"{what} are not an array of node ids; give a two-column integer "
                        "array") from None
    if arr.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise DataError(f"{what} must be a two-column array (one pair per row) of node ids; "
                        f"got a {arr.ndim}-D array of another shape")
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr).all(axis=1)
        integral = finite & (arr == np.round(np.where(np.isfinite(arr), arr, 0))).all(axis=1)
        if not integral.all():
            row = int(np.flatnonzero(~integral)[0])
            raise DataError(f"{what}: row {row} holds a node id that is not an integer; node "
                            "ids are integers")
    elif arr.dtype.kind not in "iu":
        raise DataError(f"{what} must hold integer node ids; got a non-numeric array")
    with np.errstate(invalid="ignore"):
        if arr.dtype.kind == "f":
            bad = (arr < 0) | (arr > num_nodes - 1)
        else:
            bad = (arr < 0) | (arr >= num_nodes)
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        raise DataError(f"{what}: row {row} names a node outside 0..{num_nodes - 1}; node ids "
                        "must index the graph's nodes")
    pairs = arr.astype(np.int64)
    loops = pairs[:, 0] == pairs[:, 1]
    if loops.any():
        raise DataError(f"{what}: row {int(np.flatnonzero(loops)[0])} is a self-loop; an edge "
                        "joins two distinct nodes, so drop it")
    keys = pair_keys(pairs, num_nodes)
    order = np.argsort(keys, kind="stable")
    dup = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if len(dup):
        first, second = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        raise DataError(f"{what}: rows {first} and {second} are the same undirected pair; "
                        "list each pair once")
    return pairs


@dataclass(frozen=True)
class EdgeMembershipSplit:
    """A frozen, seeded split of a graph's undirected edges into members and non-members.

    Every pair list is ``[K, 2]`` int64 with ``u < v`` for drawn splits (user-given lists keep
    their orientation). Lists are pairwise disjoint as undirected pairs.

    Attributes:
        config: The protocol it was drawn under.
        num_nodes: Number of nodes of the graph.
        members: Training edges (loss positives and message passing).
        val_edges: Early-stopping positives.
        val_non_edges: Early-stopping negatives (uniform non-edges).
        held_out_edges: True edges the target never saw (non-members).
        held_out_non_edges: Non-edges (non-members).
        context_edges: ``inductive``: the held-out part's other edges, in the inference graph
            only; empty otherwise.
        held_out_nodes: ``inductive``: the held-out nodes, sorted; empty otherwise.
        seed: The seed it was drawn with.
    """

    config: EdgeSplitConfig
    num_nodes: int
    members: np.ndarray
    val_edges: np.ndarray
    val_non_edges: np.ndarray
    held_out_edges: np.ndarray
    held_out_non_edges: np.ndarray
    context_edges: np.ndarray
    held_out_nodes: np.ndarray
    seed: int

    @classmethod
    def draw(
        cls, edge_index: torch.Tensor | np.ndarray, num_nodes: int,
        config: EdgeSplitConfig | None = None, *, seed: int,
        node_type: torch.Tensor | np.ndarray | None = None,
    ) -> EdgeMembershipSplit:
        """Draw a split of the undirected edges of ``edge_index`` uniformly at random.

        Members are a uniformly random subset of the candidate edges. Self-loops and repeated
        edges count once (undirected, loop-free).

        Args:
            edge_index: The graph.
            num_nodes: Its node count.
            config: The protocol (default :class:`EdgeSplitConfig`).
            seed: Seed of every random choice.
            node_type: Per node, 0 (user) or 1 (item); required by ``config.bipartite``,
                ignored otherwise.

        Raises:
            DataError: If the graph is too small or too dense for the requested split, or a
                bipartite split lacks a valid ``node_type``.

        Example:
            >>> from graphleaks.data import tiny_graph
            >>> g = tiny_graph()
            >>> s = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
            >>> r = s.record()
            >>> n = r["counts"]
            >>> n["members"] + n["val_edges"] + n["held_out_edges"] == g.edge_index.shape[1] // 2
            True
            >>> n["held_out_edges"], n["held_out_non_edges"]
            (16, 16)
        """
        config = validate(config or EdgeSplitConfig())
        num_nodes = int(num_nodes)
        item = _item_side(node_type, num_nodes) if config.bipartite else None
        rng = np.random.default_rng(seed)
        all_keys = edge_keys(edge_index, num_nodes)
        if len(all_keys) < 3:
            raise DataError(f"the graph has {len(all_keys)} undirected edges; an edge-membership "
                            "split needs at least 3")
        pairs = keys_to_pairs(all_keys, num_nodes)
        held_nodes = np.empty(0, dtype=np.int64)
        context = np.empty((0, 2), dtype=np.int64)
        if config.kind == "transductive":
            train_part = cand_part = pairs[rng.permutation(len(pairs))]
            n_val = int(round(config.val_frac * len(pairs)))
            n_test = max(1, int(round(config.test_frac * len(pairs))))
            held = cand_part[:n_test]
            val = train_part[n_test:n_test + n_val]
            members = train_part[n_test + n_val:]
            train_pool = cand_pool = None
        else:
            perm = rng.permutation(num_nodes)
            n_held = int(round(config.held_out_node_frac * num_nodes))
            held_nodes = np.sort(perm[:n_held])
            in_held = np.zeros(num_nodes, dtype=bool)
            in_held[held_nodes] = True
            side = in_held[pairs].sum(axis=1)  # 0: training part, 2: held-out part, 1: dropped
            train_part = pairs[side == 0][rng.permutation(int((side == 0).sum()))]
            cand_part = pairs[side == 2][rng.permutation(int((side == 2).sum()))]
            if len(cand_part) == 0:
                raise DataError("no edge lies among the held-out nodes; raise "
                                "held_out_node_frac or use a transductive split")
            n_test = max(1, int(round(config.test_frac * len(cand_part))))
            n_val = int(round(config.val_frac * len(train_part)))
            held, context = cand_part[:n_test], cand_part[n_test:]
            val, members = train_part[:n_val], train_part[n_val:]
            train_pool, cand_pool = np.flatnonzero(~in_held), held_nodes
        if len(members) == 0:
            raise DataError("the split leaves no member edge; lower val_frac or test_frac")
        k = config.negatives_per_positive
        if config.non_member_sampling == "degree_matched":
            # endpoints of the candidate part's edges: a node appears once per incident edge,
            # so a uniform draw from this pool is degree-proportional
            endpoints = (cand_part if config.kind == "inductive" else pairs).ravel()
            first, second = _sides(endpoints, item, num_nodes, "held-out non-edges")
        else:
            first, second = _sides(cand_pool, item, num_nodes, "held-out non-edges")
        held_neg = sample_non_edges(k * len(held), num_nodes, all_keys, rng, nodes=first,
                                    other=second)
        first, second = _sides(train_pool, item, num_nodes, "validation non-edges")
        val_neg = sample_non_edges(
            k * len(val), num_nodes, all_keys, rng, nodes=first, other=second,
            exclude_keys=unique_sorted(pair_keys(held_neg, num_nodes)))
        return cls(config=config, num_nodes=num_nodes, members=_sorted(members, num_nodes),
                   val_edges=_sorted(val, num_nodes), val_non_edges=_sorted(val_neg, num_nodes),
                   held_out_edges=_sorted(held, num_nodes),
                   held_out_non_edges=_sorted(held_neg, num_nodes),
                   context_edges=_sorted(context, num_nodes), held_out_nodes=held_nodes,
                   seed=int(seed))

    @classmethod
    def from_pairs(
        cls, num_nodes: int, members: npt.ArrayLike, held_out_edges: npt.ArrayLike,
        held_out_non_edges: npt.ArrayLike, *, val_edges: npt.ArrayLike = (),
        val_non_edges: npt.ArrayLike = (), edge_index: torch.Tensor | np.ndarray | None = None,
        config: EdgeSplitConfig | None = None, seed: int = 0, source: str = "edge split",
    ) -> EdgeMembershipSplit:
        """A split from the user's own pair lists, validated (transductive protocol).

        Args:
            num_nodes: Number of nodes of the graph.
            members: Training edges ``[K, 2]``.
            held_out_edges: True edges the target never saw.
            held_out_non_edges: Non-edges among the non-members.
            val_edges: Early-stopping positives (optional).
            val_non_edges: Early-stopping negatives (optional).
            edge_index: The graph, when known: members, validation and held-out edges must
                then be its edges, and non-edges must not be.
            config: Protocol record (its sampling fields describe how the user drew them).
            seed: Recorded seed.
            source: Names the input in messages (e.g. the file).

        Raises:
            DataError: One line naming the list, the row and the rule (a node out of range, a
                self-loop, a duplicate, two lists sharing a pair, an edge that is not one),
                never a value read from the lists.
        """
        config = validate(config or EdgeSplitConfig())
        num_nodes = int(num_nodes)
        if num_nodes < 2:
            raise DataError(f"{source}: the graph needs at least 2 nodes for edge membership")
        given = {"members": members, "val_edges": val_edges, "val_non_edges": val_non_edges,
                 "held_out_edges": held_out_edges, "held_out_non_edges": held_out_non_edges}
        lists = {name: _as_pairs(given[name], name, source, num_nodes) for name in PAIR_LISTS}
        if len(lists["members"]) == 0:
            raise DataError(f"{source}: member edges are empty; give the edges the model "
                            "trained on")
        keys = {name: pair_keys(p, num_nodes) for name, p in lists.items()}
        sorted_keys = {name: unique_sorted(k) for name, k in keys.items()}
        for i, a in enumerate(PAIR_LISTS):
            for b in PAIR_LISTS[i + 1:]:
                hit = contains(sorted_keys[a], keys[b])
                if hit.any():
                    raise DataError(
                        f"{source}: {_LIST_NAMES[a]} and {_LIST_NAMES[b]} share a pair (row "
                        f"{int(np.flatnonzero(hit)[0])} of the {_LIST_NAMES[b]}); a pair is "
                        "either a member or a non-member, never both")
        if edge_index is not None:
            graph = edge_keys(edge_index, num_nodes)
            for name in ("members", "val_edges", "held_out_edges"):
                miss = ~contains(graph, keys[name])
                if miss.any():
                    raise DataError(f"{source}: row {int(np.flatnonzero(miss)[0])} of the "
                                    f"{_LIST_NAMES[name]} is not an edge of the graph")
            for name in ("val_non_edges", "held_out_non_edges"):
                hit = contains(graph, keys[name])
                if hit.any():
                    raise DataError(f"{source}: row {int(np.flatnonzero(hit)[0])} of the "
                                    f"{_LIST_NAMES[name]} is an edge of the graph; non-members "
                                    "that are edges belong in held-out edges")
        empty = np.empty((0, 2), dtype=np.int64)
        return cls(config=config, num_nodes=num_nodes, context_edges=empty,
                   held_out_nodes=np.empty(0, dtype=np.int64), seed=int(seed), **lists)

    def training_nodes(self) -> np.ndarray | None:
        """Nodes the trainer may draw negatives from (None: every node)."""
        if len(self.held_out_nodes) == 0:
            return None
        keep = np.ones(self.num_nodes, dtype=bool)
        keep[self.held_out_nodes] = False
        return np.flatnonzero(keep)

    def message_passing_edge_index(self) -> torch.Tensor:
        """The training graph: member edges, both directions, ``[2, 2M]``."""
        return _both_directions(self.members)

    def inference_edge_index(self, query: npt.ArrayLike | None = None) -> torch.Tensor:
        """The graph the target is served with when ``query`` pairs are scored.

        Members plus (``inductive``) context edges; without
        ``member_edges_in_inference_graph`` the queried pairs are dropped from it (all of
        ``query`` at once: score a batch under the graph of that batch).
        """
        pairs = np.concatenate([self.members, self.context_edges]) if len(
            self.context_edges) else self.members
        if query is not None and not self.config.member_edges_in_inference_graph:
            q = np.asarray(query, dtype=np.int64).reshape(-1, 2)
            drop = contains(unique_sorted(pair_keys(q, self.num_nodes)),
                            pair_keys(pairs, self.num_nodes))
            pairs = pairs[~drop]
        return _both_directions(pairs)

    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """Membership candidates: ``(pairs [K, 2], kind [K])``.

        ``kind`` is :data:`MEMBER` (truth 1), :data:`HELD_OUT_EDGE` or
        :data:`HELD_OUT_NON_EDGE` (truth 0), so audits can report the hard non-members apart.
        """
        parts = (self.members, self.held_out_edges, self.held_out_non_edges)
        kinds = np.concatenate([np.full(len(p), k, dtype=np.int64)
                                for k, p in zip((MEMBER, HELD_OUT_EDGE, HELD_OUT_NON_EDGE), parts,
                                                strict=True)])
        return np.concatenate(parts), kinds

    def record(self) -> dict[str, Any]:
        """The protocol and sizes, JSON-safe, for reports (no pair lists)."""
        c = self.config
        return {
            "unit": "edge",
            "kind": c.kind,
            "seed": self.seed,
            "num_nodes": self.num_nodes,
            "val_frac": c.val_frac,
            "test_frac": c.test_frac,
            "held_out_node_frac": c.held_out_node_frac if c.kind == "inductive" else None,
            "non_member_sampling": c.non_member_sampling,
            "non_member_sampler": _sampler_statement(c),
            "bipartite": c.bipartite,
            "validation_sampling": "uniform",
            "negatives_per_positive": c.negatives_per_positive,
            "member_edges_in_inference_graph": c.member_edges_in_inference_graph,
            "counts": {name: int(len(getattr(self, name)))
                       for name in (*PAIR_LISTS, "context_edges", "held_out_nodes")},
        }


def split_params_for_graph(params: Mapping[str, Any], node_type: object | None
                           ) -> dict[str, Any]:
    """Edge-split parameters for one graph: ``bipartite`` defaults to True on a user–item
    graph (``node_type`` given) unless ``params`` sets it.

    A uniform non-edge of a user–item graph is often a user–user pair, which no recommender
    would ever score as an interaction, so the plain default would hand the adversary
    give-away non-members; a caller who wants them anyway says ``bipartite=False``.

    Args:
        params: ``EdgeSplitConfig`` fields given by the caller.
        node_type: The graph's ``node_type`` (0 user, 1 item per node), or None.

    Returns:
        ``params`` with ``bipartite`` filled in when the caller left it out.

    Example:
        >>> split_params_for_graph({}, [0, 1, 1])
        {'bipartite': True}
        >>> split_params_for_graph({"bipartite": False}, [0, 1, 1])
        {'bipartite': False}
        >>> split_params_for_graph({}, None)
        {}
    """
    out = dict(params)
    if node_type is not None:
        out.setdefault("bipartite", True)
    return out


def _sampler_statement(config: EdgeSplitConfig) -> str:
    """One sentence on how the held-out non-edges were drawn, for reports."""
    sides = " (one user endpoint, one item endpoint)" if config.bipartite else ""
    if config.non_member_sampling == "degree_matched":
        return ("degree_matched: each endpoint drawn in proportion to its degree among the "
                f"candidate edges' endpoints{sides}, rejecting edges")
    return f"uniform: endpoints drawn uniformly{sides}, rejecting edges"


def _item_side(node_type: torch.Tensor | np.ndarray | None, num_nodes: int) -> np.ndarray:
    """``node_type`` as a boolean "is an item" mask, or one :class:`DataError` line."""
    if node_type is None:
        raise DataError("a bipartite edge split needs node_type (0 user, 1 item per node); "
                        "give the graph's node_type or set bipartite=False")
    t = node_type.detach().cpu().numpy() if isinstance(node_type, torch.Tensor) else \
        np.asarray(node_type)
    if t.shape != (num_nodes,) or t.dtype.kind not in "iub" or not np.isin(t, (0, 1)).all():
        raise DataError(f"node_type must hold one 0 (user) or 1 (item) per node ({num_nodes} "
                        "nodes) for a bipartite edge split")
    return t.astype(bool)


def _sides(pool: np.ndarray | None, item: np.ndarray | None, num_nodes: int,
           what: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Endpoint pools: ``(pool, None)`` (both endpoints from ``pool``), or for a bipartite
    split ``(users in pool, items in pool)``; ``pool`` None means every node."""
    if item is None:
        return pool, None
    nodes = np.arange(num_nodes) if pool is None else pool
    users, items = nodes[~item[nodes]], nodes[item[nodes]]
    if len(users) == 0 or len(items) == 0:
        raise DataError(f"no {'user' if len(users) == 0 else 'item'} is left to draw the "
                        f"{what} from; a bipartite split needs both sides")
    return users, items


def _sorted(pairs: np.ndarray, num_nodes: int) -> np.ndarray:
    """``pairs`` as ``u < v`` rows in key order (a canonical, seed-stable layout)."""
    if len(pairs) == 0:
        return np.empty((0, 2), dtype=np.int64)
    return keys_to_pairs(np.sort(pair_keys(pairs, num_nodes)), num_nodes)


def _both_directions(pairs: np.ndarray) -> torch.Tensor:
    p = torch.from_numpy(np.ascontiguousarray(pairs, dtype=np.int64)).reshape(-1, 2)
    return torch.cat([p.t(), p.t().flip(0)], dim=1)


__all__ = [
    "EDGE_SPLIT_KINDS", "HELD_OUT_EDGE", "HELD_OUT_NON_EDGE", "MEMBER", "NON_MEMBER_SAMPLING",
    "EdgeMembershipSplit", "EdgeSplitConfig", "split_params_for_graph",
]
