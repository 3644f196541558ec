"""Defenses: each trains a target and records its privacy ledger.

Every module in this package is imported so that its defenses register themselves.
"""

import importlib
import pkgutil

from graphleaks.defenses.base import Defense, registry

for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = ["Defense", "registry"]
