"""The TU graph-kernel benchmark format (Morris et al. 2020, ``chrsmrrs.github.io/datasets``).

A TU dataset ``NAME`` is a folder of text files, every id 1-based:

* ``NAME_A.txt``: one edge ``row, col`` per line (global node ids, usually both directions);
* ``NAME_graph_indicator.txt``: one line per node, the graph id it belongs to;
* ``NAME_graph_labels.txt``: one line per graph, its class (any integers: mapped to 0..K-1
  in sorted order, the originals kept as class names);
* ``NAME_node_labels.txt`` (optional): one categorical label per node, one-hot encoded;
* ``NAME_node_attributes.txt`` (optional): one comma-separated row of floats per node.

Node features are the attributes and the one-hot node labels side by side; without either,
one constant column. Edges are made undirected. The files are checked against each other
before any graph is built (indicator length = node count, graph ids contiguous from 1 with
nodes of a graph listed together, one label per graph, edge endpoints in range and inside
one graph), sizes are bounded (:mod:`graphleaks._limits`), and no message quotes a file.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks._limits import (
    MAX_CATEGORIES,
    MAX_GRAPH_SET_FILE_BYTES,
    check_file_size,
    input_boundary,
)
from graphleaks.data.graphsets.record import GraphSet
from graphleaks.errors import DataError


def _rows(path: Path, what: str, width: int | None, *, floats: bool = False) -> np.ndarray:
    """The numeric rows of a TU text file, ``[lines, width]`` (width None: one value/line)."""
    check_file_size(path, MAX_GRAPH_SET_FILE_BYTES, what)
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        raise DataError(f"{what} is not a UTF-8 text file; give the TU file itself") from None
    out: list[list[float]] = []
    with input_boundary(what):
        for number, line in enumerate(text.splitlines(), start=1):
            cells = line.replace(",", " ").split()
            if not cells:
                raise DataError(f"{what}: line {number} is blank; TU files have one record "
                                "per line")
            if width is not None and len(cells) != width or width is None and len(cells) != 1:
                want = width or 1
                raise DataError(f"{what}: line {number} has {len(cells)} value(s), expected "
                                f"{want}")
            try:
                row = [float(c) if floats else int(c) for c in cells]
            except ValueError:
                kind = "a number" if floats else "an integer"
                raise DataError(f"{what}: line {number} holds a value that is not {kind}; "
                                "check the file") from None
            out.append(row)  # type: ignore[arg-type]
    if not out:
        raise DataError(f"{what} holds no records")
    arr = np.asarray(out, dtype=np.float64 if floats else np.int64)
    if floats and not np.isfinite(arr).all():
        raise DataError(f"{what}: a value is NaN or infinite; clean the file")
    return arr


def _attribute_rows(path: Path, what: str) -> np.ndarray:
    check_file_size(path, MAX_GRAPH_SET_FILE_BYTES, what)
    try:  # the width comes from the first line; the size is checked before any read
        with path.open("rb") as fh:
            head = fh.read(65536)
    except OSError:
        raise DataError(f"{what} cannot be read") from None
    first = head.decode("utf-8", "replace").splitlines()[:1]
    width = len(first[0].replace(",", " ").split()) if first else 0
    if width == 0:
        raise DataError(f"{what}: the first line is blank; give one row of values per node")
    return _rows(path, what, width, floats=True)


def _categories(values: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and each value's index, refusing too many categories."""
    uniq, inverse = np.unique(values, return_inverse=True)
    if len(uniq) > MAX_CATEGORIES:
        raise DataError(f"{what}: {len(uniq)} distinct values, over the limit of "
                        f"{MAX_CATEGORIES}; is this a categorical label?")
    return uniq, inverse


def read_tu_folder(folder: str | Path, name: str | None = None) -> GraphSet:
    """Read a TU-format dataset folder into a :class:`GraphSet`.

    Args:
        folder: The folder holding the ``NAME_*.txt`` files.
        name: The dataset name ``NAME`` (default: the folder's name).

    Returns:
        The graph set, classes named by their original labels in sorted order.

    Raises:
        DataError: For a missing, oversized or malformed file, or files that disagree
            (naming the file, the line or graph, and the fix; never a value from a file).
    """
    root = Path(folder)
    name = name or root.name
    if not root.is_dir():
        raise DataError(f"TU folder {root} does not exist or is not a folder")

    def file(part: str) -> Path:
        return root / f"{name}_{part}.txt"

    src = f"TU dataset {name} in {root}"
    for part in ("A", "graph_indicator", "graph_labels"):
        if not file(part).is_file():
            raise DataError(f"{src}: {file(part).name} is missing; a TU folder needs "
                            f"{name}_A.txt, {name}_graph_indicator.txt and "
                            f"{name}_graph_labels.txt")
    indicator = _rows(file("graph_indicator"), f"TU file {file('graph_indicator')}", None)[:, 0]
    graph_labels = _rows(file("graph_labels"), f"TU file {file('graph_labels')}", None)[:, 0]
    edges = _rows(file("A"), f"TU file {file('A')}", 2)
    n_nodes, n_graphs = len(indicator), len(graph_labels)

    # graph ids: 1..G, every one present, nodes of one graph listed together in order
    if indicator.min() != 1 or indicator.max() != n_graphs:
        raise DataError(f"{src}: graph ids in {file('graph_indicator').name} must run from 1 "
                        f"to the number of lines of {file('graph_labels').name} "
                        f"({n_graphs}); the two files disagree")
    steps = np.diff(indicator)
    if (steps < 0).any() or (steps > 1).any():
        line = int(np.flatnonzero((steps < 0) | (steps > 1))[0]) + 2
        raise DataError(f"{src}: {file('graph_indicator').name} line {line} breaks the order; "
                        "graph ids must be non-decreasing and contiguous (every graph has at "
                        "least one node, nodes of a graph listed together)")
    # edges: endpoints in 1..N, both in one graph
    bad = (edges < 1) | (edges > n_nodes)
    if bad.any():
        line = int(np.flatnonzero(bad.any(axis=1))[0]) + 1
        raise DataError(f"{src}: {file('A').name} line {line} names a node outside 1.."
                        f"{n_nodes} (the length of {file('graph_indicator').name}); the files "
                        "disagree")
    e0 = edges - 1
    g_of = indicator - 1
    cross = g_of[e0[:, 0]] != g_of[e0[:, 1]]
    if cross.any():
        line = int(np.flatnonzero(cross)[0]) + 1
        raise DataError(f"{src}: {file('A').name} line {line} joins nodes of two different "
                        "graphs; each edge must stay inside one graph")

    blocks: list[np.ndarray] = []
    if file("node_attributes").is_file():
        attrs = _attribute_rows(file("node_attributes"), f"TU file {file('node_attributes')}")
        if len(attrs) != n_nodes:
            raise DataError(f"{src}: {file('node_attributes').name} has {len(attrs)} rows for "
                            f"{n_nodes} nodes; give one row per node")
        blocks.append(attrs.astype(np.float32))
    if file("node_labels").is_file():
        labels = _rows(file("node_labels"), f"TU file {file('node_labels')}", None)[:, 0]
        if len(labels) != n_nodes:
            raise DataError(f"{src}: {file('node_labels').name} has {len(labels)} lines for "
                            f"{n_nodes} nodes; give one label per node")
        _, idx = _categories(labels, f"TU file {file('node_labels')}")
        onehot = np.zeros((n_nodes, int(idx.max()) + 1), dtype=np.float32)
        onehot[np.arange(n_nodes), idx] = 1.0
        blocks.append(onehot)
    x_all = (np.concatenate(blocks, axis=1) if blocks
             else np.ones((n_nodes, 1), dtype=np.float32))
    classes, y_all = _categories(graph_labels, f"TU file {file('graph_labels')}")
    if len(classes) < 2:
        raise DataError(f"{src}: {file('graph_labels').name} holds a single class; graph "
                        "classification needs at least two")

    starts = np.concatenate([[0], np.flatnonzero(steps) + 1, [n_nodes]])
    order = np.argsort(g_of[e0[:, 0]], kind="stable")
    e_sorted = e0[order]
    e_graph = g_of[e_sorted[:, 0]]
    e_starts = np.searchsorted(e_graph, np.arange(n_graphs + 1))
    x_t = torch.from_numpy(x_all)
    graphs = []
    for g in range(n_graphs):
        lo, hi = int(starts[g]), int(starts[g + 1])
        local = torch.from_numpy(e_sorted[e_starts[g]:e_starts[g + 1]] - lo).t()
        ei = torch.cat([local, local.flip(0)], dim=1)
        ei = torch.unique(ei, dim=1) if ei.numel() else ei.reshape(2, 0)
        graphs.append(Data(x=x_t[lo:hi], edge_index=ei.long(),
                           y=torch.tensor([int(y_all[g])]), num_nodes=hi - lo))
    gs = GraphSet.from_graphs(graphs, [str(int(c)) for c in classes], source=src)
    return replace(gs, source=f"TU dataset {name}")  # the report records the name only
