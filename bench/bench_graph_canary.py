"""Canary audit of per-graph DP-SGD: honest runs against a broken one (noise ÷ 10), issue 26.

The issue's target: "DP-SGD graph classifier at ε ∈ {1, 4, 8}: audited ε ≤ claimed ε over
≥ 5 seeds; a deliberately broken fixture (noise ÷ 10) is caught". For every claimed ε and
seed this runs one :func:`graphleaks.audit.graph_canary.graph_canary_audit` of honest DP-SGD
and, at the ε given to ``--broken``, one of a broken trainer that divides the noise by 10
while its ledger still claims the calibrated ε (a bench fixture, never shipped). Each line
prints claimed ε, audited ε, audited GDP μ, correct guesses, the test accuracy on the real
non-member graphs, and process CPU time beside wall time (wall is inflated when the machine
is shared). Last, the utility of targets trained without canaries (the audit's own training
set is mostly canaries, so its accuracy is not the shipped model's).

Set-up (``tests/audit/test_graph_canary.py``'s): 100 molecule-like motif graphs (a one-hot
random atom type among 24 beside the motif features, 32 columns), half of them members; one
GIN layer of 64, 30 epochs of Poisson batches of 16, Adam at 0.01; δ = 1e-5; 1000 canaries,
500 guesses (with every guess right the one-run bound is 5.09 at this δ, so a claim above
that cannot be refuted by any audit of this size). ``--kind ood`` runs the black-box
input-space canaries scored by loss instead (slower: every canary graph is trained on).

Usage::

    python bench/bench_graph_canary.py [--seeds 5] [--canaries 1000] [--kind auto]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from graphleaks.audit.graph_canary import graph_canary_audit  # noqa: E402
from graphleaks.data.graphsets import GraphSet, motif_graphs  # noqa: E402
from graphleaks.defenses.graph_base import train_graph_target  # noqa: E402
from graphleaks.defenses.graph_dp_sgd import GraphDPSGD  # noqa: E402
from graphleaks.models import graph_dp_sgd as core  # noqa: E402
from graphleaks.models.graph_classifier import GraphClassifierSpec  # noqa: E402

SPEC = GraphClassifierSpec(hidden=64, layers=1, epochs=30, batch_size=16, lr=0.01)
DELTA = 1e-5


def molecule_like(n: int, *, seed: int, types: int = 24) -> GraphSet:
    """Motif graphs with a one-hot random atom type per node (as the tests build them)."""
    gs = motif_graphs(n, num_classes=3, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    graphs = []
    for g in gs.graphs:
        kinds = torch.randint(0, types, (int(g.num_nodes),), generator=gen)
        x = torch.cat([g.x, torch.nn.functional.one_hot(kinds, types).float()], dim=1)
        graphs.append(g.__class__(x=x, edge_index=g.edge_index, y=g.y, num_nodes=g.num_nodes))
    return GraphSet.from_graphs(graphs, gs.class_names, source="molecule-like motif graphs")


class DividedNoise:
    """Bench fixture, never shipped: the trainer runs with noise ÷ ``by`` and reports the
    calibrated multiplier, so the defense's ledger still claims the configured ε."""

    def __init__(self, by: float) -> None:
        self.by, self.real = by, core.train_graph_dp_sgd

    def __call__(self, model: Any, train: Any, *, noise_multiplier: float,
                 **kw: Any) -> core.GraphDPSGDRun:
        run = self.real(model, train, noise_multiplier=noise_multiplier / self.by, **kw)
        return dataclasses.replace(run, noise_multiplier=noise_multiplier)


def _one(gs: GraphSet, epsilon: float, seed: int, args: argparse.Namespace) -> str:
    wall, cpu = time.perf_counter(), time.process_time()
    a = graph_canary_audit(gs, defense=GraphDPSGD(epsilon=epsilon, delta=DELTA), spec=SPEC,
                           num_canaries=args.canaries, kind=args.kind, seed=seed)
    acc = next((n.split()[2] for n in a.notes if n.startswith("test accuracy")), "?")
    flag = "CAUGHT" if a.violation else "ok"
    return (f"claimed {a.claimed_epsilon:.3f} audited {a.audited_epsilon:.3f} "
            f"(mu {a.bound.mu_lb:.3f}, {a.bound.num_correct}/{a.bound.num_guesses} correct) "
            f"{flag:6s} test acc {acc} [{a.attack}]; "
            f"{time.process_time() - cpu:.1f} s CPU, {time.perf_counter() - wall:.1f} s wall")


def main() -> None:
    """Run the grid and print one line per audit."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--canaries", type=int, default=1000)
    ap.add_argument("--kind", default="auto")
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0, 8.0])
    ap.add_argument("--broken", type=float, nargs="*", default=[1.0, 4.0])
    args = ap.parse_args()
    torch.set_num_threads(1)
    gs = molecule_like(100, seed=1)
    total_wall, total_cpu = time.perf_counter(), time.process_time()
    real = core.train_graph_dp_sgd
    for label, by, epsilons in (("honest", 1.0, args.epsilons),
                                ("noise/10", 10.0, args.broken)):
        core.train_graph_dp_sgd = real if by == 1.0 else DividedNoise(by)  # type: ignore[assignment]
        try:
            for eps in epsilons:
                for seed in range(args.seeds):
                    print(f"{label:8s} eps={eps:g} seed={seed}: {_one(gs, eps, seed, args)}",
                          flush=True)
        finally:
            core.train_graph_dp_sgd = real  # type: ignore[assignment]
    # the audit's utility is that of a training set mostly made of canaries; the target a
    # user would ship trains on the real members alone
    for eps in [*args.epsilons, float("inf")]:
        wall, cpu = time.perf_counter(), time.process_time()
        t = train_graph_target(gs, defense="dp_sgd" if eps != float("inf") else "none",
                               defense_params={"epsilon": eps, "delta": DELTA}
                               if eps != float("inf") else None,
                               spec=SPEC, val_frac=0.0, seed=0)
        print(f"utility without canaries, eps={eps:g} seed=0: test accuracy "
              f"{t.utility['test_accuracy']:.3f} (majority {t.utility['majority_baseline']:.3f}"
              f"), ledger eps {t.ledger.epsilon:.3f}; {time.process_time() - cpu:.1f} s CPU, "
              f"{time.perf_counter() - wall:.1f} s wall", flush=True)
    print(f"total: {time.process_time() - total_cpu:.1f} s CPU, "
          f"{time.perf_counter() - total_wall:.1f} s wall")


if __name__ == "__main__":
    main()
