"""Exported per-pair scores of a link predictor, for scores-only edge-membership audits.

When a link predictor cannot leave its environment, its owner exports one score per queried
pair, with both endpoints. Accepted files:

* ``.npz`` with arrays ``source``, ``target`` (``[P]`` integer node ids) and ``score``
  (``[P]``), read without pickle;
* CSV/TSV with columns ``source, target, score``: a header row naming them (any order; other
  columns are ignored), or exactly those three columns without a header.

Membership comes from separate member and non-member edge files (:func:`read_edge_pairs`:
two node ids per row, an optional header). A file without both endpoints (a per-node score
export, a score column alone) is refused in one line: a pair's score needs its pair.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from graphleaks._limits import check_npz, input_boundary
from graphleaks._readers import ReaderTable
from graphleaks.data.files import _is_number, _numeric, _read_table
from graphleaks.data.pairs import pair_keys
from graphleaks.errors import DataError

PAIR_SCORE_KINDS: tuple[str, ...] = ("logits", "probabilities")
#: Largest pair-score file read (bytes).
MAX_PAIR_SCORE_FILE_BYTES = 512 * 1024 * 1024
#: Largest decompressed ``.npz`` pair-score export.
MAX_PAIR_SCORE_ARRAY_BYTES = 1 << 30
_NO_ENDPOINTS = ("a link scores file needs both endpoints of every pair: columns source, "
                 "target, score (a .npz: arrays source, target, score)")


@dataclass(frozen=True)
class PairScores:
    """Validated per-pair scores.

    Attributes:
        pairs: ``[P, 2]`` int64 node ids, distinct undirected pairs, no self-loop.
        scores: ``[P]`` finite float64 scores of the kind ``output``.
        output: ``logits`` or ``probabilities``.
        source: Where they came from, for messages and reports.
    """

    pairs: np.ndarray
    scores: np.ndarray
    output: str
    source: str

    def logits(self) -> np.ndarray:
        """The scores as logits (probabilities clipped at 1e-12, the pair scorer's rule)."""
        if self.output == "logits":
            return self.scores
        q = np.clip(self.scores, 1e-12, 1 - 1e-12)
        return np.log(q) - np.log1p(-q)

    def lookup(self, pairs: np.ndarray, what: str) -> np.ndarray:
        """Row of each of ``pairs`` (either orientation) in the export.

        Raises:
            DataError: If a pair was not scored (names the list and its row).
        """
        n = int(max(self.pairs.max(initial=0), np.asarray(pairs).max(initial=0))) + 1
        keys = pair_keys(self.pairs, n)
        order = np.argsort(keys)
        want = pair_keys(pairs, n)
        pos = np.minimum(np.searchsorted(keys[order], want), len(keys) - 1)
        found = keys[order][pos] == want
        if not found.all():
            raise DataError(f"{self.source}: row {int(np.flatnonzero(~found)[0])} of the "
                            f"{what} has no score in the file; export a score for every "
                            "member and non-member pair")
        return order[pos]


def check_pair_scores(pairs: np.ndarray, scores: np.ndarray, *, output: str,
                      source: str) -> PairScores:
    """Validate endpoint and score arrays from any source.

    Raises:
        DataError: For an unknown kind, shapes that disagree, ids that are not non-negative
            integers, a self-loop, a pair scored twice, a non-finite score, or declared
            probabilities outside [0, 1].
    """
    if output not in PAIR_SCORE_KINDS:
        raise DataError(f"{source}: unknown score kind {output!r}; choose logits or "
                        "probabilities")
    p = np.asarray(pairs)
    s = np.asarray(scores)
    if p.ndim != 2 or p.shape[1] != 2 or s.ndim != 1 or len(s) != len(p):
        raise DataError(f"{source}: endpoints and scores must be one row per pair (source, "
                        "target, score)")
    if len(p) == 0:
        raise DataError(f"{source} holds no scored pairs")
    if p.dtype.kind == "f":
        if not np.isfinite(p).all() or not (p == np.round(p)).all():
            raise DataError(f"{source}: node ids must be integers")
    elif p.dtype.kind not in "iu":
        raise DataError(f"{source}: node ids must be integers")
    if (p < 0).any() or (p >= 2**31).any():
        raise DataError(f"{source}: node ids must be integers in 0..2^31-1")
    p = p.astype(np.int64)
    if s.dtype.kind not in "fiu":
        raise DataError(f"{source}: scores must be numbers")
    s = s.astype(np.float64)
    if not np.isfinite(s).all():
        raise DataError(f"{source}: row {int(np.flatnonzero(~np.isfinite(s))[0])} holds a "
                        "score that is not finite")
    if output == "probabilities" and ((s < 0) | (s > 1)).any():
        raise DataError(f"{source}: scores declared as probabilities leave [0, 1]; if they "
                        "are logits, pass the kind 'logits'")
    loops = p[:, 0] == p[:, 1]
    if loops.any():
        raise DataError(f"{source}: row {int(np.flatnonzero(loops)[0])} scores a self-loop; "
                        "a pair joins two distinct nodes")
    keys = pair_keys(p, int(p.max()) + 1)
    order = np.argsort(keys, kind="stable")
    dup = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if len(dup):
        a, b = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        raise DataError(f"{source}: rows {a} and {b} score the same undirected pair; export "
                        "each pair once")
    return PairScores(p, s, output, source)


def load_pair_scores(path: str | Path, *, output: str = "logits") -> PairScores:
    """Read and validate an exported pair-score file (see the module docstring).

    Raises:
        DataError: For a missing, oversized or malformed file, or one without endpoints.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"score file {p} does not exist or is not a regular file")
    size = p.stat().st_size
    if size > MAX_PAIR_SCORE_FILE_BYTES:
        raise DataError(f"score file {p} is {size} bytes, over the "
                        f"{MAX_PAIR_SCORE_FILE_BYTES}-byte limit; export only the member and "
                        "non-member pairs")
    ps = PAIR_SCORE_READERS.read(p, output=output)
    return replace(ps, source=f"score file {p.name}")  # the report records the name only


def _load_table(p: Path, output: str) -> PairScores:
    src = f"score file {p}"
    header, rows = _read_table(p, "score")
    if not rows:
        raise DataError(f"{src} holds no rows; {_NO_ENDPOINTS}")
    if header:
        cols = {name: i for i, name in enumerate(header)}
        if not {"source", "target"} <= set(cols):
            raise DataError(f"{src} has no source and target columns; {_NO_ENDPOINTS}")
        if "score" not in cols:
            raise DataError(f"{src} has no score column; {_NO_ENDPOINTS}")
        if any(len(r) != len(header) for r in rows):
            raise DataError(f"{src}: rows have a different number of columns than the header")
        take = [cols["source"], cols["target"], cols["score"]]
        rows = [[r[i] for i in take] for r in rows]
    elif any(len(r) != 3 for r in rows):
        raise DataError(f"{src}: expected three columns source, target, score without a "
                        f"header; {_NO_ENDPOINTS}")
    if any(not (_is_number(r[0]) and _is_number(r[1])) for r in rows):
        raise DataError(f"{src}: node ids must be integers (string ids are not supported for "
                        "pair scores yet)")
    _numeric(rows, p, "score", float)  # one line naming a non-numeric cell's position
    raw = np.asarray(rows, dtype=np.float64)
    return check_pair_scores(raw[:, :2], raw[:, 2], output=output, source=src)


def _load_npz(p: Path, output: str) -> PairScores:
    src = f"score file {p}"
    check_npz(p, src, max_bytes=MAX_PAIR_SCORE_ARRAY_BYTES)
    try:
        with np.load(p, allow_pickle=False) as z:
            names = set(z.files)
            if not {"source", "target"} <= names or "score" not in names:
                raise DataError(f"{src}: {_NO_ENDPOINTS}")
            with input_boundary(src):
                arrays = {k: z[k] for k in ("source", "target", "score")}
    except DataError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        raise DataError(f"{src} is not a valid .npz of numeric arrays (pickled arrays are "
                        "never loaded)") from None
    s, t = arrays["source"], arrays["target"]
    if s.ndim != 1 or t.shape != s.shape:
        raise DataError(f"{src}: source and target must be 1-D arrays of the same length")
    return check_pair_scores(np.stack([s, t], axis=1), arrays["score"], output=output,
                             source=src)


def read_edge_pairs(path: str | Path, what: str) -> np.ndarray:
    """A member or non-member edge file: two integer node ids per row, optional header.

    Raises:
        DataError: For a missing file or rows that are not two integer ids.
    """
    p = Path(path)
    _, rows = _read_table(p, what)
    if not rows:
        raise DataError(f"{what} file {p} holds no pairs; give two node ids per row")
    if any(len(r) != 2 for r in rows):
        raise DataError(f"{what} file {p}: expected two node ids per row (source, target)")
    return _numeric(rows, p, what, np.int64)


#: Formats of exported pair-score files (``graphleaks audit scores FILE --task link``).
PAIR_SCORE_READERS: ReaderTable[PairScores] = ReaderTable("pair score file",
                                                          option="--task link scores")
PAIR_SCORE_READERS.register("npz", (".npz",), _load_npz,
                            "numpy archive of source, target and score arrays, no pickle")
PAIR_SCORE_READERS.register("table", (), _load_table,
                            "CSV/TSV text: source, target, score", fallback=True)

__all__ = ["PAIR_SCORE_KINDS", "PAIR_SCORE_READERS", "PairScores", "check_pair_scores",
           "load_pair_scores", "read_edge_pairs"]
