"""One record of where a graph came from: :class:`DatasetRef`.

A dataset record is written into bundles (``manifest.json``) and reports, and read back to
reload the graph a bundle was trained on. Bundles, audit specs and the CLI all build the same
record and reload through the same :meth:`DatasetRef.load`, so a target trained from any
source reloads the same way (the former three copies of this logic disagreed: a bundle
trained from a TOML spec on a synthetic graph could not be reloaded).

Kinds:

* ``bundled``: a registered dataset shipped with graphleaks (Cora, the fixed synthetic graph);
* ``data_root``: a registered dataset read from the data root (``--data-root``);
* ``files``: user files (``--edges/--features/--labels``). Only the file *names* are
  recorded: a bundle never follows paths out of itself, so the files are given again on the
  command line, or the graph travels inside the bundle (``graph.safetensors``);
* ``synthetic``: a contextual SBM drawn from recorded :func:`~graphleaks.data.synthetic.csbm`
  parameters (seed included), redrawn identically on reload;
* ``user``: a graph handed over in memory (the Python API); it cannot be reloaded by name,
  so a bundle carries it inside.

Example:
    >>> ref = DatasetRef.synthetic(num_nodes=40, num_features=4)
    >>> graph = ref.load()
    >>> ref = ref.pinned(graph)
    >>> DatasetRef.from_dict(ref.to_dict()) == ref
    True
    >>> ref.describe()
    'synthetic csbm(num_features=4, num_nodes=40, seed=0)'
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from graphleaks.errors import DataError

if TYPE_CHECKING:  # torch_geometric is imported when a graph is loaded, not before
    from torch_geometric.data import Data

DatasetKind = Literal["bundled", "data_root", "files", "synthetic", "user"]
DATASET_KINDS: tuple[str, ...] = get_args(DatasetKind)
#: Kinds whose graph cannot be rebuilt from the record alone: a bundle carries it inside.
CARRIED_KINDS: frozenset[str] = frozenset({"files", "user"})

_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_MAX_NAME = 255
#: Largest ``num_nodes * num_features`` a synthetic record may ask for. The record may come
#: from an untrusted bundle or spec, and ``csbm`` allocates that many float64 values twice.
MAX_SYNTHETIC_CELLS = 200_000_000
_INTEGER_PARAMS = frozenset({"num_nodes", "num_classes", "num_features", "seed"})
_KEYS = frozenset({"kind", "name", "edges", "features", "labels", "csbm", "fingerprint"})


def _csbm_parameters() -> frozenset[str]:
    from graphleaks.data.synthetic import csbm

    return frozenset(inspect.signature(csbm).parameters)


def _file_name(value: Any, what: str) -> str:
    """A bare file name: the record never holds a directory, so it never leads anywhere."""
    if (not isinstance(value, str) or not value or len(value) > _MAX_NAME or "/" in value
            or "\\" in value or "\0" in value or value in (".", "..")):
        raise DataError(f"dataset.{what} must be a bare file name (no directories, no '..'), "
                        f"got {str(value)[:80]!r}; a dataset record never names a path")
    return value


def _check_synthetic(params: Mapping[str, Any]) -> tuple[tuple[str, int | float], ...]:
    """Validated ``csbm`` parameters as sorted items; ``seed`` defaults to 0."""
    allowed = _csbm_parameters()
    unknown = sorted(str(k)[:40] for k in params if k not in allowed)
    if unknown:
        raise DataError(f"dataset.csbm: unknown parameter(s) {', '.join(unknown)}; choose "
                        f"from {', '.join(sorted(allowed))}")
    out: dict[str, int | float] = {"seed": 0}
    for key, value in params.items():
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or (isinstance(value, float) and not math.isfinite(value))):
            raise DataError(f"dataset.csbm.{key} must be a finite number, got "
                            f"{str(value)[:40]!r}")
        if key in _INTEGER_PARAMS and (not isinstance(value, int) or value < 0):
            raise DataError(f"dataset.csbm.{key} must be an integer >= 0, got {value!r}")
        out[str(key)] = value
    nodes, feats = out.get("num_nodes", 60), out.get("num_features", 8)
    if isinstance(nodes, (int, float)) and isinstance(feats, (int, float)) and (
            nodes * feats > MAX_SYNTHETIC_CELLS):
        raise DataError(f"dataset.csbm: num_nodes * num_features = {nodes * feats:.3g} is over "
                        f"the limit of {MAX_SYNTHETIC_CELLS:,}; use a smaller graph")
    return tuple(sorted(out.items()))


@dataclass(frozen=True)
class DatasetRef:
    """Where a graph came from, and how to load it again.

    Build one with :meth:`named`, :meth:`files`, :meth:`synthetic` or :meth:`user` (or
    :meth:`from_dict` for a stored record); the constructor stores, it does not check.

    Attributes:
        kind: One of ``bundled``, ``data_root``, ``files``, ``synthetic``, ``user``.
        name: Registry name (``bundled``/``data_root``), or a free label of a ``user`` graph.
        edges: File name of the edge list (``files`` only; never a path).
        features: File name of the feature matrix (``files`` only).
        labels: File name of the labels (``files`` only; optional).
        csbm: ``csbm`` parameters as sorted ``(name, value)`` pairs (``synthetic`` only).
        fingerprint: Content hash of the graph (:func:`graphleaks.data.fingerprint`) once
            pinned; :meth:`load` refuses a graph that does not match it.
        paths: Where the ``files`` are on this machine; used by :meth:`load`, never stored.
    """

    kind: DatasetKind
    name: str | None = None
    edges: str | None = None
    features: str | None = None
    labels: str | None = None
    csbm: tuple[tuple[str, int | float], ...] = ()
    fingerprint: str | None = None
    paths: tuple[Path, Path, Path | None] | None = field(default=None, compare=False,
                                                         repr=False)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def named(cls, name: str) -> DatasetRef:
        """A registered dataset (``graphleaks list datasets``), by any accepted spelling.

        Raises:
            InvalidConfigError: For an unknown name, listing the choices.
        """
        from graphleaks.data.datasets import datasets

        info = datasets.get(name)
        return cls(kind="data_root" if info.needs_data_root else "bundled", name=info.name)

    @classmethod
    def files(cls, edges: str | Path, features: str | Path,
              labels: str | Path | None = None) -> DatasetRef:
        """Graph files on this machine; the record keeps their names only."""
        e, f = Path(edges), Path(features)
        lab = Path(labels) if labels is not None else None
        return cls(kind="files", edges=e.name, features=f.name,
                   labels=lab.name if lab is not None else None, paths=(e, f, lab))

    @classmethod
    def synthetic(cls, **params: int | float) -> DatasetRef:
        """A contextual SBM with these :func:`~graphleaks.data.synthetic.csbm` parameters.

        Raises:
            DataError: For an unknown parameter, a non-number, or a graph over the size limit.
        """
        return cls(kind="synthetic", csbm=_check_synthetic(params))

    @classmethod
    def user(cls, name: str | None = None) -> DatasetRef:
        """A graph handed over in memory, with an optional label for reports."""
        return cls(kind="user", name=name)

    @classmethod
    def coerce(cls, value: DatasetRef | Mapping[str, Any] | None) -> DatasetRef:
        """A :class:`DatasetRef` from what Python API callers pass as ``dataset=``.

        A mapping is read as a stored record (:meth:`from_dict`), except that the caller is
        trusted here: a ``files`` record may hold paths (only the names are kept), and an
        unregistered ``name`` without a ``kind`` labels a graph in memory.
        """
        if value is None:
            return cls.user()
        if isinstance(value, DatasetRef):
            return value
        if not isinstance(value, Mapping):
            raise DataError(f"dataset must be a DatasetRef or a dataset record, got "
                            f"{type(value).__name__}")
        if (value.get("kind") == "files" or value.get("name") == "files") and (
                isinstance(value.get("edges"), str) and isinstance(value.get("features"), str)):
            ref = cls.files(value["edges"], value["features"], value.get("labels"))
            fp = value.get("fingerprint")
            return dataclasses.replace(ref, fingerprint=fp) if isinstance(fp, str) else ref
        name = value.get("name")
        if "kind" not in value and isinstance(name, str) and name not in _registry():
            return cls.user(name)  # a free label such as {"name": "my-graph"}
        return cls.from_dict(value)

    # ------------------------------------------------------------------ records

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (no paths, only file names), read back by :meth:`from_dict`."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "files":
            # "name" keeps readers of the version-1 record (``{"name": "files", ...}``) working
            out.update(name="files", edges=self.edges, features=self.features,
                       labels=self.labels)
        elif self.kind == "synthetic":
            out.update(name="synthetic", csbm=dict(self.csbm))
        elif self.name is not None:
            out["name"] = self.name
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> DatasetRef:
        """Read a record written by :meth:`to_dict`, or a version-1 record (no ``kind``).

        The record may come from an untrusted bundle: every field is type-checked, file
        names must be bare names (never a path), registry names must be registered, and
        synthetic parameters are bounded before anything is allocated.

        Raises:
            DataError: Naming the first bad field.
        """
        if not isinstance(raw, Mapping):
            raise DataError(f"dataset record must be a JSON object, got {type(raw).__name__}")
        unknown = sorted(str(k)[:40] for k in raw if k not in _KEYS)
        if unknown:
            raise DataError(f"dataset record has unknown field(s) {', '.join(unknown)}; "
                            f"allowed: {', '.join(sorted(_KEYS))}")
        name = raw.get("name")
        if name is not None and (not isinstance(name, str) or not name
                                 or len(name) > _MAX_NAME):
            raise DataError(f"dataset.name must be a non-empty string, got {str(name)[:80]!r}")
        kind = raw.get("kind")
        if kind is None:  # version-1 record: the kind follows from the name
            kind = _legacy_kind(name, raw)
        if kind not in DATASET_KINDS:
            raise DataError(f"dataset.kind must be one of {', '.join(DATASET_KINDS)}, got "
                            f"{str(kind)[:40]!r}")
        for key in ("edges", "features", "labels", "csbm"):
            wanted = {"files": ("edges", "features", "labels"), "synthetic": ("csbm",)}
            if raw.get(key) is not None and key not in wanted.get(kind, ()):
                raise DataError(f"dataset.{key} is not allowed in a {kind!r} dataset record")
        fp = raw.get("fingerprint")
        if fp is not None and (not isinstance(fp, str) or not _FINGERPRINT.fullmatch(fp)):
            raise DataError(f"dataset.fingerprint must be 16 hex digits, got {str(fp)[:40]!r}")
        if kind in ("bundled", "data_root"):
            if name is None:
                raise DataError(f"a {kind!r} dataset record needs a name")
            ref = cls.named(_registered(name))
        elif kind == "files":
            labels = raw.get("labels")
            ref = cls(kind="files", edges=_file_name(raw.get("edges"), "edges"),
                      features=_file_name(raw.get("features"), "features"),
                      labels=None if labels is None else _file_name(labels, "labels"))
        elif kind == "synthetic":
            params = raw.get("csbm")
            if params is None:  # version 1: the fixed registered graph
                ref = cls.named("synthetic")
            elif not isinstance(params, Mapping):
                raise DataError("dataset.csbm must be a JSON object of csbm parameters")
            else:
                ref = cls.synthetic(**{str(k): v for k, v in params.items()})
        else:
            ref = cls.user(name)
        return dataclasses.replace(ref, fingerprint=fp)

    # ------------------------------------------------------------------ loading

    def pinned(self, graph: Data) -> DatasetRef:
        """This record with the fingerprint of ``graph``, the graph it describes."""
        from graphleaks.data.graph import fingerprint

        return dataclasses.replace(self, fingerprint=fingerprint(graph))

    def describe(self) -> str:
        """A short human label (reports, error messages)."""
        if self.kind == "files":
            names = [n for n in (self.edges, self.features, self.labels) if n]
            return "files " + ", ".join(names)
        if self.kind == "synthetic":
            return "synthetic csbm(" + ", ".join(f"{k}={v}" for k, v in self.csbm) + ")"
        if self.kind == "user":
            return self.name or "user graph"
        return str(self.name)

    def reload_hint(self) -> str:
        """What the user must do to supply this graph again."""
        if self.kind == "files":
            return (f"it was read from the files {self.describe().removeprefix('files ')}: "
                    "pass the same files with --edges, --features and --labels")
        if self.kind == "user":
            return ("it was handed over in memory: pass the same graph again (graph= in Python, "
                    "--dataset or --edges/--features/--labels on the command line)")
        if self.kind == "data_root":
            return f"pass --data-root (or set GRAPHLEAKS_DATA) with dataset {self.name!r}"
        return "it is rebuilt from the record"

    def load(
        self,
        *,
        data_root: str | Path | None = None,
        edges: str | Path | None = None,
        features: str | Path | None = None,
        labels: str | Path | None = None,
        verify: bool = True,
    ) -> Data:
        """Load the graph this record describes.

        Args:
            data_root: Data root for ``data_root`` datasets (default ``GRAPHLEAKS_DATA``).
            edges: Edge file of a ``files`` record (default: the paths it was built with).
            features: Feature file of a ``files`` record.
            labels: Label file of a ``files`` record.
            verify: Refuse a graph whose fingerprint differs from :attr:`fingerprint`.

        Raises:
            DataError: If the graph cannot be loaded from this record (naming what to pass),
                or does not match the recorded fingerprint.
        """
        from graphleaks.data.graph import fingerprint

        if self.kind in ("bundled", "data_root"):
            from graphleaks.data.datasets import load_dataset

            graph = load_dataset(str(self.name), data_root=data_root)
        elif self.kind == "synthetic":
            from graphleaks.data.synthetic import csbm

            graph = csbm(**dict(self.csbm))  # type: ignore[arg-type]
        elif self.kind == "files":
            from graphleaks.data.files import load_graph_files

            if edges is None and features is None and self.paths is not None:
                edges, features, labels = self.paths
            if edges is None or features is None:
                raise DataError(f"cannot reload the graph: {self.reload_hint()}")
            graph = load_graph_files(edges, features=features, labels=labels)
        else:
            raise DataError(f"cannot reload the graph: {self.reload_hint()}")
        if verify and self.fingerprint is not None and fingerprint(graph) != self.fingerprint:
            raise DataError(f"the graph loaded from {self.describe()} has fingerprint "
                            f"{fingerprint(graph)}, not the recorded {self.fingerprint}; it is "
                            "not the graph this record was made from")
        return graph


def _legacy_kind(name: str | None, raw: Mapping[str, Any]) -> str:
    """The kind of a version-1 record, which had only a name (and paths or parameters)."""
    if name == "files":
        return "files"
    if name == "synthetic" and raw.get("csbm") is not None:
        return "synthetic"
    # any other name must be registered (checked by the caller): a stored record is untrusted
    return "user" if name is None else "bundled"


def _registry() -> Any:
    from graphleaks.data.datasets import datasets

    return datasets


def _registered(name: str) -> str:
    datasets = _registry()
    if name not in datasets:
        raise DataError(f"dataset.name {name[:80]!r} is not a registered dataset; choose one "
                        f"of: {', '.join(datasets.names())}")
    return name
