"""``graphleaks export``: hand auditors a report in the formats they file.

``--cyclonedx FILE`` writes a CycloneDX 1.6 ML-BOM whose model card carries every metric of
the report with its interval and slice, the privacy ledger, the threat model and the
verdict (:mod:`graphleaks.report.mlbom`; needs the ``evidence`` extra, which validates the
BOM against the CycloneDX schema before it is written). ``--sarif FILE`` writes a SARIF
2.1.0 log with one ``error`` result per crossed gate (:mod:`graphleaks.report.sarif`), for
GitHub code scanning; the gate comes from the same options as ``graphleaks check`` and is
evaluated by the same code.

Exit codes: 0 the files were written, **also when a gate was crossed** (export is
evidence; ``graphleaks check`` is the gate and exits 3); 2 bad input (unreadable report,
bad gate option, an output path that is not graphleaks' own, the extra missing). Nothing is
written unless everything was checked and rendered.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import quote

import typer

from graphleaks.cli.check import GateBaseline, GateBound, GateConfig, GateMax, GateTolerance

if TYPE_CHECKING:
    from graphleaks.report.report import AuditReport


def export(
    report: Annotated[Path, typer.Argument(help="report.json written by graphleaks audit.")],
    cyclonedx: Annotated[Path | None, typer.Option(
        "--cyclonedx", help="Write a CycloneDX 1.6 ML-BOM (model card with every metric, "
                            "the ledger and the threat model) here. Needs the extra: "
                            "pip install 'graphleaks[evidence]'.")] = None,
    sarif: Annotated[Path | None, typer.Option(
        "--sarif", help="Write a SARIF 2.1.0 log here: one error per crossed gate (for "
                        "GitHub code scanning); no gate option: rules only, no results.")
    ] = None,
    config: GateConfig = None,
    max_: GateMax = None,
    baseline: GateBaseline = None,
    tolerance: GateTolerance = None,
    bound: GateBound = None,
) -> None:
    """Export a report as CycloneDX ML-BOM and/or SARIF evidence; exit 0 even when a gate
    is crossed (graphleaks check is the gate)."""
    from graphleaks._outputs import (
        OutputFile,
        check_output_file,
        is_cyclonedx_bom,
        is_sarif_log,
        publish_files,
    )
    from graphleaks.errors import InvalidConfigError

    if cyclonedx is None and sarif is None:
        raise InvalidConfigError("export: give --cyclonedx FILE, --sarif FILE or both")
    # --tolerance or --bound alone is a gate with nothing to check: refused by check_report
    gated = (config is not None or bool(max_) or baseline is not None
             or tolerance is not None or bound is not None)
    if sarif is None and gated:
        raise InvalidConfigError("--config, --max, --baseline, --tolerance and --bound gate "
                                 "the SARIF log; add --sarif FILE")
    if cyclonedx is not None:
        from graphleaks.report.mlbom import EXTRA, validator_available

        if not validator_available():
            raise InvalidConfigError(
                f"--cyclonedx needs the optional extra '{EXTRA}' (cyclonedx-python-lib with "
                f"its JSON schema validator); install it: pip install 'graphleaks[{EXTRA}]'")
    if cyclonedx is not None and sarif is not None and \
            cyclonedx.absolute() == sarif.absolute():
        raise InvalidConfigError("--cyclonedx and --sarif must name different files")
    # every output path is checked before the report is read: a refused one costs nothing
    if cyclonedx is not None:
        check_output_file(cyclonedx, flag="--cyclonedx", is_ours=is_cyclonedx_bom)
    if sarif is not None:
        check_output_file(sarif, flag="--sarif", is_ours=is_sarif_log)

    from graphleaks.report.report import load_report

    data = load_report(report)
    files: list[OutputFile] = []
    lines: list[str] = []
    if sarif is not None:
        text, line = _sarif_text(data, report, config=config, max_=max_, baseline=baseline,
                                 tolerance=tolerance, bound=bound, gated=gated)
        files.append(OutputFile(sarif, "--sarif", text, is_sarif_log))
        lines.append(f"sarif: {sarif}: {line}")
    if cyclonedx is not None:
        text, line = _bom_text(data)
        files.insert(0, OutputFile(cyclonedx, "--cyclonedx", text, is_cyclonedx_bom))
        lines.insert(0, f"cyclonedx: {cyclonedx}: {line}")
    publish_files(files)  # all of them or none
    for line in lines:
        typer.echo(line)


def _bom_text(data: AuditReport) -> tuple[str, str]:
    """The BOM text, checked against the CycloneDX 1.6 schema, and a line describing it."""
    from graphleaks.report.mlbom import performance_metrics, render_bom, validate_bom

    text = render_bom(data)
    errors = validate_bom(text)
    if errors:  # our bug, not the user's input: exit 1 with the count, never the content
        raise RuntimeError(f"the CycloneDX BOM failed its schema check ({len(errors)} "
                           "errors); please report this graphleaks bug")
    n = len(performance_metrics(data))
    return text, (f"CycloneDX 1.6 ML-BOM, model card with {n} metrics of "
                  f"{len(data.attacks)} attacks (schema-valid)")


def _sarif_text(data: AuditReport, report: Path, *, config: Path | None, max_: list[str] | None,
                baseline: Path | None, tolerance: float | None, bound: str | None,
                gated: bool) -> tuple[str, str]:
    """The SARIF text of the gate the options describe, and a line describing it."""
    from graphleaks._registry import normalize_name
    from graphleaks.cli.check import resolve_gate
    from graphleaks.report.regression import check_report
    from graphleaks.report.sarif import GateSource, render_sarif, spec_threshold_lines

    if not gated:
        source = GateSource(_uri(report))
        return (render_sarif(data, None, report_uri=source.report_uri, source=source),
                "no gate given (--config, --max or --baseline): rules only, 0 results")
    resolved = resolve_gate(data, config=config, max_=max_, baseline=baseline,
                            tolerance=tolerance, bound=bound)
    result = check_report(data, resolved.gate, resolved.baseline)
    for note in result.notes:  # e.g. a baseline of another model on the same graph
        typer.echo(f"warning: {note}", err=True)
    lines = None
    if config is not None:
        try:
            lines = spec_threshold_lines(config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):  # load_spec read it a moment ago
            lines = None
    source = GateSource(
        _uri(report), spec_uri=None if config is None else _uri(config), spec_lines=lines,
        spec_thresholds=frozenset((None if t.attack is None else normalize_name(t.attack),
                                   t.metric) for t in resolved.spec_thresholds),
        baseline_from_spec=resolved.baseline_from_spec,
        baseline_uri=None if resolved.baseline_path is None else _uri(resolved.baseline_path))
    text = render_sarif(data, result, report_uri=source.report_uri, source=source)
    n = len(result.failures)
    state = "passed" if result.passed else f"FAILED, {n} crossed"
    return text, (f"SARIF 2.1.0, {n} result(s) of {len(result.checks)} checks (privacy gate "
                  f"{state}; export exits 0, graphleaks check is the gate)")


def _uri(path: Path) -> str:
    """``path`` as SARIF wants it: relative (POSIX, percent-encoded) to the working
    directory, which is the repository root in CI, when inside it; else a ``file://`` URI."""
    absolute = Path(os.path.abspath(path))
    try:
        return quote(absolute.relative_to(Path.cwd()).as_posix())
    except ValueError:
        return absolute.as_uri()
