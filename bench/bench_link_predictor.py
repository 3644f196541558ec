"""Train graphleaks' link predictor on a graph and print its test link AUC and CPU time.

The split is the default edge-membership split (transductive, 85/5/10 of the undirected
edges: members / validation / held-out, one uniform non-edge per held-out and validation
edge). Figures: test AUC (held-out edges vs held-out non-edges, on the member graph),
validation AUC, epochs, wall and process CPU seconds.

Usage (from the repository root)::

    python bench/bench_link_predictor.py [--dataset cora] [--seeds 0 1 2] [--encoder gcn]
        [--gae] [--decoder dot] [--hidden 256] [--embedding-dim 128] [--epochs 300] ...

Without options it trains ``LinkPredictorSpec()`` (the defaults); ``--gae`` starts from the
classic two-layer GCN GAE, ``--propagation-mode precomputed`` from
``LinkPredictorSpec.precomputed()``; every other option overrides one field.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.data.edge_splits import EdgeMembershipSplit, EdgeSplitConfig  # noqa: E402
from graphleaks.models.link_predictor import (  # noqa: E402
    LinkPredictorSpec,
    fit_link_predictor,
    held_out_link_auc,
)


def main() -> None:
    """Parse options, train one model per seed, print one JSON line per seed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--data-root", default=None)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--encoder", default=None)
    ap.add_argument("--decoder", default=None)
    ap.add_argument("--gae", action="store_true", help="start from LinkPredictorSpec.gae()")
    ap.add_argument("--variational", action="store_true")
    ap.add_argument("--hidden", type=int, nargs="*", default=None)
    ap.add_argument("--embedding-dim", type=int, default=None)
    ap.add_argument("--dropout", type=float, default=None)
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--patience", type=int, default=None)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--negatives", type=int, default=None)
    ap.add_argument("--embedding-norm", type=float, default=None)
    ap.add_argument("--propagation", type=int, default=None)
    ap.add_argument("--weight-decay", type=float, default=None)
    ap.add_argument("--edge-dropout", type=float, default=None)
    ap.add_argument("--teleport", type=float, default=None)
    ap.add_argument("--input-dropout", type=float, default=None)
    ap.add_argument("--dot-bias", action="store_true")
    ap.add_argument("--propagation-mode", choices=("full", "precomputed"), default=None,
                    help="precomputed: LinkPredictorSpec.precomputed() (dropouts 0)")
    ap.add_argument("--non-member-sampling", default="uniform")
    args = ap.parse_args()
    g = load_dataset(args.dataset, data_root=args.data_root)
    over = {k: v for k, v in {
        "hidden": tuple(args.hidden) if args.hidden is not None else None,
        "embedding_dim": args.embedding_dim, "dropout": args.dropout, "epochs": args.epochs,
        "patience": args.patience, "lr": args.lr, "negatives_per_positive": args.negatives,
        "embedding_norm": args.embedding_norm, "propagation": args.propagation,
        "weight_decay": args.weight_decay, "edge_dropout": args.edge_dropout,
        "teleport": args.teleport, "input_dropout": args.input_dropout,
    }.items() if v is not None}
    if args.dot_bias:
        over["dot_bias"] = True
    if args.variational:
        over["variational"] = True
    over.update({k: v for k, v in (("encoder", args.encoder), ("decoder", args.decoder))
                 if v is not None})
    if args.gae:
        spec = LinkPredictorSpec.gae(**over)
    elif args.propagation_mode == "precomputed":
        spec = LinkPredictorSpec.precomputed(**over)
    else:
        spec = LinkPredictorSpec(**over)
    aucs = []
    for seed in args.seeds:
        split = EdgeMembershipSplit.draw(
            g.edge_index, g.num_nodes,
            EdgeSplitConfig(non_member_sampling=args.non_member_sampling), seed=seed)
        w0, c0 = time.perf_counter(), time.process_time()
        model, log = fit_link_predictor(g.x, split, spec, seed=seed)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        test = held_out_link_auc(model, g.x, split)
        aucs.append(test)
        print(json.dumps({"dataset": args.dataset, "seed": seed, "test_auc": round(test, 4),
                          "val_auc": round(log.best_val_auc or 0.0, 4),
                          "epochs_run": log.epochs_run, "best_epoch": log.best_epoch,
                          "train_wall_s": round(wall, 2), "train_cpu_s": round(cpu, 2),
                          "split": split.record(), "spec": spec.to_dict()}), flush=True)
    print(json.dumps({"mean_test_auc": round(sum(aucs) / len(aucs), 4),
                      "min_test_auc": round(min(aucs), 4)}))


if __name__ == "__main__":
    main()
