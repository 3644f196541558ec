"""Audits: run attacks against a target and report what leaks.

The names below are loaded on first use (PEP 562), so that the command line's start-up never
imports torch. Reading a report stays torch-free too: its decoder uses only
:mod:`graphleaks.threat`, :mod:`graphleaks.privacy.ledger`, the metric records and
:mod:`graphleaks.report.records` (``tests/cli/test_startup.py`` checks it); running an audit
imports torch. The report's records, codec and writers live in :mod:`graphleaks.report`, below
this package; the names are re-exported here for the documented API.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AttackMetrics": "graphleaks.report.records",
    "AuditReport": "graphleaks.report.report",
    "audit_model": "graphleaks.audit.model_audit",
    "load_report": "graphleaks.report.report",
    "render_markdown": "graphleaks.report.markdown",
    "write_report": "graphleaks.report.writers",
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
