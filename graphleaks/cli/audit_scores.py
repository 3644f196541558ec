"""``graphleaks audit --scores``: audit a model from its exported per-node scores."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphleaks.errors import InvalidConfigError


def run_scores_audit_cli(
    scores: Path,
    *,
    members: Path | None,
    non_members: Path | None,
    scores_output: str,
    labels: Path | None,
    out: Path,
    attack: list[str] | None,
    suite: str,
    param: list[str] | None,
    n_bootstrap: int | None,
    seed: int,
    conflicting: dict[str, Any],
    score_ids: Path | None = None,
    before_work: Callable[[], object] | None = None,
) -> Any:
    """Validate everything, run the scores-only audit, write the report files.

    Every input is checked (options, files, ids, named attacks' capabilities) before any
    attack runs, and the report folder is written all at once or not at all.

    Args:
        scores: Score file (``.npz``, ``.npy`` with ``--labels``, or CSV).
        members: Member node-id file.
        non_members: Non-member node-id file (default: every scored non-member).
        scores_output: ``probabilities``, ``logits`` or ``log_probabilities``.
        labels: Label file for a ``.npy`` score matrix.
        score_ids: Node-id file for a ``.npy`` score matrix (default: row i is node i).
        out: Report folder.
        attack: Attack names, or None for every attack the scores allow.
        suite: Suite name.
        param: ``NAME.FIELD=VALUE`` attack parameters.
        n_bootstrap: Bootstrap replicates (default: the suite's).
        seed: Root seed.
        conflicting: Options of other audit modes and whether each was given.
        before_work: Called once every input is checked, just before the audit runs.

    Returns:
        The :class:`~graphleaks.audit.runner.AuditRun`.

    Raises:
        InvalidConfigError: For options that do not go with ``--scores``.
        DataError: For invalid files.
        CapabilityError: For a named attack the scores cannot serve.
    """
    from graphleaks._outputs import REPORT, check_output_dir
    from graphleaks.attacks import registry as attacks
    from graphleaks.attacks.capabilities import require_all
    from graphleaks.audit.scores_only import (
        TARGET_KIND,
        audit_scores_run,
        scores_only_attacks,
        scores_target,
    )
    from graphleaks.audit.suite import get_suite
    from graphleaks.cli._common import check_audit_options, params_as_run, resolve_cli_params
    from graphleaks.data.node_sets import read_node_ids
    from graphleaks.data.score_files import SCORE_KINDS, load_scores
    from graphleaks.report.writers import write_report

    given = sorted(k for k, v in conflicting.items() if v)
    if given:
        raise InvalidConfigError(f"--scores audits exported scores only; drop {', '.join(given)}"
                                 " (they belong to audits of a model or a bundle)")
    if members is None:
        raise InvalidConfigError("--scores needs --members FILE (the member node ids, one per "
                                 "line)")
    if scores_output not in SCORE_KINDS:
        raise InvalidConfigError(f"--scores-output {scores_output!r} is unknown; choose one of: "
                                 f"{', '.join(SCORE_KINDS)}")
    the_suite = get_suite(suite)
    check_output_dir(out, REPORT)  # an unusable --out fails before any work
    check_audit_options(n_bootstrap, "target")
    names = [attacks.get(n).name for n in attack] if attack else None
    # one resolution of every --param: canonical owner, declared field types (exit 2 else)
    params = resolve_cli_params(param, attacks=names or list(attacks))
    ns = load_scores(scores, output=scores_output, labels=labels, node_ids=score_ids)
    member_ids = read_node_ids(members)
    non_member_ids = read_node_ids(non_members) if non_members is not None else None
    target = scores_target(ns, member_ids, non_member_ids)  # overlap, ranges, unscored ids
    if names:  # a named attack the scores cannot serve: refused before any work
        objs, _ = scores_only_attacks(names, the_suite, params)
        require_all(objs, target.capabilities(), TARGET_KIND)
    config = {"scores": str(scores), "members": str(members),
              "non_members": str(non_members) if non_members else "every other scored node",
              "scores_output": scores_output, "attacks": names or "all applicable",
              "suite": the_suite.name, "n_bootstrap": n_bootstrap}
    if before_work is not None:
        before_work()  # e.g. open the MLflow store: everything else is checked by now
    run = audit_scores_run(ns, members=target.split.train, non_members=target.split.test,
                           attacks=names, seed=seed, n_bootstrap=n_bootstrap, suite=the_suite,
                           config=config, params=params)
    run.report.config["params"] = params_as_run(params, run.report)
    write_report(run.report, out, html=True, scores=run.tables)
    return run
