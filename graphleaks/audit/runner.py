"""Run an audit: train or load a target, run attacks, compute metrics, assemble a report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from torch_geometric.data import Data

from graphleaks._progress import progress
from graphleaks.attacks import Attack, AttackResult, Output
from graphleaks.attacks import registry as attack_registry
from graphleaks.attacks.base import ALL_OUTPUTS, Task
from graphleaks.attacks.harness import run_attack
from graphleaks.audit.report import AttackReport, AuditReport, TargetSummary
from graphleaks.audit.scores import CandidateTable, candidate_table, most_exposed, slice_masks
from graphleaks.audit.suite import (
    DEFAULT_SUITE,
    Suite,
    applicable_attacks,
    build_attack,
    get_suite,
)
from graphleaks.data.graph import fingerprint
from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.defenses import registry as defense_registry
from graphleaks.metrics import binary as binm
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.seeding import derive_seed
from graphleaks.versions import library_versions

REPORT_SCHEMA_VERSION = 1
#: Kept for callers of the old API; the default audit now runs every applicable attack.
DEFAULT_ATTACKS = ("confidence_mia",)


def train_target(
    graph: Data,
    *,
    arch: str = "gcn",
    defense: str = "none",
    defense_params: dict[str, Any] | None = None,
    spec: ArchitectureSpec | None = None,
    split: SplitConfig | None = None,
    dataset: dict[str, Any] | None = None,
    device: str = "cpu",
    seed: int,
) -> TrainedTarget:
    """Draw a membership split and train a target with a defense.

    Args:
        graph: The graph.
        arch: Architecture name, used when ``spec`` is None.
        defense: Defense registry name (``"none"`` for the non-private baseline).
        defense_params: Overrides of the defense's config.
        spec: Full architecture spec (overrides ``arch``).
        split: How to draw the split (inductive, 20 % members, by default).
        dataset: How to reload the graph later (stored in bundles).
        device: Torch device for training (the target is returned on the CPU).
        seed: Root seed: the split and training derive their seeds from it.
    """
    spec = spec or ArchitectureSpec(arch=arch)
    msplit = MembershipSplit.draw(graph.num_nodes, split, seed=derive_seed(seed, "split"))
    defense_obj = defense_registry.get(defense)(**(defense_params or {}))
    return defense_obj.fit(graph, msplit, model=spec, seed=derive_seed(seed, "target"),
                           dataset=dataset, device=device)


def _resolve(attack: Attack | str) -> Attack:
    return attack if isinstance(attack, Attack) else attack_registry.get(attack)()


def evaluate_result(
    result: AttackResult, *, n_bootstrap: int, seed: int, claimed_delta: float = 0.0
) -> dict[str, Any]:
    """All metrics of one result (delegated to :mod:`graphleaks.metrics`).

    Attribute inference results hold predicted classes as scores and are evaluated as
    multiclass predictions against the majority baseline; every other task is binary.
    """
    from graphleaks.metrics.multiclass import multiclass_metrics
    from graphleaks.metrics.privacy_bound import epsilon_lower_bound

    if result.task == Task.ATTRIBUTE:
        mc = multiclass_metrics(result.labels.astype(np.int64),
                                np.rint(result.scores).astype(np.int64),
                                y_train=result.train_labels, n_bootstrap=n_bootstrap, seed=seed)
        return {"multiclass": mc.to_dict()}
    metrics = binm.binary_metrics(result.scores, result.labels, threshold=result.threshold,
                                  n_bootstrap=n_bootstrap, seed=seed)
    out: dict[str, Any] = {"binary": metrics.to_dict(),
                           "roc": binm.roc_points(result.scores, result.labels)}
    oracle_acc, oracle_thr = binm.best_balanced_accuracy(result.scores, result.labels)
    out["oracle_balanced_accuracy"] = {"value": oracle_acc, "threshold": oracle_thr,
                                       "note": "upper bound: threshold chosen on the "
                                               "evaluation labels"}
    if "compat_duddu_label_indexing" in result.compat_flags:
        n_in = int(result.labels.sum()) // max(1, len(result.scores) // len(result.candidates))
        n_out = len(result.candidates) - n_in
        out["paper_metric"] = {
            "name": "GraphLeaks confidence 'accuracy' with the one-hot indexing bug",
            "value": binm.duddu_onehot_confidence_accuracy(result.scores, result.labels,
                                                           n_in, n_out),
        }
    if result.task == Task.MEMBERSHIP and len(result.scores) == len(result.candidates):
        # Sound only at a threshold chosen without the evaluation labels; the maximum over
        # thresholds is kept as an optimistic figure and labelled so.
        if result.threshold is not None:
            bound = epsilon_lower_bound(result.scores, result.labels, delta=claimed_delta,
                                        threshold=result.threshold)
            out["epsilon_lower_bound"] = bound.to_dict()
        optimistic = epsilon_lower_bound(result.scores, result.labels, delta=claimed_delta)
        out["epsilon_lower_bound_max_over_thresholds"] = optimistic.to_dict()
    return out


def trivial_baseline(labels: np.ndarray, train_labels: np.ndarray | None = None,
                     task: Task | str = Task.MEMBERSHIP) -> dict[str, float]:
    """What an adversary achieves without looking at the target.

    Binary tasks: AUC 0.5, advantage 0 and the accuracy of always guessing the larger side.
    Attribute inference: the accuracy of always guessing the most frequent attribute value
    the adversary knows (``train_labels``), a real accuracy in [0, 1].
    """
    if Task(task) == Task.ATTRIBUTE:
        from graphleaks.metrics.multiclass import majority_baseline

        known = train_labels if train_labels is not None and len(train_labels) else labels
        return {"accuracy": majority_baseline(np.asarray(known), np.asarray(labels)),
                "n_known": float(len(known))}
    n = len(labels)
    pos = float(np.sum(labels))
    return {"auc": 0.5, "advantage": 0.0, "accuracy": max(pos, n - pos) / n if n else 0.0,
            "tpr_at_fpr": 0.0}


@dataclass(frozen=True)
class AuditRun:
    """An audit's report and every candidate's scores (for ``scores.csv``)."""

    report: AuditReport
    tables: tuple[CandidateTable, ...]


def _attack_objects(
    attacks: Sequence[Attack | str] | None, suite: Suite, exposed: frozenset[Output]
) -> tuple[list[Attack], bool]:
    """The attacks to run, and whether they are the default (whole-registry) audit."""
    if attacks is None:
        return [build_attack(n, suite) for n in applicable_attacks(exposed)], True
    return [a if isinstance(a, Attack) else build_attack(a, suite) for a in attacks], False


def audit_with_scores(
    target: TrainedTarget,
    attacks: Sequence[Attack | str] | None = None,
    *,
    seed: int,
    n_bootstrap: int | None = None,
    view: str = "target",
    exposed: frozenset[Output] = ALL_OUTPUTS,
    config: dict[str, Any] | None = None,
    suite: str | Suite = DEFAULT_SUITE,
) -> AuditRun:
    """Run an audit and keep every candidate's score; see :func:`run_audit` for arguments."""
    from graphleaks.errors import CapabilityError
    from graphleaks.metrics.slices import slice_metrics

    the_suite = get_suite(suite)
    n_boot = the_suite.n_bootstrap if n_bootstrap is None else n_bootstrap
    attack_objs, default = _attack_objects(attacks, the_suite, exposed)
    reports, tables, skipped = [], [], {}
    for attack in progress(attack_objs, desc="attacks"):
        try:
            result = run_attack(attack, target, seed=derive_seed(seed, "run", attack.name),
                                view=view, exposed=exposed)
        except CapabilityError as exc:
            if not default:
                raise
            # the default audit runs what the target allows and says what it left out
            skipped[attack.name] = str(exc)
            continue
        metrics = evaluate_result(result, n_bootstrap=n_boot,
                                  seed=derive_seed(seed, "bootstrap", attack.name),
                                  claimed_delta=target.ledger.delta)
        table = candidate_table(result, target)
        exposure: dict[str, Any] = {}
        if table is not None:
            tables.append(table)
            if result.task != Task.ATTRIBUTE:
                metrics["slices"] = slice_metrics(
                    result.scores, result.labels, slice_masks(table), n_bootstrap=n_boot,
                    seed=derive_seed(seed, "slices", attack.name))
                exposure["most_exposed"] = most_exposed(table)
        reports.append(AttackReport(
            attack=attack.name, task=result.task.value,
            threat_model=result.threat_model.to_dict(), config=result.config,
            compat_flags=list(result.compat_flags), notes=list(result.notes),
            query_graph=result.query_graph, metrics=metrics,
            baseline=trivial_baseline(result.labels, result.train_labels, result.task),
            runtime_s=result.runtime_s, exposure=exposure,
        ))
    cfg = dict(config or {})
    cfg.setdefault("suite", the_suite.name)
    if skipped:
        cfg["skipped_attacks"] = skipped
    g = target.graph
    summary = TargetSummary(
        architecture=target.spec.to_dict(), defense=target.defense,
        defense_config=target.defense_config, dataset=target.dataset,
        fingerprint=fingerprint(g), num_nodes=int(g.num_nodes),
        num_edges=int(g.edge_index.size(1)), protocol=target.split.kind,
        split_sizes={p: len(getattr(target.split, p)) for p in ("train", "val", "test", "aux")},
        utility=target.utility, training=target.training,
    )
    report = AuditReport(
        schema_version=REPORT_SCHEMA_VERSION, seed=seed, target=summary,
        ledger=target.ledger.to_dict(), attacks=reports, config=cfg,
        versions=library_versions(),
    )
    return AuditRun(report, tuple(tables))


def run_audit(
    target: TrainedTarget,
    attacks: Sequence[Attack | str] | None = None,
    *,
    seed: int,
    n_bootstrap: int | None = None,
    view: str = "target",
    exposed: frozenset[Output] = ALL_OUTPUTS,
    config: dict[str, Any] | None = None,
    suite: str | Suite = DEFAULT_SUITE,
) -> AuditReport:
    """Run ``attacks`` (by default every attack the target exposes) and return the report.

    Args:
        target: The trained target.
        attacks: Attack objects or registry names; None (default) runs every registered
            attack whose required outputs ``exposed`` grants, at the suite's budgets, and
            skips (and records) any the target cannot serve.
        seed: Root seed of challenges, attacks and bootstrap intervals.
        n_bootstrap: Bootstrap replicates per confidence interval (default: the suite's).
        view: The graph view queries are evaluated in.
        exposed: Outputs the deployment exposes.
        config: The configuration to record in the report (e.g. CLI options).
        suite: Budgets: ``quick``, ``standard`` (default) or ``thorough``; they apply to
            attacks given by name too, never to attack objects.

    Example:
        >>> from graphleaks.data import tiny_graph
        >>> t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=20))
        >>> r = run_audit(t, ["confidence_mia"], seed=0, n_bootstrap=50)
        >>> r.attacks[0].attack
        'confidence_mia'
    """
    return audit_with_scores(target, attacks, seed=seed, n_bootstrap=n_bootstrap, view=view,
                             exposed=exposed, config=config, suite=suite).report
