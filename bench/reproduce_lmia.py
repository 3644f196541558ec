"""Reproduce LMIA's unsupervised link-membership attacks on DeepWalk (Wang & Wang, ACSAC'23).

Protocol, as in the authors' code (``xiulingwang33/LMIA``, ``deepwalk/deepwalk-LMIA.py``):
30 % of the undirected edges are held out (no validation part), DeepWalk is trained on the
remaining 70 % (the member graph, every node kept), and the attacker scores a pair by a
similarity of its endpoints' embeddings: ``dot``, ``cosine`` or ``euclidean`` (negated
distance). Members are as many member edges, drawn uniformly, as there are held-out edges;
non-members are the held-out **true** edges (the paper's setting: both sides are real
edges, so the only signal is training membership). graphleaks also prints the easier
setting "members vs held-out non-edges" (uniform non-edges, one per held-out edge).

DeepWalk: graphleaks' :class:`~graphleaks.models.embeddings.DeepWalk` (gensim skip-gram) at
the original tool's defaults, which LMIA ran (``phanein/deepwalk``: 64 dimensions, 10 walks
of length 40 per node, window 5, hierarchical softmax).

Per dataset and seed, one JSON line: per similarity, AUC with its 95 % interval, TPR at 1 %
FPR with its interval, and the oracle best balanced accuracy (the paper reports the accuracy
of its best K-means clustering over 500 restarts, also an oracle); wall and process CPU
seconds. Metrics come from :mod:`graphleaks.metrics`. The paper's own figures are not
printed: no copy of its table could be found (abstract-only pages, and the authors'
repository prints its accuracies at run time; the README section "Audit a link-prediction
model" lists what was searched), and numbers are never typed in from memory.

Usage (from the repository root)::

    python bench/reproduce_lmia.py [--datasets cora citeseer] [--seeds 0 1 2]
        [--data-root /work/shared/datasets]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.attacks.edge_membership.edge_embedding_similarity import (  # noqa: E402
    SIMILARITIES,
    pair_similarity,
)
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.data.edge_splits import EdgeMembershipSplit, EdgeSplitConfig  # noqa: E402
from graphleaks.metrics import best_balanced_accuracy, binary_metrics  # noqa: E402
from graphleaks.models.embeddings import DeepWalk, EmbedderConfig  # noqa: E402
from graphleaks.seeding import derive_seed  # noqa: E402

#: The original DeepWalk tool's defaults (phanein/deepwalk), which LMIA's code runs.
DEEPWALK = EmbedderConfig(dimensions=64, walk_length=40, walks_per_node=10, window=5,
                          negative=0)


def _est(e: object) -> list[float]:
    return [round(float(getattr(e, k)), 4) for k in ("value", "lo", "hi")]


def _evaluate(scores: np.ndarray, labels: np.ndarray, seed: int, n_bootstrap: int
              ) -> dict[str, object]:
    m = binary_metrics(scores, labels, fpr_points=(0.01,), n_bootstrap=n_bootstrap, seed=seed)
    acc, _ = best_balanced_accuracy(scores, labels)
    return {"auc": _est(m.auc), "tpr_at_1pct_fpr": _est(m.tpr_at_fpr[0.01]),
            "best_balanced_accuracy": round(float(acc), 4)}


def main() -> None:
    """Parse options, run every dataset x seed, print JSON lines and a summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["cora", "citeseer"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--held-out", type=float, default=0.3, help="fraction of edges held out")
    ap.add_argument("--n-bootstrap", type=int, default=1000)
    ap.add_argument("--data-root", default="/work/shared/datasets")
    args = ap.parse_args()
    cfg = EdgeSplitConfig(val_frac=0.0, test_frac=args.held_out)
    rows: list[dict[str, object]] = []
    for ds in args.datasets:
        g = load_dataset(ds, data_root=args.data_root)
        for seed in args.seeds:
            w0, c0 = time.perf_counter(), time.process_time()
            split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, cfg, seed=seed)
            ei = split.message_passing_edge_index()
            emb = DeepWalk(DEEPWALK).fit(ei.numpy(), split.num_nodes, seed=seed)
            z = torch.from_numpy(emb.vectors)
            rng = np.random.default_rng(derive_seed(seed, "lmia_members"))
            held = split.held_out_edges
            members = split.members[rng.choice(len(split.members), len(held), replace=False)]
            row: dict[str, object] = {
                "dataset": ds, "seed": seed, "members": len(members),
                "held_out_edges": len(held), "held_out_non_edges": len(split.held_out_non_edges),
                "deepwalk_cpu_s": round(time.process_time() - c0, 1)}
            for kind in SIMILARITIES:
                s_m = pair_similarity(z, members, kind)
                per: dict[str, object] = {}
                for name, non in (("vs_held_out_edges", held),
                                  ("vs_held_out_non_edges", split.held_out_non_edges)):
                    s = np.r_[s_m, pair_similarity(z, non, kind)]
                    y = np.r_[np.ones(len(s_m)), np.zeros(len(non))]
                    per[name] = _evaluate(s, y, derive_seed(seed, "bootstrap", kind, name),
                                          args.n_bootstrap)
                row[kind] = per
            row["wall_s"] = round(time.perf_counter() - w0, 1)
            row["cpu_s"] = round(time.process_time() - c0, 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary: dict[str, object] = {"deepwalk": {k: v for k, v in vars(DEEPWALK).items()},
                                  "held_out_frac": args.held_out}
    for ds in args.datasets:
        rs = [r for r in rows if r["dataset"] == ds]
        summary[ds] = {
            f"{kind}_{name}_auc_mean": round(float(np.mean(
                [r[kind][name]["auc"][0] for r in rs])), 4)  # type: ignore[index]
            for kind in SIMILARITIES for name in ("vs_held_out_edges", "vs_held_out_non_edges")}
    print(json.dumps({"summary": summary}), flush=True)


if __name__ == "__main__":
    main()
