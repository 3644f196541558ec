"""Cost of one LinkTeller inference-API query per defense, and the audit's estimate for it.

The audit costs query-heavy attacks before they run (``graphleaks.audit.runner.
fit_query_budgets``): LinkTeller's queries times one query's CPU time, measured on the
target. This bench trains a target per defense on Cora, measures a query as the audit does
(``query_cpu_seconds``) and also times a few real queries, and prints the estimate for each
suite's LinkTeller size beside the suite's budget. LPGNN is the expensive case: it has no
exact local update, so each ``local`` query is a full float64 forward pass (KProp over the
whole graph).

Usage (from the repository root)::

    python bench/bench_query_cost.py [--defenses none,lpgnn] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from graphleaks.attacks.linkteller import LinkTeller  # noqa: E402
from graphleaks.audit.runner import query_cpu_seconds, train_target  # noqa: E402
from graphleaks.audit.suite import SUITES, build_attack  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.models.gnn import ArchitectureSpec  # noqa: E402


def main() -> None:
    """Print, per defense: training time, measured and observed query cost, estimates."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--defenses", default="none,lpgnn")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--queries", type=int, default=3, help="real queries timed per defense")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    graph = load_dataset("cora")
    n = int(graph.num_nodes)
    print(f"cora: {n} nodes; torch threads {args.threads}")
    for defense in args.defenses.split(","):
        c0, w0 = time.process_time(), time.perf_counter()
        target = train_target(graph, spec=ArchitectureSpec(arch="gcn"), defense=defense,
                              seed=0)
        print(f"\n{defense}: training {time.process_time() - c0:.1f} CPU-s "
              f"({time.perf_counter() - w0:.1f} s wall)")
        c0, w0 = time.process_time(), time.perf_counter()
        measured = query_cpu_seconds(target, local=True)
        print(f"  audit's measurement: {measured:.3f} CPU-s per query (the measurement took "
              f"{time.process_time() - c0:.2f} CPU-s, {time.perf_counter() - w0:.2f} s wall)")
        x = target.served_features().float()
        rows = np.arange(min(n, 100))
        target.feature_query_rows(x, rows)  # warm, as LinkTeller's base query does
        c0, w0 = time.process_time(), time.perf_counter()
        for v in range(args.queries):
            target.feature_query_rows(x, rows, scale_node=v, scale=1.0001)
        print(f"  observed: {(time.process_time() - c0) / args.queries:.3f} CPU-s per query "
              f"({(time.perf_counter() - w0) / args.queries:.3f} s wall)")
        for suite in SUITES.values():
            attack = build_attack("linkteller", suite)
            assert isinstance(attack, LinkTeller)
            q = attack.feature_queries(n)
            verdict = "runs" if q * measured <= suite.attack_cpu_s else "over budget"
            print(f"  {suite.name:9s} {q:4d} queries: ~{q * measured:8.1f} CPU-s "
                  f"(budget {suite.attack_cpu_s:.0f}) {verdict}")


if __name__ == "__main__":
    main()
