"""Time the whole LastFM Asia attribute-inference pipeline (target: under 2 minutes, 2 cores).

Stages: random walks (timed alone, for the walk rate), embedding training (walks regenerated
inside ``fit`` + gensim Word2Vec), then the MLP, RF and SVM attack classifiers with metrics.
The pipeline total is embedding training + the three classifiers (the separate walk pass is
reported for information only).

Usage (from the repository root)::

    python bench/bench_aia.py [--data-root DIR] [--method deepwalk|node2vec] [--workers N]

``--workers 1`` is graphleaks' deterministic mode; more workers are faster but not
bit-reproducible.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.attacks.attribute_inference import CLASSIFIERS  # noqa: E402
from graphleaks.audit.embedding_audit import audit_embeddings  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.models.embeddings import DeepWalk, EmbedderConfig, Node2Vec  # noqa: E402
from graphleaks.models.walks import CSRGraph, WalkConfig, generate_walks  # noqa: E402

SETTINGS = {
    "deepwalk": (DeepWalk, {"dimensions": 64, "walk_length": 40, "walks_per_node": 10,
                            "window": 5, "negative": 0}),
    "node2vec": (Node2Vec, {"dimensions": 64, "walk_length": 80, "walks_per_node": 10,
                            "window": 10, "negative": 5}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--method", choices=list(SETTINGS), default="deepwalk")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--aux-frac", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    times: dict[str, float] = {}
    t = time.perf_counter()
    g = load_dataset("lastfm-asia", data_root=args.data_root)
    times["load"] = time.perf_counter() - t
    cls, settings = SETTINGS[args.method]
    cfg = EmbedderConfig(workers=args.workers, deterministic=args.workers == 1, **settings)

    t = time.perf_counter()
    csr = CSRGraph.from_edge_index(g.edge_index, int(g.num_nodes))
    wcfg = WalkConfig(walk_length=cfg.walk_length, walks_per_node=cfg.walks_per_node,
                      p=cfg.p, q=cfg.q)
    steps = sum(int(c.shape[0]) * (c.shape[1] - 1) for c in generate_walks(csr, wcfg, seed=0))
    times["walks_alone"] = time.perf_counter() - t

    t = time.perf_counter()
    emb = cls(cfg).fit(g.edge_index, int(g.num_nodes), seed=args.seed)
    times["embedding_fit"] = time.perf_counter() - t
    y = g.y.numpy()
    f1 = {}
    for clf in CLASSIFIERS:
        t = time.perf_counter()
        rep = audit_embeddings(emb.vectors, y, classifiers=(clf,), aux_frac=args.aux_frac,
                               seed=args.seed, n_bootstrap=200)
        times[f"classifier_{clf}"] = time.perf_counter() - t
        f1[clf] = round(rep.results[0]["metrics"]["f1_micro"]["value"], 4)
    total = times["embedding_fit"] + sum(times[f"classifier_{c}"] for c in CLASSIFIERS)
    out = {
        "method": args.method, "workers": args.workers, "num_nodes": int(g.num_nodes),
        "seconds": {k: round(v, 2) for k, v in times.items()},
        "walk_steps_per_s": round(steps / times["walks_alone"]),
        "pipeline_s": round(total, 2), "target_s": 120, "meets_target": total < 120,
        "f1_micro": f1,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
