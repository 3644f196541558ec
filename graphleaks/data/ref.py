"""One record of where a graph came from: :class:`DatasetRef`.

A dataset record is written into bundles (``manifest.json``) and reports, and read back to
reload the graph a bundle was trained on. Bundles, audit specs and the CLI all build the same
record and reload through the same :meth:`DatasetRef.load`, so a target trained from any
source reloads the same way (the former three copies of this logic disagreed: a bundle
trained from a TOML spec on a synthetic graph could not be reloaded).

Kinds, each a frozen class (:data:`DATASET_CLASSES` maps a stored kind to its class):

* ``bundled`` (:class:`RegisteredRef`): a registered dataset shipped with graphleaks (Cora,
  the fixed synthetic graph);
* ``data_root`` (:class:`RegisteredRef`): a registered dataset read from the data root
  (``--data-root``);
* ``files`` (:class:`FilesRef`): user files (``--edges/--features/--labels``, or one graph
  file such as ``--edges graph.npz``). Only the file *names* are recorded: a bundle never
  follows paths out of itself, so the files are given again on the command line, or the
  graph travels inside the bundle (``graph.safetensors``);
* ``synthetic`` (:class:`SyntheticRef`): a contextual SBM drawn from recorded
  :func:`~graphleaks.data.synthetic.csbm` parameters (seed included), redrawn identically
  on reload;
* ``user`` (:class:`UserRef`): a graph handed over in memory (the Python API); it cannot be
  reloaded by name, so a bundle carries it inside.

A new kind is one frozen subclass (its ``kind``, ``_record``, ``_from_record``,
``describe``, ``reload_hint`` and ``_load``) and one :data:`DATASET_CLASSES` entry.

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

import abc
import dataclasses
import inspect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from graphleaks.errors import DataError

if TYPE_CHECKING:  # torch_geometric is imported when a graph is loaded, not before
    from torch_geometric.data import Data
    from typing_extensions import Self  # typing.Self from Python 3.11

DatasetKind = Literal["bundled", "data_root", "files", "synthetic", "user"]

_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_MAX_NAME = 255
#: Largest ``num_nodes * num_features`` a synthetic record may ask for. The record may come
#: from an untrusted bundle or spec, and ``csbm`` allocates that many float64 values twice.
MAX_SYNTHETIC_CELLS = 200_000_000
_INTEGER_PARAMS = frozenset({"num_nodes", "num_classes", "num_features", "seed"})


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
class DatasetRef(abc.ABC):
    """Where a graph came from, and how to load it again.

    The base of a small union of frozen records, one class per source: :class:`RegisteredRef`
    (a registered dataset), :class:`FilesRef` (user files), :class:`SyntheticRef` (a drawn
    csbm graph) and :class:`UserRef` (a graph in memory). Each owns its :meth:`load`, its
    :meth:`describe` label and its :meth:`reload_hint`; :data:`DATASET_CLASSES` maps a
    stored ``kind`` to its class. Build one with :meth:`named`, :meth:`files`,
    :meth:`synthetic` or :meth:`user` (or :meth:`from_dict` for a stored record); the
    constructors store, they do not check.

    Attributes:
        fingerprint: Content hash of the graph (:func:`graphleaks.data.fingerprint`) once
            pinned; :meth:`load` refuses a graph that does not match it.
    """

    fingerprint: str | None = field(default=None, kw_only=True)

    #: Record fields this kind may hold besides ``kind``, ``name`` and ``fingerprint``.
    record_fields: ClassVar[frozenset[str]] = frozenset()
    #: Whether a bundle carries the graph inside (it cannot be rebuilt from the record).
    carried: ClassVar[bool] = False

    @property
    @abc.abstractmethod
    def kind(self) -> DatasetKind:
        """The stored kind (a key of :data:`DATASET_CLASSES`)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ constructors

    @classmethod
    def named(cls, name: str) -> RegisteredRef:
        """A registered dataset (``graphleaks list datasets``), by any accepted spelling.

        Raises:
            InvalidConfigError: For an unknown name, listing the choices.
        """
        from graphleaks.data.datasets import datasets

        info = datasets.get(name)
        return RegisteredRef(info.name, on_data_root=info.needs_data_root)

    @classmethod
    def files(cls, edges: str | Path, features: str | Path | None = None,
              labels: str | Path | None = None) -> FilesRef:
        """Graph files on this machine; the record keeps their names only.

        ``edges`` is the file given as ``--edges``; its suffix picks the graph reader
        (:data:`graphleaks.data.graph_readers.GRAPH_READERS`), which says whether
        ``features``/``labels`` are needed.
        """
        e = Path(edges)
        f = Path(features) if features is not None else None
        lab = Path(labels) if labels is not None else None
        return FilesRef(e.name, None if f is None else f.name,
                        None if lab is None else lab.name, paths=(e, f, lab))

    @classmethod
    def synthetic(cls, **params: int | float) -> SyntheticRef:
        """A contextual SBM with these :func:`~graphleaks.data.synthetic.csbm` parameters.

        Raises:
            DataError: For an unknown parameter, a non-number, or a graph over the size limit.
        """
        return SyntheticRef(_check_synthetic(params))

    @classmethod
    def user(cls, name: str | None = None) -> UserRef:
        """A graph handed over in memory, with an optional label for reports."""
        return UserRef(name)

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
                isinstance(value.get("edges"), str)):
            ref = cls.files(value["edges"], value.get("features"), value.get("labels"))
            fp = value.get("fingerprint")
            return dataclasses.replace(ref, fingerprint=fp) if isinstance(fp, str) else ref
        name = value.get("name")
        if "kind" not in value and isinstance(name, str) and name not in _registry():
            return cls.user(name)  # a free label such as {"name": "my-graph"}
        return cls.from_dict(value)

    # ------------------------------------------------------------------ records

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (no paths, only file names), read back by :meth:`from_dict`."""
        out: dict[str, Any] = {"kind": self.kind, **self._record()}
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint
        return out

    @abc.abstractmethod
    def _record(self) -> dict[str, Any]:
        """This kind's record fields (``name`` included)."""
        raise NotImplementedError

    @classmethod
    @abc.abstractmethod
    def _from_record(cls, raw: Mapping[str, Any], kind: str, name: str | None) -> DatasetRef:
        """This kind's record read back; ``raw`` holds only fields it allows."""

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
        keys = _record_keys()
        unknown = sorted(str(k)[:40] for k in raw if k not in keys)
        if unknown:
            raise DataError(f"dataset record has unknown field(s) {', '.join(unknown)}; "
                            f"allowed: {', '.join(sorted(keys))}")
        name = raw.get("name")
        if name is not None and (not isinstance(name, str) or not name
                                 or len(name) > _MAX_NAME):
            raise DataError(f"dataset.name must be a non-empty string, got {str(name)[:80]!r}")
        kind = raw.get("kind")
        if kind is None:  # version-1 record: the kind follows from the name
            kind = _legacy_kind(name, raw)
        if kind not in DATASET_CLASSES:
            raise DataError(f"dataset.kind must be one of {', '.join(DATASET_CLASSES)}, got "
                            f"{str(kind)[:40]!r}")
        kind_cls = DATASET_CLASSES[kind]
        for key in sorted(keys - _COMMON_KEYS - kind_cls.record_fields):
            if raw.get(key) is not None:
                raise DataError(f"dataset.{key} is not allowed in a {kind!r} dataset record")
        fp = raw.get("fingerprint")
        if fp is not None and (not isinstance(fp, str) or not _FINGERPRINT.fullmatch(fp)):
            raise DataError(f"dataset.fingerprint must be 16 hex digits, got {str(fp)[:40]!r}")
        return dataclasses.replace(kind_cls._from_record(raw, kind, name), fingerprint=fp)

    # ------------------------------------------------------------------ loading

    def pinned(self, graph: Data) -> Self:
        """This record with the fingerprint of ``graph``, the graph it describes."""
        from graphleaks.data.graph import fingerprint

        return dataclasses.replace(self, fingerprint=fingerprint(graph))

    @abc.abstractmethod
    def describe(self) -> str:
        """A short human label (reports, error messages)."""
        raise NotImplementedError

    def reload_hint(self) -> str:
        """What the user must do to supply this graph again."""
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
            edges: Graph file (``--edges``) of a ``files`` record (default: the paths it was
                built with).
            features: Feature file of a ``files`` record.
            labels: Label file of a ``files`` record.
            verify: Refuse a graph whose fingerprint differs from :attr:`fingerprint`.

        Raises:
            DataError: If the graph cannot be loaded from this record (naming what to pass),
                or does not match the recorded fingerprint.
        """
        from graphleaks.data.graph import fingerprint

        graph = self._load(data_root=data_root, edges=edges, features=features, labels=labels)
        if verify and self.fingerprint is not None and fingerprint(graph) != self.fingerprint:
            raise DataError(f"the graph loaded from {self.describe()} has fingerprint "
                            f"{fingerprint(graph)}, not the recorded {self.fingerprint}; it is "
                            "not the graph this record was made from")
        return graph

    def _load(self, *, data_root: str | Path | None, edges: str | Path | None,
              features: str | Path | None, labels: str | Path | None) -> Data:
        """The graph, unverified (the arguments are :meth:`load`'s)."""
        raise DataError(f"cannot reload the graph: {self.reload_hint()}")


@dataclass(frozen=True)
class RegisteredRef(DatasetRef):
    """A registered dataset: shipped with graphleaks (``bundled``: Cora, the fixed synthetic
    graph) or read from the data root (``data_root``).

    Attributes:
        name: Registry name.
        on_data_root: Whether it is read from the data root (``--data-root``).
    """

    name: str
    on_data_root: bool = False

    @property
    def kind(self) -> DatasetKind:
        """``data_root`` or ``bundled``."""
        return "data_root" if self.on_data_root else "bundled"

    def _record(self) -> dict[str, Any]:
        return {"name": self.name}

    @classmethod
    def _from_record(cls, raw: Mapping[str, Any], kind: str, name: str | None) -> DatasetRef:
        if name is None:
            raise DataError(f"a {kind!r} dataset record needs a name")
        # the registry, not the record, says where it is read from
        return cls.named(_registered(name))

    def describe(self) -> str:
        """The registry name."""
        return self.name

    def reload_hint(self) -> str:
        """The data root, for a data-root dataset."""
        if self.on_data_root:
            return f"pass --data-root (or set GRAPHLEAKS_DATA) with dataset {self.name!r}"
        return super().reload_hint()

    def _load(self, *, data_root: str | Path | None, edges: str | Path | None,
              features: str | Path | None, labels: str | Path | None) -> Data:
        from graphleaks.data.datasets import load_dataset

        return load_dataset(self.name, data_root=data_root)


@dataclass(frozen=True)
class FilesRef(DatasetRef):
    """User files (``--edges/--features/--labels``). Only the file *names* are recorded: a
    bundle never follows paths out of itself, so the files are given again on the command
    line, or the graph travels inside the bundle (``graph.safetensors``).

    Attributes:
        edges: File name of the graph file given as ``--edges`` (an edge list, or a
            self-contained graph file such as ``.npz``); never a path.
        features: File name of the feature matrix, for graph files that need one.
        labels: File name of the labels (optional).
        paths: Where the files are on this machine; used by :meth:`load`, never stored.
    """

    edges: str
    features: str | None = None
    labels: str | None = None
    paths: tuple[Path, Path | None, Path | None] | None = field(default=None, compare=False,
                                                                repr=False)

    record_fields: ClassVar[frozenset[str]] = frozenset({"edges", "features", "labels"})
    carried: ClassVar[bool] = True

    @property
    def kind(self) -> DatasetKind:
        """``files``."""
        return "files"

    def _record(self) -> dict[str, Any]:
        # "name" keeps readers of the version-1 record (``{"name": "files", ...}``) working
        return {"name": "files", "edges": self.edges, "features": self.features,
                "labels": self.labels}

    @classmethod
    def _from_record(cls, raw: Mapping[str, Any], kind: str, name: str | None) -> DatasetRef:
        features, labels = raw.get("features"), raw.get("labels")
        return cls(_file_name(raw.get("edges"), "edges"),
                   None if features is None else _file_name(features, "features"),
                   None if labels is None else _file_name(labels, "labels"))

    def _names(self) -> list[str]:
        return [n for n in (self.edges, self.features, self.labels) if n]

    def describe(self) -> str:
        """``files`` and the file names."""
        return "files " + ", ".join(self._names())

    def reload_hint(self) -> str:
        """The options that take the same files again."""
        opts = [o for o, n in (("--edges", self.edges), ("--features", self.features),
                               ("--labels", self.labels)) if n]
        return (f"it was read from the files {', '.join(self._names())}: pass the same files "
                f"again ({', '.join(opts)})")

    def _load(self, *, data_root: str | Path | None, edges: str | Path | None,
              features: str | Path | None, labels: str | Path | None) -> Data:
        from graphleaks.data.graph_readers import GRAPH_READERS

        if edges is None and features is None and self.paths is not None:
            edges, features, labels = self.paths
        if edges is None or (features is None and self.features is not None):
            raise DataError(f"cannot reload the graph: {self.reload_hint()}")
        return GRAPH_READERS.read(edges, features=features, labels=labels)


@dataclass(frozen=True)
class SyntheticRef(DatasetRef):
    """A contextual SBM drawn from recorded :func:`~graphleaks.data.synthetic.csbm`
    parameters (seed included), redrawn identically on reload.

    Attributes:
        csbm: ``csbm`` parameters as sorted ``(name, value)`` pairs.
    """

    csbm: tuple[tuple[str, int | float], ...] = ()

    record_fields: ClassVar[frozenset[str]] = frozenset({"csbm"})

    @property
    def kind(self) -> DatasetKind:
        """``synthetic``."""
        return "synthetic"

    def _record(self) -> dict[str, Any]:
        return {"name": "synthetic", "csbm": dict(self.csbm)}

    @classmethod
    def _from_record(cls, raw: Mapping[str, Any], kind: str, name: str | None) -> DatasetRef:
        params = raw.get("csbm")
        if params is None:  # version 1: the fixed registered graph
            return cls.named("synthetic")
        if not isinstance(params, Mapping):
            raise DataError("dataset.csbm must be a JSON object of csbm parameters")
        return cls.synthetic(**{str(k): v for k, v in params.items()})

    def describe(self) -> str:
        """``synthetic csbm(...)`` with the parameters."""
        return "synthetic csbm(" + ", ".join(f"{k}={v}" for k, v in self.csbm) + ")"

    def _load(self, *, data_root: str | Path | None, edges: str | Path | None,
              features: str | Path | None, labels: str | Path | None) -> Data:
        from graphleaks.data.synthetic import csbm

        return csbm(**dict(self.csbm))  # type: ignore[arg-type]


@dataclass(frozen=True)
class UserRef(DatasetRef):
    """A graph handed over in memory (the Python API); it cannot be reloaded by name, so a
    bundle carries it inside.

    Attributes:
        name: A free label for reports.
    """

    name: str | None = None

    carried: ClassVar[bool] = True

    @property
    def kind(self) -> DatasetKind:
        """``user``."""
        return "user"

    def _record(self) -> dict[str, Any]:
        return {} if self.name is None else {"name": self.name}

    @classmethod
    def _from_record(cls, raw: Mapping[str, Any], kind: str, name: str | None) -> DatasetRef:
        return cls(name)

    def describe(self) -> str:
        """The label, or ``user graph``."""
        return self.name or "user graph"

    def reload_hint(self) -> str:
        """Pass the graph again."""
        return ("it was handed over in memory: pass the same graph again (graph= in Python, "
                "--dataset or --edges/--features/--labels on the command line)")


#: Stored kind -> record class: the one table :meth:`DatasetRef.from_dict` decodes with.
DATASET_CLASSES: dict[str, type[DatasetRef]] = {
    "bundled": RegisteredRef,
    "data_root": RegisteredRef,
    "files": FilesRef,
    "synthetic": SyntheticRef,
    "user": UserRef,
}
DATASET_KINDS: tuple[str, ...] = tuple(DATASET_CLASSES)
#: Kinds whose graph cannot be rebuilt from the record alone: a bundle carries it inside.
CARRIED_KINDS: frozenset[str] = frozenset(k for k, c in DATASET_CLASSES.items() if c.carried)
_COMMON_KEYS = frozenset({"kind", "name", "fingerprint"})


def _record_keys() -> frozenset[str]:
    return _COMMON_KEYS.union(*(c.record_fields for c in DATASET_CLASSES.values()))


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
