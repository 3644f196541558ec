"""A small generic registry of plug-ins, resolved case-, dash- and underscore-insensitively."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from graphleaks.errors import InvalidConfigError

T = TypeVar("T")


def normalize_name(name: str) -> str:
    """Normalise a plug-in name for lookup: lower case, ``-`` and ``_`` removed."""
    return name.lower().replace("-", "").replace("_", "")


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
