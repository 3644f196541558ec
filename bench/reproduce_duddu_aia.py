"""Reproduce Duddu et al.'s attribute inference on DeepWalk/node2vec embeddings (attacks.md §4).

For ego-Facebook (gender, 3 classes) and LastFM Asia (country, 18 classes), trains DeepWalk and
node2vec embeddings with graphleaks (the original tools' defaults, dimensions as in the paper's
files: 256 for Facebook, 64 for LastFM), runs the MLP, RF and SVM attack classifiers with the
adversary knowing 30 % and 50 % of the attributes, and prints micro-F1 (the paper's metric),
macro-F1 and the majority baseline beside the paper's figures. Every setting runs over several
seeds (new embeddings, known-node draw and classifier each time); the table gives the mean and
a 95 % t-interval over seeds, and how many seeds' bootstrap gain intervals were above zero.

Usage (from the repository root)::

    python bench/reproduce_duddu_aia.py [--data-root DIR] [--seeds 3] [--quick] [--json OUT]

``--quick`` runs only the 30 % setting with fewer bootstrap replicates. Slow: a full run trains
``2 datasets x 2 methods x seeds`` embeddings.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.attacks.attribute_inference import CLASSIFIERS  # noqa: E402
from graphleaks.audit.embedding_audit import audit_embeddings  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.models.embeddings import DeepWalk, EmbedderConfig, Node2Vec  # noqa: E402

DATASETS = {"ego-facebook": {"dims": 256, "attribute": "gender", "baseline": 0.600},
            "lastfm-asia": {"dims": 64, "attribute": "country", "baseline": 0.206}}
METHODS = {
    # phanein/deepwalk and aditya-grover/node2vec CLI defaults (attacks.md §4)
    "deepwalk": (DeepWalk, {"walk_length": 40, "walks_per_node": 10, "window": 5,
                            "negative": 0}),
    "node2vec": (Node2Vec, {"walk_length": 80, "walks_per_node": 10, "window": 10,
                            "negative": 5}),
}
# The paper's micro-F1 ranges (over classifiers) with 30 % known; None = not reported.
PAPER = {("ego-facebook", "deepwalk"): (0.57, 0.61), ("ego-facebook", "node2vec"): (0.57, 0.61),
         ("lastfm-asia", "deepwalk"): (0.61, 0.65), ("lastfm-asia", "node2vec"): (0.80, 0.83)}
T95 = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306,
       10: 2.262}


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95 % t-interval over seeds."""
    a = np.asarray(values, dtype=np.float64)
    m = float(a.mean())
    if len(a) < 2:
        return m, math.nan, math.nan
    half = T95.get(len(a), 1.96) * float(a.std(ddof=1)) / math.sqrt(len(a))
    return m, m - half, m + half


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="30 %% known only, 200 bootstraps")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--json", type=Path, help="also write all figures here")
    args = ap.parse_args()
    if args.seeds < 3:
        print("note: fewer than 3 seeds; intervals over seeds are wide or undefined",
              file=sys.stderr)
    fracs = (0.3,) if args.quick else (0.3, 0.5)
    n_boot = 200 if args.quick else 1000
    rows = []
    for ds in args.datasets:
        g = load_dataset(ds, data_root=args.data_root)
        y = g.y.numpy()
        for method in args.methods:
            cls, settings = METHODS[method]
            runs: dict[tuple[float, str], list[dict]] = {}
            for seed in range(args.seeds):
                t0 = time.perf_counter()
                cfg = EmbedderConfig(dimensions=DATASETS[ds]["dims"], **settings)
                emb = cls(cfg).fit(g.edge_index, int(g.num_nodes), seed=seed)
                t_emb = time.perf_counter() - t0
                for frac in fracs:
                    rep = audit_embeddings(emb.vectors, y, classifiers=CLASSIFIERS,
                                           aux_frac=frac, seed=seed, n_bootstrap=n_boot)
                    for r in rep.results:
                        runs.setdefault((frac, r["classifier"]), []).append(r["metrics"])
                print(f"# {ds} {method} seed {seed}: embeddings {t_emb:.1f}s, total "
                      f"{time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
            for (frac, clf), ms in runs.items():
                f1 = mean_ci([m["f1_micro"]["value"] for m in ms])
                macro = mean_ci([m["f1_macro"]["value"] for m in ms])
                rows.append({
                    "dataset": ds, "method": method, "known": frac, "classifier": clf,
                    "f1_micro": f1, "f1_macro": macro,
                    "majority_baseline": float(np.mean([m["majority_baseline"] for m in ms])),
                    "paper_baseline": DATASETS[ds]["baseline"],
                    "leak_seeds": sum(bool(m["leaks"]) for m in ms), "seeds": len(ms),
                    "paper_f1": PAPER.get((ds, method)) if frac == 0.3 else None,
                })
    header = (f"{'dataset':13} {'method':9} {'known':>5} {'clf':4} {'micro-F1 [95% CI seeds]':>26}"
              f" {'macro-F1':>8} {'baseline':>8} {'paper':>11} {'leaks':>6}")
    print(header)
    print("-" * len(header))
    for r in rows:
        m, lo, hi = r["f1_micro"]
        paper = "–" if r["paper_f1"] is None else f"{r['paper_f1'][0]:.2f}–{r['paper_f1'][1]:.2f}"
        print(f"{r['dataset']:13} {r['method']:9} {r['known']:>5.0%} {r['classifier']:4} "
              f"{m:>8.3f} [{lo:.3f}, {hi:.3f}]     {r['f1_macro'][0]:>8.3f} "
              f"{r['majority_baseline']:>8.3f} {paper:>11} {r['leak_seeds']}/{r['seeds']:<4}")
    print("\nbaseline = best constant guess on the evaluated nodes (at least the known "
          "nodes' majority class) "
          "(paper: 0.600 Facebook, 0.206 LastFM); leaks = seeds whose bootstrap gain "
          "interval is above zero.")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
