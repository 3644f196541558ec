"""Layering of the whole package: no module imports a layer above its own, and no import
circle spans more than one package's own files.

A static scan of every import statement under ``graphleaks/`` (``ast``, nothing imported),
so a function-local import or one under ``if TYPE_CHECKING:`` is caught like a top-level
one; violations are reported with their kind, since the fix differs (a lazy import is
usually a sign that code sits in the wrong module, a typing-only one that a type does).

The layers, low to high. A module may import its own layer and the layers below it:

==========  ================================================================================
layer       modules
==========  ================================================================================
ground      errors, seeding, versions, ``_io``, ``_arrays``, ``_outputs``, ``_limits``,
            ``_display``, ``_readers``, ``_progress``, ``_registry``, ``_tables``,
            ``_params`` (field typing), ``_validation``, ``_plugin`` (the plug-in base),
            ``_executor`` (local or Ray map of an audit's model trainings),
            ``_process`` (the command line's start-up and shutdown costs)
records     metrics, privacy, threat (never importing one another)
data        data
models      models (targets, training, DP-SGD)
defenses    defenses
bundles     bundles, graph_bundles (reloading a bundle rebuilds its defense's model)
attacks     attacks (shadow models train defended targets)
plugins     plugins (owner lookup by name over the attack and defense registries)
report      report (records, codec, writers, verdict, gate, regression, JUnit, score tables,
            control mapping, CycloneDX and SARIF exporters)
audit       audit (train_target, run_audit, model, scores and embedding audits, spec, suite)
sweep       sweep (each unit of a sweep is an audit)
cli         cli, ``__main__``
facade      ``graphleaks/__init__.py`` (``audit_model``, ``audit_scores`` on first use)
==========  ================================================================================

Run as a script (``python tests/test_layering.py``) it prints every import circle.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "graphleaks"

#: (layer, module prefixes), low to high; a module belongs to the layer of its longest prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ground", ("graphleaks.errors", "graphleaks.seeding", "graphleaks.versions",
                "graphleaks._io", "graphleaks._arrays", "graphleaks._outputs", "graphleaks._limits",
                "graphleaks._display", "graphleaks._readers", "graphleaks._progress",
                "graphleaks._registry", "graphleaks._tables", "graphleaks._params",
                "graphleaks._validation", "graphleaks._plugin",
                "graphleaks._executor", "graphleaks._process")),
    ("records", ("graphleaks.metrics", "graphleaks.privacy", "graphleaks.threat")),
    ("data", ("graphleaks.data",)),
    ("models", ("graphleaks.models",)),
    ("defenses", ("graphleaks.defenses",)),
    ("bundles", ("graphleaks.bundles", "graphleaks.graph_bundles")),
    ("attacks", ("graphleaks.attacks",)),
    ("plugins", ("graphleaks.plugins",)),
    ("report", ("graphleaks.report",)),
    ("audit", ("graphleaks.audit",)),
    ("sweep", ("graphleaks.sweep",)),
    ("cli", ("graphleaks.cli", "graphleaks.__main__")),
    ("facade", ("graphleaks",)),
)
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}

#: Imports forbidden even though the layer order allows them: (importer, imported, why).
NEVER: tuple[tuple[str, str, str], ...] = (
    ("graphleaks.metrics", "graphleaks.privacy", "metrics and privacy are independent"),
    ("graphleaks.metrics", "graphleaks.threat", "metrics know no threat model"),
    ("graphleaks.privacy", "graphleaks.metrics", "metrics and privacy are independent"),
    ("graphleaks.privacy", "graphleaks.threat", "the ledger knows no threat model"),
    ("graphleaks.threat", "graphleaks.metrics", "the threat model computes nothing"),
    ("graphleaks.threat", "graphleaks.privacy", "the threat model knows no ledger"),
) + tuple(
    # the old paths are re-export shims for branches in flight; our own code uses the new
    ("graphleaks", f"graphleaks.audit.{old}", "a shim for branches in flight; import the "
     "module's new path") for old in (
        "report", "html", "verdict", "regression", "junit", "records", "risk_sections",
        "scores", "sweep", "results_store", "_ray_backend"))

#: Wings that must have no import circle at all, not even among their own files.
NO_CIRCLE = ("graphleaks.report", "graphleaks.sweep")


@dataclass(frozen=True)
class Import:
    """One imported module: who imports it, where, and how."""

    importer: str
    target: str
    line: int
    kind: str  # "top-level", "function-local" or "TYPE_CHECKING"

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} imports {self.target} ({self.kind})"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``graphleaks.a.b`` for ``root/a/b.py`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(module: str) -> str | None:
    """The layer of a module of graphleaks (None for a module outside the table)."""
    best: tuple[int, str] | None = None
    for layer, prefixes in LAYERS:
        for p in prefixes:
            # the facade is the package's __init__ alone, not everything under it
            hit = module == p if p == "graphleaks" else _under(module, p)
            if hit and (best is None or len(p) > best[0]):
                best = (len(p), layer)
    return best[1] if best else None


def imports_of(module: str, source: str, known: Iterable[str] | None = None) -> list[Import]:
    """Every graphleaks module that ``source`` (the text of ``module``) imports.

    ``from graphleaks.x import y`` names ``graphleaks.x.y`` when that is a module in
    ``known``, else ``graphleaks.x``; relative imports are resolved against ``module``.
    """
    tree = ast.parse(source)
    known_set = set(known) if known is not None else None
    kinds: dict[int, str] = {}
    # typing-only first: a TYPE_CHECKING block inside a function is still typing-only
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                kinds[id(inner)] = "function-local"
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for n in ast.walk(inner):
                    kinds[id(n)] = "TYPE_CHECKING"
    package = module if _is_package(module, known_set) else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = []
            for a in node.names:
                sub = f"{base}.{a.name}"
                targets.append(sub if known_set is not None and sub in known_set else base)
        else:
            continue
        kind = kinds.get(id(node), "top-level")
        for t in dict.fromkeys(targets):
            if _under(t, "graphleaks") and t != module:
                out.append(Import(module, t, node.lineno, kind))
    return out


def _is_package(module: str, known: set[str] | None) -> bool:
    return known is not None and any(k.startswith(module + ".") for k in known)


def all_imports(root: Path = PACKAGE) -> list[Import]:
    """The imports of every module under ``root``."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    return [imp for m, p in files.items()
            for imp in imports_of(m, p.read_text(encoding="utf-8"), files)]


def violations(imports: Iterable[Import]) -> list[str]:
    """Upward imports and imports the ``NEVER`` rules forbid, one line each."""
    found = []
    for imp in imports:
        mine, theirs = layer_of(imp.importer), layer_of(imp.target)
        if mine is None:
            found.append(f"{imp}: {imp.importer} is in no layer; add it to LAYERS")
        elif theirs is not None and RANK[theirs] > RANK[mine]:
            found.append(f"{imp}: layer {mine} imports the higher layer {theirs}")
        for importer, imported, why in NEVER:
            if _under(imp.importer, importer) and _under(imp.target, imported):
                found.append(f"{imp}: never ({why})")
    return found


def circles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import circles (strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    graph = {k: sorted(set(v)) for k, v in edges.items()}

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(out)


def package_of(module: str, packages: set[str]) -> str:
    """The package whose own files include ``module`` (a package's ``__init__`` is its own)."""
    return module if module in packages else module.rpartition(".")[0]


def circle_problems(edges: Mapping[str, Iterable[str]], packages: set[str]) -> list[str]:
    """Circles across more than one package, and any circle inside a ``NO_CIRCLE`` wing."""
    found = []
    for comp in circles(edges):
        owners = {package_of(m, packages) for m in comp}
        if len(owners) > 1:
            found.append(f"circle across {', '.join(sorted(owners))}: {', '.join(comp)}")
        elif any(_under(m, w) for m in comp for w in NO_CIRCLE):
            found.append(f"circle inside a wing: {', '.join(comp)}")
    return found


def _graph(imports: Iterable[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in imports:
        edges[imp.importer].add(imp.target)
    return edges


def _packages(root: Path = PACKAGE) -> set[str]:
    return {module_name(p, root) for p in root.rglob("__init__.py")}


def _report(found: list[str]) -> str:
    by_kind: dict[str, list[str]] = defaultdict(list)
    for line in found:
        kind = next((k for k in ("function-local", "TYPE_CHECKING") if f"({k})" in line),
                    "top-level")
        by_kind[kind].append(line)
    return "\n".join(f"{kind} imports:\n  " + "\n  ".join(lines)
                     for kind, lines in sorted(by_kind.items()))


def test_every_module_is_in_a_layer() -> None:
    modules = [module_name(p) for p in sorted(PACKAGE.rglob("*.py"))]
    assert len(modules) > 100  # the scan really sees the package
    assert [m for m in modules if layer_of(m) is None] == []


def test_no_module_imports_a_higher_layer() -> None:
    imports = all_imports()
    kinds = {imp.kind for imp in imports}
    assert kinds == {"top-level", "function-local", "TYPE_CHECKING"}  # all three are scanned
    found = violations(imports)
    assert not found, "layering violations:\n" + _report(found)


def test_no_import_circle_spans_two_packages() -> None:
    found = circle_problems(_graph(all_imports()), _packages())
    assert not found, "import circles:\n" + "\n".join(found)


MODELS_BAD = '''
from typing import TYPE_CHECKING

from graphleaks import bundles
from graphleaks.data.graph import num_classes

if TYPE_CHECKING:
    from graphleaks.audit.runner import AuditRun


def f():
    from graphleaks.defenses import registry
'''


def test_the_scan_flags_a_planted_upward_import(tmp_path: Path) -> None:
    # a bad module written to a copy of the package layout: what models/io.py once did
    root = tmp_path / "graphleaks"
    (root / "models").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "models" / "__init__.py").write_text("")
    (root / "bundles.py").write_text("")
    (root / "models" / "bad.py").write_text(MODELS_BAD)
    found = violations(all_imports(root))
    assert len(found) == 3, found  # the data import is downward and allowed
    kinds = sorted(line.split("(")[1].split(")")[0] for line in found)
    assert kinds == ["TYPE_CHECKING", "function-local", "top-level"]
    assert all("layer models imports the higher layer" in line for line in found)
    assert any("graphleaks.bundles" in line for line in found)


def test_the_scan_flags_never_rules_and_unplaced_modules() -> None:
    shim_user = imports_of("graphleaks.cli.check", "from graphleaks.audit.report import X\n")
    assert [line.split(": ", 1)[1] for line in violations(shim_user)] == [
        "never (a shim for branches in flight; import the module's new path)"]
    sideways = imports_of("graphleaks.metrics.binary", "def f():\n"
                          "    from graphleaks.privacy.ledger import PrivacyLedger\n")
    assert len(violations(sideways)) == 1
    stray = imports_of("graphleaks.newthing", "from graphleaks.errors import DataError\n")
    assert "is in no layer" in violations(stray)[0]


def test_the_circle_check_flags_a_planted_circle() -> None:
    packages = {"graphleaks", "graphleaks.a", "graphleaks.report"}
    inside = {"graphleaks.a": {"graphleaks.a.x"}, "graphleaks.a.x": {"graphleaks.a"}}
    assert circle_problems(inside, packages) == []  # one package's own files: allowed
    across = {"graphleaks._p": {"graphleaks.a.x"}, "graphleaks.a.x": {"graphleaks._p"}}
    assert circle_problems(across, packages) == [
        "circle across graphleaks, graphleaks.a: graphleaks._p, graphleaks.a.x"]
    wing = {"graphleaks.report.html": {"graphleaks.report.report"},
            "graphleaks.report.report": {"graphleaks.report.html"}}
    assert circle_problems(wing, packages) == [
        "circle inside a wing: graphleaks.report.html, graphleaks.report.report"]


@pytest.mark.parametrize(("source", "target"), [
    ("from . import records\n", "graphleaks.report.records"),
    ("from .records import num\n", "graphleaks.report.records"),
    ("from ..errors import DataError\n", "graphleaks.errors"),
])
def test_relative_imports_are_resolved(source: str, target: str) -> None:
    known = {"graphleaks", "graphleaks.errors", "graphleaks.report", "graphleaks.report.records",
             "graphleaks.report.html"}
    assert [i.target for i in imports_of("graphleaks.report.html", source, known)] == [target]


if __name__ == "__main__":
    for comp in circles(_graph(all_imports())):
        print(len(comp), comp)
