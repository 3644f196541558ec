"""Size and depth limits shared by every reader of untrusted input.

A hostile input file need not be large to cost a lot: a 0.5 MB ``.npz`` may decompress to
gigabytes, a ``.npy`` header may declare a shape of 10^12 rows, an edge list may name node
10^15 (and so size a 10^15-row array), and ``[[[[...`` nests past Python's recursion limit.
Each reader therefore checks the *declared* and the *actual* decompressed size of what it is
about to load, and the depth of any JSON, before anything is materialised; every refusal is a
one-line :class:`~graphleaks.errors.GraphleaksError` that names the file (or option) and the
kind of problem, and never quotes the content, not even a number read from it.

The constants are module attributes so that a caller (or a test) can name them; the readers
pass the limit that fits their file kind.
"""

from __future__ import annotations

import contextlib
import json
import tokenize
import zipfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from graphleaks.errors import DataError, GraphleaksError, InvalidConfigError

#: Deepest JSON nesting any reader accepts. graphleaks' own files nest at most ~8 levels
#: (a report's per-attack slices); Python's recursive code would fail near 1000.
MAX_JSON_DEPTH = 64
#: Largest JSON document read from a file (manifests, split.json, embeddings.json, reports).
#: JSON inflates ~20x once parsed (``[[],[],...]``), so this also bounds parsed memory.
MAX_JSON_BYTES = 64 << 20
#: Largest JSON text given as a command-line option value (``--model-kwargs``, ``--set``).
MAX_OPTION_JSON_BYTES = 1 << 20
#: Largest decompressed array read from one ``.npy`` file or ``.npz`` member (2 GiB).
MAX_ARRAY_BYTES = 2 << 30
#: A compressed ``.npz`` member may expand at most this many times its stored size once it is
#: larger than :data:`MAX_INFLATED_UNCHECKED` (deflate reaches ~1000x on zeros, so a 0.5 MB file
#: could otherwise ask for 512 MiB, and the float copy after it doubled that). Real scores and
#: features compress a few times; a file refused here loads when saved with ``np.savez``.
MAX_EXPANSION = 100
#: Decompressed size below which a member's expansion ratio is not checked.
MAX_INFLATED_UNCHECKED = 32 << 20
#: Most members an ``.npz`` may hold: graphleaks reads at most a handful of named arrays.
MAX_NPZ_MEMBERS = 64
#: Largest text file of a graph set read (a TU-format table, a SMILES list, an SDF file). The
#: biggest public TU sets (REDDIT-MULTI-12K, ~1.4 M edges) keep their ``_A.txt`` under 32 MiB.
MAX_GRAPH_SET_FILE_BYTES = 512 << 20
#: Most graphs one graph set may hold (each is a small Python object: millions cost gigabytes).
MAX_GRAPHS = 1_000_000
#: Most distinct graph classes, or distinct categorical node labels one-hot encoded: a forged
#: file with a distinct value per node would otherwise ask for a dense nodes x nodes one-hot.
MAX_CATEGORIES = 4096


def check_file_size(path: Path, limit: int, what: str,
                    error: type[GraphleaksError] = DataError) -> int:
    """The size of ``path`` in bytes, refusing a missing, non-regular, empty or oversized file.

    Args:
        path: The file.
        limit: Largest accepted size in bytes.
        what: How messages name the file (``TU file x_A.txt``).
        error: The exception class raised.

    Raises:
        GraphleaksError: Naming the file and the problem (never its content).
    """
    try:
        if not path.is_file():
            raise error(f"{what} does not exist or is not a regular file")
        size = path.stat().st_size
    except OSError:
        raise error(f"{what} cannot be read") from None
    if size == 0:
        raise error(f"{what} is empty")
    if size > limit:
        raise error(f"{what} is {size} bytes, over the {limit}-byte limit; give a smaller file")
    return size


#: Integer node ids of an edge list must lie below ``max(MIN_ID_BOUND, ID_SPREAD * distinct)``:
#: ids index rows, so an id far past the number of nodes would size an array by the id, not by
#: the data (node 10^15 would ask for 10^15 rows). Gaps of isolated nodes stay allowed.
ID_SPREAD = 16
#: See :data:`ID_SPREAD`: small graphs may leave many ids unused.
MIN_ID_BOUND = 1 << 16


def id_bound(num_distinct: int) -> int:
    """The exclusive upper bound on integer node ids among ``num_distinct`` distinct ids."""
    return max(MIN_ID_BOUND, ID_SPREAD * int(num_distinct))


def check_id_range(max_id: int, num_distinct: int, what: str,
                   error: type[GraphleaksError] = DataError) -> None:
    """Refuse integer node ids that would size an array far past the data.

    Args:
        max_id: The largest id read.
        num_distinct: How many distinct ids the file holds.
        what: The file, as the message should name it (``edge list e.csv``).
        error: The exception class raised.

    Raises:
        GraphleaksError: If ``max_id`` reaches :func:`id_bound` of ``num_distinct``.
    """
    if max_id >= id_bound(num_distinct):
        raise error(f"{what}: integer node ids run far past the number of distinct nodes "
                    f"(at most {ID_SPREAD}x, or below {MIN_ID_BOUND}); number the nodes "
                    "0..n-1, or use string ids (e.g. user_17) with a header row")


@contextlib.contextmanager
def input_boundary(what: str, error: type[GraphleaksError] = DataError) -> Iterator[None]:
    """Turn ``MemoryError`` and ``RecursionError`` while reading ``what`` into a refusal.

    Used around the parsing of one input only, so a failure during training or attacking is
    never mistaken for bad input.
    """
    try:
        yield
    except MemoryError:
        raise error(f"{what} needs more memory than this machine has to read; it is too large "
                    "or forged (check the file, or give a smaller one)") from None
    except RecursionError:
        raise error(f"{what} is nested too deeply to read (at most {MAX_JSON_DEPTH} levels); "
                    "check the file") from None


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), computed without recursion."""
    depth = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            level += 1
            depth = max(depth, level)
            stack.extend((v, level) for v in item if isinstance(v, (dict, list)))
    return depth


def read_json_bounded(
    source: str | bytes | Path,
    what: str,
    *,
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    error: type[GraphleaksError] = DataError,
) -> Any:
    """Parse JSON from a file (a :class:`~pathlib.Path`) or text, bounded in size and depth.

    Args:
        source: A path to read, or the JSON text/bytes itself.
        what: How messages name the input (``report r.json``, ``--model-kwargs``).
        max_bytes: Largest accepted input, in bytes (checked before reading a file).
        max_depth: Deepest accepted nesting of arrays and objects.
        error: The exception class raised.

    Returns:
        The parsed value.

    Raises:
        GraphleaksError: For a missing, oversized, non-UTF-8, invalid or too deeply nested
            input. The message never quotes the input.

    Example:
        >>> read_json_bounded('{"a": [1, 2]}', "--opt")
        {'a': [1, 2]}
        >>> try:
        ...     read_json_bounded("[" * 100 + "]" * 100, "--opt")
        ... except DataError as exc:
        ...     print(str(exc)[:37])
        --opt is nested deeper than 64 levels
    """
    if isinstance(source, Path):
        try:
            if not source.is_file():
                raise error(f"{what} does not exist or is not a regular file")
            if source.stat().st_size > max_bytes:
                raise error(f"{what} is larger than {max_bytes} bytes; not a file graphleaks "
                            "wrote (give the right file)")
            data: str | bytes = source.read_bytes()
        except OSError:
            raise error(f"{what} cannot be read") from None
    else:
        data = source
    try:
        return loads_bounded(data, what, max_bytes=max_bytes, max_depth=max_depth, error=error)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise error(f"{what} is not valid JSON") from None


def loads_bounded(
    data: str | bytes,
    what: str,
    *,
    max_bytes: int = MAX_OPTION_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    error: type[GraphleaksError] = InvalidConfigError,
) -> Any:
    """:func:`json.loads` bounded in size and depth; invalid JSON still raises its own error.

    For callers that fall back on invalid JSON (an option value that may be plain text).

    Raises:
        json.JSONDecodeError: For text that is not JSON (``UnicodeDecodeError`` for bytes
            that are not UTF-8).
        GraphleaksError: For text over ``max_bytes`` or nested deeper than ``max_depth``.
    """
    size = len(data.encode("utf-8", "replace") if isinstance(data, str) else data)
    if size > max_bytes:
        raise error(f"{what} is larger than {max_bytes} bytes; give a smaller JSON value")
    with input_boundary(what, error):
        try:
            value = json.loads(data)
        except RecursionError:
            raise error(_too_deep(what, max_depth)) from None
        if json_depth(value) > max_depth:
            raise error(_too_deep(what, max_depth))
    return value


def _too_deep(what: str, max_depth: int) -> str:
    return (f"{what} is nested deeper than {max_depth} levels of arrays and objects; no "
            "graphleaks input nests that deep")


def _read_npy_header(fh: IO[bytes]) -> tuple[tuple[int, ...], np.dtype[Any], int]:
    """Shape, dtype and header length of the ``.npy`` stream ``fh`` (at its start)."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
    else:
        raise ValueError("unsupported .npy version")
    return tuple(int(n) for n in shape), dtype, fh.tell()


def check_npy_header(
    fh: IO[bytes], actual_bytes: int, what: str, *, max_bytes: int = MAX_ARRAY_BYTES,
    error: type[GraphleaksError] = DataError, text: bool = False,
) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """Check an ``.npy`` header against the bytes that follow it, before any array exists.

    ``numpy`` allocates the full array from the header's shape before reading the data, so
    a forged header (``shape (10**12, 8)``) or a compressed member that would decompress to
    gigabytes must be refused here: the header's shape times the item size must equal the
    actual data size, which must be at most ``max_bytes``; only plain numeric dtypes pass
    (pickled object arrays are never loaded).

    Args:
        fh: A binary stream positioned at the start of the ``.npy`` data (a file, or a zip
            member opened with :meth:`zipfile.ZipFile.open`).
        actual_bytes: The total size of the ``.npy`` data, header included (a file's size, or
            a zip member's uncompressed ``file_size``).
        what: How messages name the input.
        max_bytes: Largest accepted array, in bytes.
        error: The exception class raised.
        text: Also accept fixed-width string dtypes (``<U8``, ``S8``: plain bytes, read
            without pickle), for arrays of string ids.

    Returns:
        The declared shape and dtype.

    Raises:
        GraphleaksError: For a malformed header, a non-numeric dtype, a declared size that
            differs from the actual size, or an array over ``max_bytes``.
    """
    try:
        shape, dtype, offset = _read_npy_header(fh)
    except (OSError, ValueError, TypeError, SyntaxError, tokenize.TokenError, MemoryError,
            RecursionError, EOFError, zipfile.BadZipFile):
        # numpy parses the header as a Python literal; any failure means a broken file
        raise error(f"{what} is not a valid .npy array file") from None
    if dtype.hasobject or dtype.kind not in ("biufUS" if text else "biuf"):
        raise error(f"{what}: expected a numeric array, got a non-numeric dtype (pickled object "
                    "arrays are never loaded)")
    if any(n < 0 for n in shape):
        raise error(f"{what} is not a valid .npy array file")
    declared = dtype.itemsize
    for n in shape:
        declared *= n  # Python ints: a forged shape cannot overflow
    if declared != actual_bytes - offset:
        raise error(f"{what}: its header declares a shape whose size differs from the data it "
                    "holds (truncated or forged)")
    if declared > max_bytes:
        raise error(f"{what}: the array is larger than {max_bytes} bytes once decompressed; "
                    "give a smaller array")
    return shape, dtype


def check_npz(
    path: Path, what: str, *, max_bytes: int = MAX_ARRAY_BYTES,
    error: type[GraphleaksError] = DataError, text_members: Collection[str] = (),
) -> None:
    """Check every member of an ``.npz`` before :func:`numpy.load` decompresses any.

    Each member's uncompressed size (the zip directory's ``file_size``, which bounds what
    :mod:`zipfile` will ever decompress) must match its ``.npy`` header, be a numeric array,
    and all members together must fit ``max_bytes``. The members named in ``text_members``
    (without ``.npy``) may also hold fixed-width strings (never objects).

    Raises:
        GraphleaksError: For a file that is not a zip of ``.npy`` arrays, a forged or
            non-numeric member, or members larger than ``max_bytes`` once decompressed.
    """
    total = 0
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_NPZ_MEMBERS:
                raise error(f"{what} holds more than {MAX_NPZ_MEMBERS} arrays; not an array "
                            "file graphleaks reads")
            for info in infos:
                total += info.file_size
                if total > max_bytes:
                    raise error(f"{what}: its arrays are larger than {max_bytes} bytes once "
                                "decompressed (a compressed file that expands too far)")
                if not info.filename.endswith(".npy"):
                    raise error(f"{what} is not a valid .npz: a member is not a .npy array")
                if (info.compress_type != zipfile.ZIP_STORED
                        and info.file_size > MAX_INFLATED_UNCHECKED
                        and info.file_size > MAX_EXPANSION * max(info.compress_size, 1)):
                    raise error(f"{what}: an array expands more than {MAX_EXPANSION}x when "
                                "decompressed (a compression bomb?); save it uncompressed "
                                "with numpy.savez")
                with zf.open(info) as fh:
                    check_npy_header(fh, info.file_size, f"{what} (an array inside it)",
                                     max_bytes=max_bytes, error=error,
                                     text=info.filename[:-4] in text_members)
    except GraphleaksError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, NotImplementedError,
            RuntimeError):
        raise error(f"{what} is not a valid .npz of numeric arrays") from None
