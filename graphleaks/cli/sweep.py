"""``graphleaks sweep``: run or resume a defenses × ε × attacks × seeds grid into SQLite."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Annotated

import typer

from graphleaks.cli._common import Verbose, setup_logging


def sweep(
    spec: Annotated[Path, typer.Argument(help="Sweep spec (TOML): an audit spec plus a "
                                              "[sweep] table of defenses, epsilons, seeds.")],
    db: Annotated[Path, typer.Option("--db", help="SQLite results store (created or "
                                                  "resumed).")] = Path("graphleaks-sweep.sqlite"),
    workers: Annotated[int, typer.Option(help="Processes in the local pool (with --backend "
                                              "ray: CPUs of the local Ray instance).")] = 1,
    backend: Annotated[str, typer.Option(help="Execution backend: process (a local process "
                                              "pool) or ray (needs `pip install ray`).")]
    = "process",
    address: Annotated[str | None, typer.Option(help="With --backend ray: address of an "
                                                     "existing Ray cluster (default: start "
                                                     "a local Ray instance).")] = None,
    retry_failed: Annotated[bool, typer.Option(help="Rerun runs recorded as failed.")]
    = False,
    dry_run: Annotated[bool, typer.Option(help="List the runs and exit.")] = False,
    show_progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar of sweep units on stderr (default: "
                                         "when stderr is a terminal).")] = None,
    mlflow: Annotated[bool, typer.Option(
        "--mlflow", help="Log one MLflow run per finished sweep run (needs "
                         "graphleaks[mlflow]).")] = False,
    verbose: Verbose = False,
) -> None:
    """Run a privacy–utility sweep; rerunning the same command resumes where it stopped."""
    from graphleaks._progress import progress_display
    from graphleaks.cli.options import want_progress
    from graphleaks.errors import DataError
    from graphleaks.sweep.sweep import expand_grid, load_sweep_spec, run_sweep

    setup_logging(verbose)
    tracker = None
    if mlflow:
        from graphleaks.audit.tracking import MlflowTracker

        tracker = MlflowTracker.from_env()
    s = load_sweep_spec(spec)
    if dry_run:
        runs = [{k: r[k] for k in ("config_hash", "defense", "epsilon", "attack", "seed")}
                for u in expand_grid(s) for r in u.runs]
        typer.echo(json.dumps(runs, indent=2))
        return
    if tracker is not None:
        tracker.open()  # an unreachable store fails before the first run, not after the last
    try:
        with progress_display(want_progress(show_progress, quiet=False, json_out=False)):
            summary = run_sweep(s, db, workers=workers, backend=backend,
                                retry_failed=retry_failed, address=address)
    except sqlite3.DatabaseError as exc:
        # the store carries our marker but its tables are damaged
        raise DataError(f"results store {db} is damaged ({exc}); rerun into a new --db"
                        ) from None
    if tracker is not None:
        from graphleaks.sweep.results_store import ResultsStore

        with ResultsStore(db) as store:
            for row in store.rows(status="done"):
                tracker.log_row(row)
    typer.echo(json.dumps(summary.to_dict(), indent=2))
    if summary.failed:
        typer.echo(f"{summary.failed} runs failed; see `graphleaks results {db} --status "
                   "failed`", err=True)
        raise typer.Exit(1)
