"""Exceptions raised by graphleaks.

Every error a user can cause by bad input derives from :class:`GraphleaksError` and is
reported by the CLI as one line with exit code 2. The classes also subclass builtins so
that existing ``except ValueError`` code keeps working.
"""

from __future__ import annotations


class GraphleaksError(Exception):
    """Base class of every error caused by the user's input or configuration."""


class InvalidConfigError(GraphleaksError, ValueError, TypeError):
    """A configuration value is outside its allowed range or of the wrong type."""


class DataError(GraphleaksError, ValueError):
    """A dataset, feature file, edge list or split is missing, malformed or inconsistent."""


class BundleError(GraphleaksError, ValueError):
    """A saved model bundle is missing, corrupted, unsafe or does not match its data."""


class CapabilityError(GraphleaksError, ValueError):
    """An attack needs an output or knowledge that the threat model does not grant."""


def one_line(message: str) -> str:
    r"""``message`` as one printable line: control and line-break characters escaped.

    A user's option value (a slice key, a path) may hold a newline or a terminal escape; the
    CLI prints every error through this, so an error is always exactly one line and never
    drives the terminal.

    Example:
        >>> one_line("bad key 'a\nb\x1b[31m'")
        "bad key 'a\\nb\\x1b[31m'"
    """
    out = []
    for ch in message:
        if ch.isprintable():
            out.append(ch)
        else:  # \n, \r, \t, ESC, DEL, U+2028/2029 ...: shown escaped, never raw
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)
