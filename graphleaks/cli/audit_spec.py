"""``graphleaks audit spec FILE``: run the audit a TOML spec describes.

The spec sets the target, the attacks, the seeds and the gate, so the target and attack
options do not exist here; ``--seed``, ``--n-bootstrap`` and ``--query-graph`` replace the
spec's values and are recorded in the report as overrides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from graphleaks._outputs import REPORT, check_output_dir
from graphleaks._progress import progress_display
from graphleaks.audit.spec import load_spec, run_spec
from graphleaks.cli import options as o
from graphleaks.cli._common import check_audit_options
from graphleaks.report.writers import write_report

# graphleaks.audit.spec imports torch only inside run_spec: imported here at the top.

SpecFile = Annotated[Path, typer.Argument(
    metavar="FILE", help="TOML audit spec (target, attacks, seeds, metrics, gate).",
    show_default=False)]


def audit_spec(
    spec_file: SpecFile, seed: o.SeedOverride = None, n_bootstrap: o.NBootstrapOverride = None,
    query_graph: o.QueryGraphOverride = None, device: o.Device = None,
    out: o.Out = o.DEFAULT_OUT, json_out: o.JsonOut = False, quiet: o.Quiet = False,
    show_progress: o.Progress = None, mlflow: o.Mlflow = False, verbose: o.Verbose = False,
) -> None:
    """Run the audit a TOML spec describes (the CI gate's audit)."""
    output = o.OutputOptions.parse(out, json_out, quiet, show_progress, mlflow, verbose)
    check_audit_options(n_bootstrap, query_graph or "target")
    overrides = {k: v for k, v in (("seed", seed), ("n_bootstrap", n_bootstrap),
                                   ("query_graph", query_graph)) if v is not None}
    run_spec_audit(spec_file, overrides, o.TrainingChoice(device=device), output)


def run_spec_audit(spec_file: Path, overrides: dict[str, Any], training: o.TrainingChoice,
                   output: o.OutputOptions) -> None:
    """Check everything, run the spec's audit, write the report, print the summary.

    Raises:
        InvalidConfigError: For a bad override or spec (before any work).
    """
    check_output_dir(output.out, REPORT)  # an unusable --out fails before any training
    spec = load_spec(spec_file)  # a bad spec fails before any work
    output.before_work()  # an unreachable MLflow store fails before any work too
    device = training.device or "cpu"
    if spec.target.task != "node":  # a link or graph spec: its scores.csv lists the pairs
        from graphleaks.audit.task_spec import run_task_spec

        with progress_display(output.bars):
            run = run_task_spec(spec, device=device, overrides=overrides)
        write_report(run.report, output.out, html=True, scores=run.tables)
        output.publish(run.report)
        return
    with progress_display(output.bars):
        report = run_spec(spec, device=device, overrides=overrides)
    report.config["device"] = device
    write_report(report, output.out, html=True)
    output.publish(report)
