"""``graphleaks check``: the CI privacy gate.

Exit codes: 0 every check passed; 3 a threshold was crossed; 2 bad input (unreadable
report, unknown metric, threshold outside [0, 1], report of a newer schema version, a
baseline audited on another graph). A baseline of another model on the same graph gates
with one ``warning:`` line on stderr.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from graphleaks.report.gates import GateSpec, Threshold
    from graphleaks.report.report import AuditReport

EXIT_THRESHOLD = 3


# The gate's options, declared once: `graphleaks export` builds the same gate for SARIF.
GateConfig = Annotated[Path | None, typer.Option(
    "--config", "-c", help="Audit spec (TOML) whose [gate] table gives thresholds, baseline "
                           "and tolerances.")]
GateMax = Annotated[list[str] | None, typer.Option(
    "--max", help="Threshold METRIC=LIMIT or ATTACK.METRIC=LIMIT, e.g. auc=0.6 or "
                  "'tpr@1%fpr=0.05' (repeatable; adds to the spec's).")]
GateBaseline = Annotated[Path | None, typer.Option(
    "--baseline", help="Baseline report.json; metrics may rise by at most the tolerance.")]
GateTolerance = Annotated[float | None, typer.Option(
    "--tolerance", help="Allowed increase over the baseline (default: the spec's, else 0.05).")]
GateBound = Annotated[str | None, typer.Option(
    "--bound", help="Number gated: upper (confidence bound, default), value or lower.")]


def check(
    report: Annotated[Path, typer.Argument(help="report.json written by graphleaks audit.")],
    config: GateConfig = None,
    max_: GateMax = None,
    baseline: GateBaseline = None,
    tolerance: GateTolerance = None,
    bound: GateBound = None,
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

    Thresholds may name a slice of the per-node (per-edge, per-graph) risk section, e.g.
    ``--max 'confidence_mia[degree<=2].tpr@1%fpr=0.1'``.
    """
    from graphleaks._outputs import OutputFile, append_output_file, publish_files
    from graphleaks.report.regression import check_report, render_gate_markdown
    from graphleaks.report.report import load_report

    # Every path and option is checked, and every file rendered, before the first byte is
    # written: a refused command (a bad --max, --config or --baseline) leaves nothing behind.
    html_target = _check_outputs(junit, summary, html, write_baseline)
    data = load_report(report)
    baseline_text = report.read_text(encoding="utf-8") if write_baseline is not None else None
    resolved = resolve_gate(data, config=config, max_=max_, baseline=baseline,
                            tolerance=tolerance, bound=bound)
    gate, base = resolved.gate, resolved.baseline
    files: list[OutputFile] = []
    if write_baseline is not None and baseline_text is not None:
        files.append(OutputFile(write_baseline, "--write-baseline", baseline_text, None))
    gated = write_baseline is None or bool(max_) or config is not None or baseline is not None
    if not gated:  # only the baseline is asked for
        publish_files(files)
        _echo_baseline(write_baseline, json_out)
        return
    result = check_report(data, gate, base)
    for note in result.notes:  # e.g. a baseline of another model on the same graph
        typer.echo(f"warning: {note}", err=True)
    md = render_gate_markdown(result)
    if junit is not None:
        from graphleaks._outputs import is_junit_xml
        from graphleaks.report.junit import to_junit_xml

        files.append(OutputFile(junit, "--junit", to_junit_xml(result), is_junit_xml))
    if html_target is not None:
        from graphleaks._outputs import is_html_page

        files.append(OutputFile(html_target, "--html", _render_gate_html(data, result),
                                is_html_page))
    publish_files(files)  # all of them or none
    if summary is not None:
        from graphleaks._outputs import SUMMARY_HEAD

        # the generator line lets a rerun of the CI example recognise a summary.md it wrote
        # into a report folder; in $GITHUB_STEP_SUMMARY it is an invisible HTML comment
        append_output_file(summary, SUMMARY_HEAD + md + "\n", flag="--summary")
    if write_baseline is not None:
        _echo_baseline(write_baseline, json_out)
    if json_out:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        for c in result.checks:
            typer.echo(c.message)
        typer.echo("privacy gate: " + ("passed" if result.passed else
                                       f"FAILED ({len(result.failures)} crossed)"))
    if not result.passed:
        raise typer.Exit(EXIT_THRESHOLD)


@dataclass(frozen=True)
class ResolvedGate:
    """The gate of ``check``'s options (shared with ``export``, which reports it as SARIF).

    Attributes:
        gate: Thresholds (the spec's, then ``--max``), bound and tolerances.
        baseline: The baseline report, or None.
        baseline_path: Where it was read from.
        baseline_from_spec: Whether the spec named it (not ``--baseline``).
        spec_path: The ``--config`` spec, or None.
        spec_thresholds: The thresholds the spec set (the rest came from ``--max``).
    """

    gate: GateSpec
    baseline: AuditReport | None
    baseline_path: Path | None = None
    baseline_from_spec: bool = False
    spec_path: Path | None = None
    spec_thresholds: tuple[Threshold, ...] = ()


def resolve_gate(data: AuditReport, *, config: Path | None, max_: list[str] | None,
                 baseline: Path | None, tolerance: float | None, bound: str | None
                 ) -> ResolvedGate:
    """The gate the options of ``graphleaks check`` describe, for the report ``data``.

    Raises:
        GraphleaksError: For a bad spec, threshold, tolerance, bound or baseline report.
    """
    import dataclasses

    from graphleaks.audit.spec import load_spec
    from graphleaks.errors import InvalidConfigError
    from graphleaks.report.gates import BOUNDS, GateSpec, check_threshold
    from graphleaks.report.regression import parse_threshold_option
    from graphleaks.report.report import load_report

    gate = GateSpec()
    baseline_path = None
    if config is not None:
        spec = load_spec(config)
        gate = spec.gate
        baseline_path = spec.baseline_path()
    spec_thresholds = gate.thresholds
    from_spec = baseline_path is not None
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
        baseline_path, from_spec = baseline, False
    base = load_report(baseline_path) if baseline_path is not None else None
    return ResolvedGate(gate, base, None if baseline_path is None else Path(baseline_path),
                        from_spec, config, spec_thresholds)


def _echo_baseline(path: Path | None, json_out: bool) -> None:
    """Say where the baseline went (on stderr with --json, which keeps stdout for JSON)."""
    typer.echo(f"baseline written: {path} (gate later runs with --baseline {path})",
               err=json_out)


def _check_outputs(junit: Path | None, summary: Path | None, html: Path | None,
                   write_baseline: Path | None) -> Path | None:
    """Refuse output files check may not write: only graphleaks' own earlier output is replaced.

    JUnit XML and HTML are replaced only when they start with graphleaks' generator head; a
    baseline is never replaced; the summary is appended to (CI step summaries are other
    programs' files by design), so any regular file is accepted there. Links, dangling or
    not, are refused everywhere.

    Returns:
        The file ``--html`` writes (``report.html`` inside it when it names a folder).
    """
    from graphleaks._outputs import check_output_file, is_html_page, is_junit_xml
    from graphleaks.errors import InvalidConfigError

    if junit is not None:
        check_output_file(junit, flag="--junit", is_ours=is_junit_xml)
    if summary is not None:
        check_output_file(summary, flag="--summary", is_ours=None, append=True)
    target = None
    if html is not None:
        if html.is_symlink():
            raise InvalidConfigError(f"--html {html} is a symbolic link; give a real path")
        target = html / "report.html" if html.is_dir() else html
        check_output_file(target, flag="--html", is_ours=is_html_page)
    if write_baseline is not None:
        if write_baseline.exists() and not write_baseline.is_symlink():
            raise InvalidConfigError(f"--write-baseline {write_baseline} already exists; "
                                     "compare with --baseline, or delete it to start over")
        check_output_file(write_baseline, flag="--write-baseline", is_ours=None)
    outs = [p for p in (junit, target, write_baseline) if p is not None]
    if len({p.absolute() for p in outs}) < len(outs):
        raise InvalidConfigError("--junit, --html and --write-baseline must name different "
                                 "files")
    return target


def _render_gate_html(data: AuditReport, result: Any) -> str:
    """The gate page; a report whose fields the page needs are malformed is exit 2."""
    from graphleaks.errors import DataError
    from graphleaks.report.html import render_html

    try:
        return render_html(data, gate=result)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # the report passed its type checks but a nested field the page reads is malformed
        raise DataError(f"cannot render --html from the report: malformed field "
                        f"({type(exc).__name__}); regenerate the report with graphleaks") from None
