"""CPU of the default audit of a defended bundle with and without its default canary audit
(issue 24: audited ε beside claimed ε by default).

Trains a GAP-EDP (ε = 1 by default) target on bundled Cora (or ``--dataset``), saves and
reloads it as a bundle, then runs the default audit of the suite twice in this process:
``canary=False`` and the default (one edge canary audit, the suite's canaries). Prints
process CPU time beside wall time, and the audited ε.

Usage::

    OMP_NUM_THREADS=1 python bench/bench_default_canary.py --suite standard
    OMP_NUM_THREADS=1 python bench/bench_default_canary.py --dataset amazon-photo
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from graphleaks.audit.runner import audit_with_scores, train_target
from graphleaks.bundles import load_bundle, save_bundle
from graphleaks.data.datasets import load_dataset


def main() -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", default="standard")
    p.add_argument("--defense", default="gap_edp")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dataset", default="cora",
                   help="a registered dataset; those beside Cora read GRAPHLEAKS_DATA")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    graph = load_dataset(args.dataset)
    target = train_target(graph, defense=args.defense,
                          defense_params={"epsilon": args.epsilon}, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        save_bundle(target, Path(tmp) / "bundle")
        bundle = load_bundle(Path(tmp) / "bundle")
        for canary in (False, None):
            bundle.clear_cache()
            w, c = time.perf_counter(), time.process_time()
            report = audit_with_scores(bundle, seed=0, suite=args.suite, canary=canary).report
            wall, cpu = time.perf_counter() - w, time.process_time() - c
            audited = ", ".join(f"{a.unit}: claimed {a.claimed_epsilon:.3g}, audited ≥ "
                                f"{a.bound.epsilon_lb:.3g} ({a.bound.num_canaries} canaries)"
                                for a in report.canary_audits) or "none"
            print(f"{args.dataset} {args.defense} ε={args.epsilon:g} suite={args.suite} "
                  f"canary={'default' if canary is None else 'off'}: {cpu:.1f} s CPU, "
                  f"{wall:.1f} s wall; canary audits: {audited}")


if __name__ == "__main__":
    main()
