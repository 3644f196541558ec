"""The command line's fixed costs per process: a deferred ``torch._dynamo``, a frozen heap.

**Deferred ``torch._dynamo``.** PyG 2.8 imports ``torch._dynamo`` eagerly
(``torch_geometric/isinstance.py``) only to unwrap ``torch.compile``'d modules in
``is_torch_instance``; that import alone costs about 1.1
CPU-s per process (``python -X importtime``), more than the rest of PyG. torch itself
imports ``_dynamo`` on first use. :func:`defer_dynamo` restores that: the next
``import torch._dynamo`` gets a module whose code runs on its first attribute access
(:class:`importlib.util.LazyLoader`), so a process that never compiles, exports or
unwraps a compiled model never pays for it, and one that does gets the real module at that
moment. It changes no result: the module is the same, only its loading time moves.
(torch's optimisers import it on their first use, so a command that trains still pays; one
that only reads scores or a report does not.)

**Frozen heap.** After ``import torch_geometric`` and scikit-learn the interpreter tracks
some 350 000 container objects, none of them garbage. Every full collection scans them all
(about 0.2 CPU-s each on this kind of machine; the default Cora audit ran eight, 1.2 CPU-s,
plus a second at exit: the interpreter's shutdown collections cost about 1 CPU-s more).
:func:`freeze_heap` moves what is tracked so far into the collector's permanent
generation (:func:`gc.freeze`), which no collection scans: call it once the libraries are
imported and before any data is loaded (:func:`frozen_imports`), so only import-time
objects are frozen (a cycle
frozen by mistake is never freed, which matters for a graph's tensors, not for a module's
functions), and once more at exit. It changes no result: reference counting
still frees every object as before, and collections of everything created afterwards run
as before.

**Huge pages.** torch's CPU allocator maps each large tensor afresh, and the kernel then
faults it in 4 KiB page by page: a 1M-node audit spent 344 of its 863 CPU-s in the kernel
(205M page faults; 5 of 145 s at 100k). With transparent huge pages on tensors over 2 MiB
(torch's own switch, ``THP_MEM_ALLOC_ENABLE=1``), a 300k-node GCN's training fell from 67 to
34 CPU-s with the same peak RSS and the same weights. :func:`prefer_huge_pages` sets it
unless the environment already says otherwise; it takes effect only before torch's first
allocation, and child processes (sweep workers) inherit it.

The command line calls all three (:func:`graphleaks.cli.main`, and ``graphleaks audit`` once its
libraries are in); the library does not touch the import system or the collector of the
programs that import it.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType

__all__ = ["DEFERRED", "HUGE_PAGES", "claimed", "defer", "defer_dynamo", "freeze_heap",
           "frozen_imports", "prefer_huge_pages"]

#: torch's switch for transparent huge pages on large CPU tensors.
HUGE_PAGES = "THP_MEM_ALLOC_ENABLE"

#: The module whose execution :func:`defer_dynamo` defers.
DEFERRED = "torch._dynamo"

_owner: list[str] = []  # who holds the process now (the command line), if anyone
_at_exit: list[bool] = []  # whether the exit-time freeze is registered


class _DeferOnce(importlib.abc.MetaPathFinder):
    """Finds ``name`` once, through the other finders, and wraps its loader to load lazily."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        # one shot, and out of the way first, so the real lookup below does not come back here
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        # only a loader that can execute into a given module can run later (LazyLoader's
        # contract); anything else is imported as usual
        if spec is not None and spec.loader is not None and hasattr(spec.loader,
                                                                    "exec_module"):
            spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def defer(name: str) -> bool:
    """Make the next import of module ``name`` lazy; False if it is loaded or deferred already.

    The module's code runs on the first access to one of its attributes. Call it before
    whatever imports ``name``.
    """
    if name in sys.modules or any(isinstance(f, _DeferOnce) and f.name == name
                                  for f in sys.meta_path):
        return False
    sys.meta_path.insert(0, _DeferOnce(name))
    return True


def prefer_huge_pages() -> bool:
    """Ask torch for transparent huge pages on large CPU tensors; False if already decided.

    An explicit ``THP_MEM_ALLOC_ENABLE`` in the environment (``0`` included) is kept. Call
    it before torch allocates anything.
    """
    import os

    if HUGE_PAGES in os.environ:
        return False
    os.environ[HUGE_PAGES] = "1"
    return True


def defer_dynamo() -> bool:
    """:func:`defer` for ``torch._dynamo``: call it before torch_geometric is imported."""
    return defer(DEFERRED)


@contextlib.contextmanager
def claimed(owner: str) -> Iterator[None]:
    """While open, ``owner`` (the command line's entry point) runs this process's collector.

    :func:`freeze_heap` does nothing outside it, so the library called from a longer-lived
    program (a notebook, a test run) never freezes that program's objects. Once claimed, the
    process also freezes its heap at exit (an :mod:`atexit` hook, which runs before the
    interpreter's shutdown collections), so they do not rescan what lived to the end.
    """
    _owner.append(owner)
    if not _at_exit:
        atexit.register(gc.freeze)
        _at_exit.append(True)
    try:
        yield
    finally:
        _owner.remove(owner)


def freeze_heap() -> int:
    """Leave every object tracked so far out of later garbage collections; how many are out.

    Only while the command line holds the process (:func:`claimed`; elsewhere it does
    nothing and returns 0), at a point where what is tracked is long-lived: imported
    modules, not a graph or a model. No collection runs first (it would cost the full scan
    this avoids): import-time garbage, a few objects, stays for the life of the process.
    """
    if not _owner:
        return 0
    gc.freeze()
    return gc.get_freeze_count()


@contextlib.contextmanager
def frozen_imports() -> Iterator[None]:
    """Import inside it: no collection runs meanwhile, and what it made is frozen after.

    An import creates tens of thousands of long-lived objects and no garbage to speak of,
    yet each quarter's growth of the heap triggers a full collection of it (four during the
    import of the audit runner and PyG, 0.3 CPU-s). Only while the command line holds the
    process (:func:`claimed`); elsewhere it changes nothing.
    """
    if not _owner:
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        freeze_heap()
