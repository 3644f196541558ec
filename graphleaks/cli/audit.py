"""``graphleaks audit``: run attacks against a saved bundle or a freshly trained target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

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

if TYPE_CHECKING:
    from graphleaks.audit.report import AuditReport


def audit(
    bundle: Annotated[Path | None, typer.Option(
        help="Model bundle to audit (from graphleaks train). Without it a target is trained.")]
    = None,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Folder for report.json and report.md.")] = Path("graphleaks-report"),
    attack: Annotated[list[str] | None, typer.Option(
        help="Attack to run (repeatable; graphleaks list attacks).")] = None,
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
    n_bootstrap: Annotated[int, typer.Option(help="Bootstrap replicates per CI.")] = 1000,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report JSON to stdout.")]
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
    from graphleaks.attacks import registry as attacks
    from graphleaks.audit.report import write_report
    from graphleaks.audit.runner import DEFAULT_ATTACKS, run_audit, train_target
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.models.io import load_bundle

    setup_logging(verbose)
    if embeddings is not None or attributes is not None:
        from graphleaks.cli.embed import run_embedding_audit_cli
        from graphleaks.errors import InvalidConfigError

        if embeddings is None or attributes is None:
            raise InvalidConfigError("--embeddings and --attributes must be given together")
        run_embedding_audit_cli(embeddings, attributes, out, [], aux_frac, seed, n_bootstrap,
                                json_out)
        return
    if config_file is not None:
        from graphleaks.audit.html import write_html
        from graphleaks.audit.spec import load_spec, run_spec

        report = run_spec(load_spec(config_file), device=device)
        json_path, md_path = write_report(report, out)
        write_html(report.to_dict(), out / "report.html")
        _print_summary(report, json_path, md_path, json_out)
        return
    params = parse_params(param)
    names = attack or list(DEFAULT_ATTACKS)
    resolved = [attacks.get(n).name for n in names]
    check_param_owners(params, resolved + ([] if bundle else [defense, arch]))
    attack_objs = [attacks.get(n)(**params.get(n, {})) for n in resolved]
    if bundle is not None:
        graph = None
        if edges is not None or features is not None or dataset is not None:
            graph, _ = load_graph(dataset, data_root, edges, features, labels)
        target = load_bundle(bundle, graph=graph, data_root=data_root)
    else:
        graph, ds = load_graph(dataset, data_root, edges, features, labels)
        for a in attack_objs:  # refuse an impossible size before training anything
            a.check_scale(int(graph.num_nodes), int(graph.edge_index.size(1)))
        target = train_target(graph, spec=ArchitectureSpec(arch=arch), defense=defense,
                              defense_params=defense_params(defense, params, epsilon, delta),
                              dataset=ds, device=device, seed=seed)
    config = {"bundle": str(bundle) if bundle else None, "attacks": names,
              "params": params, "query_graph": query_graph, "n_bootstrap": n_bootstrap}
    report = run_audit(target, attack_objs, seed=seed, n_bootstrap=n_bootstrap,
                       view=query_graph, config=config)
    json_path, md_path = write_report(report, out)
    from graphleaks.audit.html import write_html

    write_html(report.to_dict(), out / "report.html")
    _print_summary(report, json_path, md_path, json_out)


def _print_summary(report: AuditReport, json_path: Path, md_path: Path, json_out: bool) -> None:
    if json_out:
        typer.echo(report.to_json())
        return
    summary = {}
    for a in report.attacks:
        m = a.metrics
        summary[a.attack] = ({"auc": m["binary"]["auc"]} if "binary" in m else
                             {"f1_micro": m["multiclass"]["f1_micro"]})
    typer.echo(json.dumps({"report": str(json_path), "summary": str(md_path),
                           "html": str(json_path.parent / "report.html"),
                           "attacks": summary}, indent=2))
