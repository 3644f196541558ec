"""``graphleaks list``: what can be audited with what."""

from __future__ import annotations

import json
from typing import Annotated

import typer


def list_cmd(
    what: Annotated[str, typer.Argument(
        help="attacks, defenses, datasets or architectures.")] = "attacks",
    json_out: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List registered attacks, defenses, datasets or architectures."""
    from graphleaks.attacks import registry as attacks
    from graphleaks.data.datasets import datasets
    from graphleaks.defenses import registry as defenses
    from graphleaks.errors import InvalidConfigError
    from graphleaks.models.gnn import ARCHITECTURES

    rows: dict[str, str]
    if what == "attacks":
        rows = {n: f"[{attacks.get(n).task.value}] {attacks.get(n).threat_model.describe()}"
                for n in attacks.names()}
    elif what == "defenses":
        rows = {n: f"unit={defenses.get(n).privacy_unit.value}" for n in defenses.names()}
    elif what == "datasets":
        rows = {n: datasets.get(n).description for n in datasets.names()}
    elif what == "architectures":
        rows = {a: "" for a in ARCHITECTURES}
    else:
        raise InvalidConfigError(
            f"cannot list {what!r}; choose attacks, defenses, datasets or architectures")
    if json_out:
        typer.echo(json.dumps(rows, indent=2))
    else:
        for name, desc in rows.items():
            typer.echo(f"{name:20s} {desc}".rstrip())
