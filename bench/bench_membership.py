"""Time the membership-inference suite on a Cora target and print TPR at low FPR.

Runs confidence, shadow-model, embedding-clustering and LiRA (>= 8 references) attacks
against one inductive GCN target on Cora (bundled, no data root needed) and prints, per attack,
its wall time, AUC and TPR at 1% and 0.1% FPR (metrics from graphleaks.metrics). The target of
the issue is the whole suite (attacks only, not the target's own training) in under 60 s on
2 cores.

    python bench/bench_membership.py [--seed 0] [--refs 8] [--threads N]
"""

from __future__ import annotations

import argparse
import time

import torch

from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.attacks.embedding_cluster_mia import EmbeddingClusterMIA
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.lira_mia import LiRAMIA
from graphleaks.attacks.shadow_mia import ShadowMIA
from graphleaks.audit.runner import train_target
from graphleaks.data import load_dataset
from graphleaks.metrics import auc, tpr_at_fpr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--refs", type=int, default=8, help="LiRA reference models (>= 8)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    graph = load_dataset("cora")
    t0 = time.perf_counter()
    target = train_target(graph, seed=args.seed, dataset={"name": "cora"})
    print(f"target: GCN on Cora, inductive, trained in {time.perf_counter() - t0:.1f} s; "
          f"train acc {target.utility['train_accuracy']:.3f}, "
          f"test acc {target.utility['test_accuracy']:.3f}; torch threads "
          f"{torch.get_num_threads()}")
    suite = [
        ("confidence_mia", ConfidenceMIA()),
        ("shadow_mia", ShadowMIA()),
        ("embedding_cluster_mia", EmbeddingClusterMIA()),
        (f"lira_mia (offline, {args.refs} refs)", LiRAMIA(num_references=args.refs)),
    ]
    print(f"{'attack':34s} {'time s':>7s} {'AUC':>6s} {'TPR@1%':>7s} {'TPR@0.1%':>9s}")
    total = 0.0
    for label, attack in suite:
        t = time.perf_counter()
        r = run_attack(attack, target, seed=args.seed)
        dt = time.perf_counter() - t
        total += dt
        print(f"{label:34s} {dt:7.1f} {auc(r.scores, r.labels):6.3f} "
              f"{tpr_at_fpr(r.scores, r.labels, 0.01):7.3f} "
              f"{tpr_at_fpr(r.scores, r.labels, 0.001):9.3f}")
    print(f"membership suite total: {total:.1f} s (goal < 60 s on 2 cores)")


if __name__ == "__main__":
    main()
