"""Time GAP-EDP and LPGNN end to end on Cora (targets on 2 CPU cores: < 20 s and < 30 s).

Each run is ``Defense.fit`` (calibration, perturbation, training, utility evaluation) with the
papers' protocols: GAP-EDP at ε = 4, K = 2, 100 + 100 epochs on a 75/10/15 transductive
split; LPGNN at ε_x = 1 (SAGE, K_x = 16, 500 epochs) on a 50/25/25 transductive split.
Loading Cora is excluded from the timing.

Usage: ``python bench/bench_defenses.py [--repeats N] [--threads T] [--only NAME]``.
Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.audit.runner import train_target  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.data.splits import SplitConfig  # noqa: E402

GAP_SPLIT = SplitConfig(kind="transductive", train_frac=0.75, val_frac=0.10, test_frac=0.15)
LPGNN_SPLIT = SplitConfig(kind="transductive", train_frac=0.5, val_frac=0.25, test_frac=0.25)
CASES = [
    ("gap_edp", {"epsilon": 4.0, "hops": 2}, GAP_SPLIT, 20.0),
    ("lpgnn", {"epsilon": 1.0}, LPGNN_SPLIT, 30.0),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0,
                    help="torch intra-op threads (0: torch's default); 1 is faster on a "
                         "loaded machine")
    ap.add_argument("--only", choices=[c[0] for c in CASES], default=None)
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    graph = load_dataset("cora")
    print(f"cora: {graph.num_nodes} nodes, {graph.edge_index.shape[1]} directed edges; "
          f"torch threads={torch.get_num_threads()}")
    for name, params, split, target in CASES:
        if args.only and name != args.only:
            continue
        for r in range(args.repeats):
            t0 = time.perf_counter()
            t = train_target(graph, defense=name, defense_params=params, split=split, seed=r)
            dt = time.perf_counter() - t0
            print(f"{name:8s} seed={r} {dt:6.2f} s (target < {target:.0f} s) "
                  f"eps={t.ledger.epsilon:.3f} test_acc={t.utility['test_accuracy']:.3f}")


if __name__ == "__main__":
    main()
