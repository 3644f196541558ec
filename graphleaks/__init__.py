"""graphleaks: measure what graph machine learning models leak.

The main entry points:

* :func:`graphleaks.audit.train_target` trains a (defended) target on a graph;
* :func:`graphleaks.audit_model` audits a model of any class (e.g. your own PyG model);
* :func:`graphleaks.audit.run_audit` runs attacks and returns an :class:`AuditReport`;
* :func:`graphleaks.audit_scores` audits a model from its exported per-node scores;
* :func:`graphleaks.bundles.save_bundle` / :func:`graphleaks.bundles.load_bundle` store targets.
"""

from importlib import metadata as _metadata
from typing import Any as _Any

try:
    __version__ = _metadata.version("graphleaks")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0"

__all__ = ["__version__", "audit_model", "audit_scores"]


def __getattr__(name: str) -> _Any:
    """``audit_model`` and ``audit_scores``, imported on first use (``import graphleaks`` stays
    torch-free)."""
    if name == "audit_model":
        from graphleaks.audit.model_audit import audit_model

        return audit_model
    if name == "audit_scores":
        from graphleaks.audit.scores_only import audit_scores

        return audit_scores
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
