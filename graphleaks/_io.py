"""Atomic file writes: a crash or bad input never leaves a half-written output behind."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


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
