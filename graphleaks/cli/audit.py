"""``graphleaks audit``: audit a target trained here, or a saved bundle (``--bundle``).

The other audit modes are subcommands of the same group, one module each
(``audit_model``, ``audit_scores``, ``audit_spec``, ``audit_embeddings``); the option
groups they share are declared once in :mod:`graphleaks.cli.options`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from graphleaks._outputs import REPORT, check_output_dir
from graphleaks._params import config_record
from graphleaks._process import frozen_imports
from graphleaks._progress import progress_display
from graphleaks.cli import options as o
from graphleaks.cli._common import defense_params, resolve_cli_params
from graphleaks.cli.options import want_progress  # noqa: F401 - its old home, for callers
from graphleaks.errors import InvalidConfigError
from graphleaks.report.verdict import compact_sweep_rows
from graphleaks.report.writers import write_report
from graphleaks.sweep.results_store import ResultsStore

# The attacks, defenses, models, datasets and plug-in lookup import torch, so they are
# imported inside the functions that run an audit: `graphleaks audit --help` stays torch-free.

Bundle = Annotated[Path | None, typer.Option(
    "--bundle", help="Model bundle to audit (from graphleaks train). Without it a target is "
                     "trained here.", rich_help_panel="Target")]
SweepResults = Annotated[Path | None, typer.Option(
    "--sweep-results", help="SQLite store of a graphleaks sweep on this graph: the verdict "
                            "then names the defense and ε that lowered each risk, with its "
                            "utility cost.", rich_help_panel=o.ADVERSARY)]


def audit(
    ctx: typer.Context, bundle: Bundle = None, dataset: o.Dataset = None,
    data_root: o.DataRoot = None, edges: o.Edges = None, features: o.Features = None,
    labels: o.Labels = None, attack: o.Attack = None, suite: o.Suite = "standard",
    param: o.Param = None, n_bootstrap: o.NBootstrap = None, seed: o.Seed = 0,
    query_graph: o.QueryGraph = "target", arch: o.Arch = None, device: o.Device = None,
    defense: o.Defense = None, epsilon: o.Epsilon = None, delta: o.Delta = None,
    defense_unaware: o.DefenseUnaware = False, compare_unit: o.CompareUnit = None,
    sweep_results: SweepResults = None, canary_audit: o.CanaryAudit = None,
    canaries: o.Canaries = None, canary_attack: o.CanaryAttack = None,
    query_budgets: o.QueryBudgets = None, out: o.Out = o.DEFAULT_OUT,
    json_out: o.JsonOut = False, quiet: o.Quiet = False,
    show_progress: o.Progress = None, mlflow: o.Mlflow = False, verbose: o.Verbose = False,
    ray: o.RayAddress = None,
) -> None:
    """Audit a target: run attacks, compute metrics with CIs, write report.json and report.md.

    Without a subcommand it trains a target here, or reads --bundle; the subcommands audit
    what another pipeline made.
    """
    if ctx.invoked_subcommand is not None:
        _refuse_group_options(ctx)
        return
    output = o.OutputOptions.parse(out, json_out, quiet, show_progress, mlflow, verbose)
    run_target_audit(
        bundle, o.GraphSource(dataset, data_root, edges, features, labels),
        o.AuditBudgets.parse(attack, suite, param, n_bootstrap, seed, query_graph),
        o.TrainingChoice(arch, device), o.DefenseChoice(defense, epsilon, delta),
        o.AdversaryChoice(defense_unaware, compare_unit), sweep_results,
        o.CanaryChoice.parse(canary_audit, canaries, canary_attack), output,
        o.QueryCurveChoice.parse(query_budgets), ray_address=ray)


def _refuse_group_options(ctx: typer.Context) -> None:
    """Options of ``graphleaks audit`` itself go with no subcommand: refused before one."""
    for p in ctx.command.params:
        if p.name and getattr(ctx.get_parameter_source(p.name), "name", "") == "COMMANDLINE":
            flag = max(p.opts, key=len)
            raise InvalidConfigError(f"{flag} before `{ctx.invoked_subcommand}` is an option "
                                     f"of graphleaks audit itself; give the options of "
                                     f"graphleaks audit {ctx.invoked_subcommand} after it")


def run_target_audit(
    bundle: Path | None, graph_source: o.GraphSource, budgets: o.AuditBudgets,
    training: o.TrainingChoice, defense: o.DefenseChoice, adversary: o.AdversaryChoice,
    sweep_results: Path | None, canary: o.CanaryChoice, output: o.OutputOptions,
    curves: o.QueryCurveChoice | None = None, ray_address: str | None = None,
) -> None:
    """Audit ``bundle``, or a target trained here; write the report and print the summary.

    Raises:
        InvalidConfigError: For options a bundle cannot use, or bad values (before any work).
    """
    with frozen_imports():  # torch and PyG, no data yet: later collections skip them
        from graphleaks.audit.runner import audit_with_scores, train_target
        from graphleaks.audit.suite import applicable_attacks, build_attack, get_suite
        from graphleaks.bundles import load_bundle
        from graphleaks.models.gnn import ArchitectureSpec
        from graphleaks.plugins import architecture_owner

    the_suite = get_suite(budgets.suite)  # bad names fail before any work
    if bundle is not None:  # a link or graph bundle is audited with its own task's attacks
        from graphleaks.cli.audit_task_bundle import bundle_task_or_none, run_task_bundle_audit

        task = bundle_task_or_none(bundle)
        if task in ("link", "graph"):
            return run_task_bundle_audit(bundle, task, graph_source, budgets, training,
                                         defense, adversary, sweep_results, canary, output,
                                         curves, ray_address=ray_address)
    if bundle is not None:
        given = training.given() + defense.given() + (["--canary-audit"] if canary.units
                                                      else [])
        if given:
            raise InvalidConfigError(f"{given[0]} describes a target trained here, and "
                                     "--bundle is a target already trained; drop "
                                     f"{given[0]}")
    check_output_dir(output.out, REPORT)  # an unusable --out fails before any work
    sweep_rows = _sweep_rows(sweep_results)
    names = budgets.attack_names()
    curves = curves or o.QueryCurveChoice()
    curves.curve_attacks(names)  # a grid with no curve attack to draw: refused before work
    arch = architecture_owner(training.arch or "gcn").name  # a bundle brings its own
    # One resolution of every --param: canonical owner, declared field types (exit 2 else).
    params = resolve_cli_params(list(budgets.params), attacks=names or applicable_attacks(),
                                defense=None if bundle else defense.name,
                                arch=None if bundle else arch)
    d_params = {} if bundle else defense_params(defense.name, params, defense.epsilon,
                                                 defense.delta)
    canary_cfgs = canary.configs(defense.name, d_params)
    attack_objs = ([build_attack(n, the_suite, params.get(n, {}))
                    for n in (names or applicable_attacks())] if names or params else None)
    if bundle is None:  # the defense's options, before the graph is read (it may be cached)
        defense.check(d_params)
    output.before_work()  # every option is checked: the MLflow store last, before any work
    from graphleaks._executor import make_executor

    # --ray: the cluster is joined and its workers' version checked before any training
    executor = make_executor(ray_address)
    with executor_closed(executor), progress_display(output.bars):
        if bundle is not None:
            graph = graph_source.load()[0] if graph_source.given else None
            target = load_bundle(bundle, graph=graph, data_root=graph_source.data_root)
            graph_source.check_data_root(target.dataset.kind)
        else:
            graph, ds = graph_source.load()
            for a in (attack_objs or []) if names else []:  # an impossible size, before training
                a.check_scale(int(graph.num_nodes), int(graph.edge_index.size(1)))
            if names:  # and a cost over the suite's budget, from an untrained probe model
                _check_query_costs(graph, attack_objs or [], the_suite, arch=arch,
                                   arch_params=params.get(arch, {}), defense=defense.name,
                                   defense_params=d_params, view=budgets.query_graph,
                                   seed=budgets.seed)
            target = train_target(graph, spec=ArchitectureSpec(**{"arch": arch,
                                                                   **params.get(arch, {})}),
                                  defense=defense.name, defense_params=d_params, dataset=ds,
                                  device=training.device or "cpu", seed=budgets.seed)
        config = {**({"sweep_rows": sweep_rows} if sweep_rows else {}),
                  "bundle": str(bundle) if bundle else None,
                  "attacks": names or "all applicable", "suite": the_suite.name,
                  "params": _params_used(params, attack_objs, target, arch),
                  "query_graph": budgets.query_graph, "n_bootstrap": budgets.n_bootstrap,
                  "defense_aware": not adversary.defense_unaware,
                  "compare_unit": adversary.compare_unit,
                  **({} if bundle else {"device": training.device or "cpu"})}
        run = audit_with_scores(target, attack_objs, seed=budgets.seed,
                                n_bootstrap=budgets.n_bootstrap, view=budgets.query_graph,
                                config=config, suite=the_suite,
                                defense_aware=not adversary.defense_unaware,
                                compare_unit=adversary.compare_unit,
                                canary=_default_canary(canary, canary_cfgs, names),
                                executor=executor)
        report = run.report
        curves.add_curves(report, target, names=names, budgets=budgets, suite=the_suite,
                          params=params, defense_aware=not adversary.defense_unaware)
        if canary.off and report.ledger.unit.value != "none":
            report.config["canary_audit_skipped"] = (
                "turned off with --canary-audit none; drop it to measure audited ε")
        if canary_cfgs:
            report.config.pop("canary_audit_skipped", None)  # the ones asked for run here
            import dataclasses

            from graphleaks.audit.canary import canary_audit
            from graphleaks.seeding import derive_seed

            report = dataclasses.replace(report, canary_audits=[
                canary_audit(graph, defense=defense.name, defense_params=d_params,
                             spec=ArchitectureSpec(arch=arch), config=cfg,
                             seed=derive_seed(budgets.seed, "canary", cfg.unit))
                for cfg in canary_cfgs])
    write_report(report, output.out, html=True, scores=run.tables)  # all files or none
    output.publish(report)
    if any(a.violation for a in report.canary_audits):
        raise typer.Exit(3)


@contextlib.contextmanager
def executor_closed(executor: Any) -> Iterator[None]:
    """Leave a Ray cluster joined for ``--ray`` when the audit ends, however it ends."""
    try:
        yield
    finally:
        close = getattr(executor, "close", None)
        if close is not None:
            close()


def _check_query_costs(graph: Any, attacks: list[Any], suite: Any, *, arch: str,
                       arch_params: dict[str, Any], defense: str,
                       defense_params: dict[str, Any], view: str, seed: int) -> None:
    """Refuse a named query-heavy attack whose estimated cost exceeds the suite's budget,
    before the target is trained.

    The runner estimates an attack's cost as its feature queries times one query's CPU
    time on the trained target; here that query is timed on an untrained model of the same
    architecture and defense wrapper (every ``epochs`` field set to 1: the same forward
    pass, minutes of training saved), so the refusal comes first. The runner checks again
    on the trained target.

    Raises:
        InvalidConfigError: One line with the estimate and the budget.
    """
    n = int(graph.num_nodes)
    heavy = [a for a in attacks if a.feature_queries(n) > 0]
    if not heavy:
        return
    from graphleaks.audit.runner import fit_query_budgets, train_target
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.seeding import derive_seed

    spec = ArchitectureSpec(**{"arch": arch, **arch_params, "epochs": 1})
    probe = train_target(graph, spec=spec, defense=defense,
                         defense_params=_one_epoch(defense, defense_params),
                         seed=derive_seed(seed, "cost-probe"))
    try:
        fit_query_budgets(probe, heavy, suite, view=view, default=False, skipped={})
    except InvalidConfigError as exc:
        raise InvalidConfigError(str(exc).replace(
            "measured on this target", "timed on an untrained model of this architecture "
            "and defense, before training")) from None


def _one_epoch(defense: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every epoch count of the defense's config set to 1 (a cost probe)."""
    import dataclasses

    from graphleaks.defenses import registry as defenses

    fields = dataclasses.fields(defenses.get(defense).Config)
    return {**params, **{f.name: 1 for f in fields
                         if f.name == "epochs" or f.name.endswith("_epochs")}}


def _default_canary(canary: o.CanaryChoice, asked: list[Any],
                    names: list[str] | None) -> bool | None:
    """Whether the runner adds the default canary audit of a defended target.

    Not when units are named (they run here instead, once) or it is turned off; yes
    whenever the attacks are not narrowed with --attack, --param included, since the
    canary audit tests the defense, not the attack list; a narrowed list keeps the
    runner's default (none, with a note saying how to get one).
    """
    if asked or canary.off:
        return False
    return True if names is None else None


def _sweep_rows(path: Path | None) -> Any:
    """The finished rows of a sweep store, for the verdict's advice (None without one)."""
    if path is None:
        return None
    if not path.is_file():
        raise InvalidConfigError(f"--sweep-results {path} does not exist; run graphleaks "
                                 "sweep first or drop the option")
    with ResultsStore(path) as store:
        # a link or graph sweep's rows advise no node target
        return compact_sweep_rows([r for r in store.rows(status="done") if r["task"] == "node"])


def _params_used(params: dict[str, dict[str, Any]], attack_objs: list[Any] | None,
                 target: Any, arch: str) -> dict[str, dict[str, Any]]:
    """The ``--param`` fields as the plug-ins used them, read back from their configs.

    The report records what ran, never the text that was typed.
    """
    records = {a.name: a.config_record() for a in attack_objs or []}
    if target.defense is not None:
        records.setdefault(target.defense, dict(target.defense_config or {}))
    records.setdefault(arch, config_record(target.spec))
    return {owner: {f: records.get(owner, {})[f] for f in fields
                    if f in records.get(owner, {})} for owner, fields in params.items()}
