"""CPU and wall time of the default audit on the bundled Cora, end to end and step by step.

The job measured is the README's main one, ``graphleaks audit --out DIR`` (bundled Cora, full
default audit, seed 0), in two ways:

* **end to end**: the command run ``--repeats`` times in fresh interpreters
  (``python -m graphleaks audit --out TMP --quiet``); the figure is the child's process CPU
  (user + system, from ``getrusage(RUSAGE_CHILDREN)``, which other jobs on a shared host
  inflate far less than wall time), median and min, beside the wall time. Issue 29's aim:
  under 12 CPU-s.
* **split**: the same command run once more inside this process (``graphleaks.cli.main``),
  with its steps timed: start-up (interpreter and ``graphleaks.cli``), the imports of the
  libraries the audit uses (done up front here so that the steps below measure work, not
  imports), target training, each attack, metrics (``evaluate_result``), per-node slices,
  candidate tables, the canary audit, report writing (JSON, Markdown, HTML, scores.csv) and,
  inside it, figure rendering. Metrics + slices as a share of the attack loop is issue 29's
  second aim (under 20 %). The split is not the headline: its imports come before the
  command, so its collections are cheaper, and it has no interpreter shutdown.

Every figure is also given in *reference units*: the CPU of a fixed reference workload (100
epochs of a seeded Cora GCN, ``bench/_reference.py``) measured in the same process, so the
figures compare across machines and loads. ``--api`` times the Python API path instead
(``load_dataset``, ``train_target``, ``run_audit``, ``write_report``), as before.

Usage: OMP_NUM_THREADS=1 nice -n 19 python bench/bench_audit.py [--repeats 3] [--seed 0]
       [--threads 1] [--json] [--api]
Prints figures only (and, with ``--json``, one JSON line per run with the provenance:
commit, dirty flag, command, settings).
"""

from __future__ import annotations

import time

_CPU_AT_START = time.process_time()  # interpreter start-up before this module ran
_WALL_AT_START = time.perf_counter()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _reference import in_units, provenance, reference_cpu  # noqa: E402

# the command line's start-up: what `graphleaks audit` imports before it parses its options
import graphleaks.cli  # noqa: E402, F401

_CHECKOUT = Path(graphleaks.cli.__file__).resolve().parents[2]
_IMPORT_CPU = time.process_time()
_IMPORT_WALL = time.perf_counter() - _WALL_AT_START

#: What the audit imports on the way (torch and PyG with the runner, scikit-learn for the
#: attack models and the utility, gensim for DeepWalk, SciPy's intervals, matplotlib for
#: the HTML figures). Imported up front in the split so that each step measures work.
LIBRARY_IMPORTS = ("graphleaks.audit.runner", "graphleaks.audit.suite", "graphleaks.bundles",
                   "graphleaks.plugins", "sklearn.ensemble", "sklearn.neural_network",
                   "sklearn.linear_model", "sklearn.svm", "sklearn.multiclass",
                   "sklearn.metrics", "sklearn.pipeline", "sklearn.preprocessing",
                   "gensim.models", "scipy.stats", "scipy.special", "matplotlib.pyplot")
CLI_ARGS = ("audit", "--quiet")

class _Timers:
    """Process CPU spent inside wrapped functions, by group (outermost call only)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self._depth = 0

    def wrap(self, module: Any, attr: str, group: str | Callable[..., str]) -> None:
        """Time ``module.attr``; ``group`` may name the group from the call's arguments."""
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
                name = group(*args, **kw) if callable(group) else group
                self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - c

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


def _instrument_cli(timers: _Timers, figures: _Timers) -> None:
    """Time the command's steps: training, each attack, the canary audit, the report files."""
    import graphleaks.audit.runner as runner
    import graphleaks.cli.audit as cli_audit
    import graphleaks.report._figures as figs

    timers.wrap(runner, "train_target", "train")
    timers.wrap(runner, "scored_or_skipped", lambda attack, *a, **k: f"attack {attack.name}")
    timers.wrap(runner, "default_canary_audits", "canary audit")
    timers.wrap(cli_audit, "write_report", "write")
    figures.wrap(figs, "png", "figures")


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def end_to_end(seed: int, repeats: int) -> list[tuple[float, float]]:
    """(CPU s, wall s) of ``python -m graphleaks audit``, once per repeat, fresh processes."""
    out = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            c, w = _child_cpu(), time.perf_counter()
            # run from the checkout whose graphleaks this bench imported: `python -m`
            # imports the working directory's package first
            proc = subprocess.run([sys.executable, "-m", "graphleaks", *CLI_ARGS, "--out",
                                   str(Path(d) / "report"), "--seed", str(seed)],
                                  capture_output=True, text=True, cwd=_CHECKOUT)
            out.append((_child_cpu() - c, time.perf_counter() - w))
        if proc.returncode not in (0, 3):
            raise SystemExit(f"graphleaks audit failed ({proc.returncode}): "
                             f"{proc.stderr.strip()[-300:]}")
    return out


@contextlib.contextmanager
def _argv(args: list[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = args
    try:
        yield
    finally:
        sys.argv = saved


def cli_split(seed: int, threads: int) -> dict[str, Any]:
    """One ``graphleaks audit`` in this process, step by step (see the module docstring).

    Run before anything else in this process imports torch, so the library imports are
    measured whole.
    """
    import importlib

    c0, w0 = time.process_time(), time.perf_counter()
    for name in LIBRARY_IMPORTS:
        importlib.import_module(name)
    from graphleaks.report._figures import pyplot

    pyplot()  # the Agg backend, as the report's first figure would choose it
    if threads > 0:
        import torch

        torch.set_num_threads(threads)
    lib_cpu, lib_wall = time.process_time() - c0, time.perf_counter() - w0
    timers, figures, loop = _Timers(), _Timers(), {}  # type: ignore[var-annotated]
    _instrument(timers, loop)
    _instrument_cli(timers, figures)
    from graphleaks.cli import main as cli_main

    with tempfile.TemporaryDirectory() as d, _argv(["graphleaks", *CLI_ARGS, "--out",
                                                    str(Path(d) / "report"), "--seed",
                                                    str(seed)]):
        c0, w0 = time.process_time(), time.perf_counter()
        with contextlib.suppress(SystemExit):
            cli_main()
        run_cpu, run_wall = time.process_time() - c0, time.perf_counter() - w0
    total = _IMPORT_CPU + lib_cpu + run_cpu
    steps: dict[str, float] = {"start-up (interpreter, graphleaks.cli)": _IMPORT_CPU,
                               "library imports (torch, PyG, sklearn, gensim, scipy, mpl)":
                               lib_cpu}
    steps["train (target, utility)"] = timers.cpu.pop("train", 0.0)
    attacks = {k: v for k, v in timers.cpu.items() if k.startswith("attack ")}
    steps.update(attacks)
    ms = timers.cpu.get("metrics", 0.0) + timers.cpu.get("slices", 0.0)
    steps["metrics (evaluate_result)"] = timers.cpu.get("metrics", 0.0)
    steps["slices (slice_metrics)"] = timers.cpu.get("slices", 0.0)
    steps["candidate tables"] = timers.cpu.get("tables", 0.0)
    lc = loop.get("cpu_s", 0.0)
    steps["rest of the attack loop (baselines, records)"] = (
        lc - sum(attacks.values()) - ms - timers.cpu.get("tables", 0.0))
    steps["canary audit"] = timers.cpu.get("canary audit", 0.0)
    steps["write report (JSON, MD, HTML, CSV)"] = timers.cpu.get("write", 0.0)
    steps["  of which figures"] = figures.cpu.get("figures", 0.0)
    steps["other (option checks, load, summary)"] = total - sum(
        v for k, v in steps.items() if not k.startswith("  "))
    return {"total_cpu_s": total, "total_wall_s": _IMPORT_WALL + lib_wall + run_wall,
            "steps": steps, "loop_cpu_s": lc, "loop_wall_s": loop.get("wall_s", 0.0),
            "metrics_slices_cpu_s": ms,
            "metrics_slices_share": 100 * ms / lc if lc else float("nan")}


def _print_split(split: dict[str, Any], ref: dict[str, float], prov: dict[str, Any],
                 as_json: bool) -> None:
    total = split["total_cpu_s"]
    print(f"split (one run in this process): total CPU {total:.2f}s = {in_units(total, ref)} u "
          f"(wall {split['total_wall_s']:.2f}s)")
    for k, v in split["steps"].items():
        print(f"  {k:58s} CPU {v:6.2f}s  {in_units(v, ref)} u")
    lc, ms, share = (split["loop_cpu_s"], split["metrics_slices_cpu_s"],
                     split["metrics_slices_share"])
    print(f"attack loop CPU {lc:.2f}s = {in_units(lc, ref)} u "
          f"(wall {split['loop_wall_s']:.2f}s); metrics+slices {ms:.2f}s = "
          f"{share:.1f} % of the loop")
    if as_json:
        print(json.dumps({**prov, **ref, "mode": "cli-split", "total_cpu_s": round(total, 3),
                          "steps_cpu_s": {k.strip(): round(v, 3)
                                          for k, v in split["steps"].items()},
                          "loop_cpu_s": round(lc, 3), "metrics_slices_share": round(share, 2)}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: spinning threads inflate CPU time on a "
                        "shared host; 0 keeps torch's default)")
    parser.add_argument("--json", action="store_true", help="also print JSON lines")
    parser.add_argument("--api", action="store_true",
                        help="time the Python API path (run_audit) instead of the command")
    args = parser.parse_args()
    if args.threads > 0:  # before torch is imported: this process and the command's children
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    load_before = os.getloadavg()[0]
    runs, split = [], None
    if not args.api:  # the command first, then its split, before the reference imports torch
        runs = end_to_end(args.seed, args.repeats)
        split = cli_split(args.seed, args.threads)
    elif args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    ref = reference_cpu(seed=0)
    prov = provenance({"seed": args.seed, "repeats": args.repeats, "threads": args.threads,
                       "mode": "api" if args.api else "cli"})
    print(f"commit {prov['commit']}{' (dirty)' if prov['dirty'] else ''}  "
          f"graphleaks {prov['graphleaks']}  command: {prov['command']}")
    print(f"settings: {json.dumps(prov['settings'], sort_keys=True)}  load average "
          f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after (wall inflates with it)")
    print(f"reference {ref['reference']}: CPU {ref['reference_cpu_s']:.2f}s "
          f"wall {ref['reference_wall_s']:.2f}s (= 1 unit)")
    if args.api:
        _api_runs(args, ref, prov)
        return
    cpus = [c for c, _ in runs]
    med = statistics.median(cpus)
    print(f"end to end: graphleaks {' '.join(CLI_ARGS)} --out DIR --seed {args.seed}, "
          f"{args.repeats} fresh processes: CPU median {med:.2f}s = {in_units(med, ref)} u, "
          f"min {min(cpus):.2f}s; wall median {statistics.median(w for _, w in runs):.2f}s; "
          f"each CPU/wall: " + ", ".join(f"{c:.2f}/{w:.2f}" for c, w in runs))
    if args.json:
        print(json.dumps({**prov, **ref, "mode": "cli-end-to-end",
                          "cpu_s": [round(c, 3) for c in cpus], "median_cpu_s": round(med, 3),
                          "median_units": in_units(med, ref),
                          "wall_s": [round(w, 3) for _, w in runs]}))
    assert split is not None
    _print_split(split, ref, prov, args.json)


def _api_runs(args: argparse.Namespace, ref: dict[str, float], prov: dict[str, Any]) -> None:
    """The Python API path, step by step (imports of the API measured before the first run)."""
    from graphleaks.audit import run_audit, train_target, write_report
    from graphleaks.data import load_dataset

    c0 = time.process_time()
    import graphleaks.audit.runner  # noqa: F401 - its imports, before the timed steps

    api_import_cpu = _IMPORT_CPU + time.process_time() - c0
    timers, loop = _Timers(), {}  # type: ignore[var-annotated]
    _instrument(timers, loop)
    print(f"imports (start-up included): CPU {api_import_cpu:.2f}s "
          f"({in_units(api_import_cpu, ref)} u)")
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
              f"{total_cpu + api_import_cpu:.2f}s = {in_units(total_cpu + api_import_cpu, ref)} u)")
        lc = loop.get("cpu_s", 0.0)
        shares = {k: timers.cpu.get(k, 0.0) for k in ("metrics", "slices", "tables")}
        ms = shares["metrics"] + shares["slices"]
        print(f"run {r}: attack loop CPU {lc:.2f}s = {in_units(lc, ref)} u "
              f"(wall {loop.get('wall_s', 0.0):.2f}s); metrics {shares['metrics']:.2f}s, "
              f"slices {shares['slices']:.2f}s, candidate tables {shares['tables']:.2f}s; "
              f"metrics+slices {100 * ms / lc if lc else float('nan'):.1f} % of the loop")
        if args.json:
            print(json.dumps({**prov, **ref, "run": r, "attacks": len(report.attacks),
                              "import_cpu_s": round(api_import_cpu, 3),
                              "steps": {k: {"cpu_s": round(v[0], 3), "wall_s": round(v[1], 3),
                                            "units": in_units(v[0], ref)}
                                        for k, v in steps.items()},
                              "total_cpu_s": round(total_cpu, 3),
                              "total_units": in_units(total_cpu, ref),
                              "loop_cpu_s": round(lc, 3),
                              "in_loop_cpu_s": {k: round(v, 3) for k, v in shares.items()}}))


if __name__ == "__main__":
    main()
