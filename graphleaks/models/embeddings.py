"""DeepWalk and node2vec node embeddings, trained in-toolkit with gensim's skip-gram.

DeepWalk (Perozzi et al., KDD'14, https://arxiv.org/abs/1403.6652) and node2vec (Grover &
Leskovec, KDD'16, https://arxiv.org/abs/1607.00653) train a word2vec skip-gram model on random
walks. Duddu et al.'s attribute-inference attack (``docs/attacks.md`` §4) reads such embeddings;
graphleaks generates them itself (pitfall P4-5) and records every hyperparameter in
:class:`NodeEmbeddings`. The defaults are those of aditya-grover/node2vec's ``main.py``.

Privacy unit: the embeddings are a deterministic function of the whole graph and the seed; they
carry no privacy guarantee.

Walks come from :mod:`graphleaks.models.walks` in bounded chunks and are regenerated from the
seed for gensim's every pass, so the walk corpus is never held in memory at once.

Example:
    >>> import numpy as np
    >>> ei = np.array([[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2]])
    >>> cfg = EmbedderConfig(dimensions=4, walk_length=5, walks_per_node=2, window=2)
    >>> emb = DeepWalk(cfg).fit(ei, 3, seed=0)
    >>> emb.vectors.shape, emb.vectors.dtype.name, emb.method
    ((3, 4), 'float32', 'deepwalk')
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import os
import warnings
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import torch

from graphleaks._limits import input_boundary
from graphleaks._readers import ReaderTable
from graphleaks._validation import validate
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.walks import CSRGraph, IntArray, WalkConfig, generate_walks
from graphleaks.seeding import derive_seed

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

_MAX_WALK_LENGTH = 10_000
"""gensim truncates sentences longer than this (``MAX_WORDS_IN_BATCH``)."""


def _range(lo: float | None, hi: float | None, closed: str = "left") -> dict[str, Any]:
    return {"range": (lo, hi), "closed": closed}


@dataclass(frozen=True)
class EmbedderConfig:
    """Hyperparameters of :class:`DeepWalk` and :class:`Node2Vec`.

    Attributes:
        dimensions: Embedding size, in ``[1, inf)`` (default: 128).
        walk_length: Nodes per walk, in ``[2, 10000]`` (gensim's sentence limit) (default: 80).
        walks_per_node: Walks started from every node, in ``[1, inf)`` (default: 10).
        window: Skip-gram context size, in ``[1, inf)`` (default: 10).
        epochs: Passes over the walk corpus, in ``[1, inf)`` (default: 1).
        negative: Negative samples per positive pair, in ``[0, inf)``; 0 switches to
            hierarchical softmax (``hs=1``) (default: 5).
        p: node2vec return parameter, in ``(0, inf)``; :class:`DeepWalk` uses 1 (default: 1.0).
        q: node2vec in-out parameter, in ``(0, inf)``; :class:`DeepWalk` uses 1 (default: 1.0).
        min_count: Nodes occurring fewer times in the walks get no vector (a zero row), in
            ``[0, inf)`` (default: 0).
        workers: gensim worker threads, in ``[1, inf)``; forced to 1 when ``deterministic``
            (default: 1).
        deterministic: Promise identical vectors for the same graph, config and seed, in any
            process: one worker thread and a seed-derived gensim seed (default: True).
        sample: gensim's frequent-token down-sampling threshold, in ``[0, 1]`` (gensim's and
            node2vec's default: 1e-3).
    """

    # bounded: a hostile --dimensions 10**9 would try to allocate terabytes
    dimensions: int = field(default=128, metadata=_range(1, 65_536, "both"))
    walk_length: int = field(default=80, metadata=_range(2, _MAX_WALK_LENGTH, "both"))
    walks_per_node: int = field(default=10, metadata=_range(1, 10_000, "both"))
    window: int = field(default=10, metadata=_range(1, None))
    epochs: int = field(default=1, metadata=_range(1, None))
    negative: int = field(default=5, metadata=_range(0, None))
    p: float = field(default=1.0, metadata=_range(0, None, "neither"))
    q: float = field(default=1.0, metadata=_range(0, None, "neither"))
    min_count: int = field(default=0, metadata=_range(0, None))
    workers: int = field(default=1, metadata=_range(1, None))
    deterministic: bool = field(default=True, metadata={"choices": (True, False)})
    sample: float = field(default=1e-3, metadata=_range(0, 1, "both"))

    def check(self) -> None:
        """Reject non-integer counts, a non-bool ``deterministic`` and infinite ``p``/``q``.

        Called by :func:`graphleaks._validation.validate`.

        Raises:
            InvalidConfigError: On a violation.
        """
        for name in (
            "dimensions",
            "walk_length",
            "walks_per_node",
            "window",
            "epochs",
            "negative",
            "min_count",
            "workers",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise InvalidConfigError(
                    f"The {name} parameter of EmbedderConfig must be an integer. "
                    f"Got {value!r} instead."
                )
        if not isinstance(self.deterministic, (bool, np.bool_)):
            raise InvalidConfigError(
                "The deterministic parameter of EmbedderConfig must be True or False. "
                f"Got {self.deterministic!r} instead."
            )
        for name in ("p", "q"):
            if math.isinf(getattr(self, name)):
                raise InvalidConfigError(
                    f"The {name} parameter of EmbedderConfig must be in (0, inf). Got inf instead."
                )


@dataclass(frozen=True, eq=False)
class NodeEmbeddings:
    """Embeddings of every node, with the settings that produced them.

    Attributes:
        vectors: ``float32 [num_nodes, dimensions]``; row ``i`` is node ``i`` (a zero row for a
            node that got no vector, which only ``min_count > 0`` can cause).
        method: ``"deepwalk"`` or ``"node2vec"``.
        config: The effective settings (after DeepWalk's ``p = q = 1`` and the single worker of
            deterministic mode), plus ``hs``, ``gensim_seed`` and ``gensim_version``.
        seed: The root seed given to ``fit``.
    """

    vectors: npt.NDArray[np.float32]
    method: str
    config: dict[str, Any]
    seed: int

    @property
    def num_nodes(self) -> int:
        """Number of rows."""
        return int(self.vectors.shape[0])

    @property
    def dimensions(self) -> int:
        """Number of columns."""
        return int(self.vectors.shape[1])

    def save_npy(self, path: PathLike) -> None:
        """Write the vectors as a ``.npy`` array (row ``i`` = node ``i``), without pickle.

        Args:
            path: Destination file.
        """
        with open(path, "wb") as fh:
            np.save(fh, np.ascontiguousarray(self.vectors), allow_pickle=False)

    def save_word2vec_text(self, path: PathLike) -> None:
        """Write the vectors in word2vec text format (the ``.emd`` files of DeepWalk/node2vec).

        The first line is ``"N d"``; each following line is ``"node_id v1 ... vd"``, values
        printed with 9 significant digits so that float32 values round-trip exactly.

        Args:
            path: Destination file.
        """
        n, d = self.vectors.shape
        ids = np.arange(n, dtype=np.int64)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(f"{n} {d}\n")
            for i in range(n):
                values = " ".join(f"{v:.9g}" for v in self.vectors[i].tolist())
                fh.write(f"{ids[i]} {values}\n")


def _stable_hash(text: str) -> int:
    """A process-independent string hash for gensim (Python's ``hash`` is salted)."""
    return zlib.crc32(text.encode("utf-8"))


class _WalkCorpus:
    """A re-iterable gensim corpus that regenerates the same walks, as str tokens, every pass."""

    def __init__(self, graph: CSRGraph, config: WalkConfig, seed: int) -> None:
        self.graph = graph
        self.config = config
        self.seed = seed
        self.tokens = np.array([str(i) for i in range(graph.num_nodes)])

    def chunks(self) -> Iterator[IntArray]:
        """Yield the walks as integer chunks."""
        return generate_walks(self.graph, self.config, seed=self.seed)

    def __iter__(self) -> Iterator[list[str]]:
        for chunk in self.chunks():
            yield from self.tokens[chunk].tolist()


def _as_csr(edge_index: torch.Tensor | IntArray, num_nodes: int) -> CSRGraph:
    return CSRGraph.from_edge_index(edge_index, num_nodes)


def _build_vocab(model: Any, counts: npt.NDArray[np.int64], *, corpus_count: int) -> None:
    """Set up ``model``'s vocabulary from node counts, as ``build_vocab_from_freq`` does.

    gensim 4's ``build_vocab_from_freq`` walks the vocabulary in Python several times (one
    ``set_vecattr`` call per word and attribute, then a per-word loop for the negative-sampling
    table): 0.74 s of CPU at 100k nodes and 9.0 s at 1M, against 0.04 s and 1.1 s here
    (mostly the ``str`` keys gensim needs). This is the same computation in
    numpy and gives the same model state bit for bit (``tests/models/test_embeddings.py``
    compares the two): the words ``min_count`` keeps, sorted by descending count with ties in
    descending id order (gensim's ``lexsort``), the same float64 down-sampling thresholds and
    the same cumulative table (``np.cumsum`` adds in order, as gensim's loop does).

    Args:
        model: A fresh ``Word2Vec`` (``sorted_vocab`` on, no ``max_final_vocab``, no null word).
        counts: ``int64 [num_nodes]`` occurrences of node ``i`` in the walk corpus.
        corpus_count: Number of walks (gensim's ``corpus_count``).
    """
    from collections import defaultdict

    model.corpus_count = corpus_count
    model.effective_min_count = model.min_count
    ids = np.flatnonzero(counts >= model.min_count)  # gensim's keep_vocab_item without a rule
    kept = counts[ids].astype(np.int64)
    order = np.lexsort((-ids, -kept))  # gensim's lexsort((-index, -count)): ties, highest id first
    ids, kept = ids[order], kept[order]
    wv = model.wv
    wv.index_to_key = [str(i) for i in ids.tolist()]
    wv.key_to_index = {key: i for i, key in enumerate(wv.index_to_key)}
    total = int(kept.sum())
    sample = model.sample
    if not sample:
        threshold = float(total)
    elif sample < 1.0:
        threshold = sample * total
    else:
        threshold = float(int(sample * (3 + np.sqrt(5)) / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        prob = (np.sqrt(kept / threshold) + 1) * (threshold / kept)
    prob = np.where(prob < 1.0, prob, 1.0)
    wv.expandos = {"count": kept, "sample_int": (prob * (2**32 - 1)).astype(np.uint32)}
    model.raw_vocab = defaultdict(int)
    if model.hs:
        model.create_binary_tree()
    if model.negative:
        domain = 2**31 - 1
        cumulative = np.cumsum(kept.astype(np.float64) ** float(model.ns_exponent))
        table = np.zeros(len(kept), dtype=np.uint32)
        if len(kept):
            table[:] = np.rint(cumulative / cumulative[-1] * domain)
        model.cum_table = table
    model.prepare_weights(update=False)


class _WalkEmbedder:
    """Shared skip-gram training of :class:`DeepWalk` and :class:`Node2Vec`."""

    method: ClassVar[str] = ""

    def __init__(self, config: EmbedderConfig | None = None) -> None:
        """Store the configuration (validated in :meth:`fit`).

        Args:
            config: Hyperparameters (default: :class:`EmbedderConfig`'s defaults).
        """
        self.config = config if config is not None else EmbedderConfig()

    def _effective_config(self) -> EmbedderConfig:
        config: EmbedderConfig = validate(self.config)
        if config.deterministic and config.workers != 1:
            config = dataclasses.replace(config, workers=1)
        return config

    def fit(
        self, edge_index: torch.Tensor | IntArray, num_nodes: int, *, seed: int
    ) -> NodeEmbeddings:
        """Generate walks and train skip-gram embeddings for every node.

        Args:
            edge_index: ``[2, E]`` integer tensor or array; undirected graphs list both
                directions of every edge.
            num_nodes: Number of nodes ``N``; ids are ``0..N-1``.
            seed: Root seed for the walks (``derive_seed(seed, "walks")``) and gensim
                (``derive_seed(seed, "word2vec")``).

        Returns:
            The embeddings; also stored as ``self.embeddings_``.

        Raises:
            InvalidConfigError: If the configuration is invalid.
            DataError: If ``edge_index`` or ``num_nodes`` is malformed.
        """
        import gensim
        from gensim.models import Word2Vec

        config = self._effective_config()
        graph = _as_csr(edge_index, num_nodes)
        walk_config = WalkConfig(
            walk_length=config.walk_length,
            walks_per_node=config.walks_per_node,
            p=config.p,
            q=config.q,
        )
        corpus = _WalkCorpus(graph, walk_config, derive_seed(seed, "walks"))
        counts = np.zeros(graph.num_nodes, dtype=np.int64)
        for chunk in corpus.chunks():
            counts += np.bincount(chunk.ravel(), minlength=graph.num_nodes)
        gensim_seed = derive_seed(seed, "word2vec") & 0x7FFF_FFFF
        hs = 1 if config.negative == 0 else 0
        model = Word2Vec(
            vector_size=config.dimensions,
            window=config.window,
            min_count=config.min_count,
            sg=1,
            hs=hs,
            negative=config.negative,
            sample=config.sample,
            workers=config.workers,
            epochs=config.epochs,
            seed=gensim_seed,
            hashfxn=_stable_hash,
        )
        _build_vocab(model, counts, corpus_count=graph.num_nodes * config.walks_per_node)
        logger.info(
            "training %s embeddings: %d nodes, %d walks of length %d",
            self.method,
            graph.num_nodes,
            graph.num_nodes * config.walks_per_node,
            config.walk_length,
        )
        model.train(
            corpus_iterable=corpus,
            total_examples=graph.num_nodes * config.walks_per_node,
            epochs=config.epochs,
        )
        vectors = np.zeros((graph.num_nodes, config.dimensions), dtype=np.float32)
        keys = model.wv.index_to_key
        if keys:
            rows = np.fromiter((int(k) for k in keys), dtype=np.int64, count=len(keys))
            vectors[rows] = model.wv.vectors
        record = dataclasses.asdict(config)
        record.update(hs=hs, gensim_seed=gensim_seed, gensim_version=gensim.__version__)
        self.embeddings_ = NodeEmbeddings(
            vectors=vectors, method=self.method, config=record, seed=int(seed)
        )
        return self.embeddings_


class DeepWalk(_WalkEmbedder):
    """DeepWalk embeddings: uniform random walks + skip-gram (Perozzi et al., KDD'14).

    The ``p`` and ``q`` of the config are ignored (a warning is issued if they are not 1): the
    walks are uniform. The original tool's defaults differ from :class:`EmbedderConfig`'s:
    64 dimensions, walk length 40, window 5, hierarchical softmax (``negative=0``).

    Example:
        >>> import numpy as np
        >>> ei = np.array([[0, 1], [1, 0]])
        >>> DeepWalk(EmbedderConfig(dimensions=2, walk_length=3, walks_per_node=1)).fit(
        ...     ei, 2, seed=1).vectors.shape
        (2, 2)
    """

    method: ClassVar[str] = "deepwalk"

    def _effective_config(self) -> EmbedderConfig:
        config = super()._effective_config()
        if config.p != 1 or config.q != 1:
            warnings.warn(
                f"DeepWalk uses uniform walks and ignores p={config.p}, q={config.q}; "
                "use Node2Vec for biased walks.",
                stacklevel=3,
            )
            config = dataclasses.replace(config, p=1.0, q=1.0)
        return config


class Node2Vec(_WalkEmbedder):
    """node2vec embeddings: second-order ``(p, q)``-biased walks + skip-gram (KDD'16).

    With ``p = q = 1`` the walks are uniform, as DeepWalk's.
    """

    method: ClassVar[str] = "node2vec"


def _read_npy(
    path: Path, node_index: Mapping[str, int] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    # node_index is unused: row i of an array is node i, there are no id tokens to look up
    from graphleaks.data.files import read_npy

    arr = read_npy(path, "embedding")  # header checked against the file size first
    if not isinstance(arr, np.ndarray) or arr.ndim != 2:
        raise DataError(f"{path}: expected a 2-D [num_nodes, dimensions] array, got a "
                        f"{getattr(arr, 'ndim', 0)}-D array.")
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise DataError(f"{path}: expected numeric embeddings, got dtype {arr.dtype}.")
    vectors = arr.astype(np.float32)
    if not np.isfinite(vectors).all():
        row = int(np.flatnonzero(~np.isfinite(vectors).all(axis=1))[0])
        raise DataError(f"{path}: row {row} holds a non-finite value (NaN or inf).")
    return np.arange(arr.shape[0], dtype=np.int64), vectors


def _parse_int(token: str) -> int | None:
    try:
        return int(token)
    except ValueError:
        return None


def _node_id(token: str, node_index: Mapping[str, int] | None) -> int | None:
    """A node id token as an index: through ``node_index`` (string ids) when given."""
    return _parse_int(token) if node_index is None else node_index.get(token)


def _bad_id(path: Path, where: str, node_index: Mapping[str, int] | None) -> str:
    # the token is never quoted: the file may be any file on the machine
    if node_index is None:
        return (f"{path}{where}: the node id is not a non-negative integer; for string ids "
                "pass the edge list (--edges) that defines them.")
    return f"{path}{where}: the node id is not in the edge list."


def _read_word2vec_text(
    path: Path, node_index: Mapping[str, int] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM must not hide the first row
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a UTF-8 text embedding file ({exc.reason}).") from exc
    lines = [(no, line.split()) for no, line in enumerate(text.splitlines(), start=1)]
    lines = [(no, tokens) for no, tokens in lines if tokens]
    if not lines:
        raise DataError(f"{path}: the embedding file is empty.")
    expected_rows: int | None = None
    dims: int | None = None
    first_no, first = lines[0]
    if len(first) == 2 and _parse_int(first[0]) is not None and _parse_int(first[1]) is not None:
        expected_rows, dims = int(first[0]), int(first[1])
        if expected_rows < 0 or dims < 1:
            # the header is not quoted: messages never show what a file holds
            raise DataError(f"{path}:{first_no}: bad header; expected 'N d' with N >= 0 and "
                            "d >= 1.")
        lines = lines[1:]
    if dims is None:
        dims = len(lines[0][1]) - 1
        if dims < 1:
            raise DataError(f"{path}:{lines[0][0]}: a row needs a node id and at least 1 value.")
    if expected_rows is not None and len(lines) != expected_rows:
        raise DataError(f"{path}: the header's row count differs from the {len(lines)} rows "
                        "the file holds.")
    # every row is checked before allocating: a forged "N d" header must not size the array
    for no, tokens in lines:
        if len(tokens) != dims + 1:
            raise DataError(f"{path}:{no}: expected a node id and as many values as the "
                            f"header (or first row) gives, got {len(tokens)} fields.")
    ids = np.empty(len(lines), dtype=np.int64)
    vectors = np.empty((len(lines), dims), dtype=np.float32)
    for row, (no, tokens) in enumerate(lines):
        node = _node_id(tokens[0], node_index)
        if node is None or node < 0 or node >= 2**62:  # 2**62: fits the int64 ids
            raise DataError(_bad_id(path, f":{no}", node_index))
        try:
            values = np.array(tokens[1:], dtype=np.float64)
        except ValueError:
            bad = next(i for i, t in enumerate(tokens[1:], 2) if _parse_float(t) is None)
            raise DataError(f"{path}:{no}: non-numeric value in field {bad}.") from None
        if not np.isfinite(values).all():
            raise DataError(f"{path}:{no}: non-finite value (NaN or inf).")
        ids[row] = node
        vectors[row] = values
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise DataError(f"{path}:{_first_repeat_line(ids, lines)}: a node id appears more than "
                        "once.")
    return ids, vectors


def _first_repeat_line(ids: npt.NDArray[np.int64], lines: list[tuple[int, list[str]]]) -> int:
    """The file line of the first row whose node id an earlier row already had."""
    seen: set[int] = set()
    for node, (no, _) in zip(ids.tolist(), lines, strict=True):
        if node in seen:
            return no
        seen.add(node)
    return lines[-1][0]


def _parse_float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def load_embeddings(
    path: PathLike, *, node_index: Mapping[str, int] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Load node embeddings from a ``.npy`` array or a word2vec text or binary file.

    A ``.npy`` file must hold a numeric 2-D array (loaded with ``allow_pickle=False``); row
    ``i`` is node ``i``. Any other file is read as word2vec text: an optional ``"N d"`` header
    line, then one ``"node_id v1 ... vd"`` line per node (the header that the GraphLeaks scripts
    mis-parse, pitfall P4-2, is recognised; node ids need not be in order, pitfall P4-3).
    A ``"N d"`` header followed by raw float32 rows is read as binary word2vec (gensim's
    ``save_word2vec_format(binary=True)``).

    Args:
        path: The file.
        node_index: Maps string node ids (``user_17``) to indices, e.g. from
            :func:`graphleaks.data.files.node_index`; every id of a word2vec file is then
            looked up in it (default: ids must be integers).

    Returns:
        ``(ids, vectors)``: ``int64 [n]`` node ids in file order and ``float32 [n, d]`` rows.

    Raises:
        DataError: If the file is missing or malformed: a pickled or non-2-D array, a
            non-numeric or non-finite value, a wrong field count, a row count that differs from
            the header, or a bad or duplicate node id. The message names the file and line.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: embedding file not found.")
    return EMBEDDING_READERS.read(p, node_index=node_index)


def _read_word2vec(
    path: Path, node_index: Mapping[str, int] | None = None, *, binary_suffix: bool = False
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """word2vec text, or binary when the bytes after the header are not text."""
    if _is_word2vec_binary(path, binary_suffix=binary_suffix):
        return _read_word2vec_binary(path, node_index)
    return _read_word2vec_text(path, node_index)


def _is_word2vec_binary(path: Path, *, binary_suffix: bool = False) -> bool:
    """A ``"N d"`` text header followed by bytes that are not UTF-8 text (raw float32)."""
    with path.open("rb") as fh:
        head = fh.readline(256)
        body = fh.read(4096)
    try:
        n, d = head.decode("ascii").split()
        int(n), int(d)
    except (UnicodeDecodeError, ValueError):
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return binary_suffix  # a tiny binary file can decode as UTF-8 by chance


def _read_word2vec_binary(
    path: Path, node_index: Mapping[str, int] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Read gensim/word2vec's binary format (``save_word2vec_format(binary=True)``)."""
    from gensim.models import KeyedVectors

    _check_binary_header(path)
    try:
        with input_boundary(str(path)):
            kv = KeyedVectors.load_word2vec_format(str(path), binary=True)
    except (ValueError, EOFError, UnicodeDecodeError):
        # gensim's message may quote the file; it is not passed on
        raise DataError(f"{path}: not a readable binary word2vec file.") from None
    ids = np.empty(len(kv.index_to_key), dtype=np.int64)
    for i, key in enumerate(kv.index_to_key):
        node = _node_id(str(key), node_index)
        if node is None or node < 0:
            raise DataError(_bad_id(path, "", node_index))
        ids[i] = node
    vectors = np.asarray(kv.vectors, dtype=np.float32)
    if not np.isfinite(vectors).all():
        raise DataError(f"{path}: non-finite value (NaN or inf).")
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise DataError(f"{path}: a node id appears more than once.")
    return ids, vectors


def _check_binary_header(path: Path) -> None:
    """Refuse an ``"N d"`` header whose rows could not fit in the file, before gensim sizes
    an ``N x d`` array by it (a 100-byte file may declare 10^12 rows)."""
    with path.open("rb") as fh:
        n, d = (int(v) for v in fh.readline(256).split())  # checked by _is_word2vec_binary
    # each row is at least a one-byte id, a space and d float32 values
    if n < 0 or d < 1 or n * (4 * d + 2) > path.stat().st_size:
        raise DataError(f"{path}: the binary word2vec header declares more rows or dimensions "
                        "than the file holds (truncated or forged).")


#: Formats of node-embedding files (``graphleaks audit --embeddings``). A word2vec file is
#: sniffed: a ``"N d"`` header followed by bytes that are not UTF-8 is the binary format.
EMBEDDING_READERS: ReaderTable[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = (
    ReaderTable("embedding file", option="--embeddings"))
EMBEDDING_READERS.register("npy", (".npy",), _read_npy,
                           "numpy [num_nodes, dimensions] array, row i is node i, no pickle")
EMBEDDING_READERS.register(
    "word2vec_binary", (".bin",),
    functools.partial(_read_word2vec, binary_suffix=True),
    "word2vec binary (gensim binary=True), or word2vec text")
EMBEDDING_READERS.register("word2vec", (), _read_word2vec,
                           "word2vec text ('N d' header optional), or sniffed binary",
                           fallback=True)


__all__ = [
    "DeepWalk",
    "EmbedderConfig",
    "Node2Vec",
    "NodeEmbeddings",
    "load_embeddings",
]
