"""Diagnostic for issue 13's G-BASE vs LiRA gap (figures only, no assertions).

On one inductive Cora GCN target per seed, runs LiRA (logit and hinge), BASE and G-BASE in the
query views ``target`` (each part's induced subgraph, the bench default), ``full`` and
``zero_hop`` (the paper's BASE/LiRA query), plus a ground-truth-oracle G-BASE (the paper's
"G-BASE GT": masks are the target's true training set), and a centre-only G-BASE (Δ is the
candidate's own log-likelihood in the sampled graph, the neighbours' terms dropped), to locate
where G-BASE's signal goes. BASE and G-BASE tune their offline scale (``tune_scale``).

Usage::

    OMP_NUM_THREADS=1 nice python bench/diag_gbase.py --seeds 3 --data-root /work/shared/datasets

Measured (Cora, seeds 0-2, 4 offline references, mean and 95 % t-interval):

| run | AUC | TPR@0.1% | TPR@1% |
|---|---|---|---|
| lira-logit@target | 0.842 [0.811, 0.874] | 0.086 [0.024, 0.148] | 0.188 [0.134, 0.242] |
| paper-lira@zero_hop (1) | 0.799 [0.768, 0.829] | 0.030 [-0.019, 0.078] | 0.101 [0.071, 0.131] |
| base@target | 0.835 [0.800, 0.870] | 0.014 [-0.003, 0.031] | 0.119 [0.073, 0.165] |
| base@zero_hop | 0.857 [0.838, 0.877] | 0.075 [-0.044, 0.194] | 0.236 [0.070, 0.401] |
| gbase@target | 0.772 [0.740, 0.804] | 0.008 [-0.003, 0.019] | 0.081 [0.047, 0.116] |
| gbase@full | 0.761 [0.716, 0.805] | 0.010 [0.007, 0.012] | 0.073 [-0.030, 0.177] |
| gbase-centre@target | 0.844 [0.841, 0.847] | 0.044 [-0.014, 0.101] | 0.140 [0.072, 0.208] |
| gbase-oracle@target | 0.785 [0.706, 0.865] | 0.031 [-0.021, 0.083] | 0.125 [-0.094, 0.345] |
| gbase-oracle@full | 0.772 [0.694, 0.851] | 0.031 [-0.040, 0.103] | 0.095 [-0.065, 0.256] |
| oracle-centre@target | 0.834 [0.796, 0.873] | 0.029 [-0.059, 0.117] | 0.111 [-0.006, 0.228] |

(1) the authors' LiRA: ``statistic=hinge``, per-node variances, 0-hop queries; oracle-centre
is gbase-oracle-centre. CPU per attack:
1.1 s for LiRA and BASE, 4.1-4.9 s for sampled G-BASE, 1.9-2.2 s for the one-mask oracles.

Reading: the neighbours' loss terms cost G-BASE about 0.07 AUC (centre-only 0.844 against
0.772 with the whole ball), and true-membership masks do not recover it; the authors' own LiRA
(hinge, per-node variances, 0-hop) is weaker than BASE here too, as in their table, while
graphleaks' LiRA (logit, pooled variance) is stronger.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from reproduce_sota import append_metrics  # noqa: E402

import graphleaks.attacks.gbase_mia as gbase_mod  # noqa: E402
from graphleaks.attacks.base_mia import BASEMIA  # noqa: E402
from graphleaks.attacks.gbase_mia import GBASEMIA  # noqa: E402
from graphleaks.attacks.harness import run_attack  # noqa: E402
from graphleaks.attacks.lira_mia import LiRAMIA  # noqa: E402
from graphleaks.audit.runner import train_target  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.seeding import derive_seed  # noqa: E402


@torch.no_grad()
def centre_only_gaps(model: Any, x: torch.Tensor, y: torch.Tensor, nodes: np.ndarray,
                     gid: torch.Tensor, ei: torch.Tensor, n_balls: int) -> np.ndarray:
    """Δ(v) = log p(y_v | G_in): the candidate's own term only (diagnostic)."""
    idx = torch.as_tensor(nodes, dtype=torch.long)
    ce = torch.nn.functional.cross_entropy(model(x[idx], ei).double(), y[idx], reduction="none")
    first = torch.searchsorted(gid, torch.arange(0, 2 * n_balls, 2))  # gid is sorted
    return (-ce[first]).numpy()


class CentreOnly(GBASEMIA):
    """G-BASE with the neighbours' loss terms dropped (diagnostic, never shipped)."""

    def _score(self, target, challenge, rngs):  # type: ignore[no-untyped-def]
        saved = gbase_mod.loss_gaps
        gbase_mod.loss_gaps = centre_only_gaps  # type: ignore[assignment]
        try:
            return super()._score(target, challenge, rngs)
        finally:
            gbase_mod.loss_gaps = saved


def with_oracle_masks(kind: type[GBASEMIA], members: np.ndarray, **kw: Any) -> GBASEMIA:
    """``kind`` whose masks are the true training set (a diagnostic, never a shipped option)."""

    class Oracle(kind):  # type: ignore[valid-type,misc]
        def _inclusion(self, target, refs, y, scale, log_prior):  # type: ignore[no-untyped-def]
            p = np.zeros(target.num_nodes)
            p[members] = 1.0
            return p

    return Oracle(**kw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--refs", type=int, default=4)
    ap.add_argument("--data-root", default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", default="/tmp/diag_gbase.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    graph = load_dataset(args.dataset, data_root=args.data_root)
    res: dict[str, dict[str, list[float]]] = {}
    for seed in range(args.seeds):
        target = train_target(graph, seed=seed, dataset={"name": args.dataset})
        members = np.asarray(target.split.train)
        k = args.refs
        t = {"tune_scale": True}
        runs = [
            ("lira-logit@target", LiRAMIA(num_references=k), "target"),
            ("lira-hinge-pernode@zero_hop", LiRAMIA(num_references=k, statistic="hinge",
                                                    fixed_variance=False), "zero_hop"),
            ("base@target", BASEMIA(num_references=k, **t), "target"),
            ("base@zero_hop", BASEMIA(num_references=k, **t), "zero_hop"),
            ("gbase@target", GBASEMIA(num_references=k, **t), "target"),
            ("gbase@full", GBASEMIA(num_references=k, **t), "full"),
            ("gbase-centre@target", CentreOnly(num_references=k, **t), "target"),
            ("gbase-oracle@target", with_oracle_masks(GBASEMIA, members, num_references=k,
                                                            num_samples=1, **t), "target"),
            ("gbase-oracle@full", with_oracle_masks(GBASEMIA, members, num_references=k,
                                                          num_samples=1, **t), "full"),
            ("gbase-oracle-centre@target", with_oracle_masks(CentreOnly, members,
                                                             num_references=k, num_samples=1,
                                                             **t), "target"),
        ]
        for label, attack, view in runs:
            if args.only and label not in args.only:
                continue
            c0, w0 = time.process_time(), time.perf_counter()
            r = run_attack(attack, target, seed=derive_seed(seed, "sota", label.split("@")[0]),
                           view=view)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            row = res.setdefault(label, {"auc": [], "tpr@0.1%": [], "tpr@1%": [], "cpu_s": [],
                                         "wall_s": []})
            append_metrics(row, r.scores, r.labels)
            row["cpu_s"].append(cpu)
            row["wall_s"].append(wall)
            print(f"seed {seed} {label:22s} AUC {row['auc'][-1]:.3f} TPR@0.1% "
                  f"{row['tpr@0.1%'][-1]:.3f} TPR@1% {row['tpr@1%'][-1]:.3f} "
                  f"(cpu {cpu:.1f} s, wall {wall:.1f} s)", flush=True)
            Path(args.out).write_text(json.dumps(res, indent=1))
    print("children cpu", resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime)


if __name__ == "__main__":
    main()
