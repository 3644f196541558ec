"""``graphleaks audit scores FILE --task link``: audit a link predictor from its pair scores.

The file holds ``source, target, score`` rows (CSV/TSV with those columns, or a ``.npz`` of
those arrays); ``--members`` and ``--non-members`` are edge files (two node ids per row).
Everything is checked before any attack runs; the report folder is written all at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphleaks._outputs import REPORT, check_output_dir
from graphleaks._progress import progress_display
from graphleaks.cli import options as o
from graphleaks.errors import InvalidConfigError
from graphleaks.report.writers import write_report


def run_link_scores_audit(
    scores: Path, scores_output: str, membership: o.MembershipFiles,
    budgets: o.AuditBudgets, output: o.OutputOptions, *, unused: dict[str, Any],
) -> Any:
    """Validate everything, run the scores-only edge audit, write the report; the run.

    Args:
        scores: The pair-score file.
        scores_output: ``logits`` or ``probabilities``.
        membership: ``--members`` and ``--non-members`` edge files (both required).
        budgets: Attacks, suite, params, bootstrap and seed.
        output: Where and how to write.
        unused: Options of the node mode the user gave (refused: never dropped silently).

    Raises:
        InvalidConfigError: For a missing edge file, an option of the node mode, a --param,
            or an unknown score kind.
        DataError: For invalid files.
        CapabilityError: For a named attack that needs more than scores.
    """
    from graphleaks.attacks.edge_membership import edge_registry
    from graphleaks.audit.link_audit import audit_link_scores, build_edge_attacks
    from graphleaks.audit.suite import get_suite
    from graphleaks.data.pair_score_files import (
        PAIR_SCORE_KINDS,
        load_pair_scores,
        read_edge_pairs,
    )

    given = [name for name, value in unused.items() if value]
    if given:
        raise InvalidConfigError(f"{given[0]} applies to per-node scores; drop it with "
                                 "--task link")
    if budgets.params:
        raise InvalidConfigError("--param is not supported with --task link yet; drop it")
    m = membership
    if m.members is None or m.non_members is None:
        raise InvalidConfigError("graphleaks audit scores --task link needs --members FILE and "
                                 "--non-members FILE (two node ids per row: the member edges "
                                 "and the non-member pairs)")
    if scores_output not in PAIR_SCORE_KINDS:
        raise InvalidConfigError(f"--scores-output {scores_output!r} is not a pair-score kind; "
                                 f"choose one of: {', '.join(PAIR_SCORE_KINDS)}")
    the_suite = get_suite(budgets.suite)
    check_output_dir(output.out, REPORT)
    names = [edge_registry.get(n).name for n in budgets.attacks] or None
    if names:
        build_edge_attacks(names, the_suite)  # an unknown or invalid attack: before any work
    ps = load_pair_scores(scores, output=scores_output)
    members = read_edge_pairs(m.members, "member edge")
    non_members = read_edge_pairs(m.non_members, "non-member pair")
    config = {"scores": scores.name, "members": m.members.name,
              "non_members": m.non_members.name, "scores_output": scores_output,
              "n_bootstrap": budgets.n_bootstrap}
    output.before_work()
    with progress_display(output.bars):
        run = audit_link_scores(ps, members, non_members, attacks=names, seed=budgets.seed,
                                suite=the_suite, n_bootstrap=budgets.n_bootstrap,
                                config=config)
    write_report(run.report, output.out, html=True, scores=run.tables)
    return run


__all__ = ["run_link_scores_audit"]
