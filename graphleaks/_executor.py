"""Run an audit's independent calls here or as Ray tasks on an existing cluster.

An audit's cost is many independent model trainings (reference, shadow models): each is a
pure function of shared inputs (the graph, features, architecture) and its own item (its
members and seed). :class:`Executor` maps such a function over the items, either in this
process (:data:`LOCAL`, the default: exactly the loop it replaces) or as Ray tasks
(:class:`RayExecutor`). The shared inputs go into Ray's object store once per
:meth:`Executor.map`, not once per task, and every item carries its own seed, derived as
in a local run, so the results are the same values in the same order.

A Ray task whose worker dies is retried ``max_retries`` times; a task that raises is not
retried (its inputs and seed are fixed, so it would raise again) and its own exception
fails the call, after the other tasks are cancelled: nothing is returned partially.

Ray is an optional extra (``pip install 'graphleaks[ray]'``); this module imports it only
when a :class:`RayExecutor` connects.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from graphleaks._progress import progress
from graphleaks.errors import GraphleaksError, InvalidConfigError

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT_S = 10.0
"""How long the reachability check of a cluster address waits before giving up."""


class Executor(Protocol):
    """Maps a function of ``(shared, item)`` over items, keeping their order."""

    def map(self, fn: Callable[[S, T], R], items: Sequence[T], *, shared: S,
            desc: str | None = None) -> list[R]:
        """``[fn(shared, item) for item in items]``, wherever the executor runs them
        (``desc``: the progress bar's label on stderr, for a local run)."""
        ...


class LocalExecutor:
    """The calls in this process, one after another (the audit's default)."""

    def map(self, fn: Callable[[S, T], R], items: Sequence[T], *, shared: S,
            desc: str | None = None) -> list[R]:
        """``[fn(shared, item) for item in items]`` (with a progress bar when ``desc``)."""
        if desc is None:
            return [fn(shared, item) for item in items]
        return [fn(shared, item) for item in progress(items, desc=desc)]


LOCAL: Executor = LocalExecutor()
"""The default executor: every call in this process."""


class RayTaskFailed(GraphleaksError):
    """A Ray task failed for good (its worker died more than ``max_retries`` times)."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InvalidConfigError("--ray needs Ray, which is not installed: pip install "
                                 "'graphleaks[ray]' (and graphleaks on every node of the "
                                 "cluster)") from None
    return ray


def _driver_version() -> str:
    """This process's graphleaks version (what ``graphleaks.__version__`` reads; the
    package itself is above this layer)."""
    from importlib import metadata

    try:
        return metadata.version("graphleaks")
    except metadata.PackageNotFoundError:
        return "0.0.0"


# The probe is compiled outside any importable module, so Ray ships its code by value: a
# worker without graphleaks runs it and answers None, where a function of this module
# would fail to unpickle before it could say why.
_PROBE_SOURCE = """
def probe():
    try:
        import graphleaks
    except ImportError:
        return None
    return str(graphleaks.__version__)
"""


def _version_probe() -> Callable[[], str | None]:
    namespace: dict[str, Any] = {"__name__": "graphleaks_version_probe"}
    exec(compile(_PROBE_SOURCE, "<graphleaks version probe>", "exec"), namespace)  # noqa: S102
    return namespace["probe"]  # type: ignore[no-any-return]


def _call(fn: Callable[[Any, Any], Any], shared: Any, item: Any, threads: int | None) -> Any:
    """A Ray task body: ``fn(shared, item)`` on ``threads`` torch threads (None: as is)."""
    import warnings

    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    with warnings.catch_warnings():
        # Ray hands numpy arrays over zero-copy and read-only; the trainings only read them
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return fn(shared, item)


def _reachable(address: str) -> str | None:
    """Why ``host:port`` (or ``ray://host:port``) cannot be reached, or None.

    Checked with one TCP connection before Ray is asked, so a wrong address is one clear
    line at once rather than Ray's retries and tracebacks.
    """
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return None  # "auto" or a form Ray resolves itself
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)),
                                      timeout=CONNECT_TIMEOUT_S):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


class RayExecutor:
    """The calls as Ray tasks on an existing cluster.

    Args:
        address: The cluster's address (``HOST:PORT`` of a head started with ``ray start
            --head``, ``ray://HOST:PORT`` for Ray Client, or ``auto``).
        max_retries: Times a task whose worker died is retried before the call fails.
        num_cpus: CPUs each task reserves.
        threads: Torch threads in each task (the driver's count when None).

    Use :meth:`connect` first (it checks the address and the workers' graphleaks version,
    so a bad cluster is refused before any training), and :meth:`close` afterwards.
    """

    def __init__(self, address: str, *, max_retries: int = 2, num_cpus: float = 1.0,
                 threads: int | None = 1) -> None:
        self.address = address
        self.max_retries = max_retries
        self.num_cpus = num_cpus
        self.threads = threads
        self._ray: Any = None
        self._started = False

    def connect(self) -> RayExecutor:
        """Join the cluster and check that its workers run this graphleaks version.

        Raises:
            InvalidConfigError: Ray missing, an address that cannot be reached, workers
                that cannot import graphleaks or run another version of it (both named).
        """
        if self._ray is not None:
            return self
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise InvalidConfigError(f"The max_retries parameter of RayExecutor must be an "
                                     f"integer >= 0. Got {self.max_retries!r} instead.")
        ray = _import_ray()
        why = _reachable(self.address)
        if why is not None:
            raise InvalidConfigError(
                f"--ray {self.address}: no Ray cluster answers there ({why}); start one with "
                "'ray start --head --port PORT' and pass its HOST:PORT")
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, include_dashboard=False,
                         log_to_driver=False, logging_level="ERROR")
            except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError
                raise InvalidConfigError(
                    f"--ray {self.address}: cannot join a Ray cluster there "
                    f"({type(exc).__name__}); pass the address 'ray start --head' "
                    "printed") from None
            self._started = True
        self._ray = ray
        try:
            self._check_workers()
        except BaseException:
            self.close()
            raise
        return self

    def _check_workers(self) -> None:
        ray = self._ray
        task = ray.remote(num_cpus=self.num_cpus, max_retries=self.max_retries)(
            _version_probe())
        theirs = ray.get(task.remote(), timeout=300)
        ours = _driver_version()
        if theirs is None:
            raise InvalidConfigError(
                f"--ray {self.address}: the cluster's workers cannot import graphleaks; "
                f"install graphleaks=={ours} on every node")
        if theirs != ours:
            raise InvalidConfigError(
                f"--ray {self.address}: the cluster's workers run graphleaks {theirs}, this "
                f"driver runs graphleaks {ours}; install graphleaks=={ours} on every node")

    def close(self) -> None:
        """Leave the cluster (it keeps running); a no-op when not connected."""
        if self._ray is not None and self._started:
            self._ray.shutdown()
        self._ray = None
        self._started = False

    def __enter__(self) -> RayExecutor:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def map(self, fn: Callable[[S, T], R], items: Sequence[T], *, shared: S,
            desc: str | None = None) -> list[R]:
        """``[fn(shared, item) for item in items]`` as one Ray task per item.

        Raises:
            Exception: The first failing task's own exception (the others are cancelled).
            RayTaskFailed: When a task's worker died more than ``max_retries`` times.
        """
        if not items:
            return []
        self.connect()
        ray = self._ray
        threads = self.threads
        if threads is None:
            import torch

            threads = torch.get_num_threads()
        shared_ref = ray.put(shared)  # once for every task of this call
        task = ray.remote(num_cpus=self.num_cpus, max_retries=self.max_retries,
                          retry_exceptions=False)(_call)
        refs = [task.remote(fn, shared_ref, item, threads) for item in items]
        try:
            return list(ray.get(refs))
        except BaseException as exc:
            # A failure drops the rest: never a half-used result. Only the unfinished tasks
            # are cancelled: Ray 2.60's driver aborts on a forced cancel of a task that has
            # already failed (task_manager.cc "Check failed: it != submissible_tasks_.end()",
            # seen on a real two-node cluster after a worker died for good)
            _, pending = ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in pending:
                ray.cancel(ref, force=True)
            raise _task_error(ray, exc, self.max_retries) from None


def _task_error(ray: Any, exc: BaseException, retries: int) -> BaseException:
    """The exception a failed task raises in the driver: the task's own, when it raised."""
    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = getattr(exc, "cause", None)
        return cause if isinstance(cause, Exception) else RayTaskFailed(
            f"a Ray task failed: {str(exc).splitlines()[0]}")
    if isinstance(exc, ray.exceptions.RayError):
        first = str(exc).splitlines()[0] if str(exc) else ""
        return RayTaskFailed(f"a Ray task failed after {retries} retries of its worker "
                             f"({type(exc).__name__}: {first})")
    return exc


def make_executor(ray_address: str | None, *, max_retries: int = 2) -> Executor:
    """:data:`LOCAL` for None, else a connected :class:`RayExecutor` on ``ray_address``."""
    if ray_address is None:
        return LOCAL
    return RayExecutor(ray_address, max_retries=max_retries).connect()
