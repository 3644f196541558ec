"""Run sweep units on Ray (``graphleaks sweep --backend ray``); Ray is an optional extra.

Each unit (one target and its attacks) becomes one Ray task that calls the unit runner it
is given (:func:`graphleaks.sweep.sweep.run_unit`) and returns its outcomes. Only the driver
writes the SQLite store, exactly as with the local process pool, so resume semantics are
identical: a unit's rows are committed together when its task returns, and a driver killed
midway leaves the unfinished units ``pending``.

By default a private local Ray instance is started with ``num_cpus=workers`` and no
dashboard, and shut down afterwards. ``address`` connects to an existing cluster instead
(``"auto"``, ``"ray://head:10001"``, ...); graphleaks must be importable on its workers.
A Ray instance already initialised in this process is reused and left running.

If the driver is killed (even by ``kill -9``), the local instance's processes go with it
(Ray's own reaper; its idle agent processes exit within about a minute) and a rerun resumes
from the store like the process pool does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from graphleaks.errors import InvalidConfigError


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InvalidConfigError("backend 'ray' needs Ray, which is not installed: "
                                 "pip install ray") from None
    return ray


def _run_unit_task(run_unit: Callable[..., list[dict[str, Any]]], unit: Any,
                   threads: int | None) -> list[dict[str, Any]]:
    """The Ray task body: the caller's unit runner on one unit (Ray pickles the runner by
    reference, so this module needs no import of the sweep above it)."""
    return run_unit(unit, threads=threads)


def iter_unit_outcomes(
    units: Sequence[Any],
    run_unit: Callable[..., list[dict[str, Any]]],
    *,
    workers: int,
    threads: int | None = 1,
    address: str | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """Run ``units`` on Ray and yield each unit's outcomes as soon as it finishes.

    Args:
        units: The :class:`~graphleaks.sweep.sweep.Unit` objects to run.
        run_unit: Runs one unit (``run_unit(unit, threads=...)``) and returns its outcomes.
        workers: CPUs of the local Ray instance (ignored with ``address``).
        threads: Torch threads per task.
        address: An existing cluster's address; None starts a local instance.

    Raises:
        InvalidConfigError: If Ray is not installed.
    """
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=True)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=True)
        started = True
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_run_unit_task)
        refs = [task.remote(run_unit, u, threads) for u in units]
        try:
            while refs:
                ready, refs = ray.wait(refs, num_returns=1)
                for ref in ready:
                    yield ray.get(ref)
        finally:
            # stopped early (error or generator closed): drop the rest, but only what is
            # still unfinished (Ray 2.60's driver aborts on a forced cancel of a finished,
            # failed task; see graphleaks._executor.RayExecutor.map)
            if refs:
                _, pending = ray.wait(refs, num_returns=len(refs), timeout=0)
                for ref in pending:
                    ray.cancel(ref, force=True)
    finally:
        if started:
            ray.shutdown()
