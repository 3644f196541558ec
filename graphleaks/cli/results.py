"""``graphleaks results``: query and export a sweep's SQLite store, plot the trade-off."""

from __future__ import annotations

import json
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
        head = ["defense", "epsilon", "attack", "seed", "status", *metrics, "test_acc"]
        table = [head]
        for r in rows:
            f = flat_row(r, metrics)
            table.append([str(f["defense"]), "-" if f["epsilon"] is None else f"{f['epsilon']:g}",
                          str(f["attack"]), str(f["seed"]), str(f["status"])]
                         + ["-" if f[m] is None else f"{f[m]:.3f}" for m in metrics]
                         + ["-" if f["test_accuracy"] is None else f"{f['test_accuracy']:.3f}"])
        widths = [max(len(row[i]) for row in table) for i in range(len(head))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                  for row in table]
        text = "\n".join(lines) + "\n"
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    else:
        typer.echo(text, nl=False)
    if plot is not None:
        from graphleaks.report.html import privacy_utility_figure

        done = [r for r in rows if r["status"] == "done"]
        if not done:
            raise DataError(f"no finished runs in {db} to plot")
        fig = privacy_utility_figure(done, metric=metrics[0])
        plot.parent.mkdir(parents=True, exist_ok=True)
        # the Software tag lets a later run recognise the file as its own output
        fig.savefig(plot, dpi=120, bbox_inches="tight",
                    metadata={"Software": "graphleaks privacy-utility plot"})
        import matplotlib.pyplot as plt

        plt.close(fig)


def _is_export(head: bytes) -> bool:
    """Whether a file's head is a graphleaks results export (table, CSV or JSON)."""
    text = head.lstrip()
    return (text.startswith((b"config_hash,", b"runs: "))
            or (text.startswith(b"[") and (b'"config_hash"' in text or text.strip() == b"[]")))


def _check_outputs(out: Path | None, plot: Path | None) -> None:
    """Refuse export paths that hold files graphleaks did not write, before any query."""
    from graphleaks._outputs import check_output_file, contains

    if out is not None:
        check_output_file(out, flag="--out", is_ours=_is_export)
    if plot is not None:
        check_output_file(plot, flag="--plot", is_ours=contains(b"graphleaks privacy-utility"))
