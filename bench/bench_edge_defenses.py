"""Time the edge defenses: Eclipse on Amazon Computers (< 60 s, peak RSS < 2 GB on 2 cores).

Each case is ``Defense.fit`` end to end (SVD / perturbation, top-T selection, GCN training,
utility) on a transductive split; loading the dataset is excluded from the timing. Peak RSS
is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` after the run (the process maximum).
``heterorr-edgerr`` times HeteroRR on Cora (FeatureRR + EdgeRR with the default 200 000
MCMC proposals, target < 2 min); ``release`` is the EdgeRR part alone.

Usage: ``python bench/bench_edge_defenses.py [--data-root DIR] [--only NAME] [--epochs N]``.
Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.audit.runner import train_target  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.data.splits import SplitConfig  # noqa: E402
from graphleaks.models.gnn import ArchitectureSpec  # noqa: E402

CASES = [  # (name, dataset, defense, params, target seconds)
    ("eclipse", "amazon-computers", "eclipse", {"epsilon": 1.0}, 60.0),
    ("eclipse_strict", "amazon-computers", "eclipse_strict", {"epsilon": 1.0}, 60.0),
    ("lapgraph", "amazon-computers", "lapgraph", {"epsilon": 1.0}, 60.0),
    ("edgerand-eps8", "cora", "edgerand", {"epsilon": 8.0}, 60.0),
    ("heterorr-edgerr", "cora", "heterorr", {"epsilon": 1.0, "epsilon_e": 1.0}, 120.0),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--only", default=None)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    spec = ArchitectureSpec(epochs=args.epochs)
    split = SplitConfig(kind="transductive")
    for name, ds, defense, params, limit in CASES:
        if args.only and args.only != name:
            continue
        g = load_dataset(ds, data_root=args.data_root)
        t0 = time.perf_counter()
        t = train_target(g, defense=defense, defense_params=params, spec=spec, split=split,
                         seed=0)
        dt = time.perf_counter() - t0
        rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"{name:16s} {ds:17s} n={g.num_nodes:6d} {dt:7.1f} s (target < {limit:.0f} s)"
              f"  peak RSS {rss_gb:.2f} GB  test acc {t.utility.get('test_accuracy', 0):.3f}"
              f"  release {t.training.get('release_seconds', float('nan')):.1f} s"
              f"  epochs {t.training.get('epochs_run')}"
              f"  released {t.training.get('released_undirected_edges')}", flush=True)


if __name__ == "__main__":
    main()
