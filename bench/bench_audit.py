"""CPU and wall time of the default audit on the bundled Cora, step by step.

Steps: imports (interpreter start-up included), load, train, the audit (its attack loop,
the canary audit and the report assembly), writing the report (JSON, Markdown and HTML, as
``graphleaks audit`` does). Each step's process CPU time
(user + system, the figure a busy shared host does not distort) is printed beside its wall
time, in seconds and in *reference units*: the CPU of a fixed reference workload (100 epochs
of a seeded Cora GCN, ``bench/_reference.py``) measured in the same process. Inside the
attack loop, the CPU spent in metrics (``evaluate_result``), in per-node slices and in the
candidate tables is timed separately, so the share of metrics and slices can be read.

Usage: python bench/bench_audit.py [--repeats 1] [--seed 0] [--threads 1] [--json]
Prints figures only (and, with ``--json``, one JSON line per run with the provenance:
commit, dirty flag, command, settings). Issue 29's aim: under 12 CPU-s for the full audit,
and metrics + slices under 20 % of its attack loop.
"""

from __future__ import annotations

import time

_CPU_AT_START = time.process_time()  # interpreter start-up before this module ran
_WALL_AT_START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _reference import in_units, provenance, reference_cpu  # noqa: E402

from graphleaks.audit import run_audit, train_target, write_report  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402

_IMPORT_CPU = time.process_time()
_IMPORT_WALL = time.perf_counter() - _WALL_AT_START


class _Timers:
    """Process CPU spent inside wrapped functions, by group (outermost call only)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self._depth = 0

    def wrap(self, module: Any, attr: str, group: str) -> None:
        fn = getattr(module, attr, None)
        if fn is None:
            return

        def timed(*args: Any, **kw: Any) -> Any:
            if self._depth:
                return fn(*args, **kw)
            self._depth += 1
            c = time.process_time()
            try:
                return fn(*args, **kw)
            finally:
                self._depth -= 1
                self.cpu[group] = self.cpu.get(group, 0.0) + time.process_time() - c

        setattr(module, attr, timed)


def _instrument(timers: _Timers, loop: dict[str, float]) -> None:
    """Time the attack loop and, inside it, metrics, slices and candidate tables.

    The names are looked up on the modules at call time by the runner, so rebinding them
    here times every call; names a commit does not have are skipped.
    """
    import graphleaks.audit.runner as runner
    import graphleaks.metrics.slices as slices

    timers.wrap(runner, "evaluate_result", "metrics")
    timers.wrap(runner, "evaluate_binary", "metrics")
    timers.wrap(slices, "slice_metrics", "slices")
    timers.wrap(runner, "slice_metrics", "slices")
    for name in ("candidate_table", "node_attributes", "slice_masks", "most_exposed"):
        timers.wrap(runner, name, "tables")
    plain = runner.progress

    def timed_loop(items: Any, **kw: Any) -> Any:
        for item in plain(items, **kw):
            c, w = time.process_time(), time.perf_counter()
            yield item
            loop["cpu_s"] = loop.get("cpu_s", 0.0) + time.process_time() - c
            loop["wall_s"] = loop.get("wall_s", 0.0) + time.perf_counter() - w

    runner.progress = timed_loop  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: spinning threads inflate CPU time on a "
                        "shared host; 0 keeps torch's default)")
    parser.add_argument("--json", action="store_true", help="also print JSON lines")
    args = parser.parse_args()
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    timers, loop = _Timers(), {}  # type: ignore[var-annotated]
    _instrument(timers, loop)
    ref = reference_cpu(seed=0)
    prov = provenance({"seed": args.seed, "repeats": args.repeats, "threads": args.threads})
    print(f"commit {prov['commit']}{' (dirty)' if prov['dirty'] else ''}  "
          f"graphleaks {prov['graphleaks']}  command: {prov['command']}")
    print(f"settings: {json.dumps(prov['settings'], sort_keys=True)}")
    print(f"reference {ref['reference']}: CPU {ref['reference_cpu_s']:.2f}s "
          f"wall {ref['reference_wall_s']:.2f}s (= 1 unit)")
    print(f"imports (start-up included): CPU {_IMPORT_CPU:.2f}s "
          f"({in_units(_IMPORT_CPU, ref)} u)  wall {_IMPORT_WALL:.2f}s")
    for r in range(args.repeats):
        timers.cpu.clear()
        loop.clear()
        marks = [("start", time.process_time(), time.perf_counter())]
        graph = load_dataset("cora")
        marks.append(("load", time.process_time(), time.perf_counter()))
        target = train_target(graph, seed=args.seed, dataset={"name": "cora"})
        marks.append(("train", time.process_time(), time.perf_counter()))
        report = run_audit(target, seed=args.seed)
        marks.append(("audit", time.process_time(), time.perf_counter()))
        with tempfile.TemporaryDirectory() as d:
            write_report(report, d, html=True)  # as `graphleaks audit` writes it
        marks.append(("write", time.process_time(), time.perf_counter()))
        steps = {b[0]: (b[1] - a[1], b[2] - a[2])
                 for a, b in zip(marks[:-1], marks[1:], strict=True)}
        total_cpu = sum(v[0] for v in steps.values())
        total_wall = sum(v[1] for v in steps.values())
        parts = "  ".join(f"{k} {v[0]:.2f}s/{in_units(v[0], ref)}u (wall {v[1]:.2f}s)"
                          for k, v in steps.items())
        print(f"run {r}: {parts}")
        print(f"run {r}: total CPU {total_cpu:.2f}s = {in_units(total_cpu, ref)} u  "
              f"wall {total_wall:.2f}s  (with imports: CPU "
              f"{total_cpu + _IMPORT_CPU:.2f}s = {in_units(total_cpu + _IMPORT_CPU, ref)} u)")
        lc = loop.get("cpu_s", 0.0)
        shares = {k: timers.cpu.get(k, 0.0) for k in ("metrics", "slices", "tables")}
        ms = shares["metrics"] + shares["slices"]
        print(f"run {r}: attack loop CPU {lc:.2f}s = {in_units(lc, ref)} u "
              f"(wall {loop.get('wall_s', 0.0):.2f}s); metrics {shares['metrics']:.2f}s, "
              f"slices {shares['slices']:.2f}s, candidate tables {shares['tables']:.2f}s; "
              f"metrics+slices {100 * ms / lc if lc else float('nan'):.1f} % of the loop")
        if args.json:
            print(json.dumps({**prov, **ref, "run": r, "attacks": len(report.attacks),
                              "import_cpu_s": round(_IMPORT_CPU, 3),
                              "steps": {k: {"cpu_s": round(v[0], 3), "wall_s": round(v[1], 3),
                                            "units": in_units(v[0], ref)}
                                        for k, v in steps.items()},
                              "total_cpu_s": round(total_cpu, 3),
                              "total_units": in_units(total_cpu, ref),
                              "loop_cpu_s": round(lc, 3),
                              "in_loop_cpu_s": {k: round(v, 3) for k, v in shares.items()}}))


if __name__ == "__main__":
    main()
