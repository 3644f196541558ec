"""Vectorised random-walk engine for DeepWalk and node2vec.

All walkers of a batch advance together, one numpy operation per step, over a CSR graph:

* :func:`uniform_walks` draws DeepWalk walks (Perozzi et al., KDD'14,
  https://arxiv.org/abs/1403.6652): the next node is a uniform neighbour of the current one.
* :func:`node2vec_walks` draws second-order node2vec walks (Grover & Leskovec, KDD'16,
  https://arxiv.org/abs/1607.00653) by rejection sampling, as KnightKing (SOSP'19) and PecanPy
  do: a uniform neighbour ``x`` of the current node is proposed and accepted with probability
  ``w(x) / max_w``, where ``w(x) = 1/p`` if ``x`` is the previous node, ``1`` if ``x`` is a
  neighbour of the previous node and ``1/q`` otherwise. No per-edge transition tables are
  precomputed, so memory stays ``O(E)``.
* :func:`generate_walks` yields walks in bounded-size chunks, ``walks_per_node`` passes over a
  seeded shuffle of all nodes.

Nodes without out-neighbours (isolated nodes, or sinks of a directed graph) keep the walker in
place: the rest of its walk repeats that node.

Every function takes an explicit :class:`numpy.random.Generator` or an integer seed; nothing reads
global random state.

Example:
    >>> import numpy as np
    >>> ei = np.array([[0, 1, 1, 2], [1, 0, 2, 1]])
    >>> g = CSRGraph.from_edge_index(ei, 3)
    >>> w = uniform_walks(g, np.array([0, 2]), 4, np.random.default_rng(0))
    >>> w.shape
    (2, 4)
    >>> chunks = list(generate_walks(g, WalkConfig(walk_length=5, walks_per_node=2), seed=0))
    >>> sum(len(c) for c in chunks)
    6
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from graphleaks._arrays import unique_sorted
from graphleaks._validation import validate
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.seeding import derive_seed

logger = logging.getLogger(__name__)

IntArray = npt.NDArray[np.integer[Any]]

_INT32_MAX = int(np.iinfo(np.int32).max)


def _index_dtype(num_nodes: int) -> type[np.integer[Any]]:
    """Return int32 when node ids fit, else int64 (int32 halves memory traffic)."""
    return np.int32 if num_nodes <= _INT32_MAX else np.int64


@dataclass(frozen=True, eq=False)
class CSRGraph:
    """A directed graph in compressed sparse row form, neighbours sorted per node.

    An undirected graph is stored with both directions of every edge, as PyG's ``edge_index``.

    Attributes:
        indptr: ``int64 [num_nodes + 1]``; node ``v``'s out-neighbours are
            ``indices[indptr[v]:indptr[v + 1]]``.
        indices: ``int32`` (``int64`` above 2**31 - 1 nodes) ``[E]`` neighbour ids, sorted and
            unique within each node's slice.
        num_nodes: Number of nodes ``N``; node ids are ``0..N-1``.
    """

    indptr: npt.NDArray[np.int64]
    indices: IntArray
    num_nodes: int

    @classmethod
    def from_edge_index(
        cls,
        edge_index: torch.Tensor | IntArray,
        num_nodes: int,
        *,
        to_undirected: bool = False,
    ) -> CSRGraph:
        """Build the CSR structure from a ``[2, E]`` edge list.

        Duplicate edges are merged (walks on a multigraph would weight edges by multiplicity);
        self-loops are kept.

        Args:
            edge_index: ``[2, E]`` integer tensor or array; column ``j`` is the edge
                ``edge_index[0, j] -> edge_index[1, j]``. Undirected graphs list both directions.
            num_nodes: Number of nodes; every id must lie in ``[0, num_nodes)``.
            to_undirected: Add the reverse of every edge first (default: ``False``).

        Returns:
            The graph.

        Raises:
            DataError: If ``edge_index`` is not an integer ``[2, E]`` array or holds an id outside
                ``[0, num_nodes)``, or ``num_nodes`` is not a positive integer.
        """
        if isinstance(num_nodes, bool) or not isinstance(num_nodes, (int, np.integer)):
            raise DataError(f"num_nodes must be a positive integer. Got {num_nodes!r} instead.")
        n = int(num_nodes)
        if n < 1:
            raise DataError(f"num_nodes must be a positive integer. Got {num_nodes!r} instead.")
        if isinstance(edge_index, torch.Tensor):
            ei = edge_index.detach().cpu().numpy()
        else:
            ei = np.asarray(edge_index)
        if ei.ndim != 2 or ei.shape[0] != 2:
            raise DataError(
                f"edge_index must have shape [2, E]. Got shape {tuple(ei.shape)} instead."
            )
        if ei.size and not np.issubdtype(ei.dtype, np.integer):
            raise DataError(f"edge_index must hold integers. Got dtype {ei.dtype} instead.")
        src = ei[0].astype(np.int64, copy=False)
        dst = ei[1].astype(np.int64, copy=False)
        if src.size:
            lo = min(int(src.min()), int(dst.min()))
            hi = max(int(src.max()), int(dst.max()))
            if lo < 0 or hi >= n:
                bad = lo if lo < 0 else hi
                raise DataError(
                    f"edge_index holds node id {bad}, outside [0, {n}); "
                    "check num_nodes or relabel the nodes to 0..N-1."
                )
        if to_undirected:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        keys = unique_sorted(src * n + dst)  # sorts by (src, dst) and merges duplicates
        src_u = keys // n
        dst_u = keys - src_u * n
        counts = np.bincount(src_u, minlength=n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = dst_u.astype(_index_dtype(n))
        return cls(indptr=indptr, indices=indices, num_nodes=n)

    @property
    def num_edges(self) -> int:
        """Number of stored (directed) edges."""
        return int(self.indices.shape[0])

    @functools.cached_property
    def degree(self) -> IntArray:
        """Out-degree of every node, in the index dtype."""
        return np.diff(self.indptr).astype(self.indices.dtype)

    @functools.cached_property
    def _starts(self) -> IntArray:
        """``indptr[:-1]`` in the narrowest dtype that holds ``E`` (faster gathers)."""
        dtype = np.int32 if self.num_edges <= _INT32_MAX else np.int64
        return self.indptr[:-1].astype(dtype)

    @functools.cached_property
    def _edge_keys(self) -> npt.NDArray[np.int64]:
        """Sorted ``src * N + dst`` keys, for vectorised edge-membership tests."""
        src = np.repeat(np.arange(self.num_nodes, dtype=np.int64), np.diff(self.indptr))
        return src * self.num_nodes + self.indices.astype(np.int64)

    @functools.cached_property
    def _has_sinks(self) -> bool:
        return bool((self.degree == 0).any())

    @functools.cached_property
    def _is_symmetric(self) -> bool:
        """Whether every edge's reverse is also an edge (an undirected graph)."""
        keys = self._edge_keys
        src, dst = np.divmod(keys, self.num_nodes)
        return bool(np.array_equal(np.sort(dst * self.num_nodes + src), keys))

    def has_edges(self, src: IntArray, dst: IntArray) -> npt.NDArray[np.bool_]:
        """Test, elementwise, whether ``src[i] -> dst[i]`` is an edge.

        A binary search (``np.searchsorted``) into the sorted edge keys, i.e. into ``src[i]``'s
        sorted neighbour slice, for all pairs at once.

        Args:
            src: Source node ids.
            dst: Destination node ids, same shape as ``src``.

        Returns:
            Boolean array of the same shape.
        """
        keys = self._edge_keys
        q = src.astype(np.int64) * self.num_nodes + dst
        if keys.shape[0] == 0:
            return np.zeros(q.shape, dtype=bool)
        pos = np.searchsorted(keys, q)
        np.minimum(pos, keys.shape[0] - 1, out=pos)
        found: npt.NDArray[np.bool_] = keys[pos] == q
        return found


def _check_starts(graph: CSRGraph, starts: IntArray, walk_length: int) -> IntArray:
    if isinstance(walk_length, bool) or not isinstance(walk_length, (int, np.integer)):
        raise InvalidConfigError(f"walk_length must be an integer >= 1. Got {walk_length!r}.")
    if walk_length < 1:
        raise InvalidConfigError(f"walk_length must be an integer >= 1. Got {walk_length!r}.")
    s = np.asarray(starts)
    if s.ndim != 1 or (s.size and not np.issubdtype(s.dtype, np.integer)):
        raise DataError(f"starts must be a 1-D integer array. Got {s.dtype} {s.shape} instead.")
    if s.size and (int(s.min()) < 0 or int(s.max()) >= graph.num_nodes):
        raise DataError(f"starts must be node ids in [0, {graph.num_nodes}).")
    return s.astype(graph.indices.dtype, copy=False)


def _uniform_step(graph: CSRGraph, cur: IntArray, rng: np.random.Generator) -> IntArray:
    """Move every walker at ``cur`` to a uniform out-neighbour (sinks stay in place)."""
    deg = graph.degree[cur]
    off = (rng.random(cur.shape[0]) * deg).astype(graph._starts.dtype)
    if not graph._has_sinks:
        # Guard against u * deg rounding up to deg.
        np.minimum(off, deg - 1, out=off, casting="unsafe")
        moved: IntArray = graph.indices[graph._starts[cur] + off]
        return moved
    if graph.num_edges == 0:
        return cur.copy()
    np.minimum(off, np.maximum(deg, 1) - 1, out=off, casting="unsafe")
    pos = graph._starts[cur] + off
    np.minimum(pos, graph.num_edges - 1, out=pos)  # a sink's slice may start at E
    nxt: IntArray = graph.indices[pos]
    sink = deg == 0
    nxt[sink] = cur[sink]
    return nxt


def uniform_walks(
    graph: CSRGraph,
    starts: IntArray,
    walk_length: int,
    rng: np.random.Generator,
) -> IntArray:
    """Draw DeepWalk (first-order, uniform) random walks, all walkers at once.

    At each step every walker moves to ``indices[indptr[cur] + floor(u * deg(cur))]`` with
    ``u ~ U[0, 1)``. A walker on a node with no out-neighbours stays there, so the rest of its
    walk repeats that node.

    Args:
        graph: The graph.
        starts: ``[n]`` start node of each walker.
        walk_length: Number of nodes per walk, the start included (``>= 1``).
        rng: The random generator; it is advanced.

    Returns:
        ``[n, walk_length]`` array of node ids, in the graph's index dtype (``int32`` unless the
        graph has more than 2**31 - 1 nodes); column 0 is ``starts``.

    Raises:
        DataError: If ``starts`` holds ids outside the graph.
        InvalidConfigError: If ``walk_length < 1``.
    """
    s = _check_starts(graph, starts, walk_length)
    out = np.empty((walk_length, s.shape[0]), dtype=graph.indices.dtype)
    out[0] = s
    for t in range(1, walk_length):
        out[t] = _uniform_step(graph, out[t - 1], rng)
    return np.ascontiguousarray(out.T)


def node2vec_walks(
    graph: CSRGraph,
    starts: IntArray,
    walk_length: int,
    p: float,
    q: float,
    rng: np.random.Generator,
) -> IntArray:
    """Draw node2vec second-order biased random walks by vectorised rejection sampling.

    The first step is uniform. Afterwards a walker at ``cur`` that came from ``prev`` moves to
    an out-neighbour ``x`` of ``cur`` with probability proportional to ``w(x) = 1/p`` if
    ``x == prev``, ``1`` if ``prev -> x`` is an edge and ``1/q`` otherwise (Grover & Leskovec).

    Sampling is by rejection (KnightKing, SOSP'19; PecanPy): a uniform neighbour ``x`` is
    proposed and accepted with probability ``w(x) / c``, ``c = max(1, 1/q)``. When the return
    weight ``1/p`` exceeds ``c`` it is "folded" as KnightKing does with outliers: the excess
    ``1/p - c`` is drawn directly as a jump back to ``prev`` with probability
    ``(1/p - c) / (deg(cur) * c + 1/p - c)``, so a small ``p`` does not lower the acceptance
    rate of the other neighbours. The resulting law is exactly ``P(x) ∝ w(x)``. One uniform
    number per proposal gives the fold decision, the proposal and the acceptance draw. Draws
    below ``min(1, 1/q)`` are accepted and the others are decided by an edge test, a binary
    search of ``x`` among ``prev``'s sorted neighbours (:meth:`CSRGraph.has_edges`). Only
    rejected walkers propose again. A walker on a node without out-neighbours stays there.
    With ``p == q == 1`` this is :func:`uniform_walks`.

    Args:
        graph: The graph.
        starts: ``[n]`` start node of each walker.
        walk_length: Number of nodes per walk, the start included (``>= 1``).
        p: Return parameter (``> 0``); small ``p`` makes walks backtrack often.
        q: In-out parameter (``> 0``); large ``q`` keeps walks local (BFS-like).
        rng: The random generator; it is advanced.

    Returns:
        ``[n, walk_length]`` array of node ids in the graph's index dtype.

    Raises:
        DataError: If ``starts`` holds ids outside the graph.
        InvalidConfigError: If ``walk_length < 1`` or ``p``/``q`` are not positive finite numbers.
    """
    for name, value in (("p", p), ("q", q)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise InvalidConfigError(f"{name} must be a positive number. Got {value!r} instead.")
        if not (0 < float(value) < float("inf")):
            raise InvalidConfigError(f"{name} must be a positive number. Got {value!r} instead.")
    if p == 1 and q == 1:
        return uniform_walks(graph, starts, walk_length, rng)
    s = _check_starts(graph, starts, walk_length)
    n = s.shape[0]
    out = np.empty((walk_length, n), dtype=graph.indices.dtype)
    out[0] = s
    if walk_length == 1:
        return np.ascontiguousarray(out.T)
    out[1] = _uniform_step(graph, s, rng)

    w_ret, w_in, w_out = 1.0 / float(p), 1.0, 1.0 / float(q)
    cap = max(w_in, w_out)  # envelope height for every neighbour
    lo_w = min(w_in, w_out)  # draws below this are accepted for any x != prev
    w_ret_env = min(w_ret, cap)  # prev's weight inside the envelope
    excess = max(w_ret - cap, 0.0)  # prev's weight above the envelope, drawn directly
    starts_arr = graph._starts
    indices = graph.indices
    degree = graph.degree
    has_sinks = graph._has_sinks
    symmetric = graph._is_symmetric
    for t in range(2, walk_length):
        prev_all = out[t - 2]
        cur_all = out[t - 1]
        nxt_all = out[t]
        if has_sinks:
            sink = degree[cur_all] == 0
            nxt_all[sink] = cur_all[sink]
            active = np.flatnonzero(~sink)
            cur_s, prev_s = cur_all[active], prev_all[active]
        else:
            active = None
            cur_s, prev_s = cur_all, prev_all
        deg_s = degree[cur_s].astype(np.float64)
        if excess > 0.0:
            # The fold applies only where prev is an out-neighbour of cur.
            if symmetric:
                ex_s = np.full(deg_s.shape[0], excess)
            else:
                ex_s = np.where(graph.has_edges(cur_s, prev_s), excess, 0.0)
            total_s = deg_s * cap + ex_s
        else:
            ex_s = None
            total_s = deg_s * cap
        # `pending` indexes into the active walkers; only rejected walkers stay pending.
        pending = np.arange(cur_s.shape[0])
        while pending.shape[0]:
            cur, prev, deg = cur_s[pending], prev_s[pending], deg_s[pending]
            v = rng.random(pending.shape[0]) * total_s[pending]
            jump = None
            if ex_s is not None:
                v -= ex_s[pending]
                jump = v < 0.0
                np.maximum(v, 0.0, out=v)
            if cap != 1.0:
                v *= 1.0 / cap
            k = v.astype(np.int64)
            np.minimum(k, deg.astype(np.int64) - 1, out=k)
            y = (v - k) * cap  # U[0, cap), independent of k
            x = indices[starts_arr[cur] + k]
            is_ret = x == prev
            accept = np.where(is_ret, y < w_ret_env, y < lo_w)
            if jump is not None:
                accept |= jump
                x[jump] = prev[jump]
            if w_in != w_out:
                # x != prev with lo_w <= y < cap: accept iff x has the larger weight.
                undecided = np.flatnonzero(~accept & ~is_ret)
                if undecided.shape[0]:
                    is_in = graph.has_edges(prev[undecided], x[undecided])
                    accept[undecided] = is_in if w_in > w_out else ~is_in
            rows = pending[accept]
            nxt_all[rows if active is None else active[rows]] = x[accept]
            pending = pending[~accept]
    return np.ascontiguousarray(out.T)


def _metadata(lo: float | None, hi: float | None, closed: str) -> dict[str, Any]:
    return {"range": (lo, hi), "closed": closed}


def _check_integer_fields(config: Any, names: tuple[str, ...]) -> None:
    owner = type(config).__qualname__
    for name in names:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InvalidConfigError(
                f"The {name} parameter of {owner} must be an integer. Got {value!r} instead."
            )


@dataclass(frozen=True)
class WalkConfig:
    """Random-walk settings (defaults of aditya-grover/node2vec's ``main.py``).

    Attributes:
        walk_length: Nodes per walk, the start included, in ``[2, inf)`` (default: 80).
        walks_per_node: Walks started from every node, in ``[1, inf)`` (default: 10).
        p: node2vec return parameter, in ``(0, inf)`` (default: 1.0).
        q: node2vec in-out parameter, in ``(0, inf)`` (default: 1.0). ``p == q == 1`` gives
            DeepWalk's uniform walks.
        chunk_size: Most walkers drawn at once, which bounds memory to about
            ``chunk_size * walk_length * 4`` bytes per chunk, in ``[1, inf)`` (default: 100_000).
    """

    walk_length: int = field(default=80, metadata=_metadata(2, None, "left"))
    walks_per_node: int = field(default=10, metadata=_metadata(1, None, "left"))
    p: float = field(default=1.0, metadata=_metadata(0, None, "neither"))
    q: float = field(default=1.0, metadata=_metadata(0, None, "neither"))
    chunk_size: int = field(default=100_000, metadata=_metadata(1, None, "left"))

    def check(self) -> None:
        """Reject non-integer counts and infinite ``p``/``q`` (called by ``validate``).

        Raises:
            InvalidConfigError: On a violation.
        """
        _check_integer_fields(self, ("walk_length", "walks_per_node", "chunk_size"))
        for name in ("p", "q"):
            if getattr(self, name) == float("inf"):
                raise InvalidConfigError(
                    f"The {name} parameter of WalkConfig must be in (0, inf). Got inf instead."
                )


def _start_chunks(
    num_nodes: int, walks_per_node: int, chunk_size: int, seed: int, dtype: type[np.integer[Any]]
) -> Iterator[IntArray]:
    """Yield start nodes: ``walks_per_node`` seeded shuffles of all nodes, re-cut into chunks."""
    buf: list[IntArray] = []
    held = 0
    for r in range(walks_per_node):
        perm = np.random.default_rng(derive_seed(seed, "walk-pass", r)).permutation(num_nodes)
        perm = perm.astype(dtype)
        pos = 0
        while pos < num_nodes:
            take = min(chunk_size - held, num_nodes - pos)
            buf.append(perm[pos : pos + take])
            held += take
            pos += take
            if held == chunk_size:
                yield np.concatenate(buf)
                buf, held = [], 0
    if held:
        yield np.concatenate(buf)


def generate_walks(graph: CSRGraph, config: WalkConfig, *, seed: int) -> Iterator[IntArray]:
    """Yield all walks of a DeepWalk/node2vec corpus in chunks of bounded size.

    Pass ``r`` (``r < walks_per_node``) starts one walk from every node, in a shuffled order
    seeded by ``(seed, "walk-pass", r)``; the concatenated passes are cut into chunks of
    ``chunk_size`` walkers (the last chunk may be smaller), and chunk ``i`` draws its steps from
    a generator seeded by ``(seed, "walk-chunk", i)``. The same graph, config and seed therefore
    always give the same walks, in the same order; a different ``chunk_size`` gives different
    (equally distributed) walks.

    Args:
        graph: The graph.
        config: Walk settings; validated here.
        seed: Root seed.

    Yields:
        ``[m, walk_length]`` arrays of node ids (``m <= chunk_size``), in the graph's index dtype.
        In total ``num_nodes * walks_per_node`` walks.

    Raises:
        InvalidConfigError: If ``config`` is invalid.
    """
    validate(config)
    uniform = config.p == 1 and config.q == 1
    chunks = _start_chunks(
        graph.num_nodes, config.walks_per_node, config.chunk_size, seed, graph.indices.dtype.type
    )
    for i, starts in enumerate(chunks):
        rng = np.random.default_rng(derive_seed(seed, "walk-chunk", i))
        if uniform:
            yield uniform_walks(graph, starts, config.walk_length, rng)
        else:
            yield node2vec_walks(graph, starts, config.walk_length, config.p, config.q, rng)


__all__ = [
    "CSRGraph",
    "WalkConfig",
    "generate_walks",
    "node2vec_walks",
    "uniform_walks",
]
