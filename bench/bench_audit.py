"""Wall time of the default audit on the bundled Cora (load, train, confidence attack, report).

Usage: python bench/bench_audit.py [--repeats 3]
Prints figures only; the issue's aim is under 30 s on 2 cores.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from graphleaks.audit import run_audit, train_target, write_report
from graphleaks.data import load_dataset


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    totals = []
    for r in range(args.repeats):
        t0 = time.perf_counter()
        graph = load_dataset("cora")
        t1 = time.perf_counter()
        target = train_target(graph, seed=args.seed, dataset={"name": "cora"})
        t2 = time.perf_counter()
        report = run_audit(target, seed=args.seed)
        t3 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            write_report(report, d)
        t4 = time.perf_counter()
        totals.append(t4 - t0)
        b = report.attacks[0].metrics.binary
        auc = float("nan") if b is None else b.auc.value
        print(f"run {r}: load {t1 - t0:.2f}s  train {t2 - t1:.2f}s "
              f"(epochs {target.training['epochs_run']})  audit {t3 - t2:.2f}s  "
              f"write {t4 - t3:.2f}s  total {t4 - t0:.2f}s  confidence AUC {auc:.3f}")
    best = min(totals)
    print(f"default Cora audit: best {best:.2f}s of {args.repeats}; target 30 s; "
          f"ratio to target {best / 30:.2f}")


if __name__ == "__main__":
    main()
