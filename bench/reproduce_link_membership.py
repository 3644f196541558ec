"""Reproduce edge-membership leakage of a GCN link predictor: score threshold vs edge LiRA.

For each dataset (bundled Cora; CiteSeer from the data root, copied to the writable cache as
the README says) and seed: draw the default edge-membership split (transductive, 85/5/10 of
the undirected edges as members / validation / held-out, one uniform non-edge per held-out
edge, member edges kept in the inference graph), train a two-layer GCN graph autoencoder
(``LinkPredictorSpec.gae`` at the widths below), then audit it with
:func:`graphleaks.audit.link_audit.audit_link_split` running two attacks:

* ``edge_score_threshold``: the model's own logit of the pair;
* ``edge_lira`` (online): per-pair likelihood ratio against reference link predictors
  trained on random halves of the candidate edges (``--references`` of them, at most
  ``--ref-epochs`` epochs each; ``--ref-epochs target``: as many epochs as the target's kept
  model trained, its best validation epoch, read from its training log, so that references
  fit their edges as much as the target fits its own; ``--per-pair-variance``: per-pair
  IN/OUT standard deviations instead of pooled ones).

Candidates: every held-out edge and non-edge, and as many randomly drawn member edges.
``--held-out-non-edges K`` draws K uniform non-edges per held-out edge (the split's
``negatives_per_positive``, also for validation), so more non-members sit below 1 % FPR
(K = 2 on Cora: 1,584 non-members, 16 of them at 1 % FPR, instead of 1,056 and 10).
Printed per run (one JSON line): test link AUC (held-out edges vs held-out non-edges), each
attack's AUC and TPR at 1 % FPR with 95 % intervals (the audit's bootstrap/analytic
intervals), the same on the slice "members vs held-out true edges only" (no easy non-edges
among the non-members), wall and process CPU seconds. Then a summary: means over seeds, whether
LiRA beats the threshold attack (per seed: point estimates; "clearly": LiRA's lower bound
above the threshold's upper bound), and the paired difference LiRA − threshold in TPR at 1 %
FPR (:func:`graphleaks.metrics.paired.paired_tpr_difference`: both attacks scored the same
candidates, so each bootstrap replicate resamples them once for both; per seed, and pooled
as the mean over seeds with every seed resampled). Last, the same as the two Markdown tables
the README quotes, and whether both attacks beat chance in every run (AUC lower bound above
0.5 and TPR at 1 % FPR lower bound above 0.01). ``--scores-out DIR`` keeps each run's
candidates, truth and both attacks' scores.

Usage (from the repository root)::

    python bench/reproduce_link_membership.py [--datasets cora citeseer] [--seeds 0 1 2]
        [--references 8] [--ref-epochs 50|target] [--per-pair-variance]
        [--held-out-non-edges 1] [--scores-out DIR]
        [--data-root /work/shared/datasets]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.audit.link_audit import audit_link_split  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.data.edge_splits import EdgeMembershipSplit, EdgeSplitConfig  # noqa: E402
from graphleaks.metrics.paired import paired_tpr_difference  # noqa: E402
from graphleaks.models.link_predictor import LinkPredictorSpec, fit_link_predictor  # noqa: E402

ATTACKS = ("edge_score_threshold", "edge_lira")


def _ref_epochs(value: str) -> int | str:
    if value == "target":
        return value
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError("--ref-epochs must be a positive integer or 'target'")
    return n


def _est(e: object) -> dict[str, float]:
    return {"value": round(float(e.value), 4), "lo": round(float(e.lo), 4),  # type: ignore[attr-defined]
            "hi": round(float(e.hi), 4)}  # type: ignore[attr-defined]


def main() -> None:
    """Parse options, run every dataset × seed, print JSON lines and a summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["cora", "citeseer"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--references", type=int, default=8)
    ap.add_argument("--ref-epochs", type=_ref_epochs, default=50,
                    help="each reference's epochs; 'target': as many as the target's kept "
                         "model trained (its best validation epoch, from its training log)")
    ap.add_argument("--per-pair-variance", action="store_true",
                    help="per-pair IN/OUT standard deviations instead of one pooled each")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--embedding-dim", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--patience", type=int, default=30)
    ap.add_argument("--n-bootstrap", type=int, default=1000)
    ap.add_argument("--data-root", default="/work/shared/datasets")
    ap.add_argument("--held-out-non-edges", type=int, default=1,
                    help="held-out non-edges per held-out edge (the split's "
                         "negatives_per_positive): more non-members resolve 1 %% FPR better")
    ap.add_argument("--scores-out", type=Path, default=None,
                    help="write each run's candidates, truth and both attacks' scores here "
                         "(DATASET_seedS.npz)")
    args = ap.parse_args()
    split_cfg = EdgeSplitConfig(negatives_per_positive=args.held_out_non_edges)
    paired: dict[str, list[tuple[object, object, object]]] = {ds: [] for ds in args.datasets}
    spec = LinkPredictorSpec.gae(hidden=(args.hidden,), embedding_dim=args.embedding_dim,
                                 epochs=args.epochs, patience=args.patience)
    rows = []
    for ds in args.datasets:
        g = load_dataset(ds, data_root=args.data_root)
        for seed in args.seeds:
            w0, c0 = time.perf_counter(), time.process_time()
            split = EdgeMembershipSplit.draw(g.edge_index, g.num_nodes, split_cfg, seed=seed)
            model, log = fit_link_predictor(g.x, split, spec, seed=seed)
            train_wall, train_cpu = time.perf_counter() - w0, time.process_time() - c0
            ref_epochs = log.best_epoch if args.ref_epochs == "target" else args.ref_epochs
            params = {"edge_lira": {"variant": "online", "num_references": args.references,
                                    "ref_epochs": ref_epochs,
                                    "fixed_variance": not args.per_pair_variance}}
            run = audit_link_split(model, g.x, split, name=ds, attacks=list(ATTACKS), seed=seed,
                                   n_bootstrap=args.n_bootstrap, params=params,
                                   training={"best_epoch": log.best_epoch,
                                             "epochs_run": log.epochs_run})
            rep = run.report
            row = {"dataset": ds, "seed": seed,
                   "test_link_auc": round(float(rep.target.utility["test_link_auc"]), 4),
                   "best_epoch": log.best_epoch, "epochs_run": log.epochs_run,
                   "ref_epochs": ref_epochs,
                   "n_members_scored": rep.target.split_sizes["members_scored"],
                   "n_non_members_scored": rep.target.split_sizes["non_members_scored"],
                   "train_wall_s": round(train_wall, 1), "train_cpu_s": round(train_cpu, 1),
                   "total_wall_s": round(time.perf_counter() - w0, 1),
                   "total_cpu_s": round(time.process_time() - c0, 1)}
            for a in rep.attacks:
                b = a.metrics.binary
                assert b is not None
                row[a.attack] = {"auc": _est(b.auc), "tpr_at_1pct_fpr": _est(b.tpr_at_fpr[0.01])}
                hard = a.metrics.slices.get("non_members=held_out_edges")
                if hard is not None and hard.auc is not None:
                    # members against held-out true edges only: no easy non-edges
                    row[a.attack]["vs_held_out_edges"] = {
                        "auc": _est(hard.auc), "tpr_at_1pct_fpr": _est(hard.tpr_at_fpr[0.01])}
            tables = {t.attack: t for t in run.tables}
            thr, lira = tables["edge_score_threshold"], tables["edge_lira"]
            if not (np.array_equal(thr.nodes, lira.nodes)
                    and np.array_equal(thr.labels, lira.labels)):
                raise SystemExit("the two attacks scored different candidates; no paired test")
            paired[ds].append((lira.scores, thr.scores, lira.labels))
            if args.scores_out is not None:
                args.scores_out.mkdir(parents=True, exist_ok=True)
                np.savez(args.scores_out / f"{ds}_seed{seed}.npz", pairs=thr.nodes,
                         truth=thr.labels, kind=thr.part.astype(str),
                         edge_score_threshold=thr.scores, edge_lira=lira.scores)
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary: dict[str, object] = {"spec": spec.to_dict(), "references": args.references,
                                  "ref_epochs": args.ref_epochs,
                                  "per_pair_variance": args.per_pair_variance,
                                  "held_out_non_edges_per_edge": args.held_out_non_edges}
    for ds in args.datasets:
        rs = [r for r in rows if r["dataset"] == ds]
        mean = {k: round(sum(r[k] for r in rs) / len(rs), 4) for k in ("test_link_auc",)}
        for att in ATTACKS:
            for m in ("auc", "tpr_at_1pct_fpr"):
                mean[f"{att}_{m}"] = round(sum(r[att][m]["value"] for r in rs) / len(rs), 4)
        beats = [r["edge_lira"]["tpr_at_1pct_fpr"]["value"]
                 > r["edge_score_threshold"]["tpr_at_1pct_fpr"]["value"] for r in rs]
        clearly = [r["edge_lira"]["tpr_at_1pct_fpr"]["lo"]
                   > r["edge_score_threshold"]["tpr_at_1pct_fpr"]["hi"] for r in rs]
        # LiRA - threshold at 1 % FPR on the same candidates: a paired bootstrap per seed,
        # pooled (mean of the per-seed differences) over the seeds
        d = paired_tpr_difference([p[0] for p in paired[ds]], [p[1] for p in paired[ds]],
                                  [p[2] for p in paired[ds]], fpr=0.01,
                                  n_bootstrap=args.n_bootstrap, seed=0)
        # chance: AUC 0.5 and TPR = FPR = 0.01; "above" means the interval's lower bound is
        chance = {att: [r[att]["auc"]["lo"] > 0.5 and r[att]["tpr_at_1pct_fpr"]["lo"] > 0.01
                        for r in rs] for att in ATTACKS}
        summary[ds] = {**mean, "above_chance_per_seed": chance,
                       "lira_beats_threshold_tpr1_per_seed": beats,
                       "lira_interval_clears_threshold_per_seed": clearly,
                       "lira_minus_threshold_tpr1_paired": {
                           "pooled": [round(d.value, 4), round(d.lo, 4), round(d.hi, 4)],
                           "per_seed": [[round(v, 4) for v in r] for r in d.per_run]}}
    print(json.dumps({"summary": summary}), flush=True)
    print(_markdown(rows, summary, args.datasets), flush=True)


def _ci(e: dict[str, float]) -> str:
    return f"{e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}]"


def _diff(v: list[float]) -> str:
    return f"{v[0]:+.3f} [{v[1]:+.3f}, {v[2]:+.3f}]"


def _markdown(rows: list[dict[str, object]], summary: dict[str, object],
              datasets: list[str]) -> str:
    """The two tables the README quotes: per run, and LiRA − threshold paired and pooled."""
    lines = ["| dataset | seed | test link AUC | threshold AUC | threshold TPR@1%FPR | LiRA AUC "
             "| LiRA TPR@1%FPR | vs held-out edges: threshold / LiRA AUC | CPU s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t, li = r["edge_score_threshold"], r["edge_lira"]
        hard = (f"{t['vs_held_out_edges']['auc']['value']:.3f} / "  # type: ignore[index]
                f"{li['vs_held_out_edges']['auc']['value']:.3f}"  # type: ignore[index]
                if "vs_held_out_edges" in t else "-")  # type: ignore[operator]
        lines.append(
            f"| {r['dataset']} | {r['seed']} | {r['test_link_auc']:.3f} | "
            f"{t['auc']['value']:.3f} | {_ci(t['tpr_at_1pct_fpr'])} | "  # type: ignore[index]
            f"{li['auc']['value']:.3f} | {_ci(li['tpr_at_1pct_fpr'])} | {hard} | "  # type: ignore[index]
            f"{r['total_cpu_s']:.0f} |")
    lines += ["", "| dataset | LiRA − threshold, TPR at 1 % FPR, pooled [95 %] | per seed |",
              "|---|---|---|"]
    for ds in datasets:
        d = summary[ds]["lira_minus_threshold_tpr1_paired"]  # type: ignore[index]
        lines.append(f"| {ds} | {_diff(d['pooled'])} | "
                     f"{' / '.join(_diff(v) for v in d['per_seed'])} |")
    lines.append("")
    for ds in datasets:
        ch = summary[ds]["above_chance_per_seed"]  # type: ignore[index]
        verdict = "every run" if all(all(v) for v in ch.values()) else "NOT every run"
        lines.append(f"{ds}: both attacks above chance (AUC lower bound > 0.5 and TPR@1%FPR "
                     f"lower bound > 0.01) in {verdict}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
