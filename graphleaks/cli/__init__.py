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
from typer._click.core import Command, Context  # typer vendors click (no separate package)
from typer._click.exceptions import ClickException, NoSuchOption, UsageError
from typer.core import TyperArgument, TyperCommand, TyperGroup

from graphleaks.cli import _deprecated
from graphleaks.cli import audit as _audit
from graphleaks.cli import audit_embeddings as _audit_embeddings
from graphleaks.cli import audit_endpoint as _audit_endpoint
from graphleaks.cli import audit_model as _audit_model
from graphleaks.cli import audit_scores as _audit_scores
from graphleaks.cli import audit_spec as _audit_spec
from graphleaks.cli import check as _check
from graphleaks.cli import embed as _embed
from graphleaks.cli import export as _export
from graphleaks.cli import listing as _listing
from graphleaks.cli import results as _results
from graphleaks.cli import serve as _serve
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
            msg = (_belongs_elsewhere(exc) or
                   f"{' '.join(exc.format_message().split())} (see `{where} --help`)")
            typer.echo(f"error: {one_line(msg)}", err=True)
            raise typer.Exit(EXIT_USAGE) from None

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        """An old command name (``audit-embeddings``) runs its new spelling."""
        return super().resolve_command(ctx, _deprecated.rewrite_command_args(args))


# The audit commands keep Rich help, whatever the app's: its panels group each mode's options
# (plain help would list them in one block); their help texts escape their brackets.


class _AuditGroup(TyperGroup):
    """``graphleaks audit``: the train/bundle audit, with one subcommand per other mode.

    The old mode flags (``--model F``) are parsed as their subcommand (``model F``).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**kwargs, "rich_markup_mode": "rich"})

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _deprecated.rewrite_audit_args(args, list(self.commands)))


class _AuditCommand(TyperCommand):
    """An audit mode's command (``graphleaks audit scores``), with Rich help."""

    def __init__(self, name: str | None, **kwargs: Any) -> None:
        super().__init__(name, **{**kwargs, "rich_markup_mode": "rich"})


def _usage(path: str, cmd: Command) -> str:
    """``graphleaks audit scores FILE``: a command's path and its arguments."""
    names = [p.metavar or (p.name or "").upper() for p in cmd.params
             if isinstance(p, TyperArgument)]
    return " ".join([path, *names])


def _commands(path: str, cmd: Command) -> list[tuple[str, Command]]:
    """A command and, for a group, every command under it, with their paths."""
    found = [(path, cmd)]
    for name, sub in getattr(cmd, "commands", {}).items():
        if not sub.hidden:
            found += _commands(f"{path} {name}", sub)
    return found


def _belongs_elsewhere(exc: UsageError) -> str | None:
    """For an option the command does not have: which command has it, from their
    declarations (None when no command near it does)."""
    if not isinstance(exc, NoSuchOption) or exc.ctx is None:
        return None
    opt, ctx = exc.option_name, exc.ctx
    new = _deprecated.old_spelling_of(opt)
    in_audit = any(isinstance(c.command, _AuditGroup) for c in (ctx, ctx.parent) if c)
    if new is not None and in_audit:
        return (f"{opt} is the deprecated spelling of `graphleaks audit {new} FILE`; give one "
                f"audit mode, as a subcommand, and drop {opt} (see `graphleaks audit {new} "
                "--help`)")
    group = ctx if getattr(ctx.command, "commands", None) else (ctx.parent or ctx)
    owners = [(path, cmd) for path, cmd in _commands(group.command_path, group.command)
              if cmd is not ctx.command and any(opt in p.opts or opt in p.secondary_opts
                                                for p in cmd.params)]
    if not owners:
        return None
    return (f"{opt} belongs to {' or '.join(_usage(p, c) for p, c in owners)}, not to "
            f"{_usage(ctx.command_path, ctx.command)} (see `{owners[0][0]} --help`)")


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
audit_app = typer.Typer(cls=_AuditGroup, invoke_without_command=True, no_args_is_help=False,
                        pretty_exceptions_enable=False, add_completion=False)
audit_app.callback()(_one_line_errors(_audit.audit))
# One module per audit mode; a new mode is one more line here.
for _name, _fn in (("model", _audit_model.audit_model), ("scores", _audit_scores.audit_scores),
                   ("spec", _audit_spec.audit_spec),
                   ("embeddings", _audit_embeddings.audit_embeddings),
                   ("endpoint", _audit_endpoint.audit_endpoint)):
    audit_app.command(_name, cls=_AuditCommand)(_one_line_errors(_fn))
app.add_typer(audit_app, name="audit")
register("list", _listing.list_cmd)
register("embed", _embed.embed)
register("check", _check.check)
register("sweep", _sweep.sweep)
register("results", _results.results)
register("export", _export.export)
register("serve", _serve.serve)


def main() -> None:
    """Console entry point: one-line errors, documented exit codes."""
    # PyG imports torch._dynamo eagerly (about 1 CPU-s); this process loads it on first use
    from graphleaks._process import claimed, defer_dynamo, prefer_huge_pages

    prefer_huge_pages()  # before torch allocates: the kernel's page faults cost a 1M audit 40 %
    defer_dynamo()
    with claimed("graphleaks.cli.main"):  # its collector is ours: see graphleaks._process
        _main()


def _main() -> None:
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
