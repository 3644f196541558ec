"""Validation helpers for TOML tables (specs and sweep specs): tables, keys and types.

Every error names the offending field (``gate.thresholds``, ``audit.seed``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphleaks.errors import InvalidConfigError


def table(raw: Any, where: str) -> dict[str, Any]:
    """``raw`` as a dict, or an error naming ``where`` if it is not a table."""
    if not isinstance(raw, Mapping):
        raise InvalidConfigError(f"{where} must be a table, got {type(raw).__name__}")
    return dict(raw)


def no_unknown(raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
    """Refuse a key of ``raw`` outside ``allowed``, listing the allowed keys."""
    extra = sorted(set(raw) - allowed)
    if extra:
        raise InvalidConfigError(
            f"{where}: unknown key {extra[0]!r}; allowed keys: {', '.join(sorted(allowed))}")


def typed(raw: Mapping[str, Any], key: str, typ: type | tuple[type, ...], where: str,
          default: Any) -> Any:
    """``raw[key]`` if it is of type ``typ`` (a bool is no int), ``default`` if missing."""
    if key not in raw:
        return default
    value = raw[key]
    ok = isinstance(value, typ) and not (isinstance(value, bool) and typ is not bool
                                         and bool not in (typ if isinstance(typ, tuple)
                                                          else (typ,)))
    if not ok:
        names = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
        raise InvalidConfigError(f"{where}.{key} must be {names}, got {value!r}")
    return value


def wrap(where: str, exc: Exception) -> InvalidConfigError:
    """``exc`` as an :class:`InvalidConfigError` prefixed by the field ``where``."""
    return InvalidConfigError(f"{where}: {exc}")
