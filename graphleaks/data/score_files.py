"""Exported per-node scores (posteriors, logits or log-probabilities) for scores-only audits.

When a model cannot leave its environment, its owner exports one score row per node of the
member and non-member sets, with the node ids and true labels. Accepted files:

* ``.npz`` with arrays ``scores`` (``[n, C]``), ``labels`` (``[n]``) and optionally
  ``node_ids`` (``[n]``; default ``0..n-1``): integers, or string ids saved as a
  fixed-width string array (``numpy.asarray(ids, dtype=str)``; an object array would be a
  pickle and is refused), read without pickle;
* ``.npy`` holding the ``[n, C]`` score matrix, with the labels in a separate file (one
  label per row, or ``node_id,label`` rows) and optionally a node-id file;
* CSV/TSV with columns ``node_id, label`` and then one column per class (a header row is
  optional).

:func:`check_scores` validates arrays from any source (the Python API uses it directly).
Every problem is one :class:`DataError` line naming the file or argument and the fix.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np

from graphleaks._limits import check_npz, input_boundary
from graphleaks._readers import ReaderTable
from graphleaks.data.files import _is_number, _numeric, _read_table, read_npy
from graphleaks.data.node_sets import read_node_ids
from graphleaks.errors import DataError

ScoreKind = Literal["probabilities", "logits", "log_probabilities"]
SCORE_KINDS: tuple[str, ...] = ("probabilities", "logits", "log_probabilities")

#: Largest score file read (bytes): ~2 M nodes × 16 classes as float64.
MAX_SCORE_FILE_BYTES = 256 * 1024 * 1024
#: Largest decompressed ``.npz`` score export (all arrays together): the file limit is on
#: compressed bytes, and zeros compress ~1000:1.
MAX_SCORE_ARRAY_BYTES = 1 << 30
#: Rows of probabilities must sum to 1 within this (float32 softmax rounding is ~1e-6).
PROB_TOLERANCE = 1e-3


@dataclass(frozen=True)
class NodeScores:
    """Validated per-node scores.

    Attributes:
        node_ids: Distinct non-negative node ids, one per row.
        scores: ``[n, C]`` finite scores of the kind ``output``.
        labels: ``[n]`` true labels in ``0..C-1``.
        output: ``probabilities``, ``logits`` or ``log_probabilities``.
        source: Where they came from (a file path or ``"arrays"``), for messages and reports.
        names: The export's string node ids, one per row, when it names nodes by strings;
            ``node_ids`` are then the row numbers, and reports give these names back.
    """

    node_ids: np.ndarray
    scores: np.ndarray
    labels: np.ndarray
    output: str
    source: str
    names: tuple[str, ...] | None = None

    @property
    def num_classes(self) -> int:
        """Number of score columns."""
        return int(self.scores.shape[1])

    @property
    def id_table(self) -> dict[str, int] | None:
        """String node id -> node index, when the export names nodes by strings."""
        if self.names is None:
            return None
        return {name: int(i) for name, i in zip(self.names, self.node_ids, strict=True)}


def check_scores(
    scores: np.ndarray,
    labels: np.ndarray,
    *,
    node_ids: np.ndarray | None = None,
    output: str = "probabilities",
    source: str = "scores",
) -> NodeScores:
    """Validate a score matrix, its labels and node ids.

    Args:
        scores: ``[n, C]`` numeric scores, ``C >= 2``.
        labels: ``[n]`` integer true labels in ``0..C-1``.
        node_ids: ``[n]`` distinct non-negative integer ids (default ``0..n-1``), or
            distinct string ids (numbered by row, kept as :attr:`NodeScores.names`).
        output: What the scores are: ``probabilities`` (rows in [0, 1] summing to 1),
            ``logits`` (any finite values) or ``log_probabilities`` (rows whose exponentials
            sum to 1).
        source: Name used in error messages.

    Returns:
        The validated :class:`NodeScores` (float scores kept in their float dtype).

    Raises:
        DataError: For a wrong shape or dtype, NaN/inf, bad ids or labels, or rows that are
            not probabilities (log-probabilities) when declared so.
    """
    if output not in SCORE_KINDS:
        raise DataError(f"{source}: unknown score kind {output!r}; choose one of: "
                        f"{', '.join(SCORE_KINDS)}")
    s = np.asarray(scores)
    if s.dtype.kind not in "iuf" or s.dtype.kind == "b":
        raise DataError(f"{source}: scores must be numeric, got dtype {s.dtype}")
    if s.ndim != 2 or s.shape[1] < 2 or s.shape[0] < 1:
        raise DataError(f"{source}: scores must be a 2-D [nodes, classes] matrix with at least "
                        f"2 classes, got shape {s.shape}; export one row of class scores per "
                        "node")
    if s.dtype.kind != "f":
        s = s.astype(np.float64)
    bad = ~np.isfinite(s)
    if bad.any():
        row = int(np.argwhere(bad)[0, 0])
        raise DataError(f"{source}: {int(bad.sum())} score(s) are NaN or infinite (first in row "
                        f"{row}); export finite scores")
    n, c = s.shape
    y = np.asarray(labels)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or len(y) != n:
        raise DataError(f"{source}: {n} score rows but labels of shape {y.shape}; give one "
                        "true label per scored node")
    if y.dtype.kind == "f":
        if not np.isfinite(y).all() or not np.all(y == np.round(y)):
            raise DataError(f"{source}: labels must be integer class indices")
    elif y.dtype.kind not in "iu":
        raise DataError(f"{source}: labels must be integer class indices, got dtype {y.dtype}")
    y = y.astype(np.int64)
    if y.min() < 0 or y.max() >= c:
        # row indices, never values: messages do not quote what a file holds
        raise DataError(f"{source}: labels must lie in 0..{c - 1} (the scores have {c} "
                        f"columns); {int(((y < 0) | (y >= c)).sum())} do not (first in row "
                        f"{int(np.flatnonzero((y < 0) | (y >= c))[0])}); check the label "
                        "encoding or the score columns")
    names: tuple[str, ...] | None = None
    if node_ids is not None and np.asarray(node_ids).dtype.kind in "US":
        # string ids (a user's own, e.g. user_17): numbered by row, named in reports
        raw_ids = np.asarray(node_ids).reshape(-1).tolist()
        try:  # bytes ids (dtype S) are the same names as text: decoded, never repr'd
            names = tuple(v.decode("utf-8") if isinstance(v, bytes) else str(v)
                          for v in raw_ids)
        except UnicodeDecodeError:
            raise DataError(f"{source}: node ids are bytes that are not UTF-8 text; save "
                            "them as numpy.asarray(ids, dtype=str)") from None
        if len(names) != n:
            raise DataError(f"{source}: {n} score rows but {len(names)} node ids; give one "
                            "node id per row")
        if len(set(names)) != n:
            first_row = {v: i for i, v in reversed(list(enumerate(names)))}
            row = next(i for i, v in enumerate(names) if first_row[v] != i)
            raise DataError(f"{source}: a node id has more than one score row (row {row} "
                            "repeats an earlier one); export each node once")
        node_ids = None
    if node_ids is None:
        ids = np.arange(n, dtype=np.int64)
    else:
        ids = np.asarray(node_ids)
        if ids.ndim != 1 or len(ids) != n:
            raise DataError(f"{source}: {n} score rows but node ids of shape {ids.shape}; give "
                            "one node id per row")
        if ids.dtype.kind == "f" and np.isfinite(ids).all() and np.all(ids == np.round(ids)):
            ids = ids.astype(np.int64)
        if ids.dtype.kind not in "iu":
            raise DataError(f"{source}: node ids must be integers, got dtype {ids.dtype}")
        ids = ids.astype(np.int64)
        if ids.min() < 0:
            raise DataError(f"{source}: a negative node id (row "
                            f"{int(np.flatnonzero(ids < 0)[0])}); node ids are 0-based")
        uniq, first, counts = np.unique(ids, return_index=True, return_counts=True)
        if (counts > 1).any():
            later = np.ones(n, dtype=bool)
            later[first] = False
            raise DataError(f"{source}: a node id has more than one score row (row "
                            f"{int(np.flatnonzero(later)[0])} repeats an earlier one); export "
                            "each node once")
    _check_kind(s, output, source)
    return NodeScores(node_ids=ids, scores=s, labels=y, output=output, source=source,
                      names=names)


def _check_kind(s: np.ndarray, output: str, source: str) -> None:
    if output == "logits":
        return
    if output == "probabilities":
        out = ((s < -PROB_TOLERANCE) | (s > 1 + PROB_TOLERANCE)).any(axis=1)
        if out.any():
            raise DataError(f"{source}: probabilities must lie in [0, 1]; row "
                            f"{int(np.flatnonzero(out)[0])} holds a value outside; if these are "
                            "logits, pass the output kind 'logits'")
        sums = s.astype(np.float64).sum(axis=1)
    else:  # log_probabilities
        pos = (s > PROB_TOLERANCE).any(axis=1)
        if pos.any():
            raise DataError(f"{source}: log-probabilities must be <= 0; row "
                            f"{int(np.flatnonzero(pos)[0])} holds a positive value; if these are "
                            "logits, pass the output kind 'logits'")
        sums = np.exp(s.astype(np.float64)).sum(axis=1)
    off = np.abs(sums - 1.0) > PROB_TOLERANCE
    if off.any():
        row = int(np.flatnonzero(off)[0])
        raise DataError(f"{source}: {int(off.sum())} row(s) of {output.replace('_', '-')} do "
                        f"not sum to 1 (first: row {row}); if these are logits, pass the output "
                        "kind 'logits'")


def load_scores(
    path: str | Path,
    *,
    output: str = "probabilities",
    labels: str | Path | None = None,
    node_ids: str | Path | None = None,
) -> NodeScores:
    """Read and validate an exported score file (see the module docstring for formats).

    Args:
        path: ``.npz``, ``.npy`` or CSV/TSV score file.
        output: ``probabilities``, ``logits`` or ``log_probabilities``.
        labels: Label file for a ``.npy`` score matrix (one label per row, or
            ``node_id,label`` rows); refused with the other formats, which hold labels.
        node_ids: Node-id file for a ``.npy`` score matrix (default: row ``i`` is node ``i``).

    Raises:
        DataError: For a missing, oversized or malformed file, or invalid scores.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"score file {p} does not exist or is not a regular file")
    size = p.stat().st_size
    if size > MAX_SCORE_FILE_BYTES:
        raise DataError(f"score file {p} is {size} bytes, over the {MAX_SCORE_FILE_BYTES}-byte "
                        "limit; export only the member and non-member rows")
    ns = SCORE_READERS.read(p, output=output, labels=labels, node_ids=node_ids)
    # messages above named the whole path; the report records the name only (where the
    # file lies is the user's, not evidence)
    return replace(ns, source=f"score file {p.name}")


def _own_labels(p: Path, labels: str | Path | None, node_ids: str | Path | None) -> None:
    """Refuse separate label/node-id files for a format that holds its own."""
    if labels is not None or node_ids is not None:
        raise DataError(f"score file {p} holds its own labels and node ids; separate label or "
                        "node-id files go with a .npy score matrix only")


def _load_npy(p: Path, output: str, labels: str | Path | None,
              node_ids: str | Path | None) -> NodeScores:
    src = f"score file {p}"
    scores = read_npy(p, "score")
    if labels is None:
        raise DataError(f"{src} is a bare .npy matrix; give its true labels too (--labels "
                        "FILE), or export a .npz with scores, labels and node_ids")
    ids = read_node_ids(node_ids) if node_ids is not None else None
    y = _read_labels(Path(labels), ids, len(scores) if scores.ndim >= 1 else 0)
    return check_scores(scores, y, node_ids=ids, output=output, source=src)


def _load_table(p: Path, output: str, labels: str | Path | None,
                node_ids: str | Path | None) -> NodeScores:
    _own_labels(p, labels, node_ids)
    src = f"score file {p}"
    header, rows = _read_table(p, "score")
    if not rows:
        raise DataError(f"{src} holds no rows; export node_id,label,score columns")
    if any(not _is_number(r[0]) for r in rows):
        # string node ids (user_17): the id column stays text, the rest must be numbers
        table = _numeric([r[1:] for r in rows], p, "score", float)
        if table.shape[1] < 3:
            raise DataError(f"{src}: expected columns node_id, label and at least 2 class "
                            f"scores, got {table.shape[1] + 1} column(s)")
        raw = np.asarray([r[1:] for r in rows], dtype=np.float64)
        ids = np.asarray([r[0] for r in rows], dtype=str)
        return check_scores(raw[:, 1:], raw[:, 0], node_ids=ids, output=output, source=src)
    table = _numeric(rows, p, "score", float)
    if table.shape[1] < 4:
        raise DataError(f"{src}: expected columns node_id, label and at least 2 class scores, "
                        f"got {table.shape[1]} column(s)")
    # parsed as float64 first so ids and labels keep integer precision
    raw = np.asarray(rows, dtype=np.float64)
    return check_scores(raw[:, 2:], raw[:, 1], node_ids=raw[:, 0], output=output, source=src)


def _load_npz(p: Path, output: str, labels: str | Path | None,
              node_ids: str | Path | None) -> NodeScores:
    _own_labels(p, labels, node_ids)
    src = f"score file {p}"
    # members are checked against their headers and the decompressed-size limit before
    # numpy allocates anything: a 0.5 MB .npz may declare gigabytes
    try:  # node_ids may be strings (user_17): fixed-width text, never pickled objects
        check_npz(p, src, max_bytes=MAX_SCORE_ARRAY_BYTES, text_members=("node_ids",))
    except DataError as exc:
        if "non-numeric dtype" not in str(exc):
            raise
        raise DataError(f"{src}: an array is not numeric (pickled object arrays are never "
                        "loaded); save scores and labels as numbers and string node_ids as "
                        "numpy.asarray(ids, dtype=str)") from None
    try:
        with np.load(p, allow_pickle=False) as z:
            names = set(z.files)
            if not {"scores", "labels"} <= names:
                # the names found are not listed: they are the file's content
                raise DataError(f"{src}: a .npz needs arrays 'scores' and 'labels' (and "
                                "optionally 'node_ids')")
            with input_boundary(src):
                arrays = {k: z[k] for k in ("scores", "labels", "node_ids") if k in names}
    except DataError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        # pickled (object) arrays raise ValueError; never quote the file
        raise DataError(f"{src} is not a valid .npz of numeric arrays (pickled arrays are "
                        "never loaded)") from None
    return check_scores(arrays["scores"], arrays["labels"], node_ids=arrays.get("node_ids"),
                        output=output, source=src)


def _read_labels(lp: Path, ids: np.ndarray | None, n_rows: int) -> np.ndarray:
    """Labels aligned with the score rows: one per row, or ``node_id,label`` rows."""
    rows = _read_table(lp, "label")[1]
    if not rows:
        raise DataError(f"label file {lp} holds no labels")
    lab = _numeric(rows, lp, "label", np.int64)
    if lab.shape[1] == 1:
        return lab[:, 0]
    row_ids = ids if ids is not None else np.arange(n_rows, dtype=np.int64)
    by_id = dict(zip(lab[:, 0].tolist(), lab[:, 1].tolist(), strict=False))
    missing = [r for r, i in enumerate(row_ids.tolist()) if i not in by_id]
    if missing:
        raise DataError(f"label file {lp}: {len(missing)} scored node(s) have no label (the "
                        f"first is score row {missing[0]}); give a label for every scored node")
    return np.asarray([by_id[int(i)] for i in row_ids], dtype=np.int64)


#: Formats of exported score files (``graphleaks audit-scores --scores``).
SCORE_READERS: ReaderTable[NodeScores] = ReaderTable("score file", option="--scores")
SCORE_READERS.register("npz", (".npz",), _load_npz,
                       "numpy archive of scores, labels and optional node_ids, no pickle")
SCORE_READERS.register("npy", (".npy",), _load_npy,
                       "numpy score matrix, with --labels (and optionally node ids)")
SCORE_READERS.register("table", (), _load_table,
                       "CSV/TSV text: node_id, label, then one column per class",
                       fallback=True)
