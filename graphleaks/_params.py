"""Plug-in parameters' field typing: values parsed and checked by their declared types.

Every edge that names plug-in parameters (the CLI's ``--param OWNER.FIELD=VALUE``, the TOML
spec's ``[attacks.NAME]`` / ``defense_params`` / ``architecture`` tables, the Python API's
keyword arguments) goes through :func:`resolve_params`: the owner is resolved to one canonical
plug-in name (case, ``-`` and ``_`` do not matter; an unknown or ambiguous owner is refused
with the choices), the field to one field of its ``Config`` dataclass, and the value is parsed
by the field's declared type. Nothing downstream looks a parameter up by a spelling again.

The owners in use come from :mod:`graphleaks.plugins`, which reads the registries; this module
imports no plug-in, so the plug-ins' own validation can use it.

Values from the command line arrive as text (``text=True``) and are parsed; values from TOML
or Python arrive typed and are type-checked the same way (a TOML ``1.5`` for an ``int`` field
is refused, an ``int`` for a ``float`` field is widened).

Example:
    >>> @dataclass(frozen=True)
    ... class GCNSpec:
    ...     hidden: tuple[int, ...] = (64,)
    ...     epochs: int = 200
    >>> owners = [Owner("gcn", "architecture", GCNSpec)]
    >>> resolve_params({"GCN": {"hidden": "[16, 8]", "epochs": "3"}}, owners, text=True)
    {'gcn': {'hidden': (16, 8), 'epochs': 3}}
    >>> parse_value("YES", bool, where="x", text=True)
    True
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from graphleaks._limits import loads_bounded
from graphleaks._registry import normalize_name
from graphleaks.errors import InvalidConfigError

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})
_NONE = frozenset({"none", "null"})
_INT = re.compile(r"[+-]?\d+")


class _Mismatch(Exception):
    """A value that the declared type does not accept (turned into one message by callers)."""


@dataclass(frozen=True)
class Owner:
    """A plug-in that takes parameters.

    Attributes:
        name: Its canonical registry name (the only spelling written to reports).
        kind: ``attack``, ``defense`` or ``architecture`` (for messages).
        config: Its frozen ``Config`` dataclass.
    """

    name: str
    kind: str
    config: type[Any]


def field_types(config_cls: type[Any]) -> dict[str, Any]:
    """The declared type of every field of a config dataclass (``Any`` when unresolvable)."""
    try:
        hints = typing.get_type_hints(config_cls)
    except (NameError, TypeError):  # a forward reference the module cannot resolve
        hints = {}
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(config_cls)}


def describe(tp: Any) -> str:
    """What a declared type accepts, in words, for error messages."""
    origin = get_origin(tp)
    if tp is bool:
        return "a bool (true/false, 1/0 or yes/no)"
    if tp is int:
        return "an int"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    if tp is type(None):
        return "none"
    if origin is Literal:
        return "one of {" + ", ".join(repr(a) for a in get_args(tp)) + "}"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "one of {" + ", ".join(repr(m.value) for m in tp) + "}"
    if origin in (Union, types.UnionType):
        return " or ".join(describe(a) for a in get_args(tp))
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {describe(args[0]).removeprefix('a ').removeprefix('an ')}s"
        return f"a list of {len(args)} values"
    return getattr(tp, "__name__", str(tp))


def _choices_str(value: Any, choices: Iterable[Any], text: bool) -> Any:
    for c in choices:
        if c is None and (value is None or (text and isinstance(value, str)
                                            and value.strip().lower() in _NONE)):
            return None
        if text and isinstance(value, str) and (str(c) == value or (
                isinstance(c, str) and c.lower() == value.strip().lower())):
            return c
        if not text and type(value) is type(c) and value == c:
            return c
    raise _Mismatch


class _TooDeep(Exception):
    """An option value over the JSON size or depth limit (named by :func:`parse_value`)."""


def _json(text: str) -> Any:
    # option text: bounded, so "[[[[..." is one refusal, not a RecursionError
    try:
        return loads_bounded(text, "the value")
    except InvalidConfigError as exc:
        raise _TooDeep(str(exc)) from None


def _parse(value: Any, tp: Any, text: bool) -> Any:
    """``value`` as type ``tp``, or :class:`_Mismatch`."""
    origin = get_origin(tp)
    if tp is Any or isinstance(tp, str):
        if text and isinstance(value, str):
            try:
                return _json(value)
            except json.JSONDecodeError:
                return value
        return value
    if tp is type(None):
        if value is None or (text and isinstance(value, str)
                             and value.strip().lower() in _NONE):
            return None
        raise _Mismatch
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        # A literal or typed member first ('none' may be a Literal choice), then None, then str.
        ordered = ([a for a in args if a is not str and a is not type(None)]
                   + [a for a in args if a is type(None)] + [a for a in args if a is str])
        for a in ordered:
            try:
                return _parse(value, a, text)
            except _Mismatch:
                continue
        raise _Mismatch
    if origin is Literal:
        return _choices_str(value, get_args(tp), text)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        if isinstance(value, tp):
            return value
        if isinstance(value, str):
            for m in tp:
                if value.strip().lower() in (str(m.value).lower(), m.name.lower()):
                    return m
        raise _Mismatch
    if tp is bool:
        if isinstance(value, bool):
            return value
        if text and isinstance(value, str):
            v = value.strip().lower()
            if v in _TRUE:
                return True
            if v in _FALSE:
                return False
        raise _Mismatch
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if text and isinstance(value, str) and _INT.fullmatch(value.strip()):
            return int(value.strip())
        raise _Mismatch
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if text and isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                raise _Mismatch from None
        raise _Mismatch
    if tp is str:
        if isinstance(value, str):
            return value
        raise _Mismatch
    if origin in (tuple, list, frozenset, set):
        items = value
        inner_text = text
        if text and isinstance(value, str):
            s = value.strip()
            if s.startswith(("[", "(")):
                try:
                    items = _json("[" + s[1:-1] + "]") if s[0] == "(" else _json(s)
                except json.JSONDecodeError:
                    raise _Mismatch from None
                inner_text = False
            else:
                items = [p for p in s.split(",") if p.strip()] if s else []
        if not isinstance(items, (list, tuple, set, frozenset)):
            raise _Mismatch
        args = get_args(tp)
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(items):
                raise _Mismatch
            parsed = [_parse(v, a, inner_text) for v, a in zip(items, args, strict=True)]
        else:
            elem = args[0] if args else Any
            parsed = [_parse(v, elem, inner_text) for v in items]
        return origin(parsed)
    if text and isinstance(value, str):  # a type this parser does not know: JSON, else text
        try:
            return _json(value)
        except json.JSONDecodeError:
            return value
    return value


def _shown(value: Any, text: bool) -> str:
    """The received value for a message: quoted when the user typed it on the command line,
    its type only otherwise (a TOML spec is a file, and messages never quote files)."""
    return repr(value) if text else f"a {type(value).__name__}"


def parse_value(value: Any, tp: Any, *, where: str, text: bool) -> Any:
    """Parse ``value`` by the declared type ``tp``.

    Args:
        value: Text from the command line (``text=True``) or a typed value (TOML, Python).
        tp: The field's declared type.
        where: The parameter, for the message (``shadow_mia.num_shadows``).
        text: Whether ``value`` is command-line text to parse.

    Raises:
        InvalidConfigError: Naming the parameter, what it accepts and what it got.
    """
    try:
        return _parse(value, tp, text)
    except _TooDeep as exc:
        raise InvalidConfigError(f"{where}: {exc}") from None
    except _Mismatch:
        raise InvalidConfigError(f"{where} must be {describe(tp)}; got {_shown(value, text)}"
                                 ) from None


def _choices_meta(config_cls: type[Any], name: str) -> tuple[Any, ...] | None:
    for f in dataclasses.fields(config_cls):
        if f.name == name and "choices" in f.metadata:
            return tuple(f.metadata["choices"])
    return None


def resolve_fields(
    owner: Owner, values: Mapping[str, Any], *, text: bool, source: str = ""
) -> dict[str, Any]:
    """Typed overrides of one plug-in's config from raw ``{field: value}``.

    Field names are matched exactly or with ``-`` read as ``_``, case-insensitively.

    Raises:
        InvalidConfigError: For an unknown field (listing the fields) or a value of the
            wrong type (naming what the field accepts).
    """
    types_ = field_types(owner.config)
    by_key = {k.lower(): k for k in types_}
    out: dict[str, Any] = {}
    for raw_name, value in values.items():
        name = by_key.get(str(raw_name).strip().replace("-", "_").lower())
        where = f"{source}{owner.name}.{raw_name}"
        if name is None:
            raise InvalidConfigError(
                f"{where}: {owner.kind} {owner.name!r} has no parameter {raw_name!r}; "
                f"valid parameters: {', '.join(types_) or '(none)'}")
        tp = types_[name]
        choices = _choices_meta(owner.config, name)
        if choices is not None and (text or isinstance(value, str)):
            # A field constrained by choices accepts exactly those spellings.
            try:
                out[name] = _choices_str(value, choices, text)
            except _Mismatch:
                raise InvalidConfigError(
                    f"{where} must be one of {{{', '.join(repr(c) for c in choices)}}}; "
                    f"got {_shown(value, text)}") from None
            continue
        out[name] = parse_value(value, tp, where=f"{source}{owner.name}.{name}", text=text)
    return out


def resolve_owner(name: str, owners: Iterable[Owner], *, source: str = "") -> Owner:
    """The one plug-in among ``owners`` that ``name`` spells.

    Raises:
        InvalidConfigError: If none or several match, listing the choices.
    """
    pool = list({(o.kind, o.name): o for o in owners}.values())
    key = normalize_name(str(name).strip())
    hits = [o for o in pool if normalize_name(o.name) == key]
    if len(hits) == 1:
        return hits[0]
    choices = ", ".join(sorted({o.name for o in pool})) or "(nothing takes parameters here)"
    if not hits:
        raise InvalidConfigError(f"{source}{name}.…: {name!r} is not in use here; parameters "
                                 f"can be set for: {choices}")
    raise InvalidConfigError(f"{source}{name}.…: {name!r} is ambiguous between "
                             + ", ".join(f"{o.kind} {o.name!r}" for o in hits)
                             + "; spell the owner exactly")


def resolve_params(
    raw: Mapping[str, Mapping[str, Any]], owners: Iterable[Owner], *, text: bool,
    source: str = "",
) -> dict[str, dict[str, Any]]:
    """Resolve ``{OWNER: {FIELD: value}}`` into ``{canonical name: {field: typed value}}``.

    Two spellings of the same owner merge; the same field given twice under two spellings
    is refused (which one would win is not obvious).

    Args:
        raw: Parameters as given, owners and fields in any accepted spelling.
        owners: The plug-ins in use.
        text: Whether the values are command-line text.
        source: Prefix of messages (``"--param "``).

    Raises:
        InvalidConfigError: For an unknown or ambiguous owner, an unknown field or a value
            of the wrong type.
    """
    pool = list(owners)
    out: dict[str, dict[str, Any]] = {}
    for owner_name, values in raw.items():
        owner = resolve_owner(owner_name, pool, source=source)
        if not isinstance(values, Mapping):
            raise InvalidConfigError(f"{source}{owner_name}: expected a table of parameters, "
                                     f"got {_shown(values, text)}")
        typed = resolve_fields(owner, values, text=text, source=source)
        mine = out.setdefault(owner.name, {})
        twice = sorted(set(mine) & set(typed))
        if twice:
            raise InvalidConfigError(f"{source}{owner.name}.{twice[0]} is given twice under "
                                     "different spellings; give it once")
        mine.update(typed)
    return out


def parse_param_items(items: Iterable[str] | None) -> dict[str, dict[str, str]]:
    """Split ``OWNER.FIELD=VALUE`` options into ``{OWNER: {FIELD: text}}`` (nothing parsed).

    Raises:
        InvalidConfigError: For an option of another shape, or one field given twice.
    """
    out: dict[str, dict[str, str]] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        owner, dot, fld = key.partition(".")
        if not sep or not dot or not owner.strip() or not fld.strip():
            raise InvalidConfigError(f"--param {item!r} must look like NAME.FIELD=VALUE")
        table = out.setdefault(owner.strip(), {})
        if fld.strip() in table:
            raise InvalidConfigError(f"--param {owner.strip()}.{fld.strip()} is given twice; "
                                     "give it once")
        table[fld.strip()] = raw
    return out


def check_field_type(owner: str, name: str, value: Any, tp: Any) -> None:
    """Refuse a config field value that its declared type does not accept.

    Raises:
        InvalidConfigError: In the validator's template, naming the field and the type.
    """
    try:
        _parse(value, tp, False)
    except _Mismatch:
        raise InvalidConfigError(f"The {name} parameter of {owner} must be "
                                 f"{describe(tp)}. Got {value!r} instead.") from None


def to_record(value: Any) -> Any:
    """A config value as JSON writes it: enums by value, tuples and sets as lists."""
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return config_record(value)
    if isinstance(value, (tuple, list)):
        return [to_record(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(to_record(v) for v in value)
    if isinstance(value, Mapping):
        return {str(k): to_record(v) for k, v in value.items()}
    return value


def config_record(config: Any) -> dict[str, Any]:
    """The report's record of a config: every field, with the value the plug-in used."""
    return {f.name: to_record(getattr(config, f.name)) for f in dataclasses.fields(config)}
