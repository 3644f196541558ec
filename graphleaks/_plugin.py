"""The plug-in base shared by attacks and defenses: registration, Config, overrides, record.

A family (``Attack``, ``Defense``) subclasses :class:`Plugin` once and names its registry in
``_registry``; a concrete plug-in that defines ``name`` registers itself by being defined.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

from graphleaks._params import config_record
from graphleaks._registry import Registry
from graphleaks._validation import replace_config, validate

#: The one style of a plug-in's canonical name: snake_case (``gap_edp``, ``confidence_mia``).
CANONICAL_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclasses.dataclass(frozen=True)
class EmptyConfig:
    """A plug-in without parameters."""


class Plugin:
    """Registration, a frozen ``Config``, keyword overrides and the report's record.

    Attributes:
        name: Registry name (the one spelling reports use).
        Config: Frozen dataclass of parameters; field metadata declares constraints.
    """

    name: ClassVar[str]
    Config: ClassVar[type[Any]] = EmptyConfig
    _registry: ClassVar[Registry[Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and "_registry" not in cls.__dict__:
            # one style for every plug-in (issue 12): other spellings resolve to this one
            if not CANONICAL_NAME.fullmatch(cls.name):
                raise TypeError(f"{cls.__qualname__}.name {cls.name!r} is not snake_case; "
                                f"name it {cls.name.lower().replace('-', '_')!r}")
            cls._registry.register(cls.name, cls)

    def __init__(self, config: Any | None = None, **overrides: Any) -> None:
        # Stores only (design.md rule 2): types and ranges are checked by ``validate``.
        self.config = config if config is not None else self.Config()
        if overrides:
            self.config = replace_config(self.config, overrides, type(self).__name__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r})"

    def validate(self) -> None:
        """Check every field's type and constraint.

        Raises:
            InvalidConfigError: Naming the field, what it accepts and what it got.
        """
        validate(self.config, type(self).__name__)

    def get_config(self) -> Any:
        """The config as it runs. A mode that ignores a field records the value it uses."""
        return self.config

    def unused_fields(self) -> dict[str, str]:
        """Fields the configured mode does not read, each with the reason (none by default).

        The report records them as ``None`` (not used), and a value the user gave for one
        is refused by :func:`graphleaks.plugins.check_used`, so no setting is recorded as
        if it ran.
        """
        return {}

    def config_record(self, *, unused_as_none: bool = True) -> dict[str, Any]:
        """The report's ``config``: serialized from :meth:`get_config`, never from input.

        Args:
            unused_as_none: Record a field the mode does not read (:meth:`unused_fields`)
                as ``None``. False keeps every value, so the plug-in can be rebuilt from
                the record (a bundle's manifest).
        """
        record = config_record(self.get_config())
        if unused_as_none:
            for name in self.unused_fields():
                record[name] = None
        return record

    def compat_flags(self) -> tuple[str, ...]:
        """Names of the config's ``compat_*`` flags that are on."""
        return tuple(
            f.name for f in dataclasses.fields(self.config)
            if f.name.startswith("compat_") and getattr(self.config, f.name) is True
        )


__all__ = ["CANONICAL_NAME", "EmptyConfig", "Plugin"]
