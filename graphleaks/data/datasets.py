"""Dataset loaders: the bundled Cora, the offline data root, and the synthetic generator.

The data root (``--data-root`` or ``GRAPHLEAKS_DATA``) is laid out like
``../shared/datasets``. It is never written to: the files a loader needs are copied to a
writable cache (``GRAPHLEAKS_CACHE``, default ``~/.cache/graphleaks``) because PyG writes a
``processed/`` folder next to every ``raw/``. Nothing is ever downloaded.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from graphleaks._limits import check_id_range, check_npz, read_json_bounded
from graphleaks._registry import Registry
from graphleaks.data.graph import check_graph
from graphleaks.errors import DataError


@dataclass(frozen=True)
class DatasetInfo:
    """A loadable dataset: its name, a one-line description, and whether it needs a data root."""

    name: str
    description: str
    needs_data_root: bool
    loader: Callable[[Path | None, Path], Data]


datasets: Registry[DatasetInfo] = Registry("dataset")


def _register(name: str, description: str, needs_data_root: bool = True) -> Callable[
    [Callable[[Path | None, Path], Data]], Callable[[Path | None, Path], Data]
]:
    def deco(fn: Callable[[Path | None, Path], Data]) -> Callable[[Path | None, Path], Data]:
        datasets.register(name, DatasetInfo(name, description, needs_data_root, fn))
        return fn

    return deco


def default_data_root() -> Path | None:
    """The data root from ``GRAPHLEAKS_DATA``, or None."""
    env = os.environ.get("GRAPHLEAKS_DATA")
    return Path(env) if env else None


def default_cache_dir() -> Path:
    """The writable cache from ``GRAPHLEAKS_CACHE``, default ``~/.cache/graphleaks``."""
    env = os.environ.get("GRAPHLEAKS_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "graphleaks"


def load_dataset(
    name: str, *, data_root: str | Path | None = None, cache_dir: str | Path | None = None
) -> Data:
    """Load a named dataset as an undirected PyG ``Data`` with ``x``, ``edge_index`` and ``y``.

    Args:
        name: A registered name (``graphleaks list datasets``), case/dash-insensitive.
        data_root: Folder laid out like ``../shared/datasets``; defaults to ``GRAPHLEAKS_DATA``.
            Cora works without one (it is bundled).
        cache_dir: Writable cache; defaults to ``GRAPHLEAKS_CACHE`` or ``~/.cache/graphleaks``.

    Returns:
        The graph, carrying its registry name as ``name`` (defenses that tune hyperparameters
        per dataset read it).

    Raises:
        InvalidConfigError: For an unknown name.
        DataError: If the data root is missing or lacks the dataset's files.

    Example:
        >>> g = load_dataset("cora")
        >>> g.num_nodes, g.x.shape[1], int(g.y.max()) + 1, g.name
        (2708, 1433, 7, 'cora')
    """
    info = datasets.get(name)
    root = Path(data_root) if data_root is not None else default_data_root()
    if info.needs_data_root:
        if root is None:
            raise DataError(
                f"dataset {info.name!r} needs a data root; pass --data-root or set GRAPHLEAKS_DATA "
                "to a folder laid out like shared/datasets"
            )
        if not root.is_dir():
            raise DataError(f"data root {root} does not exist or is not a folder")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    data = check_graph(info.loader(root, cache), source=f"dataset {info.name!r}")
    data.name = info.name
    return data


def _require(path: Path, dataset: str) -> Path:
    if not path.exists():
        raise DataError(f"dataset {dataset!r}: expected file {path} is missing from the data root")
    return path


def _cached_pyg(root: Path, rel: str, cache: Path, dataset: str,
                make: Callable[[Path], Data]) -> Data:
    """Load a PyG dataset from its cached copy, building the copy first if needed.

    PyG writes a ``processed/`` folder next to ``raw/``. Two processes sharing a cache (a
    sweep with two workers) must never read each other's half-written files, so a missing
    cache entry is built in a private temporary folder (raw files copied, PyG processing
    run there) and only then renamed into place; a process that loses the race discards
    its copy and uses the winner's.

    Args:
        root: The data root.
        rel: The dataset folder relative to the data root (and the cache).
        cache: The cache folder.
        dataset: Name used in messages.
        make: Loads the dataset from the folder that holds ``Path(rel).name``.
    """
    dst = cache / "datasets" / rel
    if (dst / "processed").is_dir():
        return make(dst.parent)
    src = _require(root / rel, dataset)
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=dst.parent, prefix=".tmp-"))
    except OSError:
        raise DataError(f"dataset {dataset!r}: cannot write the cache folder {dst.parent}; set "
                        "GRAPHLEAKS_CACHE to a writable folder") from None
    try:
        work = tmp / dst.name
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("processed"))
        data = make(tmp)
        try:
            os.replace(work, dst)  # atomic; fails if another process published first
        except OSError:
            if not (dst / "processed").is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # our own temporary folder only
    return data


def _undirected(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    edge_index, _ = remove_self_loops(edge_index)
    return coalesce(to_undirected(edge_index, num_nodes=num_nodes), num_nodes=num_nodes)


@_register("cora", "Cora citation graph (2,708 nodes, 7 classes); bundled", needs_data_root=False)
def _load_cora(root: Path | None, cache: Path) -> Data:
    if root is not None and (root / "Planetoid" / "Cora" / "raw").is_dir():
        return _planetoid(root, cache, "Cora")
    ref = resources.files("graphleaks.data") / "_bundled" / "cora.npz"
    with resources.as_file(ref) as path, np.load(path, allow_pickle=False) as z:
        shape = tuple(int(s) for s in z["x_shape"])
        indices = z["x_indices"].astype(np.int64)
        x = sp.csr_matrix((np.ones(len(indices), np.float32), indices, z["x_indptr"]), shape=shape)
        return Data(
            x=torch.from_numpy(x.toarray()),
            edge_index=torch.from_numpy(z["edge_index"].astype(np.int64)),
            y=torch.from_numpy(z["y"].astype(np.int64)),
        )


def _planetoid(root: Path, cache: Path, name: str) -> Data:
    from torch_geometric.datasets import Planetoid

    def make(parent: Path) -> Data:
        d = Planetoid(root=str(parent), name=name)[0]
        return Data(x=d.x, edge_index=d.edge_index, y=d.y)

    return _cached_pyg(root, f"Planetoid/{name}", cache, name.lower(), make)


@_register("citeseer", "CiteSeer citation graph (3,327 nodes, 6 classes)")
def _load_citeseer(root: Path | None, cache: Path) -> Data:
    assert root is not None
    return _planetoid(root, cache, "CiteSeer")


def _amazon(root: Path, cache: Path, name: str) -> Data:
    from torch_geometric.datasets import Amazon

    def make(parent: Path) -> Data:
        d = Amazon(root=str(parent), name=name)[0]
        return Data(x=d.x, edge_index=d.edge_index, y=d.y)

    return _cached_pyg(root, f"Amazon/{name}", cache, f"amazon-{name.lower()}", make)


@_register("amazon-computers", "Amazon Computers co-purchase graph (13,752 nodes, 10 classes)")
def _load_amazon_computers(root: Path | None, cache: Path) -> Data:
    assert root is not None
    return _amazon(root, cache, "Computers")


@_register("amazon-photo", "Amazon Photo co-purchase graph (7,650 nodes, 8 classes)")
def _load_amazon_photo(root: Path | None, cache: Path) -> Data:
    assert root is not None
    return _amazon(root, cache, "Photo")


def _read_int_csv(path: Path, dataset: str) -> np.ndarray:
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            rows = [r for r in csv.reader(fh) if r]
    except (OSError, UnicodeDecodeError, csv.Error):
        raise DataError(f"dataset {dataset!r}: cannot read {path}") from None
    if rows and not any(c.strip().lstrip("-").isdigit() for c in rows[0]):
        rows = rows[1:]  # a header: no cell is a number
    try:
        return np.asarray([[int(v) for v in r] for r in rows], dtype=np.int64)
    except ValueError:
        raise DataError(f"dataset {dataset!r}: non-integer value in {path}") from None


def _int_cell(value: object, dataset: str) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise DataError(f"dataset {dataset!r}: a node id is not an integer") from None


def _check_ids(ids: np.ndarray, num_nodes: int, dataset: str, where: Path) -> None:
    """Node ids of a data-root file must index the graph's ``num_nodes`` rows (never quoted)."""
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= max(num_nodes, 1)):
        raise DataError(f"dataset {dataset!r}: a node id in {where} lies outside the graph's "
                        f"{num_nodes} nodes; restore the original files (verify.py)")


@_register("lastfm-asia", "LastFM Asia social graph (7,624 nodes, 18 countries); no features")
def _load_lastfm(root: Path | None, cache: Path) -> Data:
    assert root is not None
    base = root / "LastFMAsia" / "original"
    edges = _read_int_csv(_require(base / "lastfm_asia_edges.csv", "lastfm-asia"), "lastfm-asia")
    target = _read_int_csv(_require(base / "lastfm_asia_target.csv", "lastfm-asia"), "lastfm-asia")
    _check_ids(target[:, 0], len(np.unique(target[:, 0])), "lastfm-asia", base)
    num_nodes = int(target[:, 0].max()) + 1
    _check_ids(edges, num_nodes, "lastfm-asia", base)
    y = np.zeros(num_nodes, dtype=np.int64)
    y[target[:, 0]] = target[:, 1]
    edge_index = _undirected(torch.from_numpy(edges.T.copy()), num_nodes)
    # The published node features are unavailable offline; a constant feature keeps GNN
    # targets runnable, and embedding attacks use only the structure.
    return Data(x=torch.ones(num_nodes, 1), edge_index=edge_index, y=torch.from_numpy(y))


@_register("ego-facebook", "SNAP ego-Facebook union (4,039 people); y = gender (3 classes)")
def _load_ego_facebook(root: Path | None, cache: Path) -> Data:
    assert root is not None
    from graphleaks.data.ego_facebook import read_ego_facebook

    return read_ego_facebook(root / "SNAP" / "ego-facebook")


@_register("facebook-pagepage", "Facebook Page-Page (22,470 pages, 4 types); SVD-128 features")
def _load_facebook_pagepage(root: Path | None, cache: Path) -> Data:
    assert root is not None

    from sklearn.decomposition import TruncatedSVD

    base = root / "FacebookPagePage" / "original"
    name = "facebook-pagepage"
    cached = cache / "datasets" / "FacebookPagePage" / "svd128.npz"
    edges = _read_int_csv(_require(base / "musae_facebook_edges.csv", name), name)
    with _require(base / "musae_facebook_target.csv", name).open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    num_nodes = len(rows)
    _check_ids(np.asarray([_int_cell(r.get("id"), name) for r in rows]), num_nodes, name, base)
    _check_ids(edges, num_nodes, name, base)
    types = sorted({r["page_type"] for r in rows})
    y = np.zeros(num_nodes, dtype=np.int64)
    for r in rows:
        y[int(r["id"])] = types.index(r["page_type"])
    if cached.exists():
        check_npz(cached, f"cached features {cached}")  # the cache folder is writable by others
        with np.load(cached, allow_pickle=False) as z:
            x = z["x"]
    else:
        feats = read_json_bounded(_require(base / "musae_facebook_features.json", name),
                                  f"dataset {name!r} features", max_bytes=1 << 30)
        ri = [int(k) for k, v in feats.items() for _ in v]
        ci = [int(f) for v in feats.values() for f in v]
        _check_ids(np.asarray(ri), num_nodes, name, base)
        if ci:
            check_id_range(max(ci), len(set(ci)), f"dataset {name!r} features in {base}")
        mat = sp.csr_matrix((np.ones(len(ri), np.float32), (ri, ci)),
                            shape=(num_nodes, max(ci) + 1))
        x = TruncatedSVD(128, algorithm="arpack", random_state=0).fit_transform(mat)
        x = x.astype(np.float32)
        cached.parent.mkdir(parents=True, exist_ok=True)
        # a unique temporary name per process, renamed atomically: concurrent loads never
        # read (or clobber) a half-written cache entry
        fd, tmp = tempfile.mkstemp(dir=cached.parent, prefix=".svd128.", suffix=".npz")
        os.close(fd)
        try:
            np.savez_compressed(tmp, x=x)
            os.replace(tmp, cached)
        finally:
            Path(tmp).unlink(missing_ok=True)
    edge_index = _undirected(torch.from_numpy(edges.T.copy()), num_nodes)
    return Data(x=torch.from_numpy(x), edge_index=edge_index, y=torch.from_numpy(y))


@_register("synthetic", "seeded contextual SBM (500 nodes, 4 classes) for smoke runs",
           needs_data_root=False)
def _load_synthetic(root: Path | None, cache: Path) -> Data:
    from graphleaks.data.synthetic import csbm

    return csbm(500, num_classes=4, num_features=32, avg_degree=8.0, seed=0)


@_register("bipartite", "seeded synthetic user-item graph (600 users, 400 items, Zipf item "
           "popularity) for recommendation; bundled", needs_data_root=False)
def _load_bipartite(root: Path | None, cache: Path) -> Data:
    from graphleaks.data.synthetic import bipartite_interactions

    return bipartite_interactions(600, 400, interactions_per_user=8.0, num_features=16, seed=0)
