"""``graphleaks audit --bundle B`` for a link or graph bundle: the task comes from the bundle.

Called by :func:`graphleaks.cli.audit.run_target_audit` when the bundle's manifest names
task ``link`` or ``graph``. Every option is checked before the bundle's model runs: an
option of another task (a node attack's ``--param``, ``--query-budgets``, ``--query-graph``,
a node canary unit...) is refused in one line naming the option and the task, exit 2,
nothing written. Nothing is dropped silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from graphleaks._outputs import REPORT, check_output_dir
from graphleaks._progress import progress_display
from graphleaks.cli import options as o
from graphleaks.errors import BundleError, InvalidConfigError
from graphleaks.report.writers import write_report

#: What each bundle task audits, for messages.
TASK_WORDS = {"link": "a link bundle (edge membership)",
              "graph": "a graph bundle (graph membership)"}


def bundle_task_or_none(bundle: Path) -> str | None:
    """The task a bundle's manifest names, or None when it cannot be read here (the node
    path then reports the bundle's problem as it always did)."""
    from graphleaks.graph_bundles import bundle_task

    try:
        return bundle_task(bundle)
    except BundleError:
        return None


def _refuse(flag: str, task: str, why: str) -> InvalidConfigError:
    return InvalidConfigError(f"{flag} does not apply to {TASK_WORDS[task]}: {why}; drop it")


def _attack_registry(task: str) -> Any:
    if task == "link":
        from graphleaks.attacks.edge_membership import edge_registry

        return edge_registry
    from graphleaks.attacks.graph_membership import graph_registry

    return graph_registry


def _task_params(task: str, items: list[str]) -> dict[str, dict[str, Any]]:
    """``--param`` items of the task's attacks, typed; a node plug-in's field refused.

    Raises:
        InvalidConfigError: For an owner that is not an attack of the task, or a bad field.
    """
    from graphleaks._params import Owner, parse_param_items, resolve_params

    reg = _attack_registry(task)
    raw = parse_param_items(items)
    owners = []
    for owner, fields in raw.items():
        try:
            cls = reg.get(owner)
        except Exception:  # noqa: BLE001 - any lookup failure is the same refusal
            kind = "edge" if task == "link" else "graph"
            raise _refuse(f"--param {owner}.{next(iter(fields))}", task,
                          f"{owner[:40]!r} is not a {kind} attack (they are: "
                          f"{', '.join(reg.names())})") from None
        owners.append(Owner(cls.name, "attack", cls.Config))
    return resolve_params(raw, owners, text=True, source="--param ")


def run_task_bundle_audit(
    bundle: Path, task: str, graph_source: o.GraphSource, budgets: o.AuditBudgets,
    training: o.TrainingChoice, defense: o.DefenseChoice, adversary: o.AdversaryChoice,
    sweep_results: Path | None, canary: o.CanaryChoice, output: o.OutputOptions,
    curves: o.QueryCurveChoice | None, *, ray_address: str | None = None,
) -> None:
    """Audit a link or graph bundle; write the report and print the summary.

    Raises:
        InvalidConfigError: For an option of another task, or a bad value (before any work).
        typer.Exit: Code 3 when the canary audit's ε exceeds the ledger's.
    """
    from graphleaks.audit.task_bundles import (
        CANARY_UNIT,
        audit_trained_graph_target,
        audit_trained_link_target,
        load_task_bundle,
        with_task_canary,
    )

    given = training.given() + defense.given()
    if given:
        raise InvalidConfigError(f"{given[0]} describes a target trained here, and --bundle "
                                 f"is a target already trained; drop {given[0]}")
    for flag, value in (("--dataset", graph_source.dataset), ("--edges", graph_source.edges),
                        ("--features", graph_source.features),
                        ("--labels", graph_source.labels)):
        if value is not None:
            raise _refuse(flag, task, "the bundle carries or reloads its own data")
    if curves is not None and curves.budgets:
        raise _refuse("--query-budgets", task, "query curves are drawn for node attacks")
    if budgets.query_graph != "target":
        raise _refuse("--query-graph", task, "query graph views are a node-target option")
    if adversary.defense_unaware:
        raise _refuse("--defense-unaware", task, "its attacks model no defense awareness")
    if adversary.compare_unit is not None:
        raise _refuse("--compare-unit", task, f"its ε bounds are in the {CANARY_UNIT[task]} "
                                              "unit and compared with its ledger already")
    if ray_address is not None:
        raise _refuse("--ray", task, "its audit trains its reference models locally")
    if sweep_results is not None:
        raise _refuse("--sweep-results", task, "sweeps train node targets")
    unit = CANARY_UNIT[task]
    for u in canary.units:
        if u != unit:
            raise _refuse(f"--canary-audit {u[:20]}", task, f"its canary unit is {unit}")
    if task == "graph" and canary.units and canary.attack != "auto":
        raise _refuse("--canary-attack", task, "a graph canary's scoring follows its kind "
                      "(update projection for DP-SGD's gradient canaries, loss otherwise)")
    if canary.units:  # the canary count and scoring, before the audit's work
        from graphleaks._validation import validate
        from graphleaks.audit.graph_canary import GraphCanaryConfig
        from graphleaks.audit.link_canary import LinkCanaryConfig

        validate(LinkCanaryConfig(num_canaries=canary.canaries, attack=canary.attack)
                 if task == "link" else GraphCanaryConfig(num_canaries=canary.canaries),
                 "--canary-audit")
    reg = _attack_registry(task)
    names: list[str] | None = None
    if budgets.attacks:  # the task's own attacks (the node registry's names do not apply)
        names = []
        for n in budgets.attacks:
            try:
                names.append(reg.get(n).name)
            except Exception:  # noqa: BLE001 - any lookup failure is the same refusal
                raise _refuse(f"--attack {n[:40]}", task,
                              f"choose among {', '.join(reg.names())}") from None
    params = _task_params(task, list(budgets.params))
    check_output_dir(output.out, REPORT)  # an unusable --out fails before any work
    output.before_work()
    config = {"bundle": str(bundle), "entry": "graphleaks audit --bundle",
              "n_bootstrap": budgets.n_bootstrap, "params": params}
    with progress_display(output.bars):
        target = load_task_bundle(bundle, data_root=graph_source.data_root)
        audit = audit_trained_link_target if task == "link" else audit_trained_graph_target
        run = audit(target, attacks=names, seed=budgets.seed, suite=budgets.suite,
                    n_bootstrap=budgets.n_bootstrap, params=params, config=config)
        run = with_task_canary(run, target, canary=bool(canary.units),
                               num_canaries=canary.canaries, attack=canary.attack,
                               seed=budgets.seed)
        if canary.off:  # turned off: the note says so, not how to turn it on
            run.report.config.pop("canary_audit_skipped", None)
            if target.ledger.unit.value != "none":
                run.report.config["canary_audit_skipped"] = (
                    "turned off with --canary-audit none; drop it and add --canary-audit "
                    f"{unit} to measure audited ε")
    write_report(run.report, output.out, html=True, scores=run.tables)  # all files or none
    output.publish(run.report)
    if any(a.violation for a in run.report.canary_audits):
        raise typer.Exit(3)
