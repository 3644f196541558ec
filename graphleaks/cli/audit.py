"""``graphleaks audit``: run attacks against a saved bundle or a freshly trained target."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from graphleaks.audit.report import AuditReport
from graphleaks.cli._common import (
    DataRoot,
    Seed,
    Verbose,
    check_param_owners,
    defense_params,
    load_graph,
    parse_params,
    setup_logging,
)


def audit(
    bundle: Annotated[Path | None, typer.Option(
        help="Model bundle to audit (from graphleaks train). Without it a target is trained.")]
    = None,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Folder for report.json, report.md, report.html and scores.csv.")]
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
    seed: Seed = 0,
    verbose: Verbose = False,
) -> None:
    """Audit a target: run attacks, compute metrics with CIs, write report.json and report.md.

    With --embeddings and --attributes it audits a published embedding file for attribute
    inference instead (the same as ``graphleaks audit-embeddings``).
    """
    from graphleaks._progress import progress_display
    from graphleaks.attacks import registry as attacks
    from graphleaks.audit.report import write_report
    from graphleaks.audit.runner import audit_with_scores, train_target
    from graphleaks.audit.scores import write_scores
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

        if embeddings is None or attributes is None:
            raise InvalidConfigError("--embeddings and --attributes must be given together")
        run_embedding_audit_cli(embeddings, attributes, out, [], aux_frac, seed,
                                n_bootstrap or 1000, json_out, edges)
        return
    if config_file is not None:
        from graphleaks.audit.html import write_html
        from graphleaks.audit.spec import load_spec, run_spec

        with progress_display(bars):
            report = run_spec(load_spec(config_file), device=device)
        json_path, md_path = write_report(report, out)
        write_html(report.to_dict(), out / "report.html")
        if tracker is not None:
            tracker.log_audit(report.to_dict(), out)
        _print_summary(report, json_path, md_path, json_out, quiet)
        return
    params = parse_params(param)
    from graphleaks.audit.suite import applicable_attacks

    names = [attacks.get(n).name for n in attack] if attack else None
    check_param_owners(params, (names or applicable_attacks())
                       + ([] if bundle else [defense, arch]))
    attack_objs = ([build_attack(n, the_suite, params.get(n, {})) for n in names]
                   if names else None)
    if attack_objs is None and params:
        # --param for the default audit: build the whole suite with the user's fields on top
        attack_objs = [build_attack(n, the_suite, params.get(n, {}))
                       for n in applicable_attacks()]
    with progress_display(bars):
        if bundle is not None:
            graph = None
            if edges is not None or features is not None or dataset is not None:
                graph, _ = load_graph(dataset, data_root, edges, features, labels)
            target = load_bundle(bundle, graph=graph, data_root=data_root)
        else:
            graph, ds = load_graph(dataset, data_root, edges, features, labels)
            target = train_target(graph, spec=ArchitectureSpec(arch=arch), defense=defense,
                                  defense_params=defense_params(defense, params, epsilon,
                                                               delta),
                                  dataset=ds, device=device, seed=seed)
        config = {**({"sweep_rows": sweep_rows} if sweep_rows else {}),
                  "bundle": str(bundle) if bundle else None,
                  "attacks": names or "all applicable", "suite": the_suite.name,
                  "params": params, "query_graph": query_graph, "n_bootstrap": n_bootstrap}
        run = audit_with_scores(target, attack_objs, seed=seed, n_bootstrap=n_bootstrap,
                                view=query_graph, config=config, suite=the_suite)
    report = run.report
    json_path, md_path = write_report(report, out)
    write_scores(run.tables, out / "scores.csv")
    from graphleaks.audit.html import write_html

    write_html(report.to_dict(), out / "report.html")
    if tracker is not None:
        tracker.log_audit(report.to_dict(), out)
    _print_summary(report, json_path, md_path, json_out, quiet)


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
    for v in compute_verdict(report.to_dict()):
        typer.echo(f"  {v.line()}")
    skipped = report.config.get("skipped_attacks") or {}
    for name, why in skipped.items():
        typer.echo(f"  skipped {name}: {why}")
    out = json_path.parent
    typer.echo(f"Report: {md_path} · {out / 'report.html'} · {json_path} · "
               f"per-candidate scores {out / 'scores.csv'}")
