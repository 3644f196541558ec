"""Run an audit: train or load a target, run attacks, compute metrics, assemble a report."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from torch_geometric.data import Data

from graphleaks._executor import LOCAL, Executor, RayExecutor
from graphleaks._progress import progress
from graphleaks.attacks import Attack, AttackResult, Output
from graphleaks.attacks._references import ReferencePool
from graphleaks.attacks._shadow import ShadowPool
from graphleaks.attacks.base import ALL_OUTPUTS, Task
from graphleaks.attacks.capabilities import Capability
from graphleaks.attacks.harness import run_attack
from graphleaks.audit.suite import (
    DEFAULT_SUITE,
    Suite,
    applicable_attacks,
    build_attack,
    get_suite,
)
from graphleaks.data.graph import fingerprint
from graphleaks.data.ref import DatasetRef
from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.defenses.base import reported_config
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics import binary as binm
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.privacy.ledger import PrivacyLedger, PrivacyUnit
from graphleaks.report.records import (
    AttackMetrics,
    BoundReport,
    LedgerComparison,
    OracleAccuracy,
    PaperMetric,
    RocCurve,
)
from graphleaks.report.report import (
    REPORT_SCHEMA_VERSION,
    AttackReport,
    AuditReport,
    ServingSummary,
    TargetSummary,
    json_safe,
)
from graphleaks.report.scores import (
    CandidateTable,
    candidate_table,
    most_exposed,
    node_attributes,
    slice_masks,
)
from graphleaks.seeding import derive_seed
from graphleaks.versions import library_versions


def train_target(
    graph: Data,
    *,
    arch: str = "gcn",
    defense: str = "none",
    defense_params: dict[str, Any] | None = None,
    spec: ArchitectureSpec | None = None,
    split: SplitConfig | None = None,
    dataset: DatasetRef | Mapping[str, Any] | None = None,
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
        dataset: Where ``graph`` came from (:class:`~graphleaks.data.ref.DatasetRef`), so a
            bundle reloads it; None for a graph built in memory.
        device: Torch device for training (the target is returned on the CPU).
        seed: Root seed: the split and training derive their seeds from it.
    """
    from graphleaks.plugins import build_plugin

    spec = spec or ArchitectureSpec(arch=arch)
    # The same resolution as the CLI and the spec: typed fields, any accepted spelling.
    defense_obj = build_plugin("defense", defense, defense_params)
    # Refuse an impossible size before drawing or training anything.
    defense_obj.check_scale(int(graph.num_nodes), int(graph.edge_index.size(1)))
    msplit = MembershipSplit.draw(graph.num_nodes, split, seed=derive_seed(seed, "split"))
    check_trainable(graph, msplit)
    return defense_obj.fit(graph, msplit, model=spec, seed=derive_seed(seed, "target"),
                           dataset=dataset, device=device)


def check_trainable(graph: Data, split: MembershipSplit) -> None:
    """Refuse a graph and split whose audit could only be meaningless.

    A target trained on one class outputs a constant, so every membership attack scores
    AUC 0.5 [0.5, 0.5] and a CI gate would pass on a broken input.

    Raises:
        DataError: If the graph has no labels, the split no members or no non-members, or
            the members' labels hold fewer than two classes.
    """
    y = getattr(graph, "y", None)
    if y is None:
        raise DataError("the graph has no labels; a node classification target needs a "
                        "label file (--labels)")
    if len(split.train) == 0:
        raise DataError("the membership split has no members (training nodes); raise "
                        "--train-frac or use a larger graph")
    if len(split.test) == 0:
        raise DataError("the membership split has no non-members (held-out nodes); lower "
                        "--train-frac or use a larger graph")
    classes = int(np.unique(y.cpu().numpy()[split.train]).size)
    if classes < 2:
        raise DataError(f"the training labels hold {classes} class; a target needs at least 2 "
                        "(its audit would be meaningless); check the label file")


def evaluate_result(
    result: AttackResult, *, n_bootstrap: int, seed: int, claimed_delta: float = 0.0,
    ledger: PrivacyLedger | None = None,
) -> AttackMetrics:
    """All metrics of one result (delegated to :mod:`graphleaks.metrics`), typed.

    Attribute inference results hold predicted classes as scores and are evaluated as
    multiclass predictions against the majority baseline; every other task is binary.
    Membership and link results get ε lower bounds in the unit they test (node, edge), each
    compared with ``ledger`` only when the ledger protects that same unit.
    """
    from graphleaks.metrics.multiclass import multiclass_metrics
    from graphleaks.metrics.privacy_bound import (
        TESTED_UNITS,
        compare_with_claim,
        epsilon_lower_bound,
    )

    if result.task == Task.ATTRIBUTE:
        mc = multiclass_metrics(result.labels.astype(np.int64),
                                np.rint(result.scores).astype(np.int64),
                                y_train=result.train_labels, n_bootstrap=n_bootstrap, seed=seed)
        return AttackMetrics(multiclass=mc)
    # one sort for the metrics, the ROC curve and the oracle accuracy; the interval method
    # is chosen here, once, on the whole candidate set, and the slices follow it
    ev = binm.evaluate_binary(result.scores, result.labels, threshold=result.threshold,
                              n_bootstrap=n_bootstrap, seed=seed)
    metrics, roc = ev.metrics, ev.roc
    oracle_acc, oracle_thr = ev.oracle_balanced_accuracy
    paper = None
    if "compat_duddu_label_indexing" in result.compat_flags:
        n_in = int(result.labels.sum()) // max(1, len(result.scores) // len(result.candidates))
        n_out = len(result.candidates) - n_in
        paper = PaperMetric(
            "GraphLeaks confidence 'accuracy' with the one-hot indexing bug",
            float(binm.duddu_onehot_confidence_accuracy(result.scores, result.labels,
                                                        n_in, n_out)))
    bounds: dict[str, BoundReport] = {}
    unit = TESTED_UNITS.get(result.task.value)
    if unit is not None and len(result.scores) == len(result.candidates):
        # Sound only at a threshold chosen without the evaluation labels; the maximum over
        # thresholds is kept as an optimistic figure and labelled so.
        raw = {}
        if result.threshold is not None:
            raw["epsilon_lower_bound"] = epsilon_lower_bound(
                result.scores, result.labels, delta=claimed_delta, threshold=result.threshold,
                unit=unit)
        raw["epsilon_lower_bound_max_over_thresholds"] = epsilon_lower_bound(
            result.scores, result.labels, delta=claimed_delta, unit=unit)
        for key, bound in raw.items():
            cmp = None if ledger is None else LedgerComparison.of(compare_with_claim(
                bound, ledger_unit=ledger.unit.value, claimed_epsilon=ledger.epsilon))
            bounds[key] = BoundReport(bound, cmp)
    return AttackMetrics(
        binary=metrics,
        roc=RocCurve(tuple(float(x) for x in roc["fpr"]), tuple(float(x) for x in roc["tpr"])),
        oracle_balanced_accuracy=OracleAccuracy(float(oracle_acc), float(oracle_thr)),
        paper_metric=paper, epsilon_lower_bound=bounds.get("epsilon_lower_bound"),
        epsilon_lower_bound_max_over_thresholds=bounds.get(
            "epsilon_lower_bound_max_over_thresholds"))


def with_slices(
    result: AttackResult, metrics: AttackMetrics, masks: Mapping[str, np.ndarray], *,
    n_bootstrap: int, seed: int,
) -> AttackMetrics:
    """``metrics`` with the slices of ``masks``, their intervals of the attack's own method.

    The method was chosen once on the whole candidate set (:func:`evaluate_result`): an
    attack with analytic intervals gets analytic slice intervals, never a bootstrap per
    slice.
    """
    from graphleaks.metrics.slices import slice_metrics

    b = metrics.binary
    intervals = binm.ANALYTIC if b is not None and b.interval == "analytic" else binm.BOOTSTRAP
    return dataclasses.replace(metrics, slices=slice_metrics(
        result.scores, result.labels, masks, n_bootstrap=n_bootstrap, seed=seed,
        intervals=intervals))


def scored_or_skipped(
    attack: Attack, score: Callable[[], AttackResult], *, default: bool,
    skipped: dict[str, str],
) -> AttackResult | None:
    """Run ``score``; in the default audit, an attack that cannot run is skipped, not fatal.

    What the target does not allow (:class:`CapabilityError`) and a challenge without
    positives or negatives are recorded in ``skipped`` with the reason and give None; for an
    attack the user named they are raised (the former as it is, the latter as DataError).
    """
    from graphleaks.errors import CapabilityError

    try:
        result = score()
    except CapabilityError as exc:
        if not default:
            raise
        skipped[attack.name] = str(exc)
        return None
    one_sided = _one_sided_challenge(result)
    if one_sided is not None:
        if not default:
            raise DataError(one_sided)
        skipped[attack.name] = one_sided
        return None
    return result


def _one_sided_challenge(result: AttackResult) -> str | None:
    """Why a binary challenge cannot be scored, or None.

    A sampled challenge on a sparse graph can hold no positive at all (LinkTeller's node
    sample at 100k nodes held no edge among 4,950 pairs): no metric exists then, and the audit
    says so instead of failing after all the work.
    """
    if result.task == Task.ATTRIBUTE:
        return None
    labels = np.asarray(result.labels)
    n_pos = int(np.count_nonzero(labels))
    if 0 < n_pos < len(labels):
        return None
    what = "positives" if n_pos == 0 else "negatives"
    return (f"{result.attack}'s challenge holds no {what} among its {len(labels)} candidates, "
            "so it has no metric; enlarge its candidate sample (e.g. --suite thorough) or "
            "pick another attack")


def _tested_unit(attack: Attack) -> str | None:
    from graphleaks.metrics.privacy_bound import TESTED_UNITS

    return TESTED_UNITS.get(attack.task.value)


def _check_compare_unit(unit: str, ledger: PrivacyLedger, attacks: Sequence[Attack]) -> None:
    """Refuse a comparison unit that the ledger or an attack's test does not have."""
    from graphleaks.metrics.privacy_bound import TESTED_UNITS

    units = [u.value for u in PrivacyUnit if u != PrivacyUnit.NONE]
    if unit not in units:
        raise InvalidConfigError(f"unknown privacy unit {unit!r} to compare against; choose "
                                 f"one of: {', '.join(units)}")
    if ledger.unit.value != unit:
        raise InvalidConfigError(f"the target's ledger has no epsilon for unit {unit!r} (it "
                                 f"protects unit {ledger.unit.value!r}); drop --compare-unit "
                                 "or audit a target whose defense protects that unit")
    for attack in attacks:
        tested = TESTED_UNITS.get(attack.task.value)
        if tested != unit:
            raise InvalidConfigError(f"attack {attack.name} tests unit {tested or 'none'}, not "
                                     f"{unit!r}; its ε bound cannot be compared in that unit")


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


def static_shape_limits(target: Any) -> frozenset[Capability]:
    """What a model exported with static input sizes cannot offer: queries on other graphs."""
    from graphleaks.models.protocol import fixed_shape

    model = getattr(target, "model", None)
    return frozenset({Capability.GRAPH_QUERIES}) if fixed_shape(model) is not None else frozenset()


def query_cpu_seconds(target: TrainedTarget, *, view: str = "target",
                      local: bool = True) -> float:
    """Process CPU seconds of one inference-API query with chosen features (one row scaled),
    measured on the target after a first, uncounted query that builds any cache."""
    import time

    x = target.served_features().float()
    rows = np.arange(min(int(target.graph.num_nodes), 100), dtype=np.int64)
    model: Any = target.model
    # a model that charges its API's ε per fresh release (GAP) is not charged for the
    # measurement: the audit's queries alone are what its report accounts. The guard is
    # off only on a copy of the record, whose caches (a float64 copy of the model made
    # while unguarded, say) are dropped with it: the audit's own queries stay charged.
    target = dataclasses.replace(target)
    guard = getattr(model, "release_guard", None)
    if guard is not None:
        model.release_guard = None
    try:
        target.feature_query_rows(x, rows, view=view, local=local)  # warm: caches, engines
        start = time.process_time()
        target.feature_query_rows(x, rows, view=view, local=local, scale_node=0, scale=1.0001)
        return max(time.process_time() - start, 1e-6)
    finally:
        if guard is not None:
            model.release_guard = guard


def fit_query_budgets(
    target: TrainedTarget, attacks: list[Attack], suite: Suite, *, view: str, default: bool,
    skipped: dict[str, str],
) -> tuple[list[Attack], dict[str, list[str]]]:
    """Check each query-heavy attack's estimated cost against the suite's budget, before
    any attack runs.

    The estimate is the attack's feature queries times one query's CPU time, measured on
    this target (:func:`query_cpu_seconds`). Over :attr:`Suite.attack_cpu_s`, an attack the
    user named is refused with the estimate; the default audit runs it with the queries
    the budget allows (a note says so) or, if it cannot shrink that far, skips it with the
    estimate.

    Returns:
        The attacks to run, and notes per attack name on budgets that were reduced.

    Raises:
        InvalidConfigError: For a named attack over the budget.
    """
    if getattr(target, "query_budget", None) is not None:
        # a target behind an endpoint: its cost is requests, planned against its query
        # budget before the audit (audit/endpoint_audit.py); timing a query would send one
        return list(attacks), {}
    n = int(target.graph.num_nodes)
    notes: dict[str, list[str]] = {}
    per_query: dict[bool, float] = {}
    out: list[Attack] = []
    for attack in attacks:
        queries = attack.feature_queries(n)
        if queries <= 0:
            out.append(attack)
            continue
        local = attack.local_queries()
        if local not in per_query:
            per_query[local] = query_cpu_seconds(target, view=view, local=local)
        cost = per_query[local]
        estimate = queries * cost
        budget = suite.attack_cpu_s
        if estimate <= budget:
            out.append(attack)
            continue
        fits = int(budget // cost)
        why = (f"{attack.name}: an estimated {estimate:,.0f} CPU-s ({queries} queries x "
               f"{cost:.3g} CPU-s per query, measured on this target), over the "
               f"{suite.name} suite's budget of {budget:,.0f} CPU-s per attack")
        smaller = attack.with_query_budget(fits)
        if not default:
            size = getattr(getattr(smaller, "config", None), "n_nodes", None)
            hint = f"--param {attack.name}.n_nodes={size} fits, " if size is not None else ""
            raise InvalidConfigError(f"{why}; lower its queries ({hint}or run fewer) or give "
                                     "a larger budget (--suite thorough)")
        if smaller is None:
            skipped[attack.name] = f"{why}; too few queries fit to run it"
            continue
        notes[attack.name] = [
            f"run at a reduced budget: {smaller.feature_queries(n)} queries instead of "
            f"{queries} ({why})"]
        out.append(smaller)
    return out, notes


def _attack_objects(
    attacks: Sequence[Attack | str] | None, suite: Suite
) -> tuple[list[Attack], bool]:
    """The attacks to run, and whether they are the default (whole-registry) audit.

    The default is every registered attack: the capability partition afterwards lists what
    the target's exposure rules out.
    """
    if attacks is None:
        return [build_attack(n, suite) for n in applicable_attacks()], True
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
    defense_aware: bool = True,
    compare_unit: str | None = None,
    skip_unrunnable: bool = False,
    canary: bool | None = None,
    executor: Executor | str | None = None,
    keep_tables: bool = True,
) -> AuditRun:
    """Run an audit and keep every candidate's score; see :func:`run_audit` for arguments.

    ``skip_unrunnable`` treats a given attack list as a default audit: what cannot run is
    skipped with its reason instead of refused (``audit_model``'s pre-filtered list).
    ``keep_tables=False`` drops each attack's candidate table once its slices and exposure
    are read (the run's ``tables`` are then empty): a caller that writes no scores holds no
    table per attack (about 30 MB each at 1M nodes) for the rest of the audit.
    """
    if isinstance(executor, str):  # a Ray address: joined (and checked) here, left after
        with RayExecutor(executor) as ray_executor:
            return audit_with_scores(
                target, attacks, seed=seed, n_bootstrap=n_bootstrap, view=view,
                exposed=exposed, config=config, suite=suite, defense_aware=defense_aware,
                compare_unit=compare_unit, skip_unrunnable=skip_unrunnable, canary=canary,
                executor=ray_executor, keep_tables=keep_tables)
    executor = LOCAL if executor is None else executor
    the_suite = get_suite(suite)
    n_boot = the_suite.n_bootstrap if n_bootstrap is None else n_bootstrap
    attack_objs, default = _attack_objects(attacks, the_suite)
    default = default or skip_unrunnable
    if compare_unit is not None:
        if default:  # the default audit narrows to the attacks that test that unit
            attack_objs = [a for a in attack_objs if _tested_unit(a) == compare_unit]
        _check_compare_unit(compare_unit, target.ledger, attack_objs)
    # capabilities decide the list: unmet needs are skipped (default audit, with what is
    # missing) or, for attacks named by the user, refused before any work
    from graphleaks.attacks.capabilities import partition, require_all, target_capabilities

    offered = target_capabilities(exposed)
    declared = getattr(target, "capabilities", None)
    if callable(declared):  # a target that knows it lacks more (e.g. a foreign model)
        offered &= frozenset(declared())
    offered -= static_shape_limits(target)
    skipped: dict[str, str] = {}
    if default:
        attack_objs, skipped = partition(attack_objs, offered, "this target")
    else:
        require_all(attack_objs, offered, "this target")
    size = (int(target.graph.num_nodes), int(target.graph.edge_index.size(1)))
    for attack in list(attack_objs):  # refuse an impossible size before any attack runs
        try:
            attack.check_scale(*size)
        except InvalidConfigError as exc:
            if not default:
                raise
            # the default audit runs what fits and says what it left out, and why
            skipped[attack.name] = str(exc)
            attack_objs.remove(attack)
    attack_objs, budget_notes = fit_query_budgets(target, attack_objs, the_suite, view=view,
                                                  default=default, skipped=skipped)
    reports, tables = [], []
    attributes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    # one shadow per configuration for the whole run: confidence_mia and shadow_mia share it
    # (trained by the executor: here, or fanned out over a Ray cluster with the same seeds)
    shadows = ShadowPool(derive_seed(seed, "shadows"), executor)
    # and one offline reference model per configuration: RMIA, BASE and G-BASE share them
    references = ReferencePool(derive_seed(seed, "references"), executor)
    for attack in progress(attack_objs, desc="attacks"):
        result = scored_or_skipped(
            attack, functools.partial(
                run_attack, attack, target, seed=derive_seed(seed, "run", attack.name),
                view=view, exposed=exposed, defense_aware=defense_aware, shadows=shadows,
                references=references),
            default=default, skipped=skipped)
        if result is None:
            continue
        metrics = evaluate_result(result, n_bootstrap=n_boot,
                                  seed=derive_seed(seed, "bootstrap", attack.name),
                                  claimed_delta=target.ledger.delta, ledger=target.ledger)
        if attributes is None:  # once per audit: a sort of every edge
            attributes = node_attributes(target)
        table = candidate_table(result, target, attributes)
        exposure: dict[str, Any] = {}
        if table is not None:
            if keep_tables:
                tables.append(table)
            if result.task != Task.ATTRIBUTE:
                metrics = with_slices(result, metrics, slice_masks(table), n_bootstrap=n_boot,
                                      seed=derive_seed(seed, "slices", attack.name))
                exposure["most_exposed"] = most_exposed(table)
        # plain-data fields are stored in their JSON form, so a decoded report equals this one
        reports.append(AttackReport(
            attack=attack.name, task=result.task.value,
            threat_model=result.threat_model, config=json_safe(result.config),
            compat_flags=list(result.compat_flags),
            notes=list(result.notes) + budget_notes.get(attack.name, []),
            query_graph=result.query_graph, metrics=metrics,
            baseline=json_safe(trivial_baseline(result.labels, result.train_labels,
                                                result.task)),
            runtime_s=float(result.runtime_s), exposure=json_safe(exposure),
        ))
    cfg = dict(config or {})
    cfg.setdefault("suite", the_suite.name)
    if skipped:
        cfg["skipped_attacks"] = skipped
    g = target.graph
    # a defense that does not train the architecture spec (LPGNN) records its own
    arch_record = target.training.get("architecture")
    summary = TargetSummary(
        architecture=json_safe(arch_record if isinstance(arch_record, dict)
                               else target.spec.to_dict()), defense=target.defense,
        defense_config=json_safe(reported_config(target.defense, target.defense_config)),
        dataset=json_safe(target.dataset.to_dict()),
        fingerprint=fingerprint(g), num_nodes=int(g.num_nodes),
        num_edges=int(g.edge_index.size(1)), protocol=target.split.kind,
        split_sizes={p: len(getattr(target.split, p)) for p in ("train", "val", "test", "aux")},
        utility=json_safe({**target.utility, **_majority_baseline(target)}),
        training=json_safe(target.training),
    )
    serving = None
    guard = getattr(target.model, "release_guard", None)
    if guard is not None:  # a model that adds noise at inference: its API's ε after the audit
        serving = ServingSummary(**guard.summary())
    canaries: list[Any] = []
    if canary if canary is not None else default:
        canaries, why = default_canary_audits(target, the_suite, seed=seed)
        if why:
            cfg["canary_audit_skipped"] = why
    elif target.ledger.unit != PrivacyUnit.NONE:
        cfg["canary_audit_skipped"] = (
            "a named attack list runs no canary audit by default; run the default audit, or "
            "pass canary=True (train here: --canary-audit UNIT)")
    report = AuditReport(
        schema_version=REPORT_SCHEMA_VERSION, seed=seed, target=summary,
        ledger=target.ledger, attacks=reports, config=json_safe(cfg),
        versions=library_versions(), serving=serving, canary_audits=canaries,
    )
    return AuditRun(report, tuple(tables))


def _majority_baseline(target: TrainedTarget) -> dict[str, float]:
    """Test accuracy of always predicting the most frequent training label (the verdict
    flags a target within a margin of it as uninformative)."""
    from graphleaks.metrics.multiclass import majority_baseline

    y = getattr(target.graph, "y", None)
    if y is None or len(target.split.test) == 0 or len(target.split.train) == 0:
        return {}
    labels = y.cpu().numpy()
    return {"test_majority_baseline": majority_baseline(labels[target.split.train],
                                                        labels[target.split.test])}


def default_canary_audits(
    target: TrainedTarget, suite: Suite, *, seed: int
) -> tuple[list[Any], str | None]:
    """One canary audit of the ledger's unit for a defended target graphleaks can retrain.

    Audited beside claimed ε by default (issue 24): the target's own defense and
    configuration are retrained once with ``suite.canaries`` canaries. Returns the audits
    and, when none ran, why (for the verdict's notes): a non-private target, a model
    trained outside graphleaks, a unit canary audits do not test, or a graph too small.
    """
    from graphleaks.audit.canary import canary_audit
    from graphleaks.defenses import registry as defenses
    from graphleaks.models.gnn import ArchitectureSpec

    unit = target.ledger.unit
    if unit == PrivacyUnit.NONE or not np.isfinite(target.ledger.epsilon):
        return [], None  # nothing claimed, nothing to audit
    if type(target.spec) is not ArchitectureSpec or target.defense not in defenses:
        return [], ("graphleaks cannot retrain this model with canaries (it was trained "
                    "outside graphleaks); plant canaries in your own training run")
    if unit in (PrivacyUnit.NODE_FEATURE, PrivacyUnit.NODE_FEATURE_AND_LABEL):
        # a local feature mechanism: its release is audited, no target is trained
        from graphleaks.audit.canary_features import default_feature_audit

        return default_feature_audit(target, suite.canaries,
                                     seed=derive_seed(seed, "canary", "node_feature"))
    if unit.value not in ("edge", "node"):
        return [], (f"canary audits test the edge, node and node_feature units; this "
                    f"ledger's unit is {unit.value}")
    n = int(target.graph.num_nodes)
    sizes = {p: len(getattr(target.split, p)) / n for p in ("train", "val", "test")}
    split = SplitConfig(kind=target.split.kind, train_frac=sizes["train"],
                        val_frac=sizes["val"], test_frac=sizes["test"])
    try:
        audit = canary_audit(target.graph, defense=target.defense,
                             defense_params=dict(target.defense_config), spec=target.spec,
                             split=split, unit=unit.value, num_canaries=suite.canaries,
                             seed=derive_seed(seed, "canary", unit.value))
    except (InvalidConfigError, DataError) as exc:
        return [], (f"the {unit.value} canary audit could not run ({exc}); run it with fewer "
                    "canaries (--canary-audit with --canaries) when training here")
    return [audit], None


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
    defense_aware: bool = True,
    compare_unit: str | None = None,
    canary: bool | None = None,
    executor: Executor | str | None = None,
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
        defense_aware: Whether adversaries know the target's defense (default); False keeps
            the defense-unaware adversary for comparison (recorded in each threat model).
        compare_unit: Insist that every attack's ε lower bound be compared with the ledger in
            this unit (``node``, ``edge``, ...); refused when the ledger or a named attack has
            another unit. The default audit narrows to the attacks that test that unit.
        canary: Run the canary audit of a defended target graphleaks can retrain (one per
            covered unit, the suite's canaries; see :func:`default_canary_audits`). None
            (default): only in the default audit (``attacks`` None).
        executor: Where the audit's reference and shadow models train: None (default) in
            this process; a Ray cluster's address (``"HOST:PORT"``) or a
            :class:`~graphleaks._executor.RayExecutor` fans them out as Ray tasks, with the
            seeds of a local run, so the report is the same (timing fields aside).

    Raises:
        InvalidConfigError: If ``compare_unit`` is unknown or not the unit of the ledger or
            of every attack's test; for a Ray address that cannot be reached or whose
            workers run another graphleaks version.

    Example:
        >>> from graphleaks.data import tiny_graph
        >>> t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=20))
        >>> r = run_audit(t, ["confidence_mia"], seed=0, n_bootstrap=50)
        >>> r.attacks[0].attack
        'confidence_mia'
    """
    return audit_with_scores(target, attacks, seed=seed, n_bootstrap=n_bootstrap, view=view,
                             exposed=exposed, config=config, suite=suite,
                             defense_aware=defense_aware, compare_unit=compare_unit,
                             canary=canary, executor=executor, keep_tables=False).report
