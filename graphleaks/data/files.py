"""User graphs: PyG ``Data``, networkx graphs, and edge-list / feature / label files."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from graphleaks._limits import check_id_range, check_npy_header, input_boundary
from graphleaks._readers import ReaderTable
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


#: Column names that make a first row of string node ids an edge list's header.
EDGE_HEADER_WORDS = frozenset({"source", "target", "src", "dst", "from", "to", "u", "v",
                               "node", "node_id", "id", "user", "item", "head", "tail"})


def _read_table(path: Path, what: str, *, edge_ids: bool = False,
                ) -> tuple[list[str], list[list[str]]]:
    """The header (lower-cased, or []) and the data rows of a CSV/TSV/space-separated file.

    A UTF-8 byte-order mark is stripped before anything else, so it can never turn the
    first cell into a non-number. The first row is a header only if none of its cells is a
    number, so a data row is never dropped as a header. With ``edge_ids`` (an edge list),
    string node ids make a first row of words ambiguous: it is an edge when one of its first
    two cells is an id of another row, the header when they are known column names
    (:data:`EDGE_HEADER_WORDS`, one suffices) or the ids below are integers; a first row
    that is neither is refused, never dropped (a lone edge and a header look alike).
    """
    if not path.is_file():
        raise DataError(f"{what} file {path} does not exist or is not a regular file")
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            sample = fh.read(4096)
            fh.seek(0)  # the utf-8-sig decoder is reset and strips the BOM again
            delim = "\t" if "\t" in sample and "," not in sample else ","
            if delim == "," and "," not in sample:
                delim = " "
            reader = csv.reader(fh, delimiter=delim)
            with input_boundary(f"{what} file {path}"):
                rows = [[c.strip() for c in r if c.strip() != ""] for r in reader]
    except (OSError, UnicodeDecodeError, csv.Error):
        # never quote the file: it may be any file on the machine
        raise DataError(f"cannot read {what} file {path}: not a UTF-8 text table") from None
    rows = [r for r in rows if r and not r[0].startswith("#")]
    if rows and not any(_is_number(c) for c in rows[0]):
        if edge_ids and not _edge_header(rows, path):
            return [], rows
        return [c.lower() for c in rows[0]], rows[1:]
    return [], rows


def _edge_header(rows: list[list[str]], path: Path) -> bool:
    """Whether an edge list's first row (no number in it) is its header; see _read_table."""
    first = rows[0][:2]
    ids = rows[1:]
    if len(first) < 2 or all(_is_int_id(c) for r in ids for c in r[:2]):
        return True  # integer ids below: words above them can only be a header
    seen = {c for r in ids for c in r[:2]}
    if any(c in seen for c in first):
        return False
    if any(c.lower() in EDGE_HEADER_WORDS for c in first):
        return True
    raise DataError(f"edge list {path}: its first row may be a header or an edge (its ids "
                    "appear in no other row); start the file with the header row "
                    "source,target")


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _numeric(rows: list[list[str]], path: Path, what: str, dtype: type) -> np.ndarray:
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            if not _is_number(v):
                raise DataError(f"{what} file {path}: non-numeric value in column {j + 1} of "
                                f"data row {i + 1}")
    if len({len(r) for r in rows}) > 1:
        raise DataError(f"{what} file {path}: rows have different numbers of columns")
    arr = np.asarray(rows, dtype=np.float64)
    if dtype is np.int64:
        if not np.all(arr == np.round(arr)) or not np.isfinite(arr).all():
            raise DataError(f"{what} file {path}: expected integer values")
        if arr.size and np.abs(arr).max() >= 2**62:
            raise DataError(f"{what} file {path}: integer value out of range")
        return arr.astype(np.int64)
    return arr.astype(np.float32)


def read_npy(path: Path, what: str) -> np.ndarray:
    """Load a plain numeric ``.npy`` array, checking its header against the file size first.

    A forged header may claim billions of rows; the array is only read once the header's
    shape and dtype account for exactly the bytes in the file. Pickled (object) arrays are
    refused, and no error quotes the file.

    Raises:
        DataError: For a missing, malformed, forged, pickled or non-numeric file.
    """
    if not path.is_file():
        raise DataError(f"{what} file {path} does not exist or is not a regular file")
    try:
        with path.open("rb") as fh:
            check_npy_header(fh, path.stat().st_size, f"{what} file {path}")
    except OSError:
        raise DataError(f"{what} file {path} cannot be read") from None
    with input_boundary(f"{what} file {path}"):
        try:
            return np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            raise DataError(f"{what} file {path} is not a valid .npy array file") from None


def _features_npy(path: Path) -> np.ndarray:
    return read_npy(path, "feature").astype(np.float32)


def _features_table(path: Path) -> np.ndarray:
    return _numeric(_read_table(path, "feature")[1], path, "feature", float)


#: Formats of feature matrices (``--features``), one row per node in id order.
FEATURE_READERS: ReaderTable[np.ndarray] = ReaderTable("feature file", option="--features")
FEATURE_READERS.register("npy", (".npy",), _features_npy, "numpy matrix, no pickle")
FEATURE_READERS.register("table", (), _features_table,
                         "CSV/TSV/space-separated text, one row per node", fallback=True)


def _load_features(features: Path) -> np.ndarray:
    x = FEATURE_READERS.read(features)
    if x.ndim != 2:
        raise DataError(f"feature file {features}: expected a 2-D matrix (one row per node), "
                        f"got a {x.ndim}-D array")
    return x


def _load_labels(lp: Path, features: Path, num_rows: int) -> torch.Tensor:
    lab = _numeric(_read_table(lp, "label")[1], lp, "label", np.int64)
    if lab.size == 0:
        raise DataError(f"label file {lp} holds no labels")
    if lab.shape[1] >= 2:
        y_arr = np.full(num_rows, -1, dtype=np.int64)
        if lab[:, 0].min() < 0 or lab[:, 0].max() >= num_rows:
            raise DataError(f"label file {lp}: node id outside 0..{num_rows - 1} (feature file "
                            f"{features} has {num_rows} rows)")
        y_arr[lab[:, 0]] = lab[:, 1]
        if (y_arr < 0).any():
            raise DataError(f"label file {lp}: {int((y_arr < 0).sum())} nodes have no label")
    else:
        y_arr = lab[:, 0]
    if len(y_arr) != num_rows:
        raise DataError(f"feature file {features} has {num_rows} rows but label file {lp} has "
                        f"{len(y_arr)} labels; give one feature row and one label per node")
    return torch.from_numpy(y_arr)


def node_index(edges: str | Path) -> dict[str, int]:
    """Node id (as written) to index, from an edge list.

    Integer ids map to themselves. Any other ids (``user_17``) are numbered in order of first
    appearance; a first row of words is the header only where it cannot be an edge
    (see :func:`_read_table`).

    Raises:
        DataError: For a missing or empty file or a row with fewer than two ids.
    """
    path = Path(edges)
    rows = _read_table(path, "edge list", edge_ids=True)[1]
    if not rows:
        raise DataError(f"edge list {path} is empty; a graph model needs edges")
    if any(len(r) < 2 for r in rows):
        raise DataError(f"edge list {path}: expected two columns (source, target)")
    tokens = [t for r in rows for t in r[:2]]
    if all(_is_int_id(t) for t in tokens):
        index = {t: int(t) for t in dict.fromkeys(tokens)}
        # ids index rows: node 10**15 must not size a 10**15-row array
        check_id_range(max(index.values()), len(set(index.values())), f"edge list {path}")
        return index
    return {t: i for i, t in enumerate(dict.fromkeys(tokens))}


def _is_int_id(token: str) -> bool:
    # ASCII only: str.isdigit() also accepts "²", which int() refuses
    digits = token[1:] if token.startswith("-") else token
    return token.isascii() and digits.isdigit()


def load_edge_list(edges: str | Path) -> np.ndarray:
    """The ``[m, 2]`` node-index pairs of an edge-list file (extra columns are ignored).

    Integer ids are used as they are (as :func:`load_graph_files` reads them); string ids
    are numbered by :func:`node_index`.

    Raises:
        DataError: For a missing or empty file, non-numeric ids or fewer than two columns.
    """
    path = Path(edges)
    index = node_index(path)
    if any(not _is_int_id(t) for t in index):
        # string ids: the same numbering as the embedding and attribute files use
        rows = _read_table(path, "edge list", edge_ids=True)[1]
        return np.asarray([[index[r[0]], index[r[1]]] for r in rows], dtype=np.int64)
    e = _edge_rows(path)[1]
    if e.min() < 0:
        raise DataError(f"edge list {path}: node ids must be non-negative")
    return e[:, :2]


def _edge_rows(path: Path) -> tuple[list[str], np.ndarray]:
    """The header and every numeric column of an edge-list file, at least two."""
    header, rows = _read_table(path, "edge list", edge_ids=True)
    if not rows:
        raise DataError(f"edge list {path} is empty; a graph model needs edges")
    e = _numeric(rows, path, "edge list", np.int64)
    if e.shape[1] < 2:
        raise DataError(f"edge list {path}: expected two columns (source, target)")
    return header, e


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

    String node ids (``user_17``, every id of the edge list a string) are numbered as
    :func:`node_index` numbers them (order of first appearance in the edge list; nodes only
    in the feature file follow in its order);
    the features are then a CSV whose first column is the node id, the labels
    ``node_id,label`` rows, and the graph carries the ids as ``node_names`` so reports
    give them back.

    Raises:
        DataError: For a missing file, non-numeric values, an empty edge list, ids out of
            range or a label count that does not match the features.
    """
    edges, features = Path(edges), Path(features)
    index = node_index(edges)
    kinds = {_is_int_id(t) for t in index}
    if kinds == {False}:
        return _load_string_id_graph(edges, features, labels, index)
    if kinds == {True, False}:
        rows = _read_table(edges, "edge list", edge_ids=True)[1]
        bad = next(i for i, r in enumerate(rows) if not all(_is_int_id(t) for t in r[:2]))
        # the row, never the id: messages do not quote what a file holds
        raise DataError(f"edge list {edges}: a non-numeric node id among integer ones (data "
                        f"row {bad + 1}); use integers 0..n-1 for every node, or string ids "
                        "for every node")
    header, e = _edge_rows(edges)
    x = _load_features(features)
    if e[:, :2].min() < 0 or e[:, :2].max() >= x.shape[0]:
        # the id itself is not quoted: messages never show what a file holds
        raise DataError(f"edge list {edges} refers to a node id outside 0..{x.shape[0] - 1} "
                        f"(feature file {features} has {x.shape[0]} rows); give one feature "
                        "row per node")
    y = _load_labels(Path(labels), features, x.shape[0]) if labels is not None else None
    data = Data(x=torch.from_numpy(x), edge_index=torch.from_numpy(e[:, :2].T.copy()), y=y)
    if len(header) >= 3 and header[2] == "private":
        flag = e[:, 2]
        if not np.isin(flag, (0, 1)).all():
            raise DataError(f"edge list {edges}: the private column must hold 0 (public) or 1 "
                            "(private) on every row")
        private = torch.from_numpy(e[flag == 1, :2].T.copy())
        data.private_edge_index = coalesce(to_undirected(private, num_nodes=x.shape[0]),
                                           num_nodes=x.shape[0])
    return from_pyg(check_graph(data, source=f"edge list {edges}"))


def _load_string_id_graph(edges: Path, features: Path, labels: str | Path | None,
                          index: dict[str, int]) -> Data:
    """A graph whose node ids are strings: features and labels keyed by the same ids."""
    header, rows = _read_table(edges, "edge list", edge_ids=True)
    if len(header) >= 3 and header[2] == "private":
        raise DataError(f"edge list {edges}: a private column needs integer node ids; number "
                        "the nodes 0..n-1, or drop the column")
    if FEATURE_READERS.reader(features).name != "table":
        raise DataError(f"edge list {edges} has string node ids, so the rows of feature file "
                        f"{features} (a bare matrix) cannot be matched to them; give a CSV "
                        "whose first column is the node id")
    index = dict(index)
    feat_rows = _read_table(features, "feature")[1]
    if not feat_rows:
        raise DataError(f"feature file {features} holds no rows")
    rows_by_node: dict[int, list[str]] = {}
    for i, r in enumerate(feat_rows):
        node = index.setdefault(r[0], len(index))  # a node in no edge: isolated, appended
        if node in rows_by_node:
            raise DataError(f"feature file {features}: data row {i + 1} repeats an earlier "
                            "node id; give one feature row per node")
        rows_by_node[node] = r[1:]
    n = len(index)
    if len(rows_by_node) != n:
        raise DataError(f"feature file {features}: {n - len(rows_by_node)} node(s) of edge list "
                        f"{edges} have no feature row; give one row per node, the node id first")
    x = _numeric([rows_by_node[i] for i in range(n)], features, "feature", float)
    pairs = np.asarray([[index[r[0]], index[r[1]]] for r in rows], dtype=np.int64)
    y = None
    if labels is not None:
        lp = Path(labels)
        lab_rows = _read_table(lp, "label")[1]
        if not lab_rows or any(len(r) < 2 for r in lab_rows):
            raise DataError(f"label file {lp}: with string node ids give node_id,label rows")
        y_arr = np.full(n, -1, dtype=np.int64)
        for i, r in enumerate(lab_rows):
            found = index.get(r[0])
            if found is None:
                raise DataError(f"label file {lp}: data row {i + 1} names a node that is in "
                                f"neither {edges} nor {features}")
            y_arr[found] = _numeric([r[1:2]], lp, "label", np.int64)[0, 0]
        if (y_arr < 0).any():
            raise DataError(f"label file {lp}: {int((y_arr < 0).sum())} nodes have no label "
                            "(or a negative one)")
        y = torch.from_numpy(y_arr)
    data = Data(x=torch.from_numpy(x), edge_index=torch.from_numpy(pairs.T.copy()), y=y)
    out = from_pyg(check_graph(data, source=f"edge list {edges}"))
    names = [""] * n
    for token, i in index.items():
        names[i] = token
    out.node_names = names
    return out
