"""Issue 29: the reference-model stage of a thorough audit fanned out over a local Ray cluster.

A CSBM of SIZE nodes (``csbm(size, 4 classes, 32 features, avg degree 10, seed 0)``), a GCN
target (``epochs=200``, early stopping), then the thorough suite's LiRA (16 reference
models, each ``ref_epochs=50``, the stage that dominates the attack) run three ways with
the same seeds:

* ``local``: in this process (:data:`graphleaks._executor.LOCAL`, the default audit);
* ``ray-1``: a local Ray instance with 1 CPU (one worker process at a time);
* ``ray-2``: a local Ray instance with 2 CPUs (two worker processes at a time).

Each line is JSON: wall seconds, this process's CPU seconds, the CPU seconds of the Ray
processes this driver started (workers, raylet, GCS: everything the fan-out costs), their
sum, the same figure in reference units (see ``bench/_reference.py``), the machine's load
average before and after, and whether the report equals the local one. The summary line
gives ``wall(ray-2)/wall(ray-1)`` and the per-task overhead, ``(wall(ray-1) −
wall(local)) / tasks`` in wall seconds and the same in CPU seconds: with one worker the
same trainings run one after another, so what is left is Ray's (scheduling, the object
store, shipping the shared graph to each worker once, the results back, worker start-up).

Usage::

    OMP_NUM_THREADS=1 python bench/bench_ray_fanout.py 100000

(not under ``nice``: Ray's processes inherit it, and its node must start within 30 s)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _reference import in_units, provenance, reference_cpu  # noqa: E402


def _ray_cpu() -> float:
    """CPU seconds (user + system) of every live process this driver started (Ray's)."""
    import psutil

    total = 0.0
    for proc in psutil.Process().children(recursive=True):
        try:
            t = proc.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            continue
    return total


def _start_ray(ray: Any, workers: int, tries: int = 3) -> None:
    """A local Ray instance of ``workers`` CPUs; Ray gives its node 30 s to start, which a
    loaded machine can miss, so up to ``tries`` attempts (each said on stderr)."""
    for attempt in range(1, tries + 1):
        try:
            ray.init(address="local", num_cpus=workers, include_dashboard=False,
                     log_to_driver=False)
            return
        except Exception as exc:  # noqa: BLE001 - Ray raises plain Exception here
            ray.shutdown()
            print(f"ray.init attempt {attempt} failed: {str(exc).splitlines()[0]}",
                  file=sys.stderr, flush=True)
            if attempt == tries:
                raise


def _run(target: Any, seed: int, executor: Any) -> tuple[Any, float, float, float]:
    from graphleaks.audit.runner import run_audit

    w0, c0, r0 = time.perf_counter(), time.process_time(), _ray_cpu()
    report = run_audit(target, ["lira_mia"], seed=seed, suite="thorough", canary=False,
                       executor=executor)
    return (report, time.perf_counter() - w0, time.process_time() - c0,
            max(_ray_cpu() - r0, 0.0))


def main() -> None:
    """Print one JSON line per configuration and a summary line."""
    ap = argparse.ArgumentParser()
    ap.add_argument("size", type=int, nargs="?", default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import ray
    import torch

    torch.set_num_threads(1)
    from graphleaks._executor import LOCAL, RayExecutor
    from graphleaks.audit import train_target
    from graphleaks.audit.suite import build_attack, get_suite
    from graphleaks.data.synthetic import csbm
    from graphleaks.models.gnn import ArchitectureSpec

    lira = build_attack("lira_mia", get_suite("thorough")).config
    tasks = int(lira.num_references)
    ref = reference_cpu()
    print(json.dumps({"provenance": provenance({
        "size": args.size, "references": tasks, "ref_epochs": lira.ref_epochs,
        "torch_threads": 1, "task_threads": 1, "ray": ray.__version__})}), flush=True)
    g = csbm(args.size, num_classes=4, num_features=32, avg_degree=10, seed=0)
    c0 = time.process_time()
    target = train_target(g, seed=args.seed, spec=ArchitectureSpec(epochs=200))
    print(json.dumps({"step": "target", "cpu_s": round(time.process_time() - c0, 2),
                      **ref}), flush=True)

    def line(name: str, wall: float, cpu: float, ray_cpu: float, same: bool) -> dict[str, Any]:
        out = {"step": "lira_thorough", "executor": name, "tasks": tasks,
               "wall_s": round(wall, 2), "driver_cpu_s": round(cpu, 2),
               "ray_cpu_s": round(ray_cpu, 2), "cpu_s": round(cpu + ray_cpu, 2),
               "cpu_ref_units": in_units(cpu + ray_cpu, ref),
               "loadavg_1m": round(os.getloadavg()[0], 2), "same_report": same}
        print(json.dumps(out), flush=True)
        return out

    local, wall, cpu, _ = _run(target, args.seed, LOCAL)
    expected = json.dumps(local.to_dict(include_timings=False), sort_keys=True)
    rows = {"local": line("local", wall, cpu, 0.0, True)}
    for workers in (1, 2):
        _start_ray(ray, workers)
        try:
            with RayExecutor("auto") as ex:
                ex.map(lambda s, i: i, list(range(workers)), shared=None)  # workers up
                report, wall, cpu, ray_cpu = _run(target, args.seed, ex)
        finally:
            ray.shutdown()
        same = json.dumps(report.to_dict(include_timings=False), sort_keys=True) == expected
        rows[f"ray-{workers}"] = line(f"ray-{workers}", wall, cpu, ray_cpu, same)
    r1, r2, lo = rows["ray-1"], rows["ray-2"], rows["local"]
    print(json.dumps({
        "summary": "wall(ray-2)/wall(ray-1)",
        "wall_ratio": round(r2["wall_s"] / r1["wall_s"], 3),
        "cpu_ratio": round(r2["cpu_s"] / r1["cpu_s"], 3),
        "overhead_per_task_wall_s": round((r1["wall_s"] - lo["wall_s"]) / tasks, 3),
        "overhead_per_task_cpu_s": round((r1["cpu_s"] - lo["cpu_s"]) / tasks, 3)}),
        flush=True)


if __name__ == "__main__":
    main()
