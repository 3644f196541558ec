"""``graphleaks audit endpoint URL``: audit a model where it is served, within a query budget.

The endpoint speaks ``docs/endpoint-protocol.md``; ``--description`` declares what it answers.
The ground truth (graph, labels, members and non-members) comes from ``--bundle`` (the
owner's bundle: its model is never queried) or from ``--edges/--features/--labels`` with
``--members`` and ``--non-members``. Every check runs before the first query: the budget,
the description, the credential variable, ``GET /info`` (the URL answers, the outputs it
names exist), and the query plan against ``--budget``. On bad input nothing is written and
the credential is never printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from graphleaks._outputs import REPORT, check_output_dir
from graphleaks._progress import progress_display
from graphleaks.cli import options as o
from graphleaks.cli._common import params_as_run, resolve_cli_params
from graphleaks.errors import InvalidConfigError

ENDPOINT = "Endpoint"
Url = Annotated[str, typer.Argument(
    metavar="URL", help="Base URL of the endpoint (it answers GET URL/info and POST URL/query).",
    show_default=False)]
Budget = Annotated[int, typer.Option(
    "--budget", help="Most model queries (POST /query) the audit may send; a plan over it is "
                     "refused before the first query.", rich_help_panel=ENDPOINT,
    show_default=False)]
Description = Annotated[Path, typer.Option(
    "--description", help="Endpoint description (TOML or JSON): outputs, request modes, "
                          "sizes, timeout, retries (docs/endpoint-protocol.md).",
    rich_help_panel=ENDPOINT, show_default=False)]
CredentialEnv = Annotated[str | None, typer.Option(
    "--credential-env", help="Name of the environment variable holding the credential (sent "
                             "as a bearer token; never printed, logged or reported).",
    rich_help_panel=ENDPOINT)]
Recheck = Annotated[int, typer.Option(
    "--recheck", help="Earlier queries sent again to detect a non-deterministic API "
                      "(counted in the budget; 0: none).", rich_help_panel=ENDPOINT)]
TruthBundle = Annotated[Path | None, typer.Option(
    "--bundle", help="The served model's bundle, as ground truth (graph, labels, split); its "
                     "model is never queried.", rich_help_panel="Target")]


def audit_endpoint(
    url: Url, budget: Budget, description: Description, credential_env: CredentialEnv = None,
    recheck: Recheck = 3, bundle: TruthBundle = None, data_root: o.DataRoot = None,
    edges: o.Edges = None, features: o.Features = None, labels: o.Labels = None,
    members: o.Members = None, non_members: o.NonMembers = None,
    population: o.Population = None, attack: o.Attack = None, suite: o.Suite = "standard",
    param: o.Param = None, n_bootstrap: o.NBootstrap = None, seed: o.Seed = 0,
    out: o.Out = o.DEFAULT_OUT, json_out: o.JsonOut = False, quiet: o.Quiet = False,
    show_progress: o.Progress = None, mlflow: o.Mlflow = False, verbose: o.Verbose = False,
) -> None:
    """Audit a model behind an inference endpoint, within a query budget.

    The ground truth is --bundle, or --edges/--features/--labels with --members and
    --non-members. The query log is written beside the report (queries.jsonl).
    """
    output = o.OutputOptions.parse(out, json_out, quiet, show_progress, mlflow, verbose)
    run = run_endpoint_audit(
        url, budget, description, credential_env, recheck, bundle,
        o.GraphSource(None, data_root, edges, features, labels),
        o.MembershipFiles(members, non_members, population),
        o.AuditBudgets.parse(attack, suite, param, n_bootstrap, seed), output)
    output.publish(run.report)
    det = run.report.config["queries"]["determinism"]
    if det.get("deterministic") is False:
        typer.echo(f"warning: the endpoint answered {det['differing']} of {det['rechecked']} "
                   "identical requests differently (a non-deterministic API); the report says "
                   "so on every attack", err=True)


def run_endpoint_audit(
    url: str, budget: int, description: Path, credential_env: str | None, recheck: int,
    bundle: Path | None, graph_source: o.GraphSource, membership: o.MembershipFiles,
    budgets: o.AuditBudgets, output: o.OutputOptions,
) -> Any:
    """Check every input, audit the endpoint, write the report and the query log.

    Raises:
        InvalidConfigError: For a bad option, description, credential variable or plan.
        DataError: For an endpoint that does not answer or answers malformed outputs.
    """
    from graphleaks.attacks import registry
    from graphleaks.audit.endpoint_audit import QUERY_LOG, audit_endpoint, ground_truth
    from graphleaks.audit.suite import get_suite
    from graphleaks.models.remote import EndpointClient, read_description, remote_target
    from graphleaks.report.writers import write_report

    check_output_dir(output.out, REPORT)  # an unusable --out fails before any work
    if budget <= 0:
        raise InvalidConfigError(f"--budget must be a positive number of queries, not {budget}; "
                                 "give --budget N with N >= 1")
    if recheck < 0:
        raise InvalidConfigError("--recheck must be >= 0 (0 sends no query twice)")
    desc = read_description(description, url=url)
    the_suite = get_suite(budgets.suite)
    names = budgets.attack_names()
    params = resolve_cli_params(list(budgets.params), attacks=names or list(registry))
    base, truth = _ground_truth(bundle, graph_source, membership, budgets.seed, ground_truth)
    client = EndpointClient(desc, budget, credential_env=credential_env)
    try:
        target = remote_target(client, base, client.info())
        config = {"endpoint_description": description.name, "ground_truth": truth,
                  "suite": the_suite.name, "n_bootstrap": budgets.n_bootstrap}
        output.before_work()
        with progress_display(output.bars):
            run = audit_endpoint(target, attacks=names, seed=budgets.seed, suite=the_suite,
                                 n_bootstrap=budgets.n_bootstrap, params=params,
                                 recheck=recheck, config=config)
    finally:
        client.close()
    run.report.config["params"] = params_as_run(params, run.report)
    write_report(run.report, output.out, html=True, scores=run.tables)  # all files or none
    client.log.write(output.out / QUERY_LOG)
    return run


def _ground_truth(bundle: Path | None, g: o.GraphSource, m: o.MembershipFiles, seed: int,
                  build: Any) -> tuple[Any, dict[str, Any]]:
    """The auditor's ground truth target and its record for the report."""
    from graphleaks.data.node_sets import read_node_ids

    if bundle is not None:
        if g.edges is not None or m.members is not None or m.non_members is not None:
            raise InvalidConfigError("give the ground truth once: --bundle, or --edges/"
                                     "--features/--labels with --members/--non-members")
        from graphleaks.bundles import load_bundle

        return (load_bundle(bundle, data_root=g.data_root),
                {"bundle": bundle.name})
    if g.edges is None or g.features is None or g.labels is None:
        raise InvalidConfigError("graphleaks audit endpoint needs the ground truth: --bundle, "
                                 "or the served graph (--edges, --features, --labels) with "
                                 "--members and --non-members")
    if m.members is None or m.non_members is None:
        raise InvalidConfigError("graphleaks audit endpoint needs --members and --non-members "
                                 "node-id files with the graph")
    graph, ref = g.load()
    n = int(graph.num_nodes)
    node_names = getattr(graph, "node_names", None) if "node_names" in graph else None
    index = {name: i for i, name in enumerate(node_names)} if node_names is not None else None
    mem = read_node_ids(m.members, n, index=index)
    non = read_node_ids(m.non_members, n, index=index)
    pop = read_node_ids(m.population, n, index=index) if m.population is not None else None
    return (build(graph, mem, non, population=pop, seed=seed),
            {"graph": ref.to_dict(), **o.file_names(members=m.members,
                                                     non_members=m.non_members,
                                                     population=m.population)})
