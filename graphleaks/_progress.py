"""Progress reporting to stderr only, so machine output on stdout stays clean.

Library loops call :func:`progress` without deciding whether bars show: the CLI opens one
:func:`progress_display` around a command, and every loop inside it (training epochs,
reference models, LinkTeller queries, attacks, sweep units) adds a bar to that one display.
Rich allows a single live display at a time, so nested loops must share it rather than each
opening their own ``track``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")
logger = logging.getLogger("graphleaks")
_DISPLAY: ContextVar[Any | None] = ContextVar("graphleaks_progress_display", default=None)


@contextmanager
def progress_display(enabled: bool) -> Iterator[None]:
    """Show progress bars on stderr for every :func:`progress` loop inside the block."""
    if not enabled or _DISPLAY.get() is not None:
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    display = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    token = _DISPLAY.set(display)
    try:
        with display:
            yield
    finally:
        _DISPLAY.reset(token)


def progress(items: Iterable[T], *, enabled: bool | None = None, desc: str = "",
             total: int | None = None) -> Iterator[T]:
    """Iterate over ``items``, with a bar on stderr when a display is open or ``enabled``.

    Args:
        items: What to iterate over.
        enabled: True forces a bar of its own (outside a display), False hides it; None
            (default) shows one only inside :func:`progress_display`.
        desc: The bar's label.
        total: Number of items, when ``items`` has no ``len``.
    """
    display = _DISPLAY.get()
    if enabled is False or (display is None and not enabled):
        yield from items
        return
    if display is None:
        with progress_display(True):
            yield from progress(items, desc=desc, total=total)
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    task = display.add_task(desc, total=total)
    try:
        for item in items:
            yield item
            display.advance(task)
    finally:
        display.remove_task(task)

