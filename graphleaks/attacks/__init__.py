"""Attacks: each scores candidates under a declared threat model.

Every public module in this package is imported so that its attacks register themselves;
``registry`` maps names to classes (``graphleaks list attacks``).
"""

import importlib
import pkgutil

from graphleaks.attacks.base import (
    Attack,
    AttackResult,
    AttackScores,
    Challenge,
    Output,
    TargetView,
    Task,
    ThreatModel,
    registry,
)

for _mod in pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = [
    "Attack",
    "AttackResult",
    "AttackScores",
    "Challenge",
    "Output",
    "TargetView",
    "Task",
    "ThreatModel",
    "registry",
]
