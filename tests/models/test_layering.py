"""Layering: nothing under ``graphleaks.models`` imports a layer above it.

Models sit below defenses (a defense trains a model), and bundles sit above both (reloading
a bundle rebuilds its defense's model), so no module of ``graphleaks/models`` may import
``graphleaks.defenses``, ``graphleaks.bundles``, the attacks, the audit or the CLI, not even
inside a function. A static scan of every import statement, so a lazy import is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import graphleaks

MODELS = Path(graphleaks.__file__).parent / "models"
ABOVE = ("graphleaks.defenses", "graphleaks.bundles", "graphleaks.attacks", "graphleaks.audit",
         "graphleaks.cli")


def _upward_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [f"{path.name}:{node.lineno}: {n}" for n in names
                  if any(n == a or n.startswith(a + ".") for a in ABOVE)][:1]
    return found


def test_models_import_no_layer_above_them() -> None:
    files = sorted(MODELS.rglob("*.py"))
    assert len(files) >= 4  # the scan really sees the package
    upward = [hit for f in files for hit in _upward_imports(f)]
    assert not upward, "graphleaks.models imports a layer above it:\n" + "\n".join(upward)


def test_the_scan_sees_an_upward_import(tmp_path: Path) -> None:
    # what graphleaks/models/io.py did before bundles moved above defenses
    bad = tmp_path / "io.py"
    bad.write_text("def f():\n    from graphleaks.defenses import registry as defenses\n"
                   "from graphleaks import bundles\n")
    assert len(_upward_imports(bad)) == 2
