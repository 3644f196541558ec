"""Graph classifiers on the solubility set: utility, non-private and per-graph DP-SGD.

Prints, each with wall time and process CPU time:

1. per-graph gradients of one Poisson-sized batch, ``vmap`` (padded) against ``loop``;
2. a GIN trained without privacy (early stopping on 150 held-out training molecules):
   test accuracy on the 257 test molecules;
3. the same GIN trained with per-graph DP-SGD at each ε (δ = 1e-4 < 1/N), fixed epochs:
   test accuracy, the ledger's ε and an independent dp_accounting recomputation from the
   executed sampler.

Needs the molecules extra (``pip install -e '.[molecules]'``). Usage::

    python bench/bench_graph_classifier.py [--epsilons 1 4 8] [--dp-epochs 30]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dp_accounting  # noqa: E402
import torch  # noqa: E402
from dp_accounting.rdp import RdpAccountant  # noqa: E402

from graphleaks.data.graphsets import load_solubility  # noqa: E402
from graphleaks.models.dp_sgd import DPSGDPlan  # noqa: E402
from graphleaks.models.graph_classifier import (  # noqa: E402
    GraphClassifierSpec,
    fit_graph_classifier,
    graph_accuracy,
    new_graph_classifier,
)
from graphleaks.models.graph_dp_sgd import (  # noqa: E402
    calibrate_graph_noise,
    graph_dp_sgd_ledger,
    per_graph_gradients,
    train_graph_dp_sgd,
)
from graphleaks.privacy.accounting import quiet_dp_accounting  # noqa: E402


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> str:
    wall, cpu = time.perf_counter() - start[0], time.process_time() - start[1]
    return f"{wall:.1f} s wall, {cpu:.1f} s CPU"


def main() -> None:
    """Run the three measurements and print them."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epsilons", type=float, nargs="*", default=[1.0, 4.0, 8.0])
    ap.add_argument("--dp-epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)

    train, test = load_solubility("train"), load_solubility("test")
    print(f"solubility: {len(train)} train, {len(test)} test molecules, classes "
          f"{train.class_names}; majority-class test accuracy "
          f"{max(test.class_counts()) / len(test):.3f}")

    spec = GraphClassifierSpec(arch="gin", hidden=64, layers=3, pooling="sum", epochs=100,
                               patience=20, batch_size=32, lr=0.003)
    model = new_graph_classifier(spec, train.num_features, train.num_classes, seed=args.seed)
    batch = list(train.graphs[: args.batch_size])
    for how in ("vmap", "loop"):
        per_graph_gradients(model, batch[:4], per_sample=how)  # type: ignore[arg-type]
        start = _clock()
        per_graph_gradients(model, batch, per_sample=how)  # type: ignore[arg-type]
        print(f"per-graph gradients of {len(batch)} molecules, {how}: {_since(start)}")

    perm = torch.randperm(len(train), generator=torch.Generator().manual_seed(args.seed))
    val, fit = train.subset(perm[:150]), train.subset(perm[150:])
    start = _clock()
    model, log = fit_graph_classifier(spec, fit.graphs, 3, seed=args.seed, val=val.graphs)
    print(f"GIN non-private: test accuracy {graph_accuracy(model, test.graphs):.3f} "
          f"(best epoch {log.best_epoch} of {log.epochs_run}); {_since(start)}")

    delta = 1e-4
    plan = DPSGDPlan(num_samples=len(train), batch_size=args.batch_size, epochs=args.dp_epochs)
    dp_spec = GraphClassifierSpec(arch="gin", hidden=64, layers=3, pooling="mean")
    for eps in args.epsilons:
        start = _clock()
        mult = calibrate_graph_noise(plan, epsilon=eps, delta=delta)
        model = new_graph_classifier(dp_spec, train.num_features, 3, seed=args.seed)
        run = train_graph_dp_sgd(model, train.graphs, plan=plan, lr=0.01,
                                 noise_multiplier=mult, max_grad_norm=1.0, seed=args.seed)
        ledger = graph_dp_sgd_ledger(run.executed, mult, delta)
        acc = RdpAccountant()
        acc.compose(dp_accounting.PoissonSampledDpEvent(
            run.executed.rate, dp_accounting.GaussianDpEvent(mult)), run.executed.steps)
        with quiet_dp_accounting():  # orders that do not converge are dropped, as logged
            recomputed = acc.get_epsilon(delta)
        print(f"GIN DP-SGD eps={eps:g}: test accuracy {graph_accuracy(model, test.graphs):.3f}; "
              f"noise {mult:.3f}, q={run.executed.rate:.4f}, {run.executed.steps} steps; ledger "
              f"eps {ledger.epsilon:.4f}, recomputed {recomputed:.4f}; "
              f"training {run.seconds:.1f} s wall, {run.cpu_seconds:.1f} s CPU; total "
              f"{_since(start)}")


if __name__ == "__main__":
    main()
