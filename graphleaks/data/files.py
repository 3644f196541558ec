"""User graphs: PyG ``Data``, networkx graphs, and edge-list / feature / label files."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from graphleaks.data.graph import check_graph
from graphleaks.errors import DataError


def from_pyg(data: Data, *, undirected: bool = True) -> Data:
    """Validate a user's PyG graph; make it undirected unless told otherwise."""
    data = check_graph(data, source="PyG graph")
    if undirected:
        ei, _ = remove_self_loops(data.edge_index)
        data.edge_index = coalesce(to_undirected(ei, num_nodes=data.num_nodes),
                                   num_nodes=data.num_nodes)
    return data


def from_networkx(
    graph: Any, *, feature_attr: str = "x", label_attr: str = "y"
) -> Data:
    """Convert a networkx graph whose nodes carry a feature vector and a label.

    Nodes are numbered in ``graph.nodes`` order.

    Args:
        graph: A ``networkx.Graph``.
        feature_attr: Node attribute holding the feature vector.
        label_attr: Node attribute holding the integer label (optional on all nodes).

    Raises:
        DataError: If a node lacks features or feature lengths differ.
    """
    nodes = list(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    try:
        x = np.asarray([np.asarray(graph.nodes[n][feature_attr], dtype=np.float32)
                        for n in nodes])
    except KeyError as exc:
        raise DataError(f"networkx graph: node {exc} has no {feature_attr!r} attribute") from exc
    except ValueError as exc:
        raise DataError(f"networkx graph: {feature_attr!r} vectors differ in length") from exc
    labels = [graph.nodes[n].get(label_attr) for n in nodes]
    y = torch.tensor(labels, dtype=torch.long) if all(v is not None for v in labels) else None
    pairs = [(index[u], index[v]) for u, v in graph.edges]
    ei = torch.tensor(pairs, dtype=torch.long).t() if pairs else torch.empty(2, 0, dtype=torch.long)
    return from_pyg(Data(x=torch.from_numpy(x), edge_index=ei, y=y))


def _read_table(path: Path, what: str) -> list[list[str]]:
    if not path.is_file():
        raise DataError(f"{what} file {path} does not exist")
    try:
        with path.open(newline="") as fh:
            sample = fh.read(4096)
            fh.seek(0)
            delim = "\t" if "\t" in sample and "," not in sample else ","
            if delim == "," and "," not in sample:
                delim = " "
            reader = csv.reader(fh, delimiter=delim)
            rows = [[c.strip() for c in r if c.strip() != ""] for r in reader]
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {what} file {path}: {exc}") from exc
    rows = [r for r in rows if r and not r[0].startswith("#")]
    if rows and not _is_number(rows[0][0]):
        rows = rows[1:]
    return rows


def _header(path: Path) -> list[str]:
    """The lower-cased column names of a table's header row, or [] without one."""
    with path.open(newline="") as fh:
        for line in fh:
            if line.strip() and not line.lstrip().startswith("#"):
                cells = [c.strip().lower() for c in line.replace("\t", ",").replace(" ", ",")
                         .split(",") if c.strip()]
                return [] if cells and _is_number(cells[0]) else cells
    return []


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _numeric(rows: list[list[str]], path: Path, what: str, dtype: type) -> np.ndarray:
    for i, r in enumerate(rows):
        for v in r:
            if not _is_number(v):
                raise DataError(f"{what} file {path}: non-numeric value {v!r} on data row {i + 1}")
    if len({len(r) for r in rows}) > 1:
        raise DataError(f"{what} file {path}: rows have different numbers of columns")
    arr = np.asarray(rows, dtype=np.float64)
    if dtype is np.int64:
        if not np.all(arr == np.round(arr)):
            raise DataError(f"{what} file {path}: expected integer values")
        return arr.astype(np.int64)
    return arr.astype(np.float32)


def node_index(edges: str | Path) -> dict[str, int]:
    """Node id (as written) to index, from an edge list.

    Integer ids map to themselves. Any other ids (``user_17``) are numbered in order of first
    appearance; such an edge list needs a header row, because a first row with a
    non-numeric id is read as the header.

    Raises:
        DataError: For a missing or empty file or a row with fewer than two ids.
    """
    path = Path(edges)
    rows = _read_table(path, "edge list")
    if not rows:
        raise DataError(f"edge list {path} is empty; a graph model needs edges")
    if any(len(r) < 2 for r in rows):
        raise DataError(f"edge list {path}: expected two columns (source, target)")
    tokens = [t for r in rows for t in r[:2]]
    if all(t.lstrip("-").isdigit() for t in tokens):
        return {t: int(t) for t in dict.fromkeys(tokens)}
    return {t: i for i, t in enumerate(dict.fromkeys(tokens))}


def load_edge_list(edges: str | Path) -> np.ndarray:
    """The ``[m, 2]`` node-index pairs of an edge-list file (extra columns are ignored).

    Integer ids are used as they are (as :func:`load_graph_files` reads them); string ids
    are numbered by :func:`node_index`.

    Raises:
        DataError: For a missing or empty file, non-numeric ids or fewer than two columns.
    """
    path = Path(edges)
    index = node_index(path)
    if any(not t.lstrip("-").isdigit() for t in index):
        # string ids: the same numbering as the embedding and attribute files use
        rows = _read_table(path, "edge list")
        return np.asarray([[index[r[0]], index[r[1]]] for r in rows], dtype=np.int64)
    e = _edge_rows(path)
    if e.min() < 0:
        raise DataError(f"edge list {path}: node ids must be non-negative")
    return e[:, :2]


def _edge_rows(path: Path) -> np.ndarray:
    """Every numeric column of an edge-list file, at least two."""
    rows = _read_table(path, "edge list")
    if not rows:
        raise DataError(f"edge list {path} is empty; a graph model needs edges")
    e = _numeric(rows, path, "edge list", np.int64)
    if e.shape[1] < 2:
        raise DataError(f"edge list {path}: expected two columns (source, target)")
    return e


def load_graph_files(
    edges: str | Path, *, features: str | Path, labels: str | Path | None = None
) -> Data:
    """Load a graph from an edge list, a feature matrix and optional labels.

    Args:
        edges: CSV/TSV/space-separated file of ``source,target`` integer node ids (a header
            row is skipped). Edges are made undirected. With a header whose third column is
            ``private``, that column (1 private, 0 public) marks the edges a defense with a
            public/private edge split protects (HeteroRR ``edge_split="column"``); they are
            kept as ``private_edge_index``. A pair marked private in either direction is
            private.
        features: ``.npy`` matrix (loaded with ``allow_pickle=False``) or CSV, one row per
            node in id order.
        labels: CSV with one label per row, or ``node_id,label`` rows.

    Raises:
        DataError: For a missing file, non-numeric values, an empty edge list, ids out of
            range or a label count that does not match the features.
    """
    edges, features = Path(edges), Path(features)
    e = _edge_rows(edges)
    if features.suffix == ".npy":
        if not features.is_file():
            raise DataError(f"feature file {features} does not exist")
        try:
            x = np.load(features, allow_pickle=False).astype(np.float32)
        except (ValueError, OSError) as exc:
            raise DataError(f"cannot read feature file {features}: {exc}") from exc
    else:
        x = _numeric(_read_table(features, "feature"), features, "feature", float)
    if x.ndim != 2:
        raise DataError(f"feature file {features}: expected a 2-D matrix, got shape {x.shape}")
    y = None
    if labels is not None:
        lp = Path(labels)
        lab = _numeric(_read_table(lp, "label"), lp, "label", np.int64)
        if lab.shape[1] >= 2:
            y_arr = np.full(x.shape[0], -1, dtype=np.int64)
            if lab[:, 0].min() < 0 or lab[:, 0].max() >= x.shape[0]:
                raise DataError(f"label file {lp}: node id outside 0..{x.shape[0] - 1}")
            y_arr[lab[:, 0]] = lab[:, 1]
            if (y_arr < 0).any():
                raise DataError(f"label file {lp}: {int((y_arr < 0).sum())} nodes have no label")
        else:
            y_arr = lab[:, 0]
        if len(y_arr) != x.shape[0]:
            raise DataError(f"label file {lp} has {len(y_arr)} labels but the feature matrix "
                            f"has {x.shape[0]} rows")
        y = torch.from_numpy(y_arr)
    data = Data(x=torch.from_numpy(x), edge_index=torch.from_numpy(e[:, :2].T.copy()), y=y)
    header = _header(edges)
    if len(header) >= 3 and header[2] == "private":
        flag = e[:, 2]
        if not np.isin(flag, (0, 1)).all():
            raise DataError(f"edge list {edges}: the private column must hold 0 (public) or 1 "
                            "(private) on every row")
        private = torch.from_numpy(e[flag == 1, :2].T.copy())
        data.private_edge_index = coalesce(to_undirected(private, num_nodes=x.shape[0]),
                                           num_nodes=x.shape[0])
    return from_pyg(check_graph(data, source=f"edge list {edges}"))
