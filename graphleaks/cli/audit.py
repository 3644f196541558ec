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
    defense_params,
    load_graph,
    resolve_cli_params,
    setup_logging,
)

if TYPE_CHECKING:
    from graphleaks.report.report import AuditReport


#: Options a ``--config`` spec replaces: given with it, they are refused (never ignored).
SPEC_OWNED = ("bundle", "attack", "suite", "param", "dataset", "data_root", "edges", "features",
              "labels", "arch", "defense", "epsilon", "delta", "defense_unaware",
              "compare_unit", "canary_audit", "canaries", "canary_attack", "sweep_results",
              "aux_frac")
#: Options that describe a target trained here: a ``--bundle`` brings its own.
BUNDLE_UNUSED = ("arch", "defense", "epsilon", "delta", "device")
#: Options an ``--embeddings`` audit has no use for.
EMBEDDING_UNUSED = ("bundle", "attack", "suite", "param", "dataset", "data_root", "features",
                    "labels", "arch", "defense", "query_graph", "epsilon", "delta",
                    "defense_unaware", "compare_unit", "canary_audit", "canaries",
                    "canary_attack", "config_file", "sweep_results", "mlflow", "device")
#: Options that override the spec's ``[audit]`` table, recorded in the report as overrides.
SPEC_OVERRIDES = ("seed", "n_bootstrap", "query_graph")


def audit(
    ctx: typer.Context,
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
        help="Parameter NAME.FIELD=VALUE of an attack (or, when training here, of the "
             "defense or architecture), e.g. confidence_mia.compat_duddu_label_indexing=true "
             "(repeatable). The value is parsed by the field's type; a bad owner, field or "
             "value is exit 2.")] = None,
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
        "--config", help="TOML audit spec (target, attacks, seeds, metrics, gate). Target "
                         "and attack options are then refused; --seed, --n-bootstrap and "
                         "--query-graph override the spec and are recorded as overrides.")]
    = None,
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
    scores: Annotated[Path | None, typer.Option(
        help="Audit exported per-node scores instead of a model: .npz (scores, labels, "
             "node_ids), .npy with --labels, or CSV node_id,label,class scores...; needs "
             "--members.")] = None,
    members: Annotated[Path | None, typer.Option(
        help="Member (training) node ids, one per line or .npy.")] = None,
    non_members: Annotated[Path | None, typer.Option(
        help="Non-member node ids (default with --scores: every other scored node).")]
    = None,
    population: Annotated[Path | None, typer.Option(
        help="With --model: the auxiliary node ids the adversary holds for shadow/reference "
             "models, one per line or .npy (default: every node neither member nor "
             "non-member).")] = None,
    scores_output: Annotated[str, typer.Option(
        help="What --scores holds: probabilities, logits or log_probabilities.")]
    = "probabilities",
    score_ids: Annotated[Path | None, typer.Option(
        help="Node id of each row of a .npy --scores matrix (default: row i is node i).")]
    = None,
    model: Annotated[Path | None, typer.Option(
        help="Audit a saved model from another pipeline: .pt2 (torch.export), .onnx, or a "
             "state_dict (.safetensors/.pt) with --model-class; needs --edges, --features, "
             "--labels, --members, --non-members. Nothing is unpickled.")] = None,
    model_class: Annotated[str | None, typer.Option(
        help="With a state_dict --model: the class to build, package.module:Class.")] = None,
    model_kwargs: Annotated[str | None, typer.Option(
        help="With --model-class: its keyword arguments as a JSON object.")] = None,
    model_output: Annotated[str, typer.Option(
        help="What --model returns: logits, probabilities or log_probabilities.")]
    = "logits",
    seed: Seed = 0,
    verbose: Verbose = False,
) -> None:
    """Audit a target: run attacks, compute metrics with CIs, write report.json and report.md.

    With --embeddings and --attributes it audits a published embedding file for attribute
    inference instead (the same as ``graphleaks audit-embeddings``).
    """
    from graphleaks._outputs import EMBEDDING_REPORT, REPORT, check_output_dir
    from graphleaks._progress import progress_display
    from graphleaks.audit.suite import build_attack, get_suite
    from graphleaks.report.writers import write_report

    setup_logging(verbose)
    the_suite = get_suite(suite)  # bad names fail before any work
    tracker = None
    if mlflow:
        from graphleaks.audit.tracking import MlflowTracker

        tracker = MlflowTracker.from_env()  # the URI now; the store just before the work
    bars = want_progress(show_progress, quiet=quiet, json_out=json_out)
    sweep_rows = None
    if sweep_results is not None:
        from graphleaks.errors import InvalidConfigError
        from graphleaks.report.verdict import compact_sweep_rows
        from graphleaks.sweep.results_store import ResultsStore

        if not sweep_results.is_file():
            raise InvalidConfigError(f"--sweep-results {sweep_results} does not exist; run "
                                     "graphleaks sweep first or drop the option")
        with ResultsStore(sweep_results) as store:
            sweep_rows = compact_sweep_rows(store.rows(status="done"))
    if scores is not None:  # scores-only audit: graphleaks.cli.audit_scores
        from graphleaks.cli.audit_scores import run_scores_audit_cli

        run = run_scores_audit_cli(
            scores, members=members, non_members=non_members, scores_output=scores_output,
            labels=labels, score_ids=score_ids, out=out, attack=attack, suite=suite,
            param=param,
            n_bootstrap=n_bootstrap, seed=seed, conflicting={
                "--bundle": bundle is not None, "--model": model is not None,
                "--dataset": dataset is not None,
                "--edges": edges is not None, "--features": features is not None,
                "--population": population is not None,
                "--embeddings": embeddings is not None, "--config": config_file is not None,
                "--canary-audit": bool(canary_audit), "--sweep-results": sweep_results
                is not None, "--query-graph": query_graph != "target"},
            before_work=tracker.open if tracker is not None else None)
        if tracker is not None:  # an ordinary AuditReport: logged like any other audit
            tracker.log_audit(run.report, out)
        _print_summary(run.report, out / "report.json", out / "report.md", json_out, quiet)
        return
    if model is not None:  # a saved foreign model: graphleaks.cli.audit_model
        from graphleaks.cli.audit_model import run_model_audit_cli

        run = run_model_audit_cli(
            model, model_class=model_class, model_kwargs=model_kwargs,
            model_output=model_output, edges=edges, features=features, labels=labels,
            members=members, non_members=non_members, population=population, out=out,
            attack=attack, param=param, suite=suite, n_bootstrap=n_bootstrap, seed=seed,
            conflicting={
                "--bundle": bundle is not None, "--dataset": dataset is not None,
                "--embeddings": embeddings is not None, "--config": config_file is not None,
                "--canary-audit": bool(canary_audit),
                "--query-graph": query_graph != "target", "--defense": defense != "none"},
            before_work=tracker.open if tracker is not None else None)
        if tracker is not None:  # an ordinary AuditReport: logged like any other audit
            tracker.log_audit(run.report, out)
        _print_summary(run.report, out / "report.json", out / "report.md", json_out, quiet)
        return
    if model_class is not None or model_kwargs is not None:
        from graphleaks.errors import InvalidConfigError

        raise InvalidConfigError("--model-class/--model-kwargs need --model")
    if members is not None or non_members is not None:
        from graphleaks.errors import InvalidConfigError

        raise InvalidConfigError("--members/--non-members name the split of a --model or "
                                 "--scores audit; give one of those, or drop them")
    if population is not None:
        from graphleaks.errors import InvalidConfigError

        raise InvalidConfigError("--population names the adversary's nodes of a --model "
                                 "audit; give --model, or drop it")
    if embeddings is not None or attributes is not None:
        from graphleaks.cli.embed import run_embedding_audit_cli
        from graphleaks.errors import InvalidConfigError

        _refuse(ctx, EMBEDDING_UNUSED, "--embeddings", "it audits a published embedding "
                                                       "file and trains no model")

        check_output_dir(out, EMBEDDING_REPORT)  # before any work
        check_audit_options(n_bootstrap, query_graph)
        if embeddings is None or attributes is None:
            raise InvalidConfigError("--embeddings and --attributes must be given together")
        run_embedding_audit_cli(embeddings, attributes, out, [], aux_frac, seed,
                                n_bootstrap or 1000, json_out, edges)
        return
    check_output_dir(out, REPORT)  # an unusable --out fails before any training or audit
    check_audit_options(n_bootstrap, query_graph)
    if config_file is None and bundle is not None:
        _refuse(ctx, BUNDLE_UNUSED, "--bundle", "the bundle is a target already trained")
    if config_file is None:
        _refuse(ctx, ("aux_frac",), "a model audit", "--aux-frac is the --embeddings audit's")
        if not canary_audit:
            _refuse(ctx, ("canaries", "canary_attack"), "an audit without --canary-audit",
                    "it sets up a canary audit, and none is asked for")
    if config_file is not None:
        from graphleaks.audit.spec import load_spec, run_spec

        given = _given(ctx)
        _refuse(ctx, SPEC_OWNED, "--config", "the spec sets the target and the attacks (set "
                                             "it there)")
        overrides = {n: ctx.params[n] for n in SPEC_OVERRIDES if n in given}
        spec = load_spec(config_file)  # a bad spec fails before any work
        if tracker is not None:
            tracker.open()  # an unreachable store fails before any work too
        with progress_display(bars):
            report = run_spec(spec, device=device, overrides=overrides)
        json_path, md_path = write_report(report, out, html=True)
        if tracker is not None:
            tracker.log_audit(report, out)
        _print_summary(report, json_path, md_path, json_out, quiet)
        return
    # torch and PyG (seconds of CPU) only now: every option and the spec path checked
    from graphleaks.attacks import registry as attacks
    from graphleaks.audit.runner import audit_with_scores, train_target
    from graphleaks.audit.suite import applicable_attacks
    from graphleaks.bundles import load_bundle
    from graphleaks.models.gnn import ArchitectureSpec

    names = [attacks.get(n).name for n in attack] if attack else None
    if bundle is None:
        from graphleaks.plugins import architecture_owner

        arch = architecture_owner(arch).name
    # One resolution of every --param: canonical owner, declared field types (exit 2 else).
    params = resolve_cli_params(param, attacks=names or applicable_attacks(),
                                defense=None if bundle else defense,
                                arch=None if bundle else arch)

    canary_cfgs: list[Any] = []
    if canary_audit:
        if bundle is not None:
            from graphleaks.errors import InvalidConfigError

            raise InvalidConfigError("--canary-audit retrains the target with canaries; it "
                                     "needs a target trained here, not --bundle")
        canary_cfgs = _canary_configs(canary_audit, canaries=canaries, attack=canary_attack,
                                      defense=defense,
                                      params=defense_params(defense, params, epsilon, delta))
    attack_objs = ([build_attack(n, the_suite, params.get(n, {})) for n in names]
                   if names else None)
    if attack_objs is None and params:
        # --param for the default audit: build the whole suite with the user's fields on top
        attack_objs = [build_attack(n, the_suite, params.get(n, {}))
                       for n in applicable_attacks()]
    if bundle is None:  # the defense's options, before the graph is read (it may be cached)
        from graphleaks._validation import validate
        from graphleaks.defenses import registry as defenses
        from graphleaks.plugins import check_used

        defense_obj = defenses.get(defense)(**defense_params(defense, params, epsilon, delta))
        validate(defense_obj.config, type(defense_obj).__name__)
        check_used(defense_obj, defense_params(defense, params, epsilon, delta))
    if tracker is not None:
        tracker.open()  # every option is checked: the store last, before any work
    with progress_display(bars):
        if bundle is not None:
            graph = None
            if (edges is not None or features is not None or labels is not None
                    or dataset is not None):
                graph, _ = load_graph(dataset, data_root, edges, features, labels)
            target = load_bundle(bundle, graph=graph, data_root=data_root)
        else:
            graph, ds = load_graph(dataset, data_root, edges, features, labels)
            for a in (attack_objs or []) if names else []:  # an impossible size, before training
                a.check_scale(int(graph.num_nodes), int(graph.edge_index.size(1)))
            arch_spec = ArchitectureSpec(**{"arch": arch, **params.get(arch, {})})
            target = train_target(graph, spec=arch_spec, defense=defense,
                                  defense_params=defense_params(defense, params, epsilon,
                                                               delta),
                                  dataset=ds, device=device, seed=seed)
        config = {**({"sweep_rows": sweep_rows} if sweep_rows else {}),
                  "bundle": str(bundle) if bundle else None,
                  "attacks": names or "all applicable", "suite": the_suite.name,
                  "params": _params_used(params, attack_objs, target, arch),
                  "query_graph": query_graph, "n_bootstrap": n_bootstrap,
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


def _given(ctx: typer.Context) -> set[str]:
    """Names of the options given on the command line (not defaults, not the environment)."""
    # Compared by name: typer ships click under a private module path.
    return {name for name in ctx.params
            if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"}


def _refuse(ctx: typer.Context, unused: tuple[str, ...], mode: str, why: str) -> None:
    """Exit 2 on the first option in ``unused`` given on the command line: a flag the mode
    cannot use is refused, never dropped without a word.

    Raises:
        InvalidConfigError: Naming the flag and why this mode cannot use it.
    """
    from graphleaks.errors import InvalidConfigError

    given = _given(ctx)
    for name in unused:
        if name in given:
            flag = "--config" if name == "config_file" else "--" + name.replace("_", "-")
            raise InvalidConfigError(f"{flag} cannot be combined with {mode}: {why}; drop "
                                     f"{flag}")


def _params_used(params: dict[str, dict[str, Any]], attack_objs: list[Any] | None,
                 target: Any, arch: str) -> dict[str, dict[str, Any]]:
    """The ``--param`` fields as the plug-ins used them, read back from their configs.

    The report records what ran, never the text that was typed: each value is taken from
    the resolved config of the attack, the defense or the architecture that used it.
    """
    from graphleaks._params import config_record

    used: dict[str, dict[str, Any]] = {}
    records = {a.name: a.config_record() for a in attack_objs or []}
    if target.defense is not None:
        records.setdefault(target.defense, dict(target.defense_config or {}))
    records.setdefault(arch, config_record(target.spec))
    for owner, fields in params.items():
        record = records.get(owner, {})
        used[owner] = {f: record[f] for f in fields if f in record}
    return used


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
    from graphleaks.report.verdict import compute_verdict

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
