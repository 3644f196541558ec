"""``graphleaks audit model FILE``: audit a saved model from another pipeline.

The model file is a ``torch.export`` program (``.pt2``), an ONNX file, or a ``state_dict``
(``.safetensors`` / ``.pt``) with ``--model-class package.module:Class`` and
``--model-kwargs JSON``; none is ever unpickled (:mod:`graphleaks.models.foreign`). The graph
comes from ``--edges/--features/--labels`` and the membership from ``--members`` and
``--non-members`` node-id files, and the adversary's auxiliary nodes from ``--population``
(default: every node neither member nor non-member). Every check runs before any attack; on
bad input nothing is written.
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
from graphleaks.report.writers import write_report

# The attacks, graph readers and model loaders import torch: imported inside run_model_audit
# so that `graphleaks audit --help` stays torch-free.

MODEL = "Model"
ModelFile = Annotated[Path, typer.Argument(
    metavar="FILE", help="The model: .pt2 (torch.export), .onnx, or a state_dict "
                         "(.safetensors/.pt) with --model-class. Nothing is unpickled.",
    show_default=False)]
ModelClass = Annotated[str | None, typer.Option(
    "--model-class", help="With a state_dict: the class to build, package.module:Class.",
    rich_help_panel=MODEL)]
ModelKwargs = Annotated[str | None, typer.Option(
    "--model-kwargs", help="With --model-class: its keyword arguments as a JSON object.",
    rich_help_panel=MODEL)]
ModelOutput = Annotated[str, typer.Option(
    "--model-output", help="What the model returns: logits, probabilities or "
                           "log_probabilities.", rich_help_panel=MODEL)]
EmbeddingLayer = Annotated[list[str] | None, typer.Option(
    "--embedding-layer", help="A submodule whose output is a node embedding, as named in "
                              "model.named_modules() (repeatable, first hidden layer first), "
                              "read with a forward hook for the white-box attacks: a "
                              "state_dict with --model-class, or an ONNX graph exported with "
                              "dynamo=True (the value computed last in that module's scope, "
                              "or a value of that name). Refused for .pt2 programs, which "
                              "run their operators inline.",
    rich_help_panel=MODEL)]
ModelTask = Annotated[str, typer.Option(
    "--task", help="What the model does: node (a node classifier on --edges/--features/"
                   "--labels), graph (a graph classifier called as model(x, edge_index, "
                   "batch) on the graph set --dataset or --graphs; the id files list graph "
                   "ids) or link (a pair scorer called as model(x, edge_index, pairs) on "
                   "--edges/--features; the member files list edges).", rich_help_panel=MODEL)]
GraphSetFile = Annotated[Path | None, typer.Option(
    "--graphs", help="--task graph: the graph set, a SMILES (.smi) or SDF file (needs "
                     "graphleaks[molecules]) or a TU-format folder.", rich_help_panel=o.GRAPH)]
PairsLayout = Annotated[str | None, typer.Option(
    "--pairs-layout", help="--task link: how the model takes pairs, columns ([2, P], PyG's "
                           "edge_label_index; the default) or rows ([P, 2]).",
    rich_help_panel=MODEL)]
OnInvalid = Annotated[str | None, typer.Option(
    "--on-invalid", help="--task graph with a molecule file: refuse (default) or skip a "
                         "molecule RDKit cannot parse (each skip is counted).",
    rich_help_panel=o.GRAPH)]


def audit_model(
    model: ModelFile, model_class: ModelClass = None, model_kwargs: ModelKwargs = None,
    model_output: ModelOutput = "logits", embedding_layer: EmbeddingLayer = None,
    edges: o.Edges = None, features: o.Features = None,
    labels: o.Labels = None, members: o.Members = None, non_members: o.NonMembers = None,
    population: o.Population = None, attack: o.Attack = None, suite: o.Suite = "standard",
    param: o.Param = None, n_bootstrap: o.NBootstrap = None, seed: o.Seed = 0,
    query_budgets: o.QueryBudgets = None, out: o.Out = o.DEFAULT_OUT,
    json_out: o.JsonOut = False, quiet: o.Quiet = False,
    show_progress: o.Progress = None, mlflow: o.Mlflow = False, verbose: o.Verbose = False,
    task: ModelTask = "node", dataset: o.Dataset = None, data_root: o.DataRoot = None,
    graphs: GraphSetFile = None, on_invalid: OnInvalid = None,
    pairs_layout: PairsLayout = None,
) -> None:
    """Audit a saved model from another pipeline (.pt2, .onnx or a state_dict).

    The model is served on the graph --edges/--features/--labels, with the split --members
    and --non-members (--task graph: a graph classifier on --dataset or --graphs; --task
    link: a pair scorer on --edges/--features, with member and non-member edge files).
    """
    output = o.OutputOptions.parse(out, json_out, quiet, show_progress, mlflow, verbose)
    if pairs_layout is not None and task != "link":
        raise InvalidConfigError("--pairs-layout applies to --task link only; drop it")
    if task == "graph":
        from graphleaks.cli.audit_model_graph import run_graph_model_audit

        run = run_graph_model_audit(
            model, model_class, model_kwargs, model_output, tuple(embedding_layer or ()),
            o.GraphSource(dataset, data_root, edges, features, labels), graphs, on_invalid,
            o.MembershipFiles(members, non_members, population),
            o.AuditBudgets.parse(attack, suite, param, n_bootstrap, seed), output)
        output.publish(run.report)
        return
    if task == "link":  # a pair scorer: edge files as members (cli/audit_model_link.py)
        from graphleaks.cli.audit_model_link import run_link_model_audit

        run = run_link_model_audit(
            model, model_class, model_kwargs, model_output, pairs_layout,
            tuple(embedding_layer or ()), o.GraphSource(dataset, data_root, edges, features,
                                                        labels),
            o.MembershipFiles(members, non_members, None),
            o.AuditBudgets.parse(attack, suite, param, n_bootstrap, seed), output,
            unused={"--population": population, "--labels": labels, "--graphs": graphs,
                    "--on-invalid": on_invalid, "--query-budgets": query_budgets})
        output.publish(run.report)
        return
    if task != "node":
        raise InvalidConfigError(f"--task {task[:20]!r} is unknown; choose node, link or graph")
    if dataset is not None or data_root is not None or graphs is not None \
            or on_invalid is not None:
        raise InvalidConfigError("--dataset/--data-root/--graphs/--on-invalid name a graph set "
                                 "for --task graph; a node model is served on --edges/"
                                 "--features/--labels")
    run = run_model_audit(model, model_class, model_kwargs, model_output,
                          o.GraphSource(None, None, edges, features, labels),
                          o.MembershipFiles(members, non_members, population),
                          o.AuditBudgets.parse(attack, suite, param, n_bootstrap, seed), output,
                          embedding_layers=tuple(embedding_layer or ()),
                          curves=o.QueryCurveChoice.parse(query_budgets))
    output.publish(run.report)


def run_model_audit(
    model: Path, model_class: str | None, model_kwargs: str | None, model_output: str,
    graph_source: o.GraphSource, membership: o.MembershipFiles, budgets: o.AuditBudgets,
    output: o.OutputOptions, embedding_layers: tuple[str, ...] = (),
    curves: o.QueryCurveChoice | None = None,
) -> Any:
    """Load, check and audit a saved model; write the report; return the audit run.

    Raises:
        InvalidConfigError: For missing options, or an unknown format/class.
        DataError: For unreadable files, bad node sets, or outputs that contradict labels.
    """
    from graphleaks.attacks import registry
    from graphleaks.audit.model_audit import audit_target, exposure, model_target
    from graphleaks.audit.suite import get_suite
    from graphleaks.data.node_sets import read_node_ids
    from graphleaks.models.foreign import MODEL_READERS, load_model_file
    from graphleaks.models.protocol import OUTPUT_KINDS

    check_output_dir(output.out, REPORT)  # an unusable --out fails before any work
    the_suite = get_suite(budgets.suite)
    if model_output not in OUTPUT_KINDS:
        raise InvalidConfigError(f"--model-output {model_output!r} is unknown; choose one of: "
                                 f"{', '.join(OUTPUT_KINDS)}")
    g, m = graph_source, membership
    if g.edges is None or g.features is None or g.labels is None:
        raise InvalidConfigError("graphleaks audit model needs the graph it is served with: "
                                 "--edges, --features and --labels")
    if m.members is None or m.non_members is None:
        raise InvalidConfigError("graphleaks audit model needs --members and --non-members "
                                 "node-id files")
    names = budgets.attack_names()
    curves = curves or o.QueryCurveChoice()
    curves.curve_attacks(names)  # a grid with no curve attack to draw: refused before work
    # one resolution of every --param: canonical owner, declared field types (exit 2 else)
    params = resolve_cli_params(list(budgets.params), attacks=names or list(registry))
    graph, ref = g.load()
    n = int(graph.num_nodes)
    # string node ids (user_17): the id files name nodes as the edge list does
    node_names = getattr(graph, "node_names", None) if "node_names" in graph else None
    index = ({name: i for i, name in enumerate(node_names)} if node_names is not None
             else None)
    mem = read_node_ids(m.members, n, index=index)
    non = read_node_ids(m.non_members, n, index=index)
    pop = read_node_ids(m.population, n, index=index) if m.population is not None else None
    loaded, factory = load_model_file(model, model_class=model_class, model_kwargs=model_kwargs)
    label = model_class or f"{model.name} ({MODEL_READERS.reader(model).description})"
    target = model_target(loaded, graph, mem, non, output=model_output, model_factory=factory,
                          parameters=factory is not None, seed=budgets.seed, population=pop,
                          model_class=label, embedding_layers=embedding_layers or None)
    config = {"model": model.name, "graph": ref.to_dict(), "model_class": model_class,
              "model_output": model_output, "embedding_layers": list(embedding_layers),
              "model_kwargs": model_kwargs, "members": m.members.name,
              "non_members": m.non_members.name,
              "population": m.population.name if m.population is not None
              else "every node neither member nor non-member",
              "attacks": names or "all applicable", "suite": the_suite.name,
              "n_bootstrap": budgets.n_bootstrap}
    output.before_work()  # e.g. open the MLflow store: everything else is checked by now
    with progress_display(output.bars):
        run = audit_target(target, attacks=names, seed=budgets.seed, suite=the_suite,
                           n_bootstrap=budgets.n_bootstrap, config=config, params=params,
                           model_label=label)
        curves.add_curves(run.report, target, names=names, budgets=budgets,
                          suite=the_suite, params=params, exposed=exposure(target.iface))
    run.report.config["params"] = params_as_run(params, run.report)
    write_report(run.report, output.out, html=True, scores=run.tables)  # all files or none
    return run
