"""Member / non-member node-id files: read, validate, and check that the two sets fit together.

A node-id file is either text (one id per line, or a CSV/TSV whose first column is the id;
further columns are ignored; one header row is accepted, see :func:`_read_text_ids`; string
ids are looked up in the graph's id table) or a ``.npy`` array of integers (read without
pickle, header checked against the file size). Every problem is one :class:`DataError` line
naming the file and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from graphleaks._readers import ReaderTable
from graphleaks.data.files import read_npy
from graphleaks.errors import DataError

#: The column name pandas writes for an unnamed Series or column (``to_csv(index=False)``):
#: a first line of just this is node id 0 or a header; :func:`_pandas_zero_header` decides.
PANDAS_DEFAULT_HEADER = "0"

#: Largest node-id file read (bytes). 64 MiB holds ~8 M ids as int64 ``.npy`` or ~6 M as text;
#: a bigger file is almost certainly the wrong file, and reading it would only waste memory.
MAX_NODE_ID_FILE_BYTES = 64 * 1024 * 1024


def read_node_ids(path: str | Path, num_nodes: int | None = None, *,
                  index: Mapping[str, int] | None = None) -> np.ndarray:
    """Read a file of distinct, non-negative integer node ids.

    Args:
        path: ``.npy`` integer array (1-D, or 2-D with one column), or a text file with one
            id per line (a CSV/TSV: the first column is read; one header row is
            accepted). Blank lines and
            lines starting with ``#`` are skipped.
        num_nodes: When given, every id must be below it.
        index: The graph's id table when its node ids are strings (``user_17`` -> row, as
            :func:`graphleaks.data.files.node_index` numbers them): every id of a text file
            is looked up in it, and a ``.npy`` file (integers only) is refused.

    Returns:
        The ids as a 1-D ``int64`` array, in file order.

    Raises:
        DataError: For a missing, empty, oversized or unreadable file, a non-integer,
            negative, duplicated or out-of-range id.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"node-id file {p} does not exist or is not a regular file; "
                        "give a file with one integer node id per line")
    size = p.stat().st_size
    if size > MAX_NODE_ID_FILE_BYTES:
        raise DataError(f"node-id file {p} is {size} bytes, over the "
                        f"{MAX_NODE_ID_FILE_BYTES}-byte limit; give only the node ids, "
                        "one per line")
    if size == 0:
        raise DataError(f"node-id file {p} is empty; give at least one node id")
    ids = NODE_ID_READERS.read(p, index=index)
    if ids.size == 0:
        raise DataError(f"node-id file {p} holds no node ids; give at least one")
    # messages give the entry (k-th id of the file), never an id: they do not quote files
    if ids.min() < 0:
        raise DataError(f"node-id file {p}: a negative node id (entry "
                        f"{_first(ids < 0)}); node ids are 0-based row indices")
    if num_nodes is not None and ids.max() >= num_nodes:
        bad = int((ids >= num_nodes).sum())
        raise DataError(f"node-id file {p}: {bad} id(s) (the first is entry "
                        f"{_first(ids >= num_nodes)}) are outside 0..{num_nodes - 1} (the graph "
                        f"has {num_nodes} nodes); give ids of nodes in the graph")
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        dup = uniq[counts > 1]
        repeat = np.isin(ids, dup) & ~_first_seen(ids)
        raise DataError(f"node-id file {p}: {dup.size} node id(s) appear more than once (the "
                        f"first repeat is entry {_first(repeat)}); list each node once")
    return ids


def _first(mask: np.ndarray) -> int:
    """1-based position of the first true entry."""
    return int(np.flatnonzero(mask)[0]) + 1


def _first_seen(ids: np.ndarray) -> np.ndarray:
    """Whether each entry is the first occurrence of its id."""
    first = np.zeros(len(ids), dtype=bool)
    first[np.unique(ids, return_index=True)[1]] = True
    return first


def _read_npy_ids(p: Path, index: Mapping[str, int] | None = None) -> np.ndarray:
    if index is not None:
        raise DataError(f"node-id file {p} is a .npy array of integers, but the graph's node "
                        "ids are strings; give a text file of the ids, one per line")
    arr = read_npy(p, "node-id")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise DataError(f"node-id file {p}: expected a 1-D array of node ids, got a "
                        f"{arr.ndim}-D array")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or not np.all(arr == np.round(arr)):
            raise DataError(f"node-id file {p}: node ids must be integers; save the ids with "
                            "an integer dtype")
    elif arr.dtype.kind == "b":
        raise DataError(f"node-id file {p}: holds booleans (a mask?); give the integer ids, "
                        "e.g. numpy.flatnonzero(mask)")
    if arr.size and np.abs(arr.astype(np.float64)).max() >= 2**62:
        raise DataError(f"node-id file {p}: node id out of range")
    return arr.astype(np.int64)


def _split(line: str) -> list[str]:
    return [c.strip() for c in line.replace("\t", ",").replace(" ", ",").split(",")]


def _read_text_ids(p: Path, index: Mapping[str, int] | None = None) -> np.ndarray:
    """Ids of a text file: the first column, or the second after a pandas index header.

    One header row is accepted: a first line whose id cell is not an id (``node_id``;
    pandas' ``,0`` or ``,node_id`` header, whose empty first cell heads the index column
    pandas writes, so the ids are then the second column), or the ``0`` pandas writes above
    an unnamed column when the file shows it is one (see :func:`_pandas_zero_header`; a
    first line ``0`` the file cannot tell from node id 0 is refused). Any later line that
    is not an id is refused, never skipped.
    """
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        # never quote the file: it may be any file on the machine
        raise DataError(f"cannot read node-id file {p}: not a UTF-8 text file or a .npy "
                        "array") from None
    lines = [(no, raw.strip()) for no, raw in enumerate(text.splitlines(), start=1)]
    lines = [(no, line) for no, line in lines if line and not line.startswith("#")]
    column = 0
    if lines:
        first = _split(lines[0][1])
        if first == [PANDAS_DEFAULT_HEADER] and _to_id(first[0], index) is not None:
            if _pandas_zero_header(p, lines, index):
                lines = lines[1:]
        elif _to_id(first[0], index) is None:
            if first[0] == "":  # pandas' index header: the index column, then the ids
                column = 1
                if len(first) != 2:
                    raise DataError(f"node-id file {p}: line {lines[0][0]} is a pandas index "
                                    "header over several columns; write one id column "
                                    "(to_csv(index=False))")
            lines = lines[1:]  # the one header row
    out: list[int] = []
    for lineno, line in lines:
        cells = _split(line)
        value = _to_id(cells[column], index) if len(cells) > column else None
        if value is None:
            what = ("an id of the graph's edge list" if index is not None
                    else "an integer node id")
            raise DataError(f"node-id file {p}: line {lineno} is not {what}; give one id per "
                            "line (one header row is allowed)")
        out.append(value)
    return np.asarray(out, dtype=np.int64)


def _pandas_zero_header(p: Path, lines: list[tuple[int, str]],
                        index: Mapping[str, int] | None) -> bool:
    """Whether a first line ``0`` of a one-column file is pandas' header, not node id 0.

    ``Series.to_csv(index=False)`` of an unnamed Series (or a DataFrame whose one column is
    ``0``) writes the column name ``0`` above the ids, which reads exactly like node id 0.
    The file itself decides when it can: a later ``0`` means the first one is the header
    (ids are distinct), and a file of that one line is node 0 (a header over no ids would be
    an empty file). Otherwise both readings are valid files, so the file is refused rather
    than losing node 0 or adding it silently.

    Raises:
        DataError: When the file cannot tell, naming how to disambiguate.
    """
    if len(lines) == 1:
        return False
    zero = _to_id(PANDAS_DEFAULT_HEADER, index)
    if any(_to_id(_split(line)[0], index) == zero for _, line in lines[1:]):
        return True
    raise DataError(f"node-id file {p}: line {lines[0][0]} is 0, which reads both as node id "
                    "0 and as the column name pandas writes for an unnamed Series "
                    "(to_csv(index=False)); put a named header such as node_id on the first "
                    "line (pandas: to_csv(index=False, header=['node_id'])), then the ids")


def _to_id(token: str, index: Mapping[str, int] | None) -> int | None:
    """A token as a node index: through the graph's id table (string ids), else an int."""
    if index is not None:
        return index.get(token)
    try:
        value = int(token)
    except ValueError:
        return None
    return value if abs(value) < 2**62 else None


#: Formats of node-id files (members, non-members, population, score row ids).
NODE_ID_READERS: ReaderTable[np.ndarray] = ReaderTable("node-id file")
NODE_ID_READERS.register("npy", (".npy",), _read_npy_ids,
                         "integer numpy array, 1-D or one column, no pickle")
NODE_ID_READERS.register("text", (), _read_text_ids,
                         "text, one integer id per line (first column of a CSV/TSV)",
                         fallback=True)


def check_membership(members: np.ndarray, non_members: np.ndarray, num_nodes: int) -> None:
    """Check that member and non-member ids are non-empty, in range and disjoint.

    Args:
        members: 1-D integer node ids of the training (member) nodes.
        non_members: 1-D integer node ids of the held-out (non-member) nodes.
        num_nodes: Number of nodes the ids index into.

    Raises:
        DataError: If either set is empty, not 1-D integers, has duplicates, names a node
            outside ``0..num_nodes-1``, or the sets overlap.
    """
    for name, ids in (("member", members), ("non-member", non_members)):
        arr = np.asarray(ids)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise DataError(f"{name} ids must be a 1-D array of integer node ids; got dtype "
                            f"{arr.dtype} and shape {arr.shape}")
        if arr.size == 0:
            raise DataError(f"the {name} set is empty; a membership audit needs at least one "
                            f"{name} node")
        if arr.min() < 0 or arr.max() >= num_nodes:
            # the ids are not quoted: they may come from a file
            raise DataError(f"{name} ids must lie in 0..{num_nodes - 1} ({num_nodes} nodes); "
                            f"{int(((arr < 0) | (arr >= num_nodes)).sum())} do not")
        if np.unique(arr).size != arr.size:
            raise DataError(f"{name} ids contain duplicates; list each node once")
    both = np.intersect1d(np.asarray(members), np.asarray(non_members))
    if both.size:
        raise DataError(f"member and non-member sets overlap in {both.size} node(s); a node "
                        "is either a member or a non-member")
