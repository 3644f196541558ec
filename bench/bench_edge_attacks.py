"""Speed and memory of the edge attacks (issue 4 targets, 2 CPU cores).

Targets: link stealing Attack-0 on Cora < 5 s; LinkTeller on 500 sampled Cora nodes < 30 s;
graph reconstruction on Cora < 60 s; LinkTeller and link stealing on Amazon Computers
< 2 GB peak RSS (run with ``--amazon``; needs the data root).

Usage::

    python bench/bench_edge_attacks.py [--data-root ../shared/datasets] [--amazon]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import torch

from graphleaks.attacks.graph_reconstruction import GraphReconstruction
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.link_stealing import LinkStealingAttack
from graphleaks.attacks.linkteller import LinkTeller
from graphleaks.audit.runner import train_target
from graphleaks.data import SplitConfig, load_dataset
from graphleaks.metrics.binary import auc
from graphleaks.models.gnn import ArchitectureSpec

REPO = Path(__file__).resolve().parents[1]


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(label: str, attack, target) -> None:  # noqa: ANN001
    """Run one attack (challenge included) and print its wall time and AUC."""
    start = time.perf_counter()
    r = run_attack(attack, target, seed=0)
    wall = time.perf_counter() - start
    print(f"{label:<44} wall {wall:7.2f} s  scoring {r.runtime_s:7.2f} s  "
          f"AUC {auc(r.scores, r.labels):.4f}  pairs {len(r.scores)}  "
          f"peak RSS {peak_rss_mb():7.0f} MiB", flush=True)


def main() -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-root", default=str(REPO.parent / "shared" / "datasets"))
    p.add_argument("--amazon", action="store_true", help="also run the Amazon memory check")
    p.add_argument("--amazon-nodes", type=int, default=500)
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (1 avoids spin-wait collapse on busy 2-core hosts)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    spec = ArchitectureSpec(hidden=(64,), epochs=200, patience=50)
    split = SplitConfig(kind="transductive")
    g = load_dataset("cora")
    start = time.perf_counter()
    t = train_target(g, seed=0, spec=spec, split=split)
    print(f"train Cora GCN: {time.perf_counter() - start:.1f} s", flush=True)
    timed("link_stealing attack 0 (Cora)", LinkStealingAttack(), t)
    timed("linkteller 500 nodes (Cora)", LinkTeller(n_nodes=500), t)
    timed("graph_reconstruction embeddings (Cora)", GraphReconstruction(), t)
    timed("graph_reconstruction gae_partial (Cora)",
          GraphReconstruction(mode="gae_partial", known_fraction=0.4, val_fraction=0.25), t)
    if args.amazon:
        root = Path(args.data_root)
        if not root.is_dir():
            print(f"no data root at {root}; skipping Amazon", file=sys.stderr)
            return
        ga = load_dataset("amazon-computers", data_root=root)
        start = time.perf_counter()
        ta = train_target(ga, seed=0, spec=spec, split=split)
        print(f"train Amazon Computers GCN: {time.perf_counter() - start:.1f} s  "
              f"peak RSS {peak_rss_mb():.0f} MiB", flush=True)
        timed("link_stealing attack 0 (Amazon Computers)", LinkStealingAttack(), ta)
        timed(f"linkteller {args.amazon_nodes} nodes (Amazon Computers)",
              LinkTeller(n_nodes=args.amazon_nodes), ta)


if __name__ == "__main__":
    main()
