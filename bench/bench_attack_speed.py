"""Attack speed: chosen attacks' turns in the audit loop, scoring apart from metrics.

For each dataset (default: the bundled Cora and a 100k-node CSBM, average degree 10, 4
classes, 32 features) a fresh child process trains the default target (seed 0) and runs
each chosen attack as a one-attack audit (``run_audit(target, [name], seed=0)``): the
attack's scoring (challenge, references, training, scores) is timed apart from the rest of
its turn (metrics, slices, the candidate table), so a line says which of the two is far
from its floor. Each line gives process CPU seconds (user + system: the figure a busy
shared host does not distort) beside wall seconds, peak and current RSS, the AUC, and a
SHA-256 of the candidates' scores, so two commits' lines show whether the scores changed.

After its attacks the child runs the fixed reference workload of ``bench/_reference.py``
(100 epochs of a seeded Cora GCN) in the same process and reports every CPU figure in
reference units too (CPU / reference CPU), which compare across machines and loads; every
line records its provenance (commit and dirty flag of the graphleaks imported, command,
settings).

Two commits are compared by running this file twice, with ``PYTHONPATH`` pointing at each
checkout (the provenance records which was imported)::

    nice python bench/bench_attack_speed.py --out /tmp/speed.json
    PYTHONPATH=/path/to/main nice python bench/bench_attack_speed.py --out /tmp/speed.json
    python bench/bench_attack_speed.py --report /tmp/speed.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _reference import in_units, provenance, reference_cpu

DEFAULT_DATASETS = ("cora", "csbm:100000")
DEFAULT_ATTACKS = ("graph_reconstruction", "gbase_mia")


def _rss_mib() -> float:
    """Current resident set size (Linux ``/proc``; 0 elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _graph(dataset: str) -> Any:
    from graphleaks.data import load_dataset
    from graphleaks.data.synthetic import csbm

    if dataset.startswith("csbm:"):
        return csbm(int(dataset.split(":", 1)[1]), num_classes=4, num_features=32,
                    avg_degree=10, seed=0)
    return load_dataset(dataset)


def child(dataset: str, attacks: list[str], n_bootstrap: int, epochs: int) -> dict[str, Any]:
    """Train the target on ``dataset`` and time each attack's turn (in a fresh process)."""
    import numpy as np
    import torch

    import graphleaks.audit.runner as runner
    from graphleaks.audit import run_audit, train_target
    from graphleaks.models.gnn import ArchitectureSpec

    torch.set_num_threads(1)
    g = _graph(dataset)
    c0, w0 = time.process_time(), time.perf_counter()
    target = train_target(g, spec=ArchitectureSpec(epochs=epochs), seed=0,
                          dataset={"name": dataset})
    out: dict[str, Any] = {"dataset": dataset, "nodes": int(g.num_nodes),
                           "edges": int(g.edge_index.size(1)),
                           "train_cpu_s": round(time.process_time() - c0, 3),
                           "train_wall_s": round(time.perf_counter() - w0, 3)}
    scoring: dict[str, Any] = {}
    plain = runner.run_attack

    def timed(*args: Any, **kw: Any) -> Any:
        c, w = time.process_time(), time.perf_counter()
        result = plain(*args, **kw)
        scoring.update(cpu=time.process_time() - c, wall=time.perf_counter() - w,
                       sha=hashlib.sha256(np.ascontiguousarray(
                           result.scores, dtype=np.float64).tobytes()).hexdigest()[:16])
        return result

    runner.run_attack = timed  # type: ignore[assignment]
    per: dict[str, dict[str, Any]] = {}
    for name in attacks:
        scoring.clear()
        c, w = time.process_time(), time.perf_counter()
        report = run_audit(target, [name], seed=0, n_bootstrap=n_bootstrap)
        cpu, wall = time.process_time() - c, time.perf_counter() - w
        a = report.attacks[0]
        per[name] = {
            "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "scoring_cpu_s": round(scoring["cpu"], 3),
            "scoring_wall_s": round(scoring["wall"], 3),
            "metrics_cpu_s": round(cpu - scoring["cpu"], 3),
            "auc": None if a.metrics.binary is None else a.metrics.binary.auc.value,
            "scores_sha256": scoring["sha"],
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "rss_mib": round(_rss_mib(), 1)}
        print(json.dumps({"dataset": dataset, "attack": name, **per[name]}), file=sys.stderr,
              flush=True)
    out["per_attack"] = per
    ref = reference_cpu(seed=0)
    out.update(ref)
    out["train_units"] = in_units(out["train_cpu_s"], ref)
    for f in per.values():
        for key in ("cpu_s", "scoring_cpu_s", "metrics_cpu_s"):
            f[key.replace("cpu_s", "units")] = in_units(f[key], ref)
    out["provenance"] = provenance({"dataset": dataset, "attacks": attacks,
                                    "n_bootstrap": n_bootstrap, "epochs": epochs})
    return out


def report(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of every attack line of ``rows``."""
    lines = ["| commit | dataset | attack | CPU s (units) | scoring CPU s (units) | metrics CPU s "
             "| wall s | AUC | scores SHA-256 | peak / now RSS MiB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        prov = r.get("provenance") or {}
        commit = f"{prov.get('commit', '?')}{'+dirty' if prov.get('dirty') else ''}"
        lines.append(f"| {commit} | {r['dataset']} | (training) | {r['train_cpu_s']:.2f} "
                     f"({r.get('train_units')}) | | | {r['train_wall_s']:.1f} | | | |")
        for name, f in r.get("per_attack", {}).items():
            auc = f.get("auc")
            lines.append(
                f"| {commit} | {r['dataset']} | {name} | {f['cpu_s']:.2f} ({f.get('units')}) | "
                f"{f['scoring_cpu_s']:.2f} ({f.get('scoring_units')}) | "
                f"{f['metrics_cpu_s']:.2f} | {f['wall_s']:.1f} | "
                f"{'' if auc is None else f'{auc:.4f}'} | {f['scores_sha256']} | "
                f"{f['peak_rss_mib']:.0f} / {f['rss_mib']:.0f} |")
        lines.append(f"| {commit} | {r['dataset']} | (reference: {r.get('reference')}) | "
                     f"{r.get('reference_cpu_s')} | | | {r.get('reference_wall_s')} | | | |")
    return "\n".join(lines)


def main() -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS),
                   help="registered names, or csbm:NODES")
    p.add_argument("--attacks", nargs="+", default=list(DEFAULT_ATTACKS))
    p.add_argument("--n-bootstrap", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--timeout", type=int, default=7200, help="seconds per dataset")
    p.add_argument("--out", type=Path, default=None, help="JSON lines, appended")
    p.add_argument("--report", type=Path, nargs="+", default=None,
                   help="only print the table of these JSON-lines files")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.attacks, args.n_bootstrap, args.epochs)),
              flush=True)
        return
    if args.report:
        print(report([json.loads(ln) for f in args.report
                      for ln in f.read_text().splitlines() if ln]))
        return
    rows = []
    for dataset in args.datasets:
        cmd = [sys.executable, __file__, "--child", dataset, "--attacks", *args.attacks,
               "--n-bootstrap", str(args.n_bootstrap), "--epochs", str(args.epochs)]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env,
                                  timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            print(f"{dataset}: timeout after {args.timeout} s", file=sys.stderr)
            continue
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            print(f"{dataset}: failed (rc {proc.returncode})", file=sys.stderr)
            continue
        row = json.loads(lines[-1])
        rows.append(row)
        if args.out:
            with args.out.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
    print(report(rows))


if __name__ == "__main__":
    main()
