"""Options and helpers shared by the subcommands."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
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


def check_seed(value: int | None) -> int | None:
    """The ``--seed`` of every command, refused when negative (exit 2, before any work).

    numpy's ``SeedSequence`` refuses negative entropy deep inside a run, and a negative root
    seed would otherwise be recorded in reports as if it could be repeated.
    """
    if value is not None and value < 0:
        raise typer.BadParameter("a seed must be a non-negative integer (0, 1, 2, ...)")
    return value


Seed = Annotated[int, typer.Option("--seed", help="Root seed of every random choice.",
                                   callback=check_seed)]
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

    ``--edges`` names the graph file; its suffix picks the reader
    (:data:`graphleaks.data.graph_readers.GRAPH_READERS`), which says whether --features
    and --labels are needed (an edge list) or refused (a self-contained ``.npz`` graph).

    Raises:
        InvalidConfigError: If --features/--labels come without --edges, or a graph is
            named both ways.
        DataError: If the graph file's reader refuses the files.
    """
    from graphleaks.data.ref import DatasetRef

    ref: DatasetRef
    if edges is not None or features is not None or labels is not None:
        if edges is None:
            raise InvalidConfigError("--edges and --features must be given together (--labels "
                                     "is optional; a .npz graph file goes alone as --edges)")
        if dataset is not None:
            raise InvalidConfigError("give either --dataset or --edges/--features, not both")
        # the record keeps the file names only: a bundle never follows paths out of itself
        ref = DatasetRef.files(edges, features, labels)
    else:
        ref = DatasetRef.named(dataset or "cora")
    return ref.load(data_root=data_root), ref


def parse_params(items: list[str] | None) -> dict[str, dict[str, str]]:
    """Split ``NAME.FIELD=VALUE`` options into ``{NAME: {FIELD: text}}``.

    Nothing is parsed here: :func:`resolve_cli_params` parses each text by the declared type
    of the field it sets, once the plug-ins in use are known.
    """
    from graphleaks._params import parse_param_items

    return parse_param_items(items)


def resolve_cli_params(
    items: list[str] | None, *, attacks: Sequence[str] = (), defense: str | None = None,
    arch: str | None = None,
) -> dict[str, dict[str, Any]]:
    """``--param`` options resolved against the plug-ins in use: canonical owner names and
    values of the declared field types.

    Raises:
        InvalidConfigError: For an unknown or ambiguous owner, an unknown field or a value
            its field does not accept (one line naming the parameter and what it accepts).
    """
    from graphleaks._params import resolve_params
    from graphleaks.plugins import architecture_owner, attack_owners, defense_owner

    owners = attack_owners(attacks)
    if defense is not None:
        owners.append(defense_owner(defense))
    if arch is not None:
        owners.append(architecture_owner(arch))
    return resolve_params(parse_params(items), owners, text=True, source="--param ")


def defense_params(
    defense: str, params: dict[str, dict[str, Any]], epsilon: float | None, delta: float | None
) -> dict[str, Any]:
    """The defense's config overrides: resolved ``--param DEFENSE.FIELD=...`` plus
    --epsilon/--delta.

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
            raise InvalidConfigError(f"defense {cls.name!r} takes no --{name}; it has no "
                                     f"{name} parameter")
        if name in out and out[name] != value:
            raise InvalidConfigError(f"--{name} and --param {cls.name}.{name} disagree; give "
                                     "one of them")
        out[name] = value
    return out


def check_audit_options(n_bootstrap: int | None, query_graph: str) -> None:
    """Options the audit reads only at its end, checked before any training starts.

    ``n_bootstrap`` None means the suite's own budget.
    """
    from graphleaks.audit.spec import MAX_BOOTSTRAP
    from graphleaks.threat import GRAPH_VIEWS

    if n_bootstrap is not None and not 1 <= n_bootstrap <= MAX_BOOTSTRAP:
        raise InvalidConfigError(f"--n-bootstrap must be an integer in [1, {MAX_BOOTSTRAP}], "
                                 f"got {n_bootstrap}")
    if query_graph not in GRAPH_VIEWS:
        raise InvalidConfigError(f"--query-graph must be one of {', '.join(GRAPH_VIEWS)}, got "
                                 f"{query_graph!r}")


def params_as_run(params: dict[str, dict[str, Any]], report: Any) -> dict[str, dict[str, Any]]:
    """The ``--param`` fields as the attacks that ran used them, read back from the report.

    The report records what ran, never the text that was typed; an attack that was skipped
    used nothing and is left out.
    """
    ran = {a.attack: a.config for a in report.attacks}
    return {owner: {f: ran[owner][f] for f in fields if f in ran[owner]}
            for owner, fields in params.items() if owner in ran}
