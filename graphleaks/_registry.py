"""A small generic registry of plug-ins, resolved case-, dash- and underscore-insensitively.

Every plug-in has one canonical name in snake_case (``gap_edp``), the only spelling graphleaks
writes. Any spelling that normalises to it (``gap-edp``, ``GAP_EDP``) is accepted as input and
resolved once, at the edge that reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from graphleaks.errors import InvalidConfigError

T = TypeVar("T")


def normalize_name(name: str) -> str:
    """Normalise a plug-in name for lookup: lower case, ``-`` and ``_`` removed."""
    return name.lower().replace("-", "").replace("_", "")


#: Plug-in names that earlier versions wrote in kebab-case, mapped to their canonical names.
#: Reports, bundle manifests and CI baselines written before the rename hold these; decoders
#: that must not import the registries (torch) map them with :func:`canonical_name`. A test
#: checks every entry against the registries.
LEGACY_NAMES: dict[str, str] = {
    "gap-edp": "gap_edp",
    "gap-ndp": "gap_ndp",
    "eclipse-strict": "eclipse_strict",
}
_LEGACY_BY_KEY = {normalize_name(canon): canon for canon in LEGACY_NAMES.values()}


def canonical_name(name: str) -> str:
    """The canonical spelling of a plug-in name read from a file an earlier version wrote.

    Any spelling of a renamed plug-in maps to its canonical name; every other string is
    returned unchanged (a foreign model's free-text defense label stays as given).

    Example:
        >>> canonical_name("gap-edp"), canonical_name("GAP_NDP"), canonical_name("my-defense")
        ('gap_edp', 'gap_ndp', 'my-defense')
    """
    return _LEGACY_BY_KEY.get(normalize_name(name), name)


class Registry(Generic[T]):
    """Maps plug-in names to plug-in classes."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._names: dict[str, str] = {}

    def register(self, name: str, item: T) -> None:
        """Register ``item`` under ``name``; a second plug-in with the same name is an error."""
        key = normalize_name(name)
        if key in self._names and self._items[self._names[key]] is not item:
            old = self._items[self._names[key]]
            # The same class imported a second time under another module path (as doctest
            # collection by file path does) replaces itself; a different class is an error.
            if getattr(old, "__qualname__", None) != getattr(item, "__qualname__", None) or (
                str(getattr(old, "__module__", "")).rsplit(".", 1)[-1]
                != str(getattr(item, "__module__", "")).rsplit(".", 1)[-1]
            ):
                raise RuntimeError(f"duplicate {self.kind} name {name!r}")
        self._names[key] = name
        self._items[name] = item

    def get(self, name: str) -> T:
        """Return the plug-in registered as ``name``.

        Raises:
            InvalidConfigError: If no plug-in matches, listing the valid names.
        """
        key = normalize_name(name)
        if key not in self._names:
            raise InvalidConfigError(
                f"unknown {self.kind} {name!r}; choose one of: {', '.join(sorted(self._items))}"
            )
        return self._items[self._names[key]]

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_name(name) in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)
