"""Seeded synthetic graph-classification sets whose class is a structural motif.

Each graph is a random tree (every new node joins a uniformly drawn earlier node) with one
motif attached to a random tree node; the class is *which* motif. A tree has no cycle, so
the motifs (a 6-cycle, a house, a 4-clique, a 3x3 grid) are told apart by structure alone:
node features are a constant column and the one-hot degree, which carry no class on their
own beyond what message passing reads from the structure. Small by default, for tests.
"""

from __future__ import annotations

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks.data.graphsets.record import GraphSet
from graphleaks.errors import InvalidConfigError
from graphleaks.seeding import derive_seed

#: Motif of each class, in class order: name and undirected edges on local ids.
MOTIFS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("cycle", tuple((i, (i + 1) % 6) for i in range(6))),
    ("house", ((0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (1, 4))),
    ("clique", ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))),
    ("grid", tuple([(r * 3 + c, r * 3 + c + 1) for r in range(3) for c in range(2)]
                   + [(r * 3 + c, (r + 1) * 3 + c) for r in range(2) for c in range(3)])),
)
#: Degrees at or above this share the last one-hot column.
MAX_DEGREE_FEATURE = 6
MAX_MOTIF_GRAPHS = 100_000
MAX_BASE_NODES = 10_000


def _check(num_graphs: int, num_classes: int, base_nodes: tuple[int, int]) -> None:
    if isinstance(num_graphs, bool) or not isinstance(num_graphs, int) or not (
            2 <= num_graphs <= MAX_MOTIF_GRAPHS):
        raise InvalidConfigError(f"The num_graphs parameter of motif_graphs must be an integer "
                                 f"in [2, {MAX_MOTIF_GRAPHS}]. Got {num_graphs!r} instead.")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or not (
            2 <= num_classes <= len(MOTIFS)):
        raise InvalidConfigError(f"The num_classes parameter of motif_graphs must be an integer "
                                 f"in [2, {len(MOTIFS)}]. Got {num_classes!r} instead.")
    lo, hi = base_nodes
    if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi <= MAX_BASE_NODES):
        raise InvalidConfigError(f"The base_nodes parameter of motif_graphs must be (lo, hi) "
                                 f"with 1 <= lo <= hi <= {MAX_BASE_NODES}. Got {base_nodes!r} "
                                 "instead.")


def motif_graph(label: int, base: int, rng: np.random.Generator) -> Data:
    """One graph: a random tree of ``base`` nodes with motif ``label`` attached."""
    _, motif = MOTIFS[label]
    size = 1 + max(max(e) for e in motif)
    parents = [int(rng.integers(0, i)) for i in range(1, base)]
    edges = [(p, i) for i, p in enumerate(parents, start=1)]
    edges += [(base + u, base + v) for u, v in motif]
    edges.append((int(rng.integers(0, base)), base + int(rng.integers(0, size))))
    n = base + size
    e = torch.tensor(edges, dtype=torch.long).t()
    edge_index = torch.cat([e, e.flip(0)], dim=1)
    deg = torch.bincount(edge_index[0], minlength=n).clamp(max=MAX_DEGREE_FEATURE)
    x = torch.cat([torch.ones(n, 1), torch.nn.functional.one_hot(
        deg, MAX_DEGREE_FEATURE + 1).float()], dim=1)
    return Data(x=x, edge_index=edge_index, y=torch.tensor([label]), num_nodes=n)


def motif_graphs(num_graphs: int = 60, *, num_classes: int = 2,
                 base_nodes: tuple[int, int] = (4, 10), seed: int) -> GraphSet:
    """A seeded set of motif graphs, classes balanced (round robin), order shuffled.

    Args:
        num_graphs: Number of graphs.
        num_classes: Number of classes (2 to 4): the first ``num_classes`` of
            :data:`MOTIFS`.
        base_nodes: Smallest and largest tree size (the motif adds 4 to 9 nodes).
        seed: Seed of every random choice.

    Returns:
        A :class:`GraphSet` with 1 + 7 node features (constant, one-hot degree).

    Raises:
        InvalidConfigError: For a parameter out of range.

    Example:
        >>> gs = motif_graphs(8, seed=0)
        >>> len(gs), gs.num_classes, gs.num_features, gs.class_counts()
        (8, 2, 8, [4, 4])
    """
    _check(num_graphs, num_classes, base_nodes)
    rng = np.random.default_rng(derive_seed(seed, "motif_graphs"))
    labels = np.arange(num_graphs) % num_classes
    rng.shuffle(labels)
    graphs = [motif_graph(int(k), int(rng.integers(base_nodes[0], base_nodes[1] + 1)), rng)
              for k in labels]
    return GraphSet.from_graphs(graphs, [MOTIFS[k][0] for k in range(num_classes)],
                                source=f"motif graphs (seed {seed})")
