"""Versions of graphleaks and the libraries whose behaviour affects results."""

from __future__ import annotations

import platform
from importlib import metadata


def library_versions() -> dict[str, str]:
    """Installed versions of graphleaks, Python and the numerical libraries."""
    out = {"python": platform.python_version()}
    for dist in ("graphleaks", "torch", "torch-geometric", "numpy", "scipy", "scikit-learn",
                 "gensim", "dp-accounting", "opacus"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out
