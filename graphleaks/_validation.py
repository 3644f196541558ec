"""One validator for every frozen config dataclass.

Every field's value must match its declared type (:mod:`graphleaks._params`). Constraints
are declared as field metadata, as scikit-learn declares
``_parameter_constraints``: ``{"range": (lo, hi), "closed": "both"|"left"|"right"|"neither"}``
or ``{"choices": (...)}``. Every violation raises :class:`InvalidConfigError` with one template.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from graphleaks._params import check_field_type, field_types
from graphleaks.errors import InvalidConfigError


def _message(owner: str, name: str, expected: str, value: Any) -> str:
    return f"The {name} parameter of {owner} must be {expected}. Got {value!r} instead."


def _check_range(owner: str, name: str, value: Any, meta: dict[str, Any]) -> None:
    lo, hi = meta["range"]
    closed = meta.get("closed", "both")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidConfigError(_message(owner, name, "a number", value))
    if isinstance(value, float) and math.isnan(value):
        raise InvalidConfigError(_message(owner, name, "a number, not NaN", value))
    lo_ok = lo is None or (value >= lo if closed in ("both", "left") else value > lo)
    hi_ok = hi is None or (value <= hi if closed in ("both", "right") else value < hi)
    if not (lo_ok and hi_ok):
        left = "[" if closed in ("both", "left") else "("
        right = "]" if closed in ("both", "right") else ")"
        lo_s = "-inf" if lo is None else lo
        hi_s = "inf" if hi is None else hi
        raise InvalidConfigError(_message(owner, name, f"in {left}{lo_s}, {hi_s}{right}", value))


def validate(config: Any, owner: str | None = None) -> Any:
    """Validate a config dataclass against its field metadata.

    Args:
        config: A dataclass instance.
        owner: The name used in messages; defaults to the config's class name.

    Returns:
        The same config, for chaining.

    Raises:
        InvalidConfigError: If a field violates its declared constraint.
    """
    owner = owner or type(config).__qualname__
    types = field_types(type(config))
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        meta = field.metadata
        if value is None and meta.get("optional", False):
            continue
        # The declared type first: an int field refuses 1.5, a bool field refuses 'False'.
        check_field_type(owner, field.name, value, types[field.name])
        if "range" in meta:
            _check_range(owner, field.name, value, dict(meta))
        if "choices" in meta and value not in meta["choices"]:
            choices = ", ".join(repr(c) for c in meta["choices"])
            raise InvalidConfigError(_message(owner, field.name, f"one of {{{choices}}}", value))
    check = getattr(config, "check", None)
    if callable(check):
        check()
    return config


def replace_config(config: Any, overrides: dict[str, Any], owner: str) -> Any:
    """Return ``config`` with ``overrides`` applied, rejecting unknown field names."""
    names = {f.name for f in dataclasses.fields(config)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise InvalidConfigError(
            f"{owner} has no parameter {unknown[0]!r}; "
            f"valid parameters: {', '.join(sorted(names))}."
        )
    return dataclasses.replace(config, **overrides)
