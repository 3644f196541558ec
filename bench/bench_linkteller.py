"""LinkTeller against its floor: main's query path vs the stable graph vs the local update.

Measured in one process on one trained target, so the ratios compare like with like:

* ``main``: a copy of main's query path, a full forward pass per query on a freshly
  partitioned edge tensor (the inductive served graph), so the normalized adjacency is
  rebuilt on every query;
* ``forward``: the black-box path now: a full forward pass per query, stable served graph;
* ``local``: the white-box (auditor's) path: an exact local update of the reached rows.

Reports process CPU time (the figure that a busy shared host does not distort), wall time,
peak RSS and the AUC of each. Usage::

    nice python bench/bench_linkteller.py [--dataset amazon-computers] [--n-nodes 500]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import torch

from graphleaks.attacks.base import TargetView
from graphleaks.attacks.harness import run_attack, sample_challenge
from graphleaks.attacks.linkteller import LinkTeller
from graphleaks.audit.runner import train_target
from graphleaks.data import load_dataset
from graphleaks.metrics.binary import auc
from graphleaks.models.gnn import ArchitectureSpec

REPO = Path(__file__).resolve().parents[1]


def main_influence(target, x, nodes, delta):  # noqa: ANN001, ANN201
    """main's ``influence_matrix`` with main's ``TargetView.query_features`` (a copy)."""
    idx = torch.as_tensor(nodes, dtype=torch.long)

    def f(z):  # noqa: ANN001, ANN202
        # main: edges("target") built a new partitioned tensor on every call
        return target.query(z, target.split.training_edges(target.graph.edge_index))[-1]

    base = f(x)[idx].double()
    m = np.empty((len(nodes), len(nodes)), dtype=np.float32)
    xp = x.clone()
    for i, v in enumerate(nodes.tolist()):
        xp[v] = x[v] * (1.0 + delta)
        diff = f(xp)[idx].double() - base
        xp[v] = x[v]
        m[i] = (torch.linalg.vector_norm(diff, dim=1) / delta).numpy()
    return m


def measure(label: str, fn) -> tuple[float, object]:  # noqa: ANN001
    """Run ``fn`` and print its process CPU and wall time."""
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{label:<28} CPU {cpu:8.2f} s  wall {wall:8.2f} s  peak RSS {rss:6.0f} MiB",
          flush=True)
    return cpu, out


def main() -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-root", default=str(REPO.parent / "shared" / "datasets"))
    p.add_argument("--dataset", default="amazon-computers")
    p.add_argument("--n-nodes", type=int, default=500)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--skip-main", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    g = load_dataset(args.dataset, data_root=args.data_root)
    spec = ArchitectureSpec(hidden=(64,), epochs=200, patience=50)
    _, t = measure(f"train GCN ({args.dataset})", lambda: train_target(g, seed=0, spec=spec))
    attack = LinkTeller(n_nodes=args.n_nodes)
    lc = sample_challenge(attack, t, seed=0)
    pairs = np.asarray(lc.challenge.candidates).reshape(-1, 2)
    nodes, inv = np.unique(pairs, return_inverse=True)
    inv = inv.reshape(-1, 2)
    labels = lc.truth
    view = TargetView(t, attack.threat_model)
    x = view.features().float()
    results = {}
    if not args.skip_main:
        cpu, m = measure("main (rebuild per query)", lambda: main_influence(t, x, nodes, 1e-4))
        results["main"] = (cpu, auc(m[inv[:, 1], inv[:, 0]], labels))
    for mode in ("forward", "local"):
        cpu, r = measure(f"{mode} (this branch)",
                         lambda mode=mode: run_attack(LinkTeller(n_nodes=args.n_nodes, api=mode),
                                                      t, seed=0, challenge=lc))
        results[mode] = (cpu, auc(r.scores, r.labels))
    for mode, (cpu, a) in results.items():
        ratio = (f"  main/{mode} CPU {results['main'][0] / cpu:6.1f}x"
                 if "main" in results else "")
        print(f"{mode:<8} AUC {a:.6f}  CPU {cpu:8.2f} s{ratio}")


if __name__ == "__main__":
    main()
