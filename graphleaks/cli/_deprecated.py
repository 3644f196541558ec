"""The old audit spellings, kept for one release: each becomes its new command.

``graphleaks audit --model F ...`` is parsed as ``graphleaks audit model F ...`` (and so
for ``--scores``, ``--config`` and ``--embeddings``), and ``graphleaks audit-embeddings
--embeddings F ...`` as ``graphleaks audit embeddings F ...``: the same command runs, so the
behaviour and the report are the same. Each prints one deprecation line on stderr.
"""

from __future__ import annotations

from collections.abc import Sequence

import typer

#: Old flag of ``graphleaks audit`` -> the audit subcommand that replaces it.
AUDIT_FLAGS = {"--model": "model", "--scores": "scores", "--config": "spec",
               "--embeddings": "embeddings"}
#: Old top-level command -> its new spelling.
OLD_COMMANDS = {"audit-embeddings": "audit embeddings"}


def _warn(old: str, new: str) -> None:
    typer.echo(f"warning: {old} is deprecated; use {new}", err=True)


def rewrite_audit_args(args: Sequence[str], subcommands: Sequence[str]) -> list[str]:
    """``graphleaks audit`` arguments with an old mode flag moved to its subcommand.

    Arguments that already start with a subcommand are left alone: an old flag after it is
    then an unknown option of that command, refused by the caller.
    """
    args = list(args)
    if args and args[0] in subcommands:
        return args
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag not in AUDIT_FLAGS or (not eq and i + 1 >= len(args)):
            continue
        new = AUDIT_FLAGS[flag]
        _warn(f"graphleaks audit {flag}", f"graphleaks audit {new} FILE")
        if eq:
            return [new, value, *args[:i], *args[i + 1:]]
        return [new, args[i + 1], *args[:i], *args[i + 2:]]
    return args


def rewrite_command_args(args: Sequence[str]) -> list[str]:
    """Top-level arguments with an old command name replaced by its new spelling.

    ``audit-embeddings --embeddings F`` becomes ``audit embeddings F``.
    """
    if not args or args[0] not in OLD_COMMANDS:
        return list(args)
    new = OLD_COMMANDS[args[0]]
    _warn(f"graphleaks {args[0]}", f"graphleaks {new} FILE")
    rest = list(args[1:])
    for i, arg in enumerate(rest):
        flag, eq, value = arg.partition("=")
        if flag == "--embeddings" and (eq or i + 1 < len(rest)):
            file, tail = (value, rest[i + 1:]) if eq else (rest[i + 1], rest[i + 2:])
            rest = [file, *rest[:i], *tail]
            break
    return [*new.split(), *rest]


def old_spelling_of(option: str) -> str | None:
    """The subcommand an old audit flag stands for, or None."""
    return AUDIT_FLAGS.get(option)
