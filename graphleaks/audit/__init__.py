"""Audits: run attacks against a target and report what leaks.

The names below are loaded on first use (PEP 562), so that the command line's start-up never
imports torch. (Reading a report decodes its threat models and privacy ledger, whose classes
live in the attack and privacy packages, and those import torch.)
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AttackMetrics": "graphleaks.audit.records",
    "AuditReport": "graphleaks.audit.report",
    "audit_model": "graphleaks.audit.model_audit",
    "load_report": "graphleaks.audit.report",
    "render_markdown": "graphleaks.audit.report",
    "write_report": "graphleaks.audit.report",
    "run_audit": "graphleaks.audit.runner",
    "train_target": "graphleaks.audit.runner",
}

__all__ = ["AttackMetrics", "AuditReport", "audit_model", "load_report", "render_markdown",
           "run_audit",
           "train_target", "write_report"]


def __getattr__(name: str) -> Any:
    """Import an exported name from its module when it is first used."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
