"""Plug-in lookup: owners of parameters by name, and plug-ins built from typed parameters.

The edges (CLI, TOML spec, Python API) name attacks, defenses and architectures in any
accepted spelling; the functions here find the registered plug-in and pair it with its
``Config`` so :mod:`graphleaks._params` can type the values. This module sits above
:mod:`graphleaks.attacks`, :mod:`graphleaks.defenses` and :mod:`graphleaks.models` (it
reads their registries), and :mod:`graphleaks._params` below them only types fields, so
the plug-ins can use the field typing without importing their own lookup.

Example:
    >>> build_plugin("attack", "Confidence-MIA").name
    'confidence_mia'
    >>> architecture_owner("GCN").name
    'gcn'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from graphleaks._params import Owner, resolve_fields
from graphleaks._registry import normalize_name
from graphleaks.attacks import registry as attacks
from graphleaks.defenses import registry as defenses
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ARCHITECTURES, ArchitectureSpec


def check_used(plugin: Any, given: Iterable[str], *, source: str = "") -> None:
    """Refuse a parameter the user gave that the plug-in's configured mode does not read.

    Args:
        plugin: An attack or defense instance.
        given: The fields the user set (not the suite's budgets or the defaults).
        source: Prefix of messages (``"--param "``).

    Raises:
        InvalidConfigError: Naming the parameter and why the mode ignores it.
    """
    unused = plugin.unused_fields()
    for name in given:
        if name in unused:
            raise InvalidConfigError(f"{source}{plugin.name}.{name} has no effect: "
                                     f"{unused[name]}; drop it or change the mode")


def attack_owners(names: Iterable[str]) -> list[Owner]:
    """Owners for registered attacks (names in any accepted spelling)."""
    return [Owner(attacks.get(n).name, "attack", attacks.get(n).Config) for n in names]


def defense_owner(name: str) -> Owner:
    """The owner for a registered defense (name in any accepted spelling)."""
    cls = defenses.get(name)
    return Owner(cls.name, "defense", cls.Config)


def architecture_owner(arch: str) -> Owner:
    """The owner for an architecture name (``gcn``, ``sage``, ...).

    Raises:
        InvalidConfigError: For an unknown architecture, listing the known ones.
    """
    key = normalize_name(str(arch))
    for a in ARCHITECTURES:
        if normalize_name(a) == key:
            return Owner(a, "architecture", ArchitectureSpec)
    raise InvalidConfigError(f"unknown architecture {arch!r}; choose one of: "
                             f"{', '.join(ARCHITECTURES)}")


def build_plugin(kind: str, name: str, params: Mapping[str, Any] | None = None, *,
                 text: bool = False, source: str = "") -> Any:
    """A registered attack or defense with typed parameters (the Python API's entry).

    Args:
        kind: ``attack`` or ``defense``.
        name: Its name in any accepted spelling.
        params: ``{field: value}``, typed (``text=False``) or command-line text.
        text: Whether the values are command-line text.
        source: Prefix of messages.

    Raises:
        InvalidConfigError: For an unknown name, field or a value of the wrong type.
    """
    owner = attack_owners([name])[0] if kind == "attack" else defense_owner(name)
    cls = (attacks if kind == "attack" else defenses).get(owner.name)
    typed = resolve_fields(owner, dict(params or {}), text=text, source=source)
    plugin = cls(**typed)
    check_used(plugin, typed, source=source)
    return plugin
