"""Audits: run attacks against a target and report what leaks."""

from graphleaks.audit.report import AuditReport, load_report, render_markdown, write_report
from graphleaks.audit.runner import run_audit, train_target

__all__ = ["AuditReport", "load_report", "render_markdown", "run_audit", "train_target",
           "write_report"]
