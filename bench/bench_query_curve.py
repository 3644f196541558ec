"""Leakage against queries on bundled Cora (GCN): LinkTeller and the label-only MIA at each
query budget, with the wall and process CPU time of each point.

Each point is :func:`graphleaks.audit.query_curve.query_curve` at one budget; a point equals
the same budget's point of the whole grid (every budget of an attack scores a challenge drawn
from the same seed), so timing them one by one changes no figure. Usage::

    nice python bench/bench_query_curve.py [--budgets 100,1000,10000] [--seed 0]
        [--sampler auto|random] [--attacks linkteller,label_only_mia]
"""

from __future__ import annotations

import argparse
import time

from graphleaks.attacks.label_only_mia import LabelOnlyMIA
from graphleaks.attacks.linkteller import LinkTeller
from graphleaks.audit.query_curve import query_curve
from graphleaks.audit.runner import train_target
from graphleaks.audit.suite import SUITES, build_attack
from graphleaks.data import load_dataset
from graphleaks.report.query_curves import QueryCurve, parse_budgets


def _est(e) -> str:  # noqa: ANN001
    return "–" if e is None else f"{e.value:.3f} [{e.lo:.3f}, {e.hi:.3f}]"


def main() -> None:
    """Train the target, then time every point of both curves."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", default="100,1000,10000")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sampler", default="auto", choices=("auto", "random"),
                    help="LinkTeller's node sampler (auto: the suite's default)")
    ap.add_argument("--attacks", default="linkteller,label_only_mia",
                    help="comma-separated curve attacks to time")
    args = ap.parse_args()
    budgets = parse_budgets(args.budgets)
    suite = SUITES["standard"]
    t0 = time.perf_counter()
    target = train_target(load_dataset("cora"), seed=args.seed)
    print(f"target: GCN on bundled Cora (2,708 nodes), inductive split, trained in "
          f"{time.perf_counter() - t0:.1f} s; test accuracy "
          f"{target.utility.get('test_accuracy', float('nan')):.3f}")
    attacks: list[LinkTeller | LabelOnlyMIA] = [
        LinkTeller(build_attack("linkteller", suite).config, sampler=args.sampler),
        LabelOnlyMIA(build_attack("label_only_mia", suite).config)]
    wanted = {a.strip() for a in args.attacks.split(",")}
    attacks = [a for a in attacks if a.name in wanted]
    print(f"budgets: {', '.join(f'{b:,}' for b in budgets)} queries per attack; seed "
          f"{args.seed}; {suite.n_bootstrap} bootstrap replicates")
    print(f"{'attack':<16}{'budget':>8}{'queries':>9}  {'setting':<32}{'pos/neg':>14}  "
          f"{'AUC [95% CI]':<24}{'TPR@1%FPR [95% CI]':<24}{'level':<14}{'wall s':>8}"
          f"{'CPU s':>8}")
    for attack in attacks:
        points = []
        for b in budgets:
            c0, w0 = time.process_time(), time.perf_counter()
            qc = query_curve(target, [attack], budgets=(b,), seed=args.seed, suite=suite)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            (p,) = qc.curves[0].points
            points.append(p)
            setting = ", ".join(f"{k}={v}" for k, v in sorted(p.setting.items()))
            sides = "–" if p.n_pos is None else f"{p.n_pos}/{p.n_neg}"
            level = p.level or "no metric"
            print(f"{attack.name:<16}{b:>8,}{p.queries:>9,}  {setting:<32}{sides:>14}  "
                  f"{_est(p.auc):<24}{_est(p.tpr_at_1fpr):<24}{level:<14}{wall:>8.1f}"
                  f"{cpu:>8.1f}", flush=True)
            if p.note and p.level is None:
                print(f"    note: {p.note}")
        curve = QueryCurve(attack.name, attack.task.value, "", tuple(points))
        reached = ", ".join(f"{lv}: {'not reached' if b is None else f'{b:,}'}"
                            for lv, b in curve.levels_reached().items())
        print(f"  {attack.name}: smallest budget per level: {reached}")


if __name__ == "__main__":
    main()
