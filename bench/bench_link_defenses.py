"""Utility of the defended link predictors: test link AUC per defense and ε.

Each (defense, ε, seed) trains one link target on the default edge split (transductive,
85/5/10, uniform non-edges) and prints one JSON line: test and validation link AUC, the
ledger's ε and δ, wall and process CPU seconds.

Usage (from the repository root)::

    python bench/bench_link_defenses.py [--dataset cora] [--defenses edgerand lapgraph
        gap_edp dp_sgd] [--epsilons 1 4 8] [--seeds 0] [--epochs 100] [--patience 20]

``--epochs``/``--patience`` bound the predictor of ``none``, ``edgerand`` and ``lapgraph``
(the default :class:`LinkPredictorSpec` otherwise); ``gap_edp`` and ``dp_sgd`` train their
own edge-free head with DP-SGD (their configs' defaults).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.data.edge_splits import EdgeMembershipSplit  # noqa: E402
from graphleaks.defenses.link import get_link_defense  # noqa: E402


def main() -> None:
    """Parse options, train one target per (defense, ε, seed), print JSON lines."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--data-root", default=None)
    ap.add_argument("--defenses", nargs="+",
                    default=["none", "edgerand", "lapgraph", "gap_edp", "dp_sgd"])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0, 8.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--patience", type=int, default=20)
    args = ap.parse_args()
    g = load_dataset(args.dataset, data_root=args.data_root)
    for seed in args.seeds:
        split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, seed=seed)
        for name in args.defenses:
            for eps in ([None] if name == "none" else args.epsilons):
                d = get_link_defense(name, {} if eps is None else {"epsilon": eps})
                spec = d.default_spec()
                if name in ("none", "edgerand", "lapgraph"):
                    spec = dataclasses.replace(spec, epochs=args.epochs, patience=args.patience)
                w0, c0 = time.perf_counter(), time.process_time()
                t = d.fit(g, split, spec=spec, seed=seed)
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                print(json.dumps({
                    "dataset": args.dataset, "defense": name, "epsilon": t.ledger.epsilon
                    if t.ledger.is_private else None, "delta": t.ledger.delta, "seed": seed,
                    "test_auc": round(t.utility.get("test_auc", float("nan")), 4),
                    "val_auc": round(t.utility.get("val_auc", float("nan")), 4),
                    "released_undirected_edges": t.training.get("released_undirected_edges"),
                    "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}), flush=True)


if __name__ == "__main__":
    main()
