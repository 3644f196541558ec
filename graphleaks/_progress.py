"""Progress reporting to stderr only, so machine output on stdout stays clean."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
logger = logging.getLogger("graphleaks")


def progress(items: Iterable[T], *, enabled: bool = False, desc: str = "") -> Iterator[T]:
    """Iterate over ``items``, showing a rich progress bar on stderr when ``enabled``."""
    if not enabled:
        yield from items
        return
    from rich.console import Console
    from rich.progress import track

    yield from track(items, description=desc, console=Console(stderr=True), transient=True)


def stage(message: str) -> None:
    """Log the start of a pipeline stage (the CLI shows these on stderr)."""
    logger.info(message)
