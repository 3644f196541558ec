"""``graphleaks audit scores FILE``: audit a model from its exported per-node scores."""

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

# The attacks and the score readers import torch: imported inside run_scores_audit so that
# `graphleaks audit --help` stays torch-free.

SCORES = "Scores"
ScoresFile = Annotated[Path, typer.Argument(
    metavar="FILE", help="Exported per-node scores: .npz (scores, labels, node_ids), .npy with "
                         "--labels, or CSV node_id,label,class scores...", show_default=False)]
ScoresOutput = Annotated[str, typer.Option(
    "--scores-output", help="What the file holds: probabilities, logits or log_probabilities.",
    rich_help_panel=SCORES)]
ScoreIds = Annotated[Path | None, typer.Option(
    "--score-ids", help="Node id of each row of a .npy score matrix (default: row i is node "
                        "i).", rich_help_panel=SCORES)]
ScoreLabels = Annotated[Path | None, typer.Option(
    "--labels", help="Label of each row of a .npy score matrix, one per line.",
    rich_help_panel=SCORES)]
ScoresTask = Annotated[str, typer.Option(
    "--task", help="node: per-node scores of a node classifier; link: per-pair scores "
                   "(source,target,score) of a link predictor, with --members and "
                   "--non-members edge files (two node ids per row); graph: one row per graph "
                   "id of a graph classifier (graph_id,label,class scores...).",
    rich_help_panel=SCORES)]


def audit_scores(
    scores: ScoresFile, members: o.Members = None, non_members: o.NonMembers = None,
    scores_output: ScoresOutput = "probabilities", labels: ScoreLabels = None,
    score_ids: ScoreIds = None, attack: o.Attack = None, suite: o.Suite = "standard",
    param: o.Param = None, n_bootstrap: o.NBootstrap = None, seed: o.Seed = 0,
    out: o.Out = o.DEFAULT_OUT, json_out: o.JsonOut = False, quiet: o.Quiet = False,
    show_progress: o.Progress = None, mlflow: o.Mlflow = False, verbose: o.Verbose = False,
    task: ScoresTask = "node",
) -> None:
    """Audit a model from its exported per-node (or, with --task link, per-pair) scores.

    The split is --members and --non-members (default: every other scored node).
    """
    output = o.OutputOptions.parse(out, json_out, quiet, show_progress, mlflow, verbose)
    if task not in ("node", "link", "graph"):
        raise InvalidConfigError(f"--task {task[:20]!r} is unknown; choose node, link or graph")
    if task == "graph":
        run = run_graph_scores_audit(scores, scores_output, labels, score_ids,
                                     o.MembershipFiles(members, non_members), attack, suite,
                                     param, n_bootstrap, seed, output)
        output.publish(run.report)
        return
    if task == "link":
        from graphleaks.cli.audit_link_scores import run_link_scores_audit

        run = run_link_scores_audit(
            scores, scores_output, o.MembershipFiles(members, non_members),
            o.AuditBudgets.parse(attack, suite, param, n_bootstrap, seed), output,
            unused={"--labels": labels, "--score-ids": score_ids})
        output.publish(run.report)
        return
    run = run_scores_audit(scores, scores_output, labels, score_ids,
                           o.MembershipFiles(members, non_members),
                           o.AuditBudgets.parse(attack, suite, param, n_bootstrap, seed), output)
    output.publish(run.report)


def run_scores_audit(
    scores: Path, scores_output: str, labels: Path | None, score_ids: Path | None,
    membership: o.MembershipFiles, budgets: o.AuditBudgets, output: o.OutputOptions,
) -> Any:
    """Validate everything, run the scores-only audit, write the report; return the run.

    Every input is checked (options, files, ids, named attacks' capabilities) before any
    attack runs, and the report folder is written all at once or not at all.

    Raises:
        InvalidConfigError: For a missing --members or an unknown --scores-output.
        DataError: For invalid files.
        CapabilityError: For a named attack the scores cannot serve.
    """
    from graphleaks.attacks import registry as attacks
    from graphleaks.attacks.capabilities import require_all
    from graphleaks.audit.scores_only import (
        TARGET_KIND,
        audit_scores_run,
        scores_only_attacks,
        scores_target,
    )
    from graphleaks.audit.suite import get_suite
    from graphleaks.data.node_sets import read_node_ids
    from graphleaks.data.score_files import SCORE_KINDS, load_scores

    m = membership
    if m.members is None:
        raise InvalidConfigError("graphleaks audit scores needs --members FILE (the member "
                                 "node ids, one per line)")
    if scores_output not in SCORE_KINDS:
        raise InvalidConfigError(f"--scores-output {scores_output!r} is unknown; choose one of: "
                                 f"{', '.join(SCORE_KINDS)}")
    the_suite = get_suite(budgets.suite)
    check_output_dir(output.out, REPORT)  # an unusable --out fails before any work
    names = budgets.attack_names()
    # one resolution of every --param: canonical owner, declared field types (exit 2 else)
    params = resolve_cli_params(list(budgets.params), attacks=names or list(attacks))
    ns = load_scores(scores, output=scores_output, labels=labels, node_ids=score_ids)
    # string node ids in the export: the id files name nodes as its node_id column does
    member_ids = read_node_ids(m.members, index=ns.id_table)
    non_member_ids = (read_node_ids(m.non_members, index=ns.id_table)
                      if m.non_members is not None else None)
    target = scores_target(ns, member_ids, non_member_ids)  # overlap, ranges, unscored ids
    if names:  # a named attack the scores cannot serve: refused before any work
        objs, _ = scores_only_attacks(names, the_suite, params)
        require_all(objs, target.capabilities(), TARGET_KIND)
    config = {"scores": scores.name, "members": m.members.name,
              "non_members": m.non_members.name if m.non_members else "every other scored node",
              "scores_output": scores_output, "attacks": names or "all applicable",
              "suite": the_suite.name, "n_bootstrap": budgets.n_bootstrap,
              **o.file_names(labels=labels, score_ids=score_ids)}
    output.before_work()  # e.g. open the MLflow store: everything else is checked by now
    with progress_display(output.bars):
        run = audit_scores_run(ns, members=target.split.train, non_members=target.split.test,
                               attacks=names, seed=budgets.seed,
                               n_bootstrap=budgets.n_bootstrap, suite=the_suite,
                               config=config, params=params)
    run.report.config["params"] = params_as_run(params, run.report)
    write_report(run.report, output.out, html=True, scores=run.tables)
    return run


def run_graph_scores_audit(
    scores: Path, scores_output: str, labels: Path | None, score_ids: Path | None,
    membership: o.MembershipFiles, attack: list[str] | None, suite: str,
    param: list[str] | None, n_bootstrap: int | None, seed: int, output: o.OutputOptions,
) -> Any:
    """``--task graph``: one score row per graph id; the graph attacks scores can serve.

    Raises:
        InvalidConfigError: A missing --members, an unknown --scores-output or attack, or
            --param (graph attacks take no overrides here).
        DataError: For invalid files or ids.
    """
    from graphleaks.attacks.graph_membership import graph_registry
    from graphleaks.audit.graph_audit import audit_graph_scores_run
    from graphleaks.audit.suite import get_suite
    from graphleaks.data.node_sets import read_node_ids
    from graphleaks.data.score_files import SCORE_KINDS, load_scores

    m = membership
    if m.members is None:
        raise InvalidConfigError("graphleaks audit scores --task graph needs --members FILE "
                                 "(the member graph ids, one per line)")
    if scores_output not in SCORE_KINDS:
        raise InvalidConfigError(f"--scores-output {scores_output!r} is unknown; choose one of: "
                                 f"{', '.join(SCORE_KINDS)}")
    if param:
        raise InvalidConfigError("--param is not supported with --task graph; drop it (the "
                                 "graph attacks run with the suite's budgets)")
    the_suite = get_suite(suite)
    names = [graph_registry.get(a).name for a in attack] if attack else None
    check_output_dir(output.out, REPORT)
    ns = load_scores(scores, output=scores_output, labels=labels, node_ids=score_ids)
    if ns.names is not None:
        raise InvalidConfigError(f"{scores}: graph ids must be integers (row i of the graph "
                                 "set); string ids are not supported with --task graph")
    member_ids = read_node_ids(m.members)
    non_member_ids = read_node_ids(m.non_members) if m.non_members is not None else None
    config = {"scores": scores.name, "members": m.members.name,
              "non_members": m.non_members.name if m.non_members else "every other scored graph",
              "scores_output": scores_output, "n_bootstrap": n_bootstrap,
              **o.file_names(labels=labels, score_ids=score_ids)}
    output.before_work()
    with progress_display(output.bars):
        run = audit_graph_scores_run(ns, member_ids, non_member_ids, attacks=names, seed=seed,
                                     suite=the_suite.name, n_bootstrap=n_bootstrap,
                                     config=config)
    write_report(run.report, output.out, html=True, scores=run.tables)
    return run
