"""``graphleaks audit embeddings FILE``: audit published node embeddings for attribute leakage.

Runs Duddu et al.'s attribute inference on an embedding file (``.npy``, row ``i`` = node
``i``, or word2vec text) against an attribute CSV, and writes ``report.json`` and
``report.md``. It trains no model, so the target, attack and defense options do not exist
here.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer

from graphleaks._outputs import EMBEDDING_REPORT, check_output_dir
from graphleaks.cli import options as o
from graphleaks.cli._common import check_audit_options
from graphleaks.errors import InvalidConfigError

# The embedding audit imports torch and sklearn: imported inside run_embedding_audit so that
# `graphleaks audit --help` stays torch-free.

CLASSIFIER_NAMES = ("mlp", "rf", "svm")
EMBEDDINGS = "Embeddings"
EmbeddingFile = Annotated[Path, typer.Argument(
    metavar="FILE", help="Embedding file: .npy (row i = node i) or word2vec text.",
    show_default=False)]
Attributes = Annotated[Path | None, typer.Option(
    "--attributes", help="CSV of node_id,attribute rows (required).",
    rich_help_panel=EMBEDDINGS)]
Classifier = Annotated[list[str] | None, typer.Option(
    "--classifier", help="Attack classifier (mlp, rf, svm); repeat for several (default: all "
                         "three).", rich_help_panel=EMBEDDINGS)]
AuxFrac = Annotated[float, typer.Option(
    "--aux-frac", help="Fraction of nodes whose attribute the adversary knows.",
    rich_help_panel=EMBEDDINGS)]
IdEdges = Annotated[Path | None, typer.Option(
    "--edges", help="Edge list whose node ids (e.g. user_17) the embedding and attribute "
                    "files use; needed for string ids.", rich_help_panel=EMBEDDINGS)]
NBootstrap = Annotated[int, typer.Option(
    "--n-bootstrap", help="Bootstrap replicates per CI.", rich_help_panel=o.BUDGETS)]


def audit_embeddings(
    embeddings: EmbeddingFile, attributes: Attributes = None, classifier: Classifier = None,
    aux_frac: AuxFrac = 0.3, edges: IdEdges = None, n_bootstrap: NBootstrap = 1000,
    seed: o.Seed = 0, out: o.Out = o.DEFAULT_OUT, json_out: o.JsonOut = False,
    quiet: o.Quiet = False, verbose: o.Verbose = False,
) -> None:
    """Audit node embeddings for attribute leakage (Duddu et al.'s attribute inference)."""
    output = o.OutputOptions.parse(out, json_out, quiet, verbose=verbose)
    check_output_dir(out, EMBEDDING_REPORT)  # before any work
    check_audit_options(n_bootstrap, "target")
    if attributes is None:
        raise InvalidConfigError("graphleaks audit embeddings needs --attributes CSV (node_id,"
                                 "attribute rows)")
    run_embedding_audit(embeddings, attributes, list(classifier or CLASSIFIER_NAMES), aux_frac,
                        seed, n_bootstrap, output, edges)


def run_embedding_audit(
    embeddings: Path, attributes: Path, classifiers: list[str], aux_frac: float, seed: int,
    n_bootstrap: int, output: o.OutputOptions, edges: Path | None = None,
) -> None:
    """Audit an embedding file against an attribute CSV; write and summarise the report.

    Prints the report JSON (``--json``), nothing (``--quiet``), or a short JSON summary with
    the report paths and each classifier's F1, baseline and verdict.

    Raises:
        DataError: On bad files (mismatched node ids, non-numeric values, a single class).
        InvalidConfigError: On an unknown classifier or a bad ``aux_frac``.
    """
    from graphleaks.audit.embedding_audit import audit_embedding_files, write_embedding_report

    for name in classifiers:
        if name not in CLASSIFIER_NAMES:
            raise InvalidConfigError(f"unknown classifier {name!r}; choose from: "
                                     f"{', '.join(CLASSIFIER_NAMES)}")
    report = audit_embedding_files(embeddings, attributes, classifiers=classifiers,
                                   aux_frac=aux_frac, seed=seed, n_bootstrap=n_bootstrap,
                                   edges=edges)
    # the report states every option that changed what ran
    report = dataclasses.replace(report, source={
        **report.source, "n_bootstrap": n_bootstrap, **o.file_names(edges=edges)})
    json_path, md_path = write_embedding_report(report, output.out)
    if output.json:
        typer.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
        return
    if output.quiet:
        return
    summary = {
        r.classifier: {"f1_micro": r.metrics.f1_micro.value,
                       "f1_macro": r.metrics.f1_macro.value,
                       "majority_baseline": r.metrics.majority_baseline,
                       "gain_ci": list(r.metrics.gain_over_baseline.ci),
                       "verdict": r.verdict}
        for r in report.results
    }
    typer.echo(json.dumps({"report": str(json_path), "summary": str(md_path),
                           "leaks": report.leaks, "classifiers": summary}, indent=2))
