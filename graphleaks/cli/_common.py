"""Options and helpers shared by the subcommands."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:  # imported lazily: the CLI starts without torch_geometric
    from torch_geometric.data import Data

    from graphleaks.data.ref import DatasetRef

from graphleaks.errors import InvalidConfigError

DataRoot = Annotated[Path | None, typer.Option(
    "--data-root", envvar="GRAPHLEAKS_DATA",
    help="Folder laid out like shared/datasets (needed for all datasets but Cora).")]
Seed = Annotated[int, typer.Option("--seed", help="Root seed of every random choice.")]
Verbose = Annotated[bool, typer.Option("-v", "--verbose", help="Log progress to stderr.")]


def setup_logging(verbose: bool) -> None:
    """Progress and debug messages go to stderr; stdout carries results only."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(message)s", force=True)


def load_graph(
    dataset: str | None, data_root: Path | None, edges: Path | None, features: Path | None,
    labels: Path | None,
) -> tuple[Data, DatasetRef]:
    """The graph named on the command line, and its dataset record.

    Raises:
        InvalidConfigError: If only one of --edges/--features is given, or a graph is named
            both ways.
    """
    from graphleaks.data.ref import DatasetRef

    if edges is not None or features is not None or labels is not None:
        if edges is None or features is None:
            raise InvalidConfigError("--edges and --features must be given together (--labels "
                                     "is optional)")
        if dataset is not None:
            raise InvalidConfigError("give either --dataset or --edges/--features, not both")
        # the record keeps the file names only: a bundle never follows paths out of itself
        ref = DatasetRef.files(edges, features, labels)
    else:
        ref = DatasetRef.named(dataset or "cora")
    return ref.load(data_root=data_root), ref


def parse_params(items: list[str] | None) -> dict[str, dict[str, Any]]:
    """Parse ``NAME.FIELD=VALUE`` options into ``{NAME: {FIELD: value}}``.

    Values are read as JSON when possible (``true``, ``3``, ``0.5``), else kept as strings.
    """
    import json

    out: dict[str, dict[str, Any]] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        owner, dot, fld = key.partition(".")
        if not sep or not dot or not owner or not fld:
            raise InvalidConfigError(f"--param {item!r} must look like NAME.FIELD=VALUE")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out.setdefault(owner.strip(), {})[fld.strip()] = value
    return out


def defense_params(
    defense: str, params: dict[str, dict[str, Any]], epsilon: float | None, delta: float | None
) -> dict[str, Any]:
    """The defense's config overrides: ``--param DEFENSE.FIELD=...`` plus --epsilon/--delta.

    Raises:
        InvalidConfigError: If --epsilon/--delta is given for a defense without that parameter.
    """
    import dataclasses

    from graphleaks.defenses import registry

    cls = registry.get(defense)
    out = dict(params.get(cls.name, {}))
    fields = {f.name for f in dataclasses.fields(cls.Config)}
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if value is None:
            continue
        if name not in fields:
            raise InvalidConfigError(f"defense {cls.name!r} takes no --{name}")
        out[name] = value
    return out


def check_param_owners(params: dict[str, dict[str, Any]], allowed: list[str]) -> None:
    """Refuse ``--param OWNER.FIELD=...`` whose owner is not an attack/defense/arch in use.

    Raises:
        InvalidConfigError: Naming the unknown owner and the valid ones.
    """
    from graphleaks._registry import normalize_name

    valid = {normalize_name(a) for a in allowed}
    for owner in params:
        if normalize_name(owner) not in valid:
            raise InvalidConfigError(
                f"--param {owner}.…: {owner!r} is not in use here; parameters can be set for: "
                f"{', '.join(sorted(set(allowed)))}"
            )


def check_audit_options(n_bootstrap: int | None, query_graph: str) -> None:
    """Options the audit reads only at its end, checked before any training starts.

    ``n_bootstrap`` None means the suite's own budget.
    """
    from graphleaks.audit.spec import MAX_BOOTSTRAP
    from graphleaks.models.target import GRAPH_VIEWS

    if n_bootstrap is not None and not 1 <= n_bootstrap <= MAX_BOOTSTRAP:
        raise InvalidConfigError(f"--n-bootstrap must be an integer in [1, {MAX_BOOTSTRAP}], "
                                 f"got {n_bootstrap}")
    if query_graph not in GRAPH_VIEWS:
        raise InvalidConfigError(f"--query-graph must be one of {', '.join(GRAPH_VIEWS)}, got "
                                 f"{query_graph!r}")
