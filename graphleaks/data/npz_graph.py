"""``.npz`` graphs: one numpy archive with arrays ``edge_index``, ``x`` and optionally ``y``.

``edge_index`` is an integer ``[2, E]`` array of node ids, ``x`` the ``[N, F]`` feature
matrix, ``y`` one integer label per node. Written with ``numpy.savez`` (or
``savez_compressed``); given on the command line as ``--edges graph.npz`` alone.

The archive is read without :func:`numpy.load`: each member's ``.npy`` header is checked
against the member's size before any array is built (a forged header cannot size an
allocation), object (pickled) arrays are refused, and no message quotes the file.
"""

from __future__ import annotations

import math
import tokenize
import zipfile
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks.data.files import from_pyg
from graphleaks.data.graph import check_graph
from graphleaks.errors import DataError

#: Largest archive read, compressed or not (bytes).
MAX_NPZ_GRAPH_BYTES = 2 * 1024**3
_ARRAYS = ("edge_index", "x", "y")


def read_npz_graph(path: Path, *, features: Path | None = None,
                   labels: Path | None = None) -> Data:
    """The graph in a ``.npz`` archive, made undirected as every file graph is.

    Raises:
        DataError: For a missing, oversized, corrupt or pickled archive, missing arrays, or
            a graph :func:`~graphleaks.data.graph.check_graph` refuses; or when separate
            feature/label files are given too.
    """
    src = f"graph file {path}"
    if features is not None or labels is not None:
        raise DataError(f"{src} holds its own features (x) and labels (y); give it alone as "
                        "--edges, without --features or --labels")
    arrays = _read_arrays(path, src)
    if "edge_index" not in arrays or "x" not in arrays:
        raise DataError(f"{src}: a .npz graph needs arrays 'edge_index' and 'x' (and "
                        "optionally 'y'); save it with numpy.savez(edge_index=..., x=..., y=...)")
    ei, x, y = arrays["edge_index"], arrays["x"], arrays.get("y")
    if ei.ndim != 2 or ei.shape[0] != 2 or ei.dtype.kind not in "iu":
        raise DataError(f"{src}: edge_index must be an integer array of 2 rows (sources, "
                        "targets)")
    if y is not None and y.dtype.kind not in "iu":
        raise DataError(f"{src}: y must hold integer class labels")
    if x.dtype.kind not in "iuf" or ei.size and (ei.min() < 0 or ei.max() >= len(x)):
        raise DataError(f"{src}: x must be a numeric matrix with one row per node id in "
                        "edge_index")
    data = Data(x=torch.from_numpy(x.astype(np.float32)),
                edge_index=torch.from_numpy(ei.astype(np.int64)),
                y=None if y is None else torch.from_numpy(y.astype(np.int64)))
    return from_pyg(check_graph(data, source=src))


def _read_arrays(path: Path, src: str) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise DataError(f"{src} does not exist or is not a regular file")
    if path.stat().st_size > MAX_NPZ_GRAPH_BYTES:
        raise DataError(f"{src} is over the {MAX_NPZ_GRAPH_BYTES}-byte limit")
    bad = (f"{src} is not a valid .npz archive of numeric arrays (pickled arrays are never "
           "loaded); save it with numpy.savez")
    out: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            infos = {i.filename: i for i in zf.infolist()}
            if sum(i.file_size for i in infos.values()) > MAX_NPZ_GRAPH_BYTES:
                raise DataError(f"{src} unpacks to over {MAX_NPZ_GRAPH_BYTES} bytes")
            for name in _ARRAYS:
                info = infos.get(f"{name}.npy")
                if info is not None:
                    out[name] = _member(zf, info, src, bad)
    except DataError:
        raise
    except (OSError, ValueError, TypeError, SyntaxError, tokenize.TokenError, MemoryError,
            EOFError, zipfile.BadZipFile, NotImplementedError):
        # a corrupt archive fails anywhere in zipfile or numpy's header parser
        raise DataError(bad) from None
    return out


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, src: str, bad: str) -> np.ndarray:
    """One ``.npy`` member, its header checked against its size before it is read."""
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise DataError(bad)
        if dtype.hasobject or dtype.kind not in "biuf":
            raise DataError(f"{src}: holds a non-numeric array (pickled object arrays are "
                            "never loaded)")
        count = math.prod(int(n) for n in shape)  # Python ints: a forged shape cannot wrap
        body = info.file_size - fh.tell()
        if count < 0 or count * dtype.itemsize != body:
            raise DataError(f"{src}: an array header does not match its data (truncated or "
                            "forged)")
        data = fh.read(body)
    if len(data) != body:
        raise DataError(bad)
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()
