"""Is the loss threshold's low-FPR weakness in the graph reproduction a floating-point tie?

The threshold attack scores a graph by its log posterior of the true class; for an overfit
GIN that is exactly 0.0 (a margin beyond ~37 nats rounds away in float64) for many members
and non-members alike, and at 1 % FPR the attack then draws at random inside the tie. This
script retrains the targets of runs pickled by ``reproduce_graph_membership.py --runs-out``
(same seeds and settings: training is deterministic, so they are the same models), scores the
candidates by the **logit margin** ``z_y - logsumexp(z_other)`` (the same order as the log
posterior wherever that is not tied, finite where it is), and repeats the paired bootstrap
of each LiRA/RMIA variant against it, on the pickled LiRA/RMIA scores.

    nice -n 19 OMP_NUM_THREADS=1 python bench/graph_threshold_saturation.py runs/solubility.pkl
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce_graph_membership import _fmt, dataset  # noqa: E402

from graphleaks.metrics.binary import tpr_at_fpr  # noqa: E402
from graphleaks.metrics.paired import paired_tpr_difference  # noqa: E402
from graphleaks.models.graph_classifier import GraphClassifierSpec, fit_graph_classifier  # noqa: E402
from graphleaks.models.graph_target import copy_logits  # noqa: E402
from graphleaks.seeding import derive_seed  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", type=Path, nargs="+", help="pickles of --runs-out (your own)")
    p.add_argument("--n-paired", type=int, default=1000)
    args = p.parse_args()
    torch.set_num_threads(1)
    for path in args.runs:
        c0 = time.process_time()
        with open(path, "rb") as f:
            saved = pickle.load(f)  # noqa: S301 (the bench's own output)
        st = saved["settings"]
        name, k = str(st["datasets"][0]), int(st["members"][0])
        margins, truths = [], []
        for seed, r in zip(saved["seeds"], saved["runs"], strict=True):
            # the split and the target exactly as reproduce_graph_membership.one_run draws them
            gs = dataset(name, seed, st["label_noise"], k, st["solubility"])
            perm = np.random.default_rng(derive_seed(seed, "bench-split", name)).permutation(
                len(gs))
            members = np.sort(perm[:k])
            spec = GraphClassifierSpec(hidden=st["hidden"], layers=3, epochs=st["epochs"],
                                       patience=0, batch_size=32, lr=st["lr"])
            model, _ = fit_graph_classifier(spec, [gs[int(i)] for i in members],
                                            gs.num_classes, seed=seed)
            ids = r["graph_confidence_mia"]["ids"]
            with torch.no_grad():
                z = copy_logits(model, [gs[int(i)] for i in ids]).double()
            y = gs.y[torch.as_tensor(ids)]
            logp = torch.log_softmax(z, dim=1).gather(1, y.view(-1, 1)).view(-1).numpy()
            if not np.allclose(logp, r["graph_confidence_mia"]["scores"], atol=1e-9):
                raise SystemExit(f"{name} seed {seed}: the retrained target differs from the "
                                 "pickled run's; no comparison")
            # the margin in log space: what the log posterior rounds to 0.0 stays ordered
            margin = (z.gather(1, y.view(-1, 1)).view(-1)
                      - torch.logsumexp(z.scatter(1, y.view(-1, 1), float("-inf")), dim=1)
                      ).numpy()
            truth = r["graph_confidence_mia"]["truth"]
            margins.append(margin)
            truths.append(truth)
            print(f"[{name} seed {seed}] log posterior exactly 0: members "
                  f"{(logp[truth] == 0).mean():.3f}, non-members {(logp[~truth] == 0).mean():.3f}; "
                  f"TPR@1%FPR log posterior {r['graph_confidence_mia']['tpr1'][0]:.3f}, "
                  f"margin {tpr_at_fpr(margin, truth, 0.01):.3f}", flush=True)
        mt = [float(tpr_at_fpr(m, t, 0.01)) for m, t in zip(margins, truths, strict=True)]
        print(f"[{name}] margin threshold TPR@1%FPR per seed {[round(v, 3) for v in mt]}")
        for a in [a for a in saved["attacks"] if "[" in a]:
            d = paired_tpr_difference([r[a]["scores"] for r in saved["runs"]], margins, truths,
                                      fpr=0.01, n_bootstrap=args.n_paired, seed=0)
            print(f"  TPR@1%FPR {a} - margin threshold: per seed "
                  f"{[round(v[0], 3) for v in d.per_run]}, pooled {_fmt(d.value, d.lo, d.hi)}"
                  f": {'above 0' if d.lo > 0 else 'reaches 0'}")
        print(f"[{name}] process CPU {time.process_time() - c0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
