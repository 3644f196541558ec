"""Privacy–utility sweeps: a grid of defenses × ε × attacks × seeds, stored in SQLite.

A sweep spec is an audit spec (``[target]``, ``[audit]``, ``[attacks.*]``) plus a
``[sweep]`` table::

    [sweep]
    defenses = ["none", "gap_edp"]
    epsilons = [1.0, 4.0, 16.0]     # used by defenses that take an epsilon
    seeds = [0, 1]
    [sweep.defense_params.gap_edp]  # fixed parameters of one defense
    encoder_epochs = 50

With ``[target] task = "link"`` or ``"graph"`` the defenses are the task's own (link:
``none``, ``edgerand``, ``lapgraph``, ``gap_edp``, ``dp_sgd``; graph: ``none``, ``dp_sgd``),
the attacks too, and each row's config records the task (see
:mod:`graphleaks.audit.task_spec`).

Each (defense, ε, seed) trains one target; every attack then runs against it and gives
one row. A unit's rows are committed together, so a sweep killed at any point resumes
with nothing lost and no run duplicated (see :mod:`graphleaks.sweep.results_store`).
Units run in a local process pool (``workers`` > 1), in this process, or on Ray
(``backend="ray"``, see :mod:`graphleaks.sweep._ray_backend`).

Example:
    >>> spec = parse_sweep_spec({"target": {"dataset": "synthetic"},
    ...     "sweep": {"defenses": ["none", "gap_edp"], "epsilons": [1.0, 4.0],
    ...               "seeds": [0, 1]}, "attacks": {"confidence_mia": {}}})
    >>> len(expand_grid(spec))  # none: 2 seeds; gap_edp: 2 ε × 2 seeds
    6
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphleaks._progress import progress
from graphleaks._tables import no_unknown as _no_unknown
from graphleaks._tables import table as _table
from graphleaks.audit.spec import AuditSpec, TargetSpec, parse_spec, read_toml
from graphleaks.errors import InvalidConfigError
from graphleaks.sweep.results_store import ResultsStore

logger = logging.getLogger(__name__)

BACKENDS = ("process", "ray")


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep spec: the base audit and the grid."""

    audit: AuditSpec
    defenses: tuple[str, ...]
    epsilons: tuple[float, ...]
    seeds: tuple[int, ...]
    defense_params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {"audit": self.audit.to_dict(), "defenses": list(self.defenses),
                "epsilons": list(self.epsilons), "seeds": list(self.seeds),
                "defense_params": self.defense_params}


@dataclass(frozen=True)
class Unit:
    """One target to train (defense, ε, seed) and the runs (attacks) against it."""

    defense: str
    epsilon: float | None
    seed: int
    target: dict[str, Any]
    runs: tuple[dict[str, Any], ...]


def parse_sweep_spec(raw: Mapping[str, Any], *, source: str | None = None) -> SweepSpec:
    """Validate a sweep spec dictionary.

    Raises:
        InvalidConfigError: Naming the offending field.
    """
    from graphleaks._params import resolve_fields
    from graphleaks.defenses import registry as defenses
    from graphleaks.plugins import check_used, defense_owner

    raw = dict(raw)
    sw = _table(raw.pop("sweep", None) or {}, "sweep")
    _no_unknown(sw, {"defenses", "epsilons", "seeds", "defense_params"}, "sweep")
    base = parse_spec(raw, source=source)
    task = base.target.task
    if task != "node":  # the link and graph tasks' own defenses
        return _task_sweep_spec(base, sw)
    names = sw.get("defenses", ["none"])
    if not isinstance(names, list) or not names:
        raise InvalidConfigError("sweep.defenses must be a non-empty list of defense names")
    resolved = []
    for i, n in enumerate(names):
        try:
            resolved.append(defenses.get(str(n)).name)
        except InvalidConfigError as exc:
            raise InvalidConfigError(f"sweep.defenses[{i}]: {exc}") from None
    eps, seeds = _epsilons_and_seeds(sw, base.seed)
    dparams: dict[str, dict[str, Any]] = {}
    for key, params in _table(sw.get("defense_params", {}), "sweep.defense_params").items():
        try:
            name = defenses.get(key).name
        except InvalidConfigError as exc:
            raise InvalidConfigError(f"sweep.defense_params.{key}: {exc}") from None
        where = f"sweep.defense_params.{key}"
        if name not in resolved:
            raise InvalidConfigError(f"{where}: {name!r} is not in sweep.defenses "
                                     f"({', '.join(resolved)}), so these parameters would "
                                     "be unused; add it there or drop the table")
        if name in dparams:
            raise InvalidConfigError(f"{where}: {name} is given twice under different "
                                     "spellings; give it once")
        try:
            typed = resolve_fields(defense_owner(name), _table(params, where), text=False)
        except InvalidConfigError as exc:
            raise InvalidConfigError(f"{where}: {exc}") from None
        if "epsilon" in typed and eps and _takes_epsilon(name):
            raise InvalidConfigError(f"{where}.epsilon: ε is swept by sweep.epsilons, which "
                                     "would replace it; drop one of the two")
        dparams[name] = typed
    for name in resolved:
        takes_eps = _takes_epsilon(name)
        if takes_eps and not eps:
            raise InvalidConfigError(f"sweep.epsilons: defense {name!r} needs at least one ε")
        for e in (eps if takes_eps else [None]):
            params = {**dparams.get(name, {}), **({"epsilon": float(e)} if e else {})}
            try:
                from graphleaks._validation import validate

                cls = defenses.get(name)
                dobj = cls(**params)
                validate(dobj.config, cls.__name__)
                check_used(dobj, params)
            except (TypeError, ValueError) as exc:
                raise InvalidConfigError(f"sweep.defense_params.{name}: {exc}") from None
    return SweepSpec(audit=base, defenses=tuple(dict.fromkeys(resolved)),
                     epsilons=tuple(float(e) for e in eps),
                     seeds=tuple(dict.fromkeys(int(s) for s in seeds)), defense_params=dparams)


def _epsilons_and_seeds(sw: Mapping[str, Any], seed: int) -> tuple[list[Any], list[Any]]:
    """The grid's ε values (numbers > 0) and seeds (integers; default: the spec's seed)."""
    eps = sw.get("epsilons", [])
    if not isinstance(eps, list) or any(isinstance(e, bool) or not isinstance(e, (int, float))
                                        or not e > 0 for e in eps):
        raise InvalidConfigError(f"sweep.epsilons must be a list of numbers > 0, got {eps!r}")
    seeds = sw.get("seeds", [seed])
    if not isinstance(seeds, list) or not seeds or any(
            isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise InvalidConfigError(f"sweep.seeds must be a non-empty list of integers, "
                                 f"got {seeds!r}")
    return eps, seeds


def _task_sweep_spec(base: AuditSpec, sw: Mapping[str, Any]) -> SweepSpec:
    """The grid of a link or graph sweep, its defenses from the task's registry.

    Raises:
        InvalidConfigError: Naming the offending field.
    """
    from graphleaks.audit.task_spec import takes_epsilon, task_defense

    task = base.target.task
    if base.target.bundle is not None:
        raise InvalidConfigError("target.bundle: a sweep trains one target per defense, ε and "
                                 "seed; give the dataset to train on instead of a bundle")
    names = sw.get("defenses", ["none"])
    if not isinstance(names, list) or not names:
        raise InvalidConfigError("sweep.defenses must be a non-empty list of defense names")
    resolved = [task_defense(task, str(n), {}, where=f"sweep.defenses[{i}]")[0]
                for i, n in enumerate(names)]
    eps, seeds = _epsilons_and_seeds(sw, base.seed)
    dparams: dict[str, dict[str, Any]] = {}
    for key, params in _table(sw.get("defense_params", {}), "sweep.defense_params").items():
        where = f"sweep.defense_params.{key}"
        name, typed = task_defense(task, key, _table(params, where), where=where)
        if name not in resolved:
            raise InvalidConfigError(f"{where}: {name!r} is not in sweep.defenses "
                                     f"({', '.join(resolved)}), so these parameters would "
                                     "be unused; add it there or drop the table")
        if name in dparams:
            raise InvalidConfigError(f"{where}: {name} is given twice under different "
                                     "spellings; give it once")
        if "epsilon" in typed and eps and takes_epsilon(task, name):
            raise InvalidConfigError(f"{where}.epsilon: ε is swept by sweep.epsilons, which "
                                     "would replace it; drop one of the two")
        dparams[name] = typed
    for name in resolved:
        takes_eps = takes_epsilon(task, name)
        if takes_eps and not eps:
            raise InvalidConfigError(f"sweep.epsilons: defense {name!r} needs at least one ε")
        for e in (eps if takes_eps else [None]):
            # as expand_grid builds them: the target's parameters under the sweep's
            params = {**base.target.defense_params, **dparams.get(name, {}),
                      **({"epsilon": float(e)} if e else {})}
            task_defense(task, name, params, where=f"sweep.defense_params.{name}")
    return SweepSpec(audit=base, defenses=tuple(dict.fromkeys(resolved)),
                     epsilons=tuple(float(e) for e in eps),
                     seeds=tuple(dict.fromkeys(int(s) for s in seeds)), defense_params=dparams)


def load_sweep_spec(path: str | Path) -> SweepSpec:
    """Read and validate a sweep spec TOML file."""
    return parse_sweep_spec(read_toml(path), source=str(path))


def _takes_epsilon(defense: str, task: str = "node") -> bool:
    from graphleaks.defenses import registry as defenses

    if task != "node":
        from graphleaks.audit.task_spec import takes_epsilon

        return takes_epsilon(task, defense)
    return "epsilon" in {f.name for f in dataclasses.fields(defenses.get(defense).Config)}


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 (20 hex digits) of a run configuration's canonical JSON."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def expand_grid(spec: SweepSpec) -> list[Unit]:
    """The units of a sweep, in a stable order; a defense without ε gets one unit per seed."""
    from graphleaks.audit.runner import REPORT_SCHEMA_VERSION

    units = []
    a = spec.audit
    for defense in spec.defenses:
        for eps in (spec.epsilons if _takes_epsilon(defense, a.target.task) else (None,)):
            for seed in spec.seeds:
                params = {**a.target.defense_params, **spec.defense_params.get(defense, {})}
                if eps is not None:
                    params["epsilon"] = eps
                target = dataclasses.asdict(dataclasses.replace(
                    a.target, defense=defense, defense_params=params))
                if target["task"] == "node":  # a node sweep keeps its runs' config hashes
                    target.pop("task")
                    target.pop("split")
                runs = []
                for attack, aparams in a.attacks.items():
                    cfg = {"target": target, "attack": attack, "attack_params": aparams,
                           "seed": seed, "n_bootstrap": a.n_bootstrap,
                           "query_graph": a.query_graph,
                           "report_schema_version": REPORT_SCHEMA_VERSION}
                    runs.append({"config_hash": config_hash(cfg), "defense": defense,
                                 "epsilon": eps, "attack": attack, "seed": seed,
                                 "config": cfg})
                units.append(Unit(defense, eps, seed, target, tuple(runs)))
    return units


def run_unit(unit: Unit, *, threads: int | None = 1) -> list[dict[str, Any]]:
    """Train the unit's target and run its attacks; never raises for a failed run.

    Returns one outcome per run: ``status`` ``done`` with metrics, or ``failed`` with a
    one-line ``error``.
    """
    import torch

    from graphleaks.attacks import registry as attacks
    from graphleaks.audit.runner import run_audit
    from graphleaks.audit.spec import build_target

    if threads is not None:
        torch.set_num_threads(threads)
    pid = os.getpid()
    t0 = time.perf_counter()
    from graphleaks.audit.task_spec import audit_task_target, build_task_target

    task = unit.target.get("task", "node")
    try:
        build = build_target if task == "node" else build_task_target
        target = build(TargetSpec(**unit.target), seed=unit.seed)
    except Exception as exc:  # noqa: BLE001 - a failed run is recorded, not raised
        err = f"training failed: {type(exc).__name__}: {exc}".replace("\n", " ")
        return [{"config_hash": r["config_hash"], "status": "failed", "error": err,
                 "worker_pid": pid} for r in unit.runs]
    train_s = time.perf_counter() - t0
    out = []
    for r in unit.runs:
        cfg = r["config"]
        t1 = time.perf_counter()
        try:
            if task != "node":  # the task's own audit of one attack
                report = audit_task_target(target, {cfg["attack"]: cfg["attack_params"]},
                                           seed=cfg["seed"],
                                           n_bootstrap=cfg["n_bootstrap"]).report
            else:
                attack = attacks.get(cfg["attack"])(**cfg["attack_params"])
                report = run_audit(target, [attack], seed=cfg["seed"],
                                   n_bootstrap=cfg["n_bootstrap"], view=cfg["query_graph"])
            out.append({"config_hash": r["config_hash"], "status": "done",
                        "metrics": report.attacks[0].metrics.to_dict(),
                        "utility": dict(target.utility), "ledger": target.ledger.to_dict(),
                        "train_s": train_s, "attack_s": time.perf_counter() - t1,
                        "worker_pid": pid})
        except Exception as exc:  # noqa: BLE001
            out.append({"config_hash": r["config_hash"], "status": "failed",
                        "error": f"{type(exc).__name__}: {exc}".replace("\n", " "),
                        "train_s": train_s, "attack_s": time.perf_counter() - t1,
                        "worker_pid": pid})
    return _json_clean(out)


def _worker_init(parent_pid: int) -> None:
    """Exit a pool worker as soon as its coordinator dies (e.g. ``kill -9``), so no
    orphaned worker keeps computing runs whose results nobody will record."""
    import threading

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(1)
            time.sleep(1.0)

    threading.Thread(target=watch, name="graphleaks-parent-watch", daemon=True).start()


def _json_clean(value: Any) -> Any:
    from graphleaks.report.report import json_safe

    return json_safe(value)


@dataclass(frozen=True)
class SweepSummary:
    """What a call to :func:`run_sweep` did."""

    total: int
    skipped: int
    ran: int
    failed: int
    store: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return dataclasses.asdict(self)


def run_sweep(
    spec: SweepSpec,
    store_path: str | Path,
    *,
    workers: int = 1,
    backend: str = "process",
    retry_failed: bool = False,
    threads_per_worker: int | None = 1,
    address: str | None = None,
) -> SweepSummary:
    """Run (or resume) a sweep into a SQLite store.

    Args:
        spec: The sweep.
        store_path: SQLite file; created if missing. Runs already ``done`` are skipped.
        workers: Processes in the local pool; 1 runs everything in this process. With
            ``backend="ray"``: CPUs of the local Ray instance.
        backend: ``process`` (a local process pool) or ``ray`` (Ray tasks; the store is
            still written by this process only).
        retry_failed: Also rerun runs recorded as ``failed``.
        threads_per_worker: Torch threads per worker (None: leave torch's default).
        address: With ``backend="ray"``: an existing Ray cluster's address; None starts a
            local Ray instance.
    """
    if backend not in BACKENDS:
        raise InvalidConfigError(f"backend must be one of {', '.join(BACKENDS)}, got "
                                 f"{backend!r}")
    if address is not None and backend != "ray":
        raise InvalidConfigError("address is only used with backend 'ray'")
    if backend == "ray":
        from graphleaks.sweep import _ray_backend

        _ray_backend._import_ray()  # fail before touching the store
    if workers < 1:
        raise InvalidConfigError(f"workers must be >= 1, got {workers}")
    units = expand_grid(spec)
    total = sum(len(u.runs) for u in units)
    with ResultsStore(store_path) as store:
        store.set_meta("sweep_spec", spec.to_dict())
        store.add_pending([r for u in units for r in u.runs])
        todo = set(store.todo(retry_failed=retry_failed))
        # rerun only the missing attacks of a unit (e.g. after an attack was added)
        pending = [dataclasses.replace(u, runs=tuple(r for r in u.runs
                                                     if r["config_hash"] in todo))
                   for u in units]
        pending = [u for u in pending if u.runs]
        n_todo = sum(len(u.runs) for u in pending)
        logger.info("sweep: %d runs, %d to do", total, n_todo)
        failed = 0
        if backend == "ray":
            from graphleaks.sweep._ray_backend import iter_unit_outcomes

            if pending:
                # run_unit looked up now, so a patched one (tests) is the one Ray runs
                for outcomes in iter_unit_outcomes(pending, run_unit, workers=workers,
                                                   threads=threads_per_worker,
                                                   address=address):
                    store.record_many(outcomes)
                    failed += sum(o["status"] == "failed" for o in outcomes)
        elif workers == 1 or len(pending) <= 1:
            for u in progress(pending, desc="sweep units"):
                outcomes = run_unit(u, threads=threads_per_worker)
                store.record_many(outcomes)
                failed += sum(o["status"] == "failed" for o in outcomes)
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            ctx = mp.get_context("spawn")
            with ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=ctx,
                                     initializer=_worker_init,
                                     initargs=(os.getpid(),)) as pool:
                futures = [pool.submit(run_unit, u, threads=threads_per_worker)
                           for u in pending]
                try:
                    for fut in as_completed(futures):
                        outcomes = fut.result()
                        store.record_many(outcomes)
                        failed += sum(o["status"] == "failed" for o in outcomes)
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
    return SweepSummary(total=total, skipped=total - n_todo, ran=n_todo, failed=failed,
                        store=str(store_path))
