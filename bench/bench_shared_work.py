"""Issue 14 (14b): CPU of target training, G-BASE and the shadow-model attacks on a CSBM.

Adapted from the issue's per-attack profile script: one thread, a CSBM of SIZE nodes
(``csbm(size, 4 classes, 32 features, avg degree 10, seed 0)``), a GCN target trained with
``epochs=200`` and early stopping, then ``run_audit(target, [name], seed=0)`` per attack at the
standard suite's budgets, and finally one audit of the listed ``--joint`` attacks together
(where the shadow-model attacks share their shadow). Each line is JSON with process CPU
seconds (``time.process_time``), wall seconds, AUC and peak RSS (MiB). Run it on another
checkout with ``PYTHONPATH=<checkout>`` for before/after figures.

Usage::

    OMP_NUM_THREADS=1 nice python bench/bench_shared_work.py 100000 \\
        --attacks gbase_mia confidence_mia shadow_mia --joint confidence_mia shadow_mia
"""

from __future__ import annotations

import argparse
import json
import resource
import time


def _rss() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    """Print one JSON line per measured step."""
    ap = argparse.ArgumentParser()
    ap.add_argument("size", type=int)
    ap.add_argument("--attacks", nargs="*", default=[])
    ap.add_argument("--joint", nargs="*", default=[])
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from graphleaks.audit import run_audit, train_target
    from graphleaks.data.synthetic import csbm
    from graphleaks.models.gnn import ArchitectureSpec

    c0 = time.process_time()
    g = csbm(args.size, num_classes=4, num_features=32, avg_degree=10, seed=0)
    c1, w1 = time.process_time(), time.time()
    t = train_target(g, spec=ArchitectureSpec(epochs=200), defense="none", seed=0,
                     dataset={"name": f"csbm-{args.size}"})
    print(json.dumps({"size": args.size, "gen": c1 - c0, "train": time.process_time() - c1,
                      "train_wall": time.time() - w1, "epochs": t.training.get("epochs_run"),
                      "test_acc": t.utility.get("test_accuracy"), "rss": _rss()}), flush=True)
    runs = [[a] for a in args.attacks] + ([args.joint] if args.joint else [])
    for names in runs:
        c, w = time.process_time(), time.time()
        r = run_audit(t, names, seed=0)
        aucs = {a.attack: None if a.metrics.binary is None else a.metrics.binary.auc.value
                for a in r.attacks}
        print(json.dumps({"attacks": names, "cpu": time.process_time() - c,
                          "wall": time.time() - w, "auc": aucs, "rss": _rss()}), flush=True)


if __name__ == "__main__":
    main()
