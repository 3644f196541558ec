"""``graphleaks check``: the CI privacy gate.

Exit codes: 0 every check passed; 3 a threshold was crossed; 2 bad input (unreadable
report, unknown metric, threshold outside [0, 1], report of a newer schema version).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from graphleaks.report.report import AuditReport

EXIT_THRESHOLD = 3


def check(
    report: Annotated[Path, typer.Argument(help="report.json written by graphleaks audit.")],
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="Audit spec (TOML) whose [gate] table gives thresholds, "
                               "baseline and tolerances.")] = None,
    max_: Annotated[list[str] | None, typer.Option(
        "--max", help="Threshold METRIC=LIMIT or ATTACK.METRIC=LIMIT, e.g. auc=0.6 or "
                      "'tpr@1%fpr=0.05' (repeatable; adds to the spec's).")] = None,
    baseline: Annotated[Path | None, typer.Option(
        help="Baseline report.json; metrics may rise by at most the tolerance.")] = None,
    tolerance: Annotated[float | None, typer.Option(
        help="Allowed increase over the baseline (default: the spec's, else 0.05).")] = None,
    bound: Annotated[str | None, typer.Option(
        help="Number gated: upper (confidence bound, default), value or lower.")] = None,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here.")] = None,
    summary: Annotated[Path | None, typer.Option(
        help="Append a Markdown summary here (e.g. \"$GITHUB_STEP_SUMMARY\").")] = None,
    html: Annotated[Path | None, typer.Option(
        help="Write a self-contained HTML report with the gate result here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
    = False,
    write_baseline: Annotated[Path | None, typer.Option(
        help="First step of a CI gate: copy this report to a new baseline file here (refuses "
             "to replace one); thresholds, if given, are still checked.")] = None,
) -> None:
    """Gate a report on privacy thresholds and a baseline; exit 3 when one is crossed.

    Thresholds may name a slice of the per-node risk section, e.g.
    ``--max 'confidence_mia[degree<=2].tpr@1%fpr=0.1'``.
    """
    import dataclasses

    from graphleaks.audit.spec import load_spec
    from graphleaks.errors import InvalidConfigError
    from graphleaks.report.gates import BOUNDS, GateSpec, check_threshold
    from graphleaks.report.junit import write_junit
    from graphleaks.report.regression import (
        check_report,
        parse_threshold_option,
        render_gate_markdown,
    )
    from graphleaks.report.report import load_report

    _check_outputs(junit, summary, html)  # before reading anything
    data = load_report(report)
    if write_baseline is not None:
        from graphleaks._io import write_texts_atomically

        if write_baseline.exists():
            raise InvalidConfigError(f"--write-baseline {write_baseline} already exists; "
                                     "compare with --baseline, or delete it to start over")
        write_texts_atomically({write_baseline: report.read_text()})
        typer.echo(f"baseline written: {write_baseline} (gate later runs with --baseline "
                   f"{write_baseline})", err=json_out)
        if not max_ and config is None and baseline is None:
            return
    gate = GateSpec()
    baseline_path = None
    if config is not None:
        spec = load_spec(config)
        gate = spec.gate
        baseline_path = spec.baseline_path()
    names = [a.attack for a in data.attacks]  # resolved without importing the registry
    extra = tuple(parse_threshold_option(m, names) for m in max_ or [])
    changes: dict[str, object] = {"thresholds": gate.thresholds + extra}
    if tolerance is not None:
        changes["tolerance"] = check_threshold("epsilon_lb", tolerance, "--tolerance")
    if bound is not None:
        if bound not in BOUNDS:
            raise InvalidConfigError(f"--bound must be one of {', '.join(BOUNDS)}, "
                                     f"got {bound!r}")
        changes["bound"] = bound
    gate = dataclasses.replace(gate, **changes)  # type: ignore[arg-type]
    if baseline is not None:
        baseline_path = baseline
    base = load_report(baseline_path) if baseline_path is not None else None
    result = check_report(data, gate, base)
    md = render_gate_markdown(result)
    if junit is not None:
        write_junit(result, junit)
    if summary is not None:
        summary.parent.mkdir(parents=True, exist_ok=True)
        with summary.open("a", encoding="utf-8") as fh:
            fh.write(md + "\n")
    if html is not None:
        _write_gate_html(data, html, result)
    if json_out:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        for c in result.checks:
            typer.echo(c.message)
        typer.echo("privacy gate: " + ("passed" if result.passed else
                                       f"FAILED ({len(result.failures)} crossed)"))
    if not result.passed:
        raise typer.Exit(EXIT_THRESHOLD)


def _check_outputs(junit: Path | None, summary: Path | None, html: Path | None) -> None:
    """Refuse output files check may not write: only graphleaks' own earlier output is replaced.

    The summary is appended to (CI step summaries are other programs' files by design), so
    any regular file is accepted there.
    """
    from graphleaks._outputs import check_output_file, contains

    if junit is not None:
        check_output_file(junit, flag="--junit", is_ours=contains(b"graphleaks-privacy-gate"))
    if summary is not None:
        check_output_file(summary, flag="--summary", is_ours=None, append=True)
    if html is not None and not html.is_dir():
        check_output_file(html, flag="--html", is_ours=contains(b"graphleaks"))


def _write_gate_html(data: AuditReport, html: Path, result: Any) -> None:
    """Render the gate page; a report whose fields the page needs are malformed is exit 2."""
    from graphleaks.errors import DataError
    from graphleaks.report.html import write_html

    target = html / "report.html" if html.is_dir() else html
    if html.is_dir():
        from graphleaks._outputs import check_output_file, contains

        check_output_file(target, flag="--html", is_ours=contains(b"graphleaks"))
    try:
        write_html(data, target, gate=result)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # the report passed its type checks but a nested field the page reads is malformed
        raise DataError(f"cannot render --html from the report: malformed field "
                        f"({type(exc).__name__}); regenerate the report with graphleaks") from None
