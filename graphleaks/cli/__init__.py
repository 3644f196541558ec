"""The ``graphleaks`` command line: a thin shell over the library.

Exit codes: 0 success; 1 runtime error; 2 usage error or bad input; 3 a privacy threshold
was crossed (``graphleaks check``).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer._click.core import Context  # typer vendors click (no separate package)
from typer._click.exceptions import ClickException, UsageError
from typer.core import TyperGroup

from graphleaks.cli import audit as _audit
from graphleaks.cli import check as _check
from graphleaks.cli import embed as _embed
from graphleaks.cli import export as _export
from graphleaks.cli import listing as _listing
from graphleaks.cli import results as _results
from graphleaks.cli import sweep as _sweep
from graphleaks.cli import train as _train
from graphleaks.errors import GraphleaksError, one_line

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_THRESHOLD = 0, 1, 2, 3



class _OneLineUsageGroup(TyperGroup):
    """The app's group: a bad option value is one ``error:`` line and exit 2, like bad input.

    Click would print the usage, a hint and a boxed message over several lines; CI logs
    and the one-line contract of every other bad input want a single line.
    """

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # `graphleaks train` alone: help
                raise
            where = exc.ctx.command_path if exc.ctx is not None else "graphleaks"
            msg = one_line(" ".join(exc.format_message().split()))
            typer.echo(f"error: {msg} (see `{one_line(where)} --help`)", err=True)
            raise typer.Exit(EXIT_USAGE) from None


app = typer.Typer(
    cls=_OneLineUsageGroup,
    name="graphleaks",
    help="Measure what graph ML models leak. Exit codes: 0 ok, 1 runtime error, "
         "2 usage error or bad input, 3 privacy threshold crossed.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # help texts are plain text: rich markup would eat "graphleaks[mlflow]", "[gate]" and
    # "ATTACK[SLICE]" as style tags
    rich_markup_mode=None,
)


def default_threads(cpu_count: int | None = None) -> int:
    """Intra-op threads when none are asked for: 1 on a machine with at most 2 cores.

    On a busy 2-core host two torch threads burnt 4.8x the CPU of one for the same Cora audit
    (and 2.6x the wall time); above 2 cores, half the logical cores (about the physical ones).
    """
    n = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    return 1 if n <= 2 else max(1, n // 2)


def set_threads(n: int) -> None:
    """Use ``n`` intra-op threads in torch and the BLAS/OpenMP libraries.

    Sets the environment before torch is imported (the CLI imports it lazily) and tells
    torch directly when it already is.
    """
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


@app.callback()
def _main_options(
    threads: Annotated[int | None, typer.Option(
        "--threads", min=1, envvar="GRAPHLEAKS_THREADS",
        help="Intra-op CPU threads (default: 1 on a machine with at most 2 cores, else half "
             "the cores; an OMP_NUM_THREADS already set is kept).")] = None,
) -> None:
    """Measure what graph ML models leak."""
    if threads is not None:
        set_threads(threads)
    elif "OMP_NUM_THREADS" not in os.environ:
        set_threads(default_threads())


def _one_line_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a user error into one line on stderr and exit code 2, inside the app itself."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GraphleaksError as exc:
            typer.echo(f"error: {one_line(str(exc))}", err=True)
            raise typer.Exit(EXIT_USAGE) from None

    return wrapper


def register(name: str, fn: Callable[..., Any]) -> None:
    """Mount a subcommand function on the app."""
    app.command(name)(_one_line_errors(fn))


register("train", _train.train)
register("audit", _audit.audit)
register("list", _listing.list_cmd)
register("embed", _embed.embed)
register("audit-embeddings", _embed.audit_embeddings_cmd)
register("check", _check.check)
register("sweep", _sweep.sweep)
register("results", _results.results)
register("export", _export.export)


def main() -> None:
    """Console entry point: one-line errors, documented exit codes."""
    try:
        code = app(standalone_mode=False)
        # With standalone_mode off, click returns the code of a typer.Exit instead of exiting.
        if isinstance(code, int) and code != 0:
            sys.exit(code)
    except GraphleaksError as exc:
        typer.echo(f"error: {one_line(str(exc))}", err=True)
        sys.exit(EXIT_USAGE)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except ClickException as exc:  # a usage error from the argument parser
        exc.show()
        sys.exit(exc.exit_code)
    except Exception as exc:  # noqa: BLE001 - the CLI turns any other failure into exit 1
        import os
        import traceback

        if os.environ.get("GRAPHLEAKS_DEBUG"):
            traceback.print_exc()
        typer.echo(f"internal error: {type(exc).__name__}: {one_line(str(exc))} (set "
                   "GRAPHLEAKS_DEBUG=1 for the traceback)", err=True)
        sys.exit(EXIT_RUNTIME)
