"""Collection rules shared by the tests and the docstring examples (``--doctest-modules``).

The docstring examples of the molecule modules need RDKit, an optional extra that the
default run does not install: there they are skipped with the reason, and CI's molecule
step (``.ci/run``) runs them with RDKit installed.
"""

from __future__ import annotations

import importlib.util

import pytest

#: Modules whose docstring examples need the molecules extra (RDKit).
NEEDS_RDKIT = ("graphleaks.data.graphsets.mutants",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the RDKit modules' docstring examples where RDKit is not installed."""
    if importlib.util.find_spec("rdkit") is not None:
        return
    skip = pytest.mark.skip(reason="needs RDKit: pip install 'graphleaks[molecules]'")
    for item in items:
        if type(item).__name__ == "DoctestItem" and item.name.startswith(NEEDS_RDKIT):
            item.add_marker(skip)
