"""``graphleaks list``: what can be audited with what.

Listing names must not cost the seconds of CPU that importing torch and torch_geometric does
(the registries are filled by importing every attack and defense module). The rows are
therefore kept in a small catalogue file in the cache folder, keyed by a digest of the
package's own source files: any edit, added attack or new version makes a new key, and the
slow path (import the registries) runs once and rewrites it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Annotated

import typer

from graphleaks._limits import read_json_bounded

KINDS = ("attacks", "defenses", "datasets", "architectures")


def _cache_dir() -> Path:
    """The writable cache (``GRAPHLEAKS_CACHE``, default ``~/.cache/graphleaks``)."""
    env = os.environ.get("GRAPHLEAKS_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "graphleaks"


def source_digest() -> str:
    """A digest of every source file of the installed package (a few ms for ~100 files)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:20]


def _build_catalogue() -> dict[str, dict[str, str]]:
    """Rows of every kind, from the registries themselves (imports torch)."""
    from graphleaks.attacks import registry as attacks
    from graphleaks.attacks.edge_membership import edge_registry
    from graphleaks.data.datasets import datasets
    from graphleaks.data.graphsets.named import GRAPH_SET_CATALOGUE
    from graphleaks.models.gnn import ARCHITECTURES

    # each row ends with the target kind it audits: node classifiers, or (issue 25) link
    # predictors, whose edge-membership attacks have their own registry
    edge_rows = {n: f"[{edge_registry.get(n).task.value}] "
                    f"{edge_registry.get(n).threat_model.describe()}; needs="
                    + ",".join(sorted(c.value for c in edge_registry.get(n)().needs()))
                    + f"; target={edge_registry.get(n).target_kind}"
                 for n in edge_registry.names()}
    return {
        "attacks": {**{n: f"[{attacks.get(n).task.value}] "
                          f"{attacks.get(n).threat_model.describe()}; needs="
                          + ",".join(sorted(c.value for c in attacks.get(n)().needs()))
                          + "; target=node"
                       for n in attacks.names()}, **edge_rows, **_graph_attack_rows()},
        "defenses": _defense_rows(),
        "datasets": {**{n: datasets.get(n).description for n in datasets.names()},
                     **GRAPH_SET_CATALOGUE},
        "architectures": {a: "" for a in ARCHITECTURES},
    }


def _graph_attack_rows() -> dict[str, str]:
    """Rows of the graph-membership attacks (graph classifiers: ``--task graph``)."""
    from graphleaks.attacks.graph_membership import graph_registry

    return {n: f"[{graph_registry.get(n).task.value}] "
               f"{graph_registry.get(n).threat_model.describe()}; "
               f"paper={graph_registry.get(n).paper}; target=graph"
            for n in graph_registry.names()}


def _defense_rows() -> dict[str, str]:
    """Each defense's unit and the tasks it trains (node and graph classifiers, link
    predictors)."""
    from graphleaks.defenses import registry as defenses
    from graphleaks.defenses.graph_base import graph_registry
    from graphleaks.defenses.link import link_registry

    tables = (("node", defenses), ("link", link_registry), ("graph", graph_registry))
    rows: dict[str, str] = {}
    for n in sorted(set().union(*(reg.names() for _, reg in tables))):
        owners = [(t, reg.get(n)) for t, reg in tables if n in reg.names()]
        units = dict.fromkeys(cls.privacy_unit.value for _, cls in owners)
        rows[n] = f"unit={'/'.join(units)}; tasks={','.join(t for t, _ in owners)}"
    return rows


def catalogue(*, use_cache: bool = True) -> dict[str, dict[str, str]]:
    """The listing rows, from the cache when it matches the sources, else rebuilt."""
    path = _cache_dir() / f"catalogue-{source_digest()}.json"
    if use_cache:
        try:
            data = read_json_bounded(path, str(path))  # DataError is a ValueError
            if isinstance(data, dict) and set(data) == set(KINDS):
                return data
        except (OSError, ValueError):
            pass  # missing or damaged: rebuild below
    rows = _build_catalogue()
    if use_cache:
        try:
            from graphleaks._io import write_texts_atomically

            path.parent.mkdir(parents=True, exist_ok=True)
            write_texts_atomically({path: json.dumps(rows, sort_keys=True)})
        except OSError:
            pass  # a read-only home only costs speed, never the listing
    return rows


def list_cmd(
    what: Annotated[str, typer.Argument(
        help="attacks, defenses, datasets or architectures.")] = "attacks",
    json_out: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List registered attacks, defenses, datasets or architectures."""
    from graphleaks.errors import InvalidConfigError

    if what not in KINDS:
        raise InvalidConfigError(
            f"cannot list {what!r}; choose attacks, defenses, datasets or architectures")
    rows = catalogue()[what]
    if json_out:
        typer.echo(json.dumps(rows, indent=2))
    else:
        for name, desc in rows.items():
            typer.echo(f"{name:20s} {desc}".rstrip())
