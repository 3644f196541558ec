"""Layering of :mod:`graphleaks.metrics`: no private name crosses a module boundary.

A static scan of the import statements under ``graphleaks/``: the helpers shared by the metric
modules live in the private ``graphleaks.metrics._core``, which only modules of
``graphleaks.metrics`` import, and no module imports an underscore name of a metrics module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import graphleaks

PACKAGE = Path(graphleaks.__file__).parent


def _imports(path: Path) -> list[tuple[str, str, int]]:
    """``(module, name, line)`` for every ``from MODULE import NAME`` in a file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += [(node.module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [(alias.name, "", node.lineno) for alias in node.names]
    return out


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _crossings(path: Path, here: str) -> list[str]:
    """Imports in ``path`` (module ``here``) of a private name of another metrics module, or
    of the private ``graphleaks.metrics._core`` from outside ``graphleaks.metrics``."""
    found = []
    for module, name, line in _imports(path):
        if not module.startswith("graphleaks.metrics") or module == here:
            continue
        if name.startswith("_"):
            found.append(f"{path.name}:{line}: {module}.{name}")
        if "._" in module and not here.startswith("graphleaks.metrics"):
            found.append(f"{path.name}:{line}: {module}")
    return found


def test_no_private_metrics_name_is_imported_across_modules() -> None:
    crossing = [c for path in sorted(PACKAGE.rglob("*.py"))
                for c in _crossings(path, _module_name(path))]
    assert not crossing, "private metrics names imported across modules:\n" + "\n".join(crossing)


def test_the_scan_sees_a_crossing(tmp_path: Path) -> None:
    # The scan must be able to fail: the imports this change removed are reported.
    bad = tmp_path / "bad.py"
    bad.write_text("from graphleaks.metrics.binary import _check_binary\n"
                   "def f():\n    from graphleaks.metrics._core import RocCounts\n")
    assert len(_crossings(bad, "graphleaks.metrics.privacy_bound")) == 1
    assert len(_crossings(bad, "graphleaks.audit.runner")) == 2


def test_the_shared_helpers_live_in_the_private_module() -> None:
    from graphleaks.metrics import _core, binary, bootstrap, multiclass, privacy_bound

    assert binary.check_binary is _core.check_binary is privacy_bound.check_binary
    assert bootstrap.RocCounts is _core.RocCounts
    assert multiclass.chunk_rows is _core.chunk_rows is bootstrap.chunk_rows
