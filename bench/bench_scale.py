"""Scale: the default audit, every attack and every defense on seeded CSBM graphs.

For each size (default 10k, 100k and 1M nodes; average degree 10, 4 classes, 32 features)
and each step, a fresh child process generates the graph, trains the target and runs the
step, so peak RSS belongs to that step alone. Steps:

* ``audit``: the full default audit (train, the default attacks, metrics, report written);
* ``full``: one audit with every registered attack;
* ``attack:NAME``: train a plain GCN, then that one attack with its metrics;
* ``defense:NAME``: train the target through that defense.

The ``audit``, ``full`` and ``attack:`` steps also report ``per_attack``: for each attack
in the order it ran, the process CPU seconds, wall seconds and peak RSS (MiB, monotone) of
its whole turn in the audit loop (challenge, scoring, metrics, slices), so a total can be
read attack by attack; and ``skipped`` with each skipped attack's reason. With ``--out``,
training's and each finished attack's figures are also appended at once to
``<out>.progress``, so a run stopped early still shows how far it got.

Each child reports process CPU time (user + system of the whole child, the figure a busy
shared host does not distort), wall time and peak RSS (``ru_maxrss``). After its step the
child also runs the fixed reference workload of ``bench/_reference.py`` (100 epochs of a
seeded Cora GCN) and reports every CPU figure in reference units too (step CPU / reference
CPU), which compare across machines; each row records its provenance (commit and dirty
flag of the graphleaks imported, command line, settings). A step that refuses
a size (a capped n² step) is recorded with its one-line refusal. Exponents of CPU time and
peak RSS against size are fitted by least squares on log-log axes over the sizes that
finished; with only two sizes the "fit" is the slope between them.

``--cpu-budget SECONDS`` and ``--rss-limit-mib MIB`` stop a child cleanly when its process
CPU time or its resident memory (polled every half second, so a single large allocation can
overshoot it) passes the limit: its row then has status ``stopped: ...`` naming the phase
that was running (graph, training or the attack) and the CPU and RSS reached, with the
figures of every phase that finished, and no exponent uses it. ``--avg-degree`` sets the
CSBM's degree (default 10; ogbn-products' size is ``--sizes 2450000 --avg-degree 25``).

``--task link`` (node remains the default) runs the link task instead, on the same seeded
CSBM graphs (about 10 edges per node): step ``link_audit`` draws the default edge split, trains
graphleaks' default link predictor through the ``none`` link defense (what ``graphleaks train
--task link`` does) and runs the default edge audit of the trained target (the ``audit
--bundle`` path: :func:`graphleaks.audit.task_bundles.audit_trained_link_target`, standard
suite), report written. Its ``per_attack`` covers each edge attack's turn (reference link
predictors are trained in the first attack that needs them); training's figures also give
the epochs run, so a cost per epoch can be read and projected. ``--epochs`` caps the link
predictor's epochs only when given (default: the spec's own). ``--param link.FIELD=VALUE``
sets a field of the link predictor spec (the target's, so also its references'); the
scalable mode is ``--param link.propagation_mode=precomputed --param link.edge_dropout=0
--param link.input_dropout=0`` (:attr:`LinkPredictorSpec.propagation_mode`). The row's
``spec`` is the spec that ran.

Usage::

    nice python bench/bench_scale.py --sizes 10000 100000 --out /tmp/scale.json
    nice python bench/bench_scale.py --sizes 1000000 --steps audit full --out /tmp/1m.json
    python bench/bench_scale.py --report /tmp/scale.json /tmp/1m.json   # table + exponents
    nice python bench/bench_scale.py --task link --sizes 100000 300000 --out /tmp/link.json
    nice python bench/bench_scale.py --task link --sizes 1000000 --param \
        link.propagation_mode=precomputed --param link.edge_dropout=0 \
        --param link.input_dropout=0 --out /tmp/link1m.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _reference import in_units, provenance, reference_cpu

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)


def all_steps() -> list[str]:
    """Every step name: the default audit, the full audit, each attack and each defense."""
    from graphleaks.attacks import registry as attacks
    from graphleaks.defenses import registry as defenses

    return (["audit", "full"] + [f"attack:{a}" for a in attacks.names()]
            + [f"defense:{d}" for d in defenses.names() if d != "none"])


#: What the child is doing now, and its row so far: the budget guard reports them.
_NOW: dict[str, Any] = {"phase": "imports", "out": None, "w0": time.perf_counter()}


def _rss_now_mib() -> float:
    """Resident memory of this process now (MiB), from ``/proc`` (0 where unreadable)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _guard(cpu_budget: float | None, rss_limit_mib: float | None) -> None:
    """Stop this child cleanly once its CPU time or resident memory passes its limit.

    A daemon thread polls both every half second. On a breach it prints the child's row so
    far with status ``stopped: ...`` naming the running phase and the figures reached,
    appends the same to the progress file, and ends the process (exit 0, so the parent
    reads the row rather than a crash).
    """
    if cpu_budget is None and rss_limit_mib is None:
        return

    def watch() -> None:
        while True:
            time.sleep(0.5)
            cpu, rss = time.process_time(), _rss_now_mib()
            if cpu_budget is not None and cpu > cpu_budget:
                why = f"CPU budget of {cpu_budget:g} s reached"
            elif rss_limit_mib is not None and rss > rss_limit_mib:
                why = f"RSS limit of {rss_limit_mib:g} MiB reached"
            else:
                continue
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
            phase = str(_NOW["phase"])
            status = (f"stopped: {why} during {phase} (CPU {cpu:.1f} s, RSS {rss:.0f} MiB, "
                      f"peak RSS {peak:.0f} MiB)")
            row: dict[str, Any] = {}
            for _ in range(5):  # the main thread may be adding a figure just now
                try:
                    row = json.loads(json.dumps(_NOW["out"] or {}))
                    break
                except RuntimeError:
                    time.sleep(0.01)
            row.update({"status": status, "stopped_in": phase, "cpu_s": cpu,
                        "wall_s": time.perf_counter() - _NOW["w0"], "peak_rss_mib": peak,
                        "rss_at_stop_mib": rss,
                        "provenance": provenance({"size": row.get("size"), "step": row.get("step"),
                                                  "cpu_budget": cpu_budget,
                                                  "rss_limit_mib": rss_limit_mib})})
            _progress_line({"stopped_in": phase, "status": status})
            print(json.dumps(row), flush=True)
            os._exit(0)

    threading.Thread(target=watch, daemon=True, name="bench-guard").start()


def _progress_line(row: dict[str, object]) -> None:
    """Append ``row`` to the progress file (``--out`` + ``.progress``) as soon as it is known.

    The child's JSON line comes only at its end; a run stopped early (a timeout, a deadline)
    still leaves training's and every finished attack's figures here.
    """
    path = os.environ.get("BENCH_SCALE_PROGRESS")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "time": time.time(), **row}) + "\n")


def _time_each_attack(per_attack: dict[str, dict[str, float]]) -> None:
    """Record each attack's CPU, wall and peak RSS in ``per_attack`` as the audit runs it.

    The audit loop iterates its attacks through ``progress``; wrapping it here (in the
    benchmark's child only) times each attack's whole turn: from the loop handing it out to
    the loop asking for the next one.
    """
    import graphleaks.audit.runner as runner

    _wrap_progress(runner, per_attack)


def _time_each_edge_attack(per_attack: dict[str, dict[str, float]]) -> None:
    """:func:`_time_each_attack` for the edge audit's loop (its own ``progress``)."""
    import graphleaks.audit.link_audit as link_audit

    _wrap_progress(link_audit, per_attack)


def _wrap_progress(module: Any, per_attack: dict[str, dict[str, float]]) -> None:
    """Replace ``module.progress`` by a wrapper timing each item's whole turn."""
    plain = module.progress

    def timed(items: Any, **kw: Any) -> Any:
        for item in plain(items, **kw):
            c, w = time.process_time(), time.perf_counter()
            name = str(getattr(item, "name", item))
            _NOW["phase"] = f"attack {name}"
            yield item
            per_attack[name] = {
                "cpu_s": round(time.process_time() - c, 3),
                "wall_s": round(time.perf_counter() - w, 3),
                "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
            _progress_line({"attack": name, **per_attack[name]})

    module.progress = timed


def _finish_row(out: dict[str, Any], c0: float, w0: float,
                settings: dict[str, Any]) -> dict[str, Any]:
    """A child's row completed: its CPU, wall and peak RSS, the same in reference units, and
    its provenance with ``settings``."""
    out["cpu_s"] = time.process_time() - c0
    out["wall_s"] = time.perf_counter() - w0
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    # figures that travel: the reference workload in this same process, after the step (so
    # the step's peak RSS is its own), and every CPU figure again in reference units
    _NOW["phase"] = "the reference workload"
    ref = reference_cpu(seed=0)
    out.update(ref)
    out["units"] = in_units(float(out["cpu_s"]), ref)
    if "train_cpu_s" in out:
        out["train_units"] = in_units(float(out["train_cpu_s"]), ref)
    for f in per_attack_of(out).values():
        f["units"] = in_units(f["cpu_s"], ref)
    out["provenance"] = provenance(settings)
    return out


def link_spec_overrides(items: list[str] | None) -> dict[str, Any]:
    """``--param link.FIELD=VALUE`` items as typed :class:`LinkPredictorSpec` overrides."""
    from graphleaks._params import Owner, parse_param_items, resolve_params
    from graphleaks.models.link_predictor import LinkPredictorSpec

    params = resolve_params(parse_param_items(items),
                            [Owner("link", "link predictor", LinkPredictorSpec)], text=True,
                            source="--param ")
    return dict(params.get("link", {}))


def link_child(size: int, step: str, n_bootstrap: int | None,
               epochs: int | None, params: list[str] | None = None,
               avg_degree: float = 10) -> dict[str, object]:
    """The link task's ``link_audit`` step in this process (see the module docstring)."""
    import dataclasses

    # before torch allocates, as the CLI does (graphleaks._process)
    importlib.import_module("graphleaks._process").prefer_huge_pages()

    import torch

    from graphleaks.audit import write_report
    from graphleaks.audit.task_bundles import audit_trained_link_target
    from graphleaks.data.edge_splits import EdgeMembershipSplit
    from graphleaks.data.synthetic import csbm
    from graphleaks.defenses.link import link_registry
    from graphleaks.errors import GraphleaksError

    torch.set_num_threads(1)
    c0, w0 = time.process_time(), time.perf_counter()
    out: dict[str, object] = {"task": "link", "size": size, "step": step, "base_rss_mib":
                              resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    per_attack: dict[str, dict[str, float]] = {}
    _NOW.update(out=out, phase="graph", w0=w0)
    try:
        if step != "link_audit":
            raise SystemExit(f"unknown link step {step!r}; the link task has: link_audit")
        g = csbm(size, num_classes=4, num_features=32, avg_degree=avg_degree, seed=0)
        out["edges"] = int(g.edge_index.size(1))
        _NOW["phase"] = "training"
        split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=0)
        out["split_cpu_s"] = time.process_time() - c0
        defense = link_registry.get("none")()
        spec = dataclasses.replace(defense.default_spec(), **link_spec_overrides(params))
        if epochs is not None:
            spec = dataclasses.replace(spec, epochs=epochs)
        out["spec"] = spec.to_dict()  # the spec that ran (the report's target card too)
        target = defense.fit(g, split, spec=spec, seed=0, dataset={"name": f"csbm-{size}"})
        out["train_cpu_s"] = time.process_time() - c0
        out["train_wall_s"] = time.perf_counter() - w0
        out["train_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        out["training"] = dict(target.training)
        out["utility"] = dict(target.utility)
        out["per_attack"] = per_attack
        _progress_line({"size": size, "step": step, "train_cpu_s": out["train_cpu_s"],
                        "train_wall_s": out["train_wall_s"],
                        "train_peak_rss_mib": out["train_peak_rss_mib"],
                        "training": out["training"]})
        _time_each_edge_attack(per_attack)
        run = audit_trained_link_target(target, seed=0, n_bootstrap=n_bootstrap)
        _NOW["phase"] = "report writing"
        with tempfile.TemporaryDirectory() as d:  # the CLI's files: json, md, html, scores
            write_report(run.report, Path(d) / "report", html=True, scores=run.tables)
        out["auc"] = {a.attack: (None if a.metrics.binary is None
                                 else a.metrics.binary.auc.value) for a in run.report.attacks}
        out["skipped"] = run.report.config.get("skipped_attacks", {})
        out["status"] = "ok"
    except GraphleaksError as exc:
        out["status"] = "refused"
        out["message"] = str(exc)
    return _finish_row(out, c0, w0, {"task": "link", "size": size, "step": step,
                                      "n_bootstrap": n_bootstrap, "epochs": epochs,
                                      "params": list(params or []), "avg_degree": avg_degree})


def child(size: int, step: str, n_bootstrap: int, epochs: int,
          avg_degree: float = 10) -> dict[str, object]:
    """Run one step in this process and return its figures (called in a fresh process)."""
    # before torch allocates, as the CLI does (graphleaks._process)
    importlib.import_module("graphleaks._process").prefer_huge_pages()
    import torch

    from graphleaks.attacks import registry as attacks
    from graphleaks.audit import run_audit, train_target, write_report
    from graphleaks.data.synthetic import csbm
    from graphleaks.errors import GraphleaksError
    from graphleaks.models.gnn import ArchitectureSpec

    torch.set_num_threads(1)
    c0, w0 = time.process_time(), time.perf_counter()
    # RSS of the interpreter and libraries alone: the exponents are also fitted to the
    # memory above it, which the fixed ~400 MiB of torch would otherwise flatten.
    out: dict[str, object] = {"size": size, "step": step, "base_rss_mib":
                              resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    per_attack: dict[str, dict[str, float]] = {}
    _NOW.update(out=out, phase="graph", w0=w0)
    try:
        g = csbm(size, num_classes=4, num_features=32, avg_degree=avg_degree, seed=0)
        out["edges"] = int(g.edge_index.size(1))
        _NOW["phase"] = "training"
        spec = ArchitectureSpec(epochs=epochs)
        defense = step.split(":", 1)[1] if step.startswith("defense:") else "none"
        names: list[str] = []
        if step == "full":
            names = attacks.names()
        elif step.startswith("attack:"):
            names = [step.split(":", 1)[1]]
        if names:
            for name in names:  # refuse before training, as the CLI does
                attacks.get(name)().check_scale(size, int(g.edge_index.size(1)))
        target = train_target(g, spec=spec, defense=defense, seed=0,
                              dataset={"name": f"csbm-{size}"})
        out["train_cpu_s"] = time.process_time() - c0
        out["train_wall_s"] = time.perf_counter() - w0
        out["train_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        # epochs run and best epoch: a cost per epoch, and whether early stopping ran longer
        out["training"] = dict(target.training)
        out["per_attack"] = per_attack
        _progress_line({"size": size, "step": step, "train_cpu_s": out["train_cpu_s"],
                        "train_wall_s": out["train_wall_s"],
                        "train_peak_rss_mib": out["train_peak_rss_mib"],
                        "training": out["training"]})
        _time_each_attack(per_attack)
        if step == "audit":
            report = run_audit(target, seed=0, n_bootstrap=n_bootstrap)
        elif names:
            report = run_audit(target, names, seed=0, n_bootstrap=n_bootstrap)
        else:
            report = None
        if report is not None:
            _NOW["phase"] = "report writing"
            with tempfile.TemporaryDirectory() as d:
                write_report(report, d)
            out["auc"] = {a.attack: (None if a.metrics.binary is None
                                     else a.metrics.binary.auc.value)
                          for a in report.attacks}
            out["skipped"] = report.config.get("skipped_attacks", {})
            out["notes"] = {a.attack: [n for n in a.notes if n.startswith("node sampler")
                                       or "budget" in n] for a in report.attacks}
        out["status"] = "ok"
    except GraphleaksError as exc:
        out["status"] = "refused"
        out["message"] = str(exc)
    return _finish_row(out, c0, w0, {"size": size, "step": step, "n_bootstrap": n_bootstrap,
                                      "epochs": epochs, "avg_degree": avg_degree})


def per_attack_of(row: dict[str, Any]) -> dict[str, dict[str, float]]:
    """The ``per_attack`` figures of a row (empty when the step ran no attack)."""
    per = row.get("per_attack")
    return per if isinstance(per, dict) else {}


def run_step(size: int, step: str, args: argparse.Namespace) -> dict[str, object]:
    """Run one step in a child process, with the timeout, and parse its JSON line."""
    cmd = [sys.executable, __file__, "--child", str(size), step, "--task", args.task]
    if args.n_bootstrap is not None:
        cmd += ["--n-bootstrap", str(args.n_bootstrap)]
    if args.epochs is not None:
        cmd += ["--epochs", str(args.epochs)]
    for item in args.param or []:
        cmd += ["--param", item]
    for flag, value in (("--cpu-budget", args.cpu_budget), ("--rss-limit-mib", args.rss_limit_mib),
                        ("--avg-degree", args.avg_degree)):
        if value is not None:
            cmd += [flag, str(value)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if args.out:
        env["BENCH_SCALE_PROGRESS"] = f"{args.out}.progress"
    w0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                              env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"size": size, "step": step, "status": f"timeout after {args.timeout} s",
                "wall_s": time.perf_counter() - w0, "provenance": provenance(vars(args))}
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"size": size, "step": step, "status": f"failed (rc {proc.returncode}): {tail}",
                "wall_s": time.perf_counter() - w0,
                "children_maxrss_mib": usage.ru_maxrss / 1024.0,
                "provenance": provenance(vars(args))}
    return json.loads(lines[-1])


def exponent(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(y) against log(x); None with fewer than two points."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else None


def report(rows: list[dict[str, object]]) -> str:
    """A Markdown table of every row and the fitted exponents per step.

    A (size, step) measured more than once keeps its last row (files are read in order).
    """
    rows = list({(int(r["size"]), str(r["step"])): r for r in rows}.values())  # type: ignore[arg-type]
    lines = ["| step | nodes | status | CPU s | CPU ref. units | wall s | peak RSS MiB | commit |",
             "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (str(r["step"]), int(r["size"]))):  # type: ignore[arg-type]
        status = str(r.get("status"))
        if status == "refused":
            status = f"refused: {r.get('message')}"
        cpu, wall, rss = r.get("cpu_s"), r.get("wall_s"), r.get("peak_rss_mib")
        units = r.get("units")
        prov = r.get("provenance") or {}
        commit = (f"{prov.get('commit', '?')}{'+dirty' if prov.get('dirty') else ''}"  # type: ignore[union-attr]
                  if prov else "")
        lines.append(f"| {r['step']} | {int(r['size']):,} | {status} | "  # type: ignore[arg-type]
                     f"{'' if cpu is None else f'{cpu:.1f}'} | "
                     f"{'' if units is None else f'{units:.2f}'} | "
                     f"{'' if wall is None else f'{wall:.1f}'} | "
                     f"{'' if rss is None else f'{rss:.0f}'} | {commit} |")
    per = [r for r in rows if r.get("per_attack")]
    if per:
        lines += ["", "| step | nodes | attack | CPU s | CPU ref. units | wall s | peak RSS MiB |",
                  "|---|---|---|---|---|---|---|"]
        for r in sorted(per, key=lambda r: (str(r["step"]), int(r["size"]))):  # type: ignore[arg-type]
            tu = r.get("train_units")
            lines.append(f"| {r['step']} | {int(r['size']):,} | (training) | "  # type: ignore[arg-type]
                         f"{float(r.get('train_cpu_s', 0.0)):.1f} | "  # type: ignore[arg-type]
                         f"{'' if tu is None else f'{tu:.2f}'} | "
                         f"{float(r.get('train_wall_s', 0.0)):.1f} | "  # type: ignore[arg-type]
                         f"{float(r.get('train_peak_rss_mib', 0.0)):.0f} |")  # type: ignore[arg-type]
            for name, f in r["per_attack"].items():  # type: ignore[attr-defined]
                u = f.get("units")
                lines.append(f"| {r['step']} | {int(r['size']):,} | {name} | "  # type: ignore[arg-type]
                             f"{f['cpu_s']:.1f} | {'' if u is None else f'{u:.2f}'} | "
                             f"{f['wall_s']:.1f} | {f['peak_rss_mib']:.0f} |")
    lines += ["", "| step | CPU exponent | memory exponent | memory-above-imports exponent "
              "| sizes |", "|---|---|---|---|---|"]
    steps = sorted({str(r["step"]) for r in rows})
    for step in steps:
        ok = [r for r in rows if r["step"] == step and r.get("status") == "ok"]
        t = exponent([(float(r["size"]), float(r["cpu_s"])) for r in ok])  # type: ignore[arg-type]
        m = exponent([(float(r["size"]), float(r["peak_rss_mib"])) for r in ok])  # type: ignore[arg-type]
        above = exponent([(float(r["size"]),  # type: ignore[arg-type]
                            float(r["peak_rss_mib"]) - float(r["base_rss_mib"]))  # type: ignore[arg-type]
                           for r in ok if "base_rss_mib" in r])
        sizes = ", ".join(f"{int(r['size']):,}" for r in ok)  # type: ignore[arg-type]
        lines.append(f"| {step} | {'' if t is None else f'{t:.2f}'} | "
                     f"{'' if m is None else f'{m:.2f}'} | "
                     f"{'' if above is None else f'{above:.2f}'} | {sizes} |")
    return "\n".join(lines)


def main() -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    p.add_argument("--steps", nargs="+", default=None, help="default: every step")
    p.add_argument("--task", choices=("node", "link"), default="node",
                   help="node (default) or link: the link task's default audit")
    p.add_argument("--n-bootstrap", type=int, default=None,
                   help="default: 1000 (node); the suite's (link)")
    p.add_argument("--epochs", type=int, default=None,
                   help="default: 200 (node); the link predictor spec's own (link)")
    p.add_argument("--param", action="append", default=None, metavar="link.FIELD=VALUE",
                   help="link task: a LinkPredictorSpec field of the target (and so of its "
                        "references), e.g. link.propagation_mode=precomputed; repeatable")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per step")
    p.add_argument("--cpu-budget", type=float, default=None,
                   help="process CPU seconds per step; past it the step stops, naming its phase")
    p.add_argument("--rss-limit-mib", type=float, default=None,
                   help="resident MiB per step; past it the step stops, naming its phase")
    p.add_argument("--avg-degree", type=float, default=None,
                   help="the CSBM's average degree (default 10)")
    p.add_argument("--out", type=Path, default=None, help="JSON lines, appended as they end")
    p.add_argument("--report", type=Path, nargs="+", default=None,
                   help="only print the table of these JSON-lines files")
    p.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _guard(args.cpu_budget, args.rss_limit_mib)
        degree = 10 if args.avg_degree is None else args.avg_degree
        if args.task == "link":
            print(json.dumps(link_child(int(args.child[0]), args.child[1], args.n_bootstrap,
                                        args.epochs, args.param, degree)), flush=True)
            return
        print(json.dumps(child(int(args.child[0]), args.child[1],
                               1000 if args.n_bootstrap is None else args.n_bootstrap,
                               200 if args.epochs is None else args.epochs, degree)),
              flush=True)
        return
    if args.report:
        rows = [json.loads(ln) for f in args.report for ln in f.read_text().splitlines() if ln]
        print(report(rows))
        return
    steps = args.steps or (["link_audit"] if args.task == "link" else all_steps())
    done: set[tuple[int, str]] = set()
    if args.out and args.out.exists():  # resume: skip what an earlier run finished
        for ln in args.out.read_text().splitlines():
            r = json.loads(ln)
            if r.get("status") in ("ok", "refused"):
                done.add((int(r["size"]), str(r["step"])))
    rows = []
    # Step by step across sizes, so each step's exponent is known as early as possible.
    for step in steps:
        for size in args.sizes:
            if (size, step) in done:
                continue
            row = run_step(size, step, args)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.out:
                with args.out.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
    print(report(rows))


if __name__ == "__main__":
    main()
