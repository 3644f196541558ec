"""Scale of graph-classification targets: 10,000 molecule-sized graphs on one thread.

Synthetic motif graphs of about 25 nodes (a random tree of 14 to 22 nodes plus a motif of 4 to
9; 3 classes, 8 features) stand in for molecules (the solubility set's molecules have 13 heavy
atoms on average), so no extra is needed. Prints, each with process CPU time beside wall time:

1. drawing the set;
2. the plain GIN target (half the graphs members, 10 % early-stopping graphs, the
   ``graphleaks train --task graph`` recipe: 100 epochs at most, patience 20, batches of 32);
3. the DP-SGD GIN target at ε = 4 (δ = 1e-5; 30 epochs, expected batches of 64);
4. the canary audit of DP-SGD at ε = 1 over the whole set (the default 500 canaries, the
   audit recipe of ``tests/audit/test_graph_canary.py``: one GIN layer of 64, 30 epochs of
   batches of 16): one training on the members plus the inserted canaries (white-box
   gradient canaries, the default for DP-SGD: they never take a forward pass).

The issue's target, a full default audit of a graph classifier on 10,000 molecules under 10
CPU-minutes, is measured by ``bench/bench_graph_scale.py``; this bench (its former content)
keeps the DP-SGD training and canary-audit figures at the same scale. Usage::

    python bench/bench_graph_dp_scale.py [--num-graphs 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from graphleaks.audit.graph_canary import graph_canary_audit  # noqa: E402
from graphleaks.data.graphsets import motif_graphs  # noqa: E402
from graphleaks.defenses.graph_base import train_graph_target  # noqa: E402
from graphleaks.models.graph_classifier import GraphClassifierSpec  # noqa: E402


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - start[0], time.process_time() - start[1]


def _fmt(t: tuple[float, float]) -> str:
    return f"{t[0]:.1f} s wall, {t[1]:.1f} s CPU"


def main() -> None:
    """Run the four measurements and print them."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--num-graphs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    total = _clock()

    start = _clock()
    gs = motif_graphs(args.num_graphs, num_classes=3, base_nodes=(14, 22), seed=args.seed)
    sizes = [int(g.num_nodes) for g in gs.graphs]
    print(f"{len(gs)} motif graphs, {sum(sizes) / len(sizes):.1f} nodes on average "
          f"(min {min(sizes)}, max {max(sizes)}); drawn in {_fmt(_since(start))}")

    start = _clock()
    plain = train_graph_target(gs, defense="none", spec=GraphClassifierSpec(arch="gin"),
                               seed=args.seed)
    t_plain = _since(start)
    print(f"plain GIN, {len(plain.split.members)} members: test accuracy "
          f"{plain.utility['test_accuracy']:.3f} (majority {plain.utility['majority_baseline']:.3f}"
          f"), {plain.training['epochs_run']} epochs; {_fmt(t_plain)}")

    start = _clock()
    dp = train_graph_target(gs, defense="dp_sgd", defense_params={"epsilon": 4.0},
                            spec=GraphClassifierSpec(arch="gin", epochs=30, batch_size=64),
                            val_frac=0.0, seed=args.seed)
    t_dp = _since(start)
    print(f"DP-SGD GIN eps=4: test accuracy {dp.utility['test_accuracy']:.3f}, ledger eps "
          f"{dp.ledger.epsilon:.4f}, {dp.training['steps']} steps; {_fmt(t_dp)}")

    start = _clock()
    audit = graph_canary_audit(gs, defense="dp_sgd", defense_params={"epsilon": 1.0},
                               spec=GraphClassifierSpec(hidden=64, layers=1, epochs=30,
                                                        batch_size=16), seed=args.seed)
    t_canary = _since(start)
    print(f"canary audit of DP-SGD eps=1 ({audit.bound.num_canaries} canaries, "
          f"{audit.num_inserted} inserted): claimed {audit.claimed_epsilon:.3f}, audited "
          f"{audit.audited_epsilon:.3f}; {_fmt(t_canary)}")
    both = (t_plain[0] + t_canary[0], t_plain[1] + t_canary[1])
    print(f"training (plain) + canary audit: {_fmt(both)}; all of the above: "
          f"{_fmt(_since(total))}")


if __name__ == "__main__":
    main()
