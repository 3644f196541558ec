"""``graphleaks audit``: run attacks against a saved bundle or a freshly trained target."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from graphleaks.cli._common import (
    DataRoot,
    Seed,
    Verbose,
    check_audit_options,
    check_param_owners,
    defense_params,
    load_graph,
    parse_params,
    setup_logging,
)

if TYPE_CHECKING:
    from graphleaks.audit.report import AuditReport


def audit(
    bundle: Annotated[Path | None, typer.Option(
        help="Model bundle to audit (from graphleaks train). Without it a target is trained.")]
    = None,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Folder for report.json, report.md, report.html and scores.csv (a "
                            "new folder, or an earlier graphleaks report, which is replaced).")]
    = Path("graphleaks-report"),
    attack: Annotated[list[str] | None, typer.Option(
        help="Run only this attack (repeatable; graphleaks list attacks). Default: every "
             "attack the target exposes.")] = None,
    suite: Annotated[str, typer.Option(
        help="Budgets: quick, standard (about 30 s on Cora) or thorough.")] = "standard",
    param: Annotated[list[str] | None, typer.Option(
        help="Attack parameter NAME.FIELD=VALUE, e.g. "
             "confidence_mia.compat_duddu_label_indexing=true (repeatable).")] = None,
    dataset: Annotated[str | None, typer.Option(help="Dataset to train on (default: cora).")]
    = None,
    data_root: DataRoot = None,
    edges: Annotated[Path | None, typer.Option(help="Edge-list CSV of a user graph.")] = None,
    features: Annotated[Path | None, typer.Option(help="Feature CSV or .npy.")] = None,
    labels: Annotated[Path | None, typer.Option(help="Label CSV.")] = None,
    arch: Annotated[str, typer.Option(help="Architecture when training here.")] = "gcn",
    defense: Annotated[str, typer.Option(help="Defense when training here.")] = "none",
    query_graph: Annotated[str, typer.Option(
        help="Graph the queries are evaluated in: target, full, partitioned or zero_hop.")]
    = "target",
    n_bootstrap: Annotated[int | None, typer.Option(
        help="Bootstrap replicates per CI (default: the suite's, 1000 for standard).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report JSON to stdout.")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")]
    = False,
    show_progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bars on stderr (default: only when stderr "
                                         "is a terminal, never with --quiet or --json).")]
    = None,
    sweep_results: Annotated[Path | None, typer.Option(
        help="SQLite store of a graphleaks sweep on this graph: the verdict then names the "
             "defense and ε that lowered each risk, with its utility cost.")] = None,
    mlflow: Annotated[bool, typer.Option(
        "--mlflow", help="Log parameters, metrics with intervals, the ledger and the report "
                         "files to MLflow (MLFLOW_TRACKING_URI; needs graphleaks[mlflow]).")]
    = False,
    device: Annotated[str, typer.Option(help="Torch device for training here.")] = "cpu",
    epsilon: Annotated[float | None, typer.Option(
        help="Privacy budget ε of the defense (must be > 0).")] = None,
    delta: Annotated[float | None, typer.Option(help="δ of the defense, in (0, 1).")] = None,
    embeddings: Annotated[Path | None, typer.Option(
        help="Audit a published embedding file (.npy or word2vec text) instead of a model; "
             "needs --attributes.")] = None,
    attributes: Annotated[Path | None, typer.Option(
        help="CSV of node_id,attribute rows for --embeddings.")] = None,
    aux_frac: Annotated[float, typer.Option(
        help="With --embeddings: fraction of nodes whose attribute the adversary knows.")]
    = 0.3,
    config_file: Annotated[Path | None, typer.Option(
        "--config", help="TOML audit spec (target, attacks, seeds, metrics, gate); other "
                         "target and attack options are then ignored.")] = None,
    defense_unaware: Annotated[bool, typer.Option(
        "--defense-unaware", help="Train shadow/reference/calibration models as plain GNNs on "
                                  "clean data instead of through the target's defense "
                                  "(today's adversary, for comparison; recorded in the threat "
                                  "model).")] = False,
    compare_unit: Annotated[str | None, typer.Option(
        help="Insist on comparing every ε lower bound with the ledger in this privacy unit "
             "(node, edge, ...); exit 2 if the ledger or an attack has another unit.")] = None,
    canary_audit: Annotated[list[str] | None, typer.Option(
        "--canary-audit", help="Also run a one-run canary audit of this privacy unit (edge or "
                               "node; repeatable): trains one extra target with canaries and "
                               "reports claimed beside audited ε. Exit 3 if audited > claimed.")]
    = None,
    canaries: Annotated[int, typer.Option(help="Canaries per --canary-audit.")] = 1000,
    canary_attack: Annotated[str, typer.Option(
        help="Canary scoring: auto, released or influence (edge); auto or loss (node).")]
    = "auto",
    seed: Seed = 0,
    verbose: Verbose = False,
) -> None:
    """Audit a target: run attacks, compute metrics with CIs, write report.json and report.md.

    With --embeddings and --attributes it audits a published embedding file for attribute
    inference instead (the same as ``graphleaks audit-embeddings``).
    """
    from graphleaks._outputs import EMBEDDING_REPORT, REPORT, check_output_dir
    from graphleaks._progress import progress_display
    from graphleaks.attacks import registry as attacks
    from graphleaks.audit.report import write_report
    from graphleaks.audit.runner import audit_with_scores, train_target
    from graphleaks.audit.suite import build_attack, get_suite
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.models.io import load_bundle

    setup_logging(verbose)
    the_suite = get_suite(suite)  # bad names fail before any work
    tracker = None
    if mlflow:
        from graphleaks.audit.tracking import MlflowTracker

        tracker = MlflowTracker.from_env()
    bars = want_progress(show_progress, quiet=quiet, json_out=json_out)
    sweep_rows = None
    if sweep_results is not None:
        from graphleaks.audit.results_store import ResultsStore
        from graphleaks.audit.verdict import compact_sweep_rows
        from graphleaks.errors import InvalidConfigError

        if not sweep_results.is_file():
            raise InvalidConfigError(f"--sweep-results {sweep_results} does not exist; run "
                                     "graphleaks sweep first or drop the option")
        with ResultsStore(sweep_results) as store:
            sweep_rows = compact_sweep_rows(store.rows(status="done"))
    if embeddings is not None or attributes is not None:
        from graphleaks.cli.embed import run_embedding_audit_cli
        from graphleaks.errors import InvalidConfigError

        check_output_dir(out, EMBEDDING_REPORT)  # before any work
        check_audit_options(n_bootstrap, query_graph)
        if embeddings is None or attributes is None:
            raise InvalidConfigError("--embeddings and --attributes must be given together")
        run_embedding_audit_cli(embeddings, attributes, out, [], aux_frac, seed,
                                n_bootstrap or 1000, json_out, edges)
        return
    check_output_dir(out, REPORT)  # an unusable --out fails before any training or audit
    check_audit_options(n_bootstrap, query_graph)
    if config_file is not None:
        from graphleaks.audit.spec import load_spec, run_spec

        with progress_display(bars):
            report = run_spec(load_spec(config_file), device=device)
        json_path, md_path = write_report(report, out, html=True)
        if tracker is not None:
            tracker.log_audit(report, out)
        _print_summary(report, json_path, md_path, json_out, quiet)
        return
    params = parse_params(param)
    from graphleaks.audit.suite import applicable_attacks

    canary_cfgs: list[Any] = []
    if canary_audit:
        if bundle is not None:
            from graphleaks.errors import InvalidConfigError

            raise InvalidConfigError("--canary-audit retrains the target with canaries; it "
                                     "needs a target trained here, not --bundle")
        canary_cfgs = _canary_configs(canary_audit, canaries=canaries, attack=canary_attack,
                                      defense=defense,
                                      params=defense_params(defense, params, epsilon, delta))
    names = [attacks.get(n).name for n in attack] if attack else None
    check_param_owners(params, (names or applicable_attacks())
                       + ([] if bundle else [defense, arch]))
    attack_objs = ([build_attack(n, the_suite, params.get(n, {})) for n in names]
                   if names else None)
    if attack_objs is None and params:
        # --param for the default audit: build the whole suite with the user's fields on top
        attack_objs = [build_attack(n, the_suite, params.get(n, {}))
                       for n in applicable_attacks()]
    if bundle is None:  # the defense's options, before the graph is read (it may be cached)
        from graphleaks._validation import validate
        from graphleaks.defenses import registry as defenses

        defense_obj = defenses.get(defense)(**defense_params(defense, params, epsilon, delta))
        validate(defense_obj.config, type(defense_obj).__name__)
    with progress_display(bars):
        if bundle is not None:
            graph = None
            if edges is not None or features is not None or dataset is not None:
                graph, _ = load_graph(dataset, data_root, edges, features, labels)
            target = load_bundle(bundle, graph=graph, data_root=data_root)
        else:
            graph, ds = load_graph(dataset, data_root, edges, features, labels)
            for a in attack_objs if names else []:  # an impossible size, before training
                a.check_scale(int(graph.num_nodes), int(graph.edge_index.size(1)))
            target = train_target(graph, spec=ArchitectureSpec(arch=arch), defense=defense,
                                  defense_params=defense_params(defense, params, epsilon,
                                                               delta),
                                  dataset=ds, device=device, seed=seed)
        config = {**({"sweep_rows": sweep_rows} if sweep_rows else {}),
                  "bundle": str(bundle) if bundle else None,
                  "attacks": names or "all applicable", "suite": the_suite.name,
                  "params": params, "query_graph": query_graph, "n_bootstrap": n_bootstrap,
                  "defense_aware": not defense_unaware, "compare_unit": compare_unit}
        run = audit_with_scores(target, attack_objs, seed=seed, n_bootstrap=n_bootstrap,
                                view=query_graph, config=config, suite=the_suite,
                                defense_aware=not defense_unaware, compare_unit=compare_unit)
        report = run.report
        if canary_cfgs:
            report = _with_canary_audits(report, graph, canary_cfgs, defense=defense,
                                         params=defense_params(defense, params, epsilon, delta),
                                         arch=arch, seed=seed)
    # all files or none
    json_path, md_path = write_report(report, out, html=True, scores=run.tables)
    if tracker is not None:
        tracker.log_audit(report, out)
    _print_summary(report, json_path, md_path, json_out, quiet)
    if any(a.violation for a in report.canary_audits):
        raise typer.Exit(3)


def _canary_configs(units: list[str], *, canaries: int, attack: str, defense: str,
                    params: dict[str, Any]) -> list[Any]:
    """Validate every requested canary audit before anything is trained."""
    from graphleaks._validation import validate as validate_config
    from graphleaks.audit.canary import CanaryConfig, check_unit
    from graphleaks.defenses import registry as defenses

    d = defenses.get(defense)(**params)
    configs = []
    for unit in units:
        cfg = validate_config(CanaryConfig(unit=unit, num_canaries=canaries, attack=attack),
                              "--canary-audit")
        check_unit(d, unit)
        configs.append(cfg)
    return configs


def _with_canary_audits(report: AuditReport, graph: Any, configs: list[Any], *, defense: str,
                        params: dict[str, Any], arch: str, seed: int) -> AuditReport:
    """Attach one canary audit per unit; each trains one target with its canaries."""
    import dataclasses

    from graphleaks.audit.canary import canary_audit
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.seeding import derive_seed as derive

    audits = [canary_audit(graph, defense=defense, defense_params=params,
                           spec=ArchitectureSpec(arch=arch), config=cfg,
                           seed=derive(seed, "canary", cfg.unit))
              for cfg in configs]
    return dataclasses.replace(report, canary_audits=audits)


def want_progress(flag: bool | None, *, quiet: bool, json_out: bool) -> bool:
    """Whether to show progress bars: asked for, or stderr is a terminal and output is not
    machine-read (``--json``) or silenced (``--quiet``)."""
    import sys

    if flag is not None:
        return flag and not quiet
    return not quiet and not json_out and sys.stderr.isatty()


def _print_summary(report: AuditReport, json_path: Path, md_path: Path, json_out: bool,
                   quiet: bool = False) -> None:
    """The verdict first, one line per risk, then where the files are."""
    if json_out:
        typer.echo(report.to_json())
        return
    if quiet:
        return
    from graphleaks.audit.verdict import compute_verdict

    typer.echo("Verdict")
    for v in compute_verdict(report):
        typer.echo(f"  {v.line()}")
    for a in report.canary_audits:
        flag = "VIOLATION: audited ε above claimed ε" if a.violation else "consistent"
        typer.echo(f"  canary audit ({a.unit} unit): claimed ε {a.claimed_epsilon:.3g}, "
                   f"audited ε ≥ {a.audited_epsilon:.3g} ({flag})")
    skipped = report.config.get("skipped_attacks") or {}
    for name, why in skipped.items():
        typer.echo(f"  skipped {name}: {why}")
    out = json_path.parent
    typer.echo(f"Report: {md_path} · {out / 'report.html'} · {json_path} · "
               f"per-candidate scores {out / 'scores.csv'}")
