"""Benchmark the vectorised DeepWalk/node2vec walk engine against a per-walk Python loop.

Prints steps per second (one step = one move of one walker) for uniform (DeepWalk) walks and
node2vec walks with ``p = 0.25, q = 4`` on a synthetic graph of LastFM Asia's size (7,624
nodes, 27,806 undirected edges, heavy-tailed degrees), and on LastFM Asia itself when
``../shared/datasets/LastFMAsia/original/lastfm_asia_edges.csv`` exists. The naive baseline
walks a few hundred walks with plain Python lists and extrapolates.

Usage: ``python bench/bench_walks.py`` from the repository root. Figures only, no assertions.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.models.walks import (  # noqa: E402
    CSRGraph,
    WalkConfig,
    generate_walks,
)

LASTFM = ROOT.parent / "shared" / "datasets" / "LastFMAsia" / "original" / "lastfm_asia_edges.csv"
WALK_LENGTH = 80
WALKS_PER_NODE = 10
P, Q = 0.25, 4.0
NAIVE_WALKS = 300


def synthetic_graph(
    num_nodes: int = 7_624, num_edges: int = 27_806, seed: int = 0
) -> npt.NDArray[np.int64]:
    """A Chung-Lu graph with Pareto weights: heavy-tailed degrees, as social graphs have."""
    rng = np.random.default_rng(seed)
    weight = rng.pareto(2.0, num_nodes) + 1.0
    prob = weight / weight.sum()
    keys = np.empty(0, dtype=np.int64)
    while keys.shape[0] < num_edges:
        src = rng.choice(num_nodes, 2 * num_edges, p=prob)
        dst = rng.choice(num_nodes, 2 * num_edges, p=prob)
        lo, hi = np.minimum(src, dst), np.maximum(src, dst)
        new = (lo * num_nodes + hi)[lo != hi]
        keys = np.unique(np.concatenate([keys, new]))
    keys = rng.permutation(keys)[:num_edges]
    src, dst = keys // num_nodes, keys % num_nodes
    return np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])])


def lastfm_graph() -> tuple[npt.NDArray[np.int64], int] | None:
    """LastFM Asia's edges in both directions, or None when the file is absent."""
    if not LASTFM.is_file():
        return None
    edges = np.loadtxt(LASTFM, delimiter=",", skiprows=1, dtype=np.int64)
    ei = np.concatenate([edges.T, edges.T[::-1]], axis=1)
    return ei, int(edges.max()) + 1


def _time(fn: Callable[[], int], repeats: int = 3) -> float:
    """Best steps/s over ``repeats`` runs of ``fn``, which returns the steps it took."""
    fn()  # warm-up
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        steps = fn()
        best = max(best, steps / (time.perf_counter() - t0))
    return best


def vectorised_rate(graph: CSRGraph, p: float, q: float) -> float:
    """Steps/s of :func:`generate_walks` (all walks, default chunking)."""
    cfg = WalkConfig(walk_length=WALK_LENGTH, walks_per_node=WALKS_PER_NODE, p=p, q=q)

    def run() -> int:
        return sum(c.shape[0] * (WALK_LENGTH - 1) for c in generate_walks(graph, cfg, seed=0))

    return _time(run)


def naive_rate(graph: CSRGraph, p: float, q: float) -> float:
    """Steps/s of a straightforward per-walk, per-step pure-Python loop."""
    adj = [
        graph.indices[graph.indptr[v] : graph.indptr[v + 1]].tolist()
        for v in range(graph.num_nodes)
    ]
    adj_sets = [set(a) for a in adj]
    r = random.Random(0)
    starts = [r.randrange(graph.num_nodes) for _ in range(NAIVE_WALKS)]
    uniform = p == 1 and q == 1

    def run() -> int:
        steps = 0
        for start in starts:
            walk = [start]
            while len(walk) < WALK_LENGTH:
                cur = walk[-1]
                nbrs = adj[cur]
                if not nbrs:
                    walk.append(cur)
                elif uniform or len(walk) == 1:
                    walk.append(nbrs[int(r.random() * len(nbrs))])
                else:
                    prev = walk[-2]
                    weights = [
                        1 / p if x == prev else (1.0 if x in adj_sets[prev] else 1 / q)
                        for x in nbrs
                    ]
                    walk.append(r.choices(nbrs, weights=weights)[0])
                steps += 1
        return steps

    return _time(run, repeats=1)


def bench(name: str, edge_index: npt.NDArray[np.int64], num_nodes: int) -> None:
    """Print the figures for one graph."""
    graph = CSRGraph.from_edge_index(edge_index, num_nodes)
    print(f"{name}: {graph.num_nodes} nodes, {graph.num_edges // 2} undirected edges")
    for label, p, q in (("DeepWalk", 1.0, 1.0), (f"Node2Vec p={P} q={Q}", P, Q)):
        fast = vectorised_rate(graph, p, q)
        slow = naive_rate(graph, p, q)
        print(
            f"  {label:<22} vectorised {fast / 1e6:8.2f} M steps/s | "
            f"naive Python {slow / 1e6:6.3f} M steps/s | speed-up x{fast / slow:6.1f}"
        )


def main() -> None:
    """Run the benchmark on the synthetic graph and, if present, on LastFM Asia."""
    print(f"walk_length={WALK_LENGTH}, walks_per_node={WALKS_PER_NODE}, best of 3")
    bench("synthetic (LastFM-sized)", synthetic_graph(), 7_624)
    lastfm = lastfm_graph()
    if lastfm is None:
        print(f"LastFM Asia: {LASTFM} not found, skipped")
    else:
        bench("LastFM Asia", *lastfm)


if __name__ == "__main__":
    main()
