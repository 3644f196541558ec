"""Atomic file writes: a crash or bad input never leaves a half-written output behind."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path


def write_atomically(dest: Path, write: Callable[[str], object]) -> Path:
    """Call ``write(tmp_path)`` on a temporary file next to ``dest``, then rename it into place.

    Args:
        dest: The final path.
        write: Writes the content to the path it is given.

    Returns:
        ``dest``.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; outputs are ordinary files
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest


def write_texts_atomically(texts: Mapping[Path, str]) -> None:
    """Write several text files so that either all of them appear or none does.

    Every file is first written to a temporary name in its folder; only when all succeeded
    are they renamed into place.
    """
    temps: list[tuple[str, Path]] = []
    try:
        for dest, text in texts.items():
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
            temps.append((tmp, dest))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)
        for tmp, dest in temps:
            os.replace(tmp, dest)
    except BaseException:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
        raise


#: First characters that make a spreadsheet read a cell as a formula (OWASP CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """``value`` made safe for a CSV cell a spreadsheet may open.

    A string starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed
    with a single quote, as OWASP advises, so a node or attack name like ``=HYPERLINK(...)``
    is shown, not run. Numbers are left alone (a negative number is data, not a formula);
    :mod:`csv` already quotes cells holding commas, quotes or line breaks.

    Example:
        >>> [csv_cell(v) for v in ("=1+2", "-x", "gcn", -3, "")]
        ["'=1+2", "'-x", 'gcn', -3, '']
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
