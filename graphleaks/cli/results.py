"""``graphleaks results``: query and export a sweep's SQLite store, plot the trade-off."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Annotated

import typer


def results(
    db: Annotated[Path, typer.Argument(help="SQLite results store written by graphleaks "
                                            "sweep.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, csv or json.")]
    = "table",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the export here "
                                                                 "instead of stdout.")] = None,
    metric: Annotated[list[str] | None, typer.Option(
        help="Metric column (repeatable; default auc, tpr@1%fpr, tpr@0.1%fpr).")] = None,
    status: Annotated[str | None, typer.Option(help="Only rows with this status "
                                                    "(pending, done, failed).")] = None,
    defense: Annotated[str | None, typer.Option(help="Only this defense.")] = None,
    attack: Annotated[str | None, typer.Option(help="Only this attack.")] = None,
    plot: Annotated[Path | None, typer.Option(
        help="Write a privacy–utility PNG (first metric vs ε) here.")] = None,
) -> None:
    """Query, export (CSV, JSON) and plot the runs of a sweep."""
    from graphleaks.errors import DataError, InvalidConfigError
    from graphleaks.report.gates import check_metric
    from graphleaks.sweep.results_store import STATUSES, ResultsStore, flat_row, to_csv

    if not db.is_file():
        raise DataError(f"results store {db} does not exist")
    if fmt not in ("table", "csv", "json"):
        raise InvalidConfigError(f"--format must be table, csv or json, got {fmt!r}")
    if status is not None and status not in STATUSES:
        raise InvalidConfigError(f"--status must be one of {', '.join(STATUSES)}, "
                                 f"got {status!r}")
    metrics = [check_metric(m, "--metric") for m in (metric or
                                                     ["auc", "tpr@1%fpr", "tpr@0.1%fpr"])]
    _check_outputs(out, plot)
    with ResultsStore(db, readonly=True) as store:  # a query never changes the database
        try:
            rows = store.rows(status=status, defense=defense, attack=attack)
            counts = store.counts()
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            # a store with our marker but damaged tables or JSON columns
            raise DataError(f"results store {db} is damaged ({type(exc).__name__}); rerun the "
                            "sweep into a new --db") from None
    if fmt == "csv":
        text = to_csv(rows, metrics)
    elif fmt == "json":
        text = json.dumps([flat_row(r, metrics) for r in rows], indent=2) + "\n"
    else:
        lines = [f"runs: {counts['done']} done, {counts['pending']} pending, "
                 f"{counts['failed']} failed"]
        flat = [flat_row(r, metrics) for r in rows]
        # a link predictor has no accuracy: its utility is its test link AUC, shown in its
        # own column when a row has one
        utility = ["test_accuracy"] + (["test_link_auc"] if any(
            f["test_link_auc"] is not None for f in flat) else [])
        head = ["defense", "epsilon", "attack", "seed", "status", *metrics, "test_acc",
                *utility[1:]]
        table = [head]
        for f in flat:
            table.append([str(f["defense"]), "-" if f["epsilon"] is None else f"{f['epsilon']:g}",
                          str(f["attack"]), str(f["seed"]), str(f["status"])]
                         + ["-" if f[m] is None else f"{f[m]:.3f}" for m in metrics]
                         + ["-" if f[u] is None else f"{f[u]:.3f}" for u in utility])
        widths = [max(len(row[i]) for row in table) for i in range(len(head))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                  for row in table]
        text = "\n".join(lines) + "\n"
    done = [r for r in rows if r["status"] == "done"]
    if plot is not None and not done:  # refused before the export is written
        raise DataError(f"no finished runs in {db} to plot")
    if out is not None:
        from graphleaks._outputs import OutputFile, publish_files

        publish_files([OutputFile(out, "--out", text, _is_export)])
    else:
        typer.echo(text, nl=False)
    if plot is not None:
        from graphleaks._io import write_atomically
        from graphleaks._outputs import check_output_file
        from graphleaks.report.html import privacy_utility_figure

        fig = privacy_utility_figure(done, metric=metrics[0])
        check_output_file(plot, flag="--plot", is_ours=_is_plot)  # again: it may have changed
        import matplotlib.pyplot as plt

        try:
            # the Software tag lets a later run recognise the file as its own output
            write_atomically(plot, lambda tmp: fig.savefig(
                tmp, format="png", dpi=120, bbox_inches="tight",
                metadata={"Software": PLOT_SOFTWARE}))
        finally:
            plt.close(fig)


#: The PNG ``Software`` text chunk of the privacy-utility plot: its generator marker.
PLOT_SOFTWARE = "graphleaks privacy-utility plot"
_PNG = b"\x89PNG\r\n\x1a\n"
# The exports have no comment syntax for a generator marker (CSV and JSON consumers would
# choke on one), so each is recognised by the exact head graphleaks writes: the CSV header,
# the JSON array of records, the table's count line.
_EXPORT_HEADS = (
    re.compile(rb"config_hash(\n|,defense,epsilon,attack,seed,status,)"),
    re.compile(rb'\[\]\n|\[\n  \{\n    "config_hash": '),
    re.compile(rb"runs: [0-9]+ done, [0-9]+ pending, [0-9]+ failed\n"),
)


def _is_export(head: bytes) -> bool:
    """Whether a file's head is a graphleaks results export (table, CSV or JSON)."""
    return any(p.match(head) for p in _EXPORT_HEADS)


def _is_plot(head: bytes) -> bool:
    """Whether a file is a PNG carrying the plot's ``Software`` text chunk."""
    return head.startswith(_PNG) and b"tEXtSoftware\x00" + PLOT_SOFTWARE.encode() in head


def _check_outputs(out: Path | None, plot: Path | None) -> None:
    """Refuse export paths that hold files graphleaks did not write, before any query."""
    from graphleaks._outputs import check_output_file
    from graphleaks.errors import InvalidConfigError

    if out is not None:
        check_output_file(out, flag="--out", is_ours=_is_export)
    if plot is not None:
        check_output_file(plot, flag="--plot", is_ours=_is_plot)
    if out is not None and plot is not None and out.absolute() == plot.absolute():
        raise InvalidConfigError("--out and --plot must name different files")
