"""CPU time of attribute inference (the default audit's settings) on seeded CSBM graphs.

The standard suite runs attribute inference with ``walks_per_node=5, walk_length=20``; this
script runs exactly that attack, on a plain GCN target trained on a seeded CSBM graph
(average degree 10, 4 classes, 32 features), and reports process CPU time (user + system,
which a busy shared host does not distort) and wall time of the attack alone, and of its
stages: walk generation, embedding training (walks regenerated inside ``fit``) and the
classifier; then the audit's multiclass metrics. ``--profile FILE`` writes a cProfile of
the attack run (CPU-time clock).

Measured on the 2-core host (aef4ea8 -> this branch, unprofiled, process CPU s of the attack;
``--sizes 10000 100000``): 10k 4.29 -> 4.33, 100k 69.8 -> 70.3 (noise: gensim varies by about
5 %). At 100k the attack is walks 0.08 s, DeepWalk embedding 62-67 s (gensim's skip-gram
``train``; the walks are generated twice, 0.16 s in all), the MLP about 3-5 s, and the audit's
metrics 0.5 s. gensim's ``corpus_file`` mode, with no Python per sentence, trained the same
corpus in 64 s against 62 s for the iterable, so the skip-gram is at gensim's floor for this
work (10M tokens, window 5, 5 negatives; per token 3 us at 10k, 6 us at 100k as the two
64-column matrices outgrow the cache). Only the vocabulary set-up was avoidable Python
(0.74 -> 0.04 s at 100k, 9.0 -> 1.1 s at 1M, same model bit for bit).

Usage::

    OMP_NUM_THREADS=1 python bench/bench_aia_scale.py --sizes 10000 100000
    OMP_NUM_THREADS=1 python bench/bench_aia_scale.py --sizes 100000 --profile /tmp/aia.prof
"""

from __future__ import annotations

import argparse
import cProfile
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run(size: int, profile: str | None, epochs: int) -> dict[str, object]:
    """Train a GCN on CSBM(size), then time the default-suite attribute inference on it."""
    import numpy as np
    import torch

    from graphleaks.attacks import registry as attacks
    from graphleaks.attacks.harness import run_attack
    from graphleaks.audit import train_target
    from graphleaks.audit.suite import SUITES
    from graphleaks.data.synthetic import csbm
    from graphleaks.metrics.multiclass import multiclass_metrics
    from graphleaks.models.embeddings import DeepWalk, EmbedderConfig
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.models.walks import CSRGraph, WalkConfig, generate_walks

    torch.set_num_threads(1)
    g = csbm(size, num_classes=4, num_features=32, avg_degree=10, seed=0)
    target = train_target(g, spec=ArchitectureSpec(epochs=epochs), seed=0,
                          dataset={"name": f"csbm-{size}"})
    overrides = SUITES["standard"].overrides["attribute_inference"]
    attack = attacks.get("attribute_inference")(**overrides)
    cfg = attack.config
    out: dict[str, object] = {"size": size, "edges": int(g.edge_index.size(1)), **overrides}

    # Stages alone (same settings as the attack's release).
    graph = CSRGraph.from_edge_index(g.edge_index, size)
    c0 = time.process_time()
    n = 0
    for chunk in generate_walks(graph, WalkConfig(walk_length=cfg.walk_length,
                                                  walks_per_node=cfg.walks_per_node), seed=0):
        n += chunk.shape[0]
    out["walks_cpu_s"] = round(time.process_time() - c0, 2)
    ecfg = EmbedderConfig(dimensions=cfg.dimensions, walk_length=cfg.walk_length,
                          walks_per_node=cfg.walks_per_node, window=cfg.window,
                          epochs=cfg.epochs)
    c0 = time.process_time()
    DeepWalk(ecfg).fit(g.edge_index, size, seed=0)
    out["embed_cpu_s"] = round(time.process_time() - c0, 2)

    prof = cProfile.Profile(time.process_time) if profile else None
    c0, w0 = time.process_time(), time.perf_counter()
    if prof is not None:
        prof.enable()
    result = run_attack(attack, target, seed=0)
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    out["attack_cpu_s"] = round(time.process_time() - c0, 2)
    out["attack_wall_s"] = round(time.perf_counter() - w0, 2)
    # The audit then computes the multiclass metrics (1000 bootstrap replicates, standard suite).
    c0 = time.process_time()
    multiclass_metrics(result.labels.astype(np.int64), np.rint(result.scores).astype(np.int64),
                       y_train=result.train_labels, n_bootstrap=1000, seed=0)
    out["metrics_cpu_s"] = round(time.process_time() - c0, 2)
    out["accuracy"] = round(float((np.asarray(result.scores) == np.asarray(result.labels))
                                  .mean()), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--epochs", type=int, default=50, help="target GCN epochs")
    ap.add_argument("--profile", default=None, help="cProfile output (last size)")
    args = ap.parse_args()
    for size in args.sizes:
        print(json.dumps(run(size, args.profile, args.epochs)), flush=True)


if __name__ == "__main__":
    main()
