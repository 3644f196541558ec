"""Write an audit report's files (``report.json``, ``report.md``, ``report.html``,
``scores.csv``) as one folder, all or none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from graphleaks.report.markdown import render_markdown
from graphleaks.report.report import AuditReport

if TYPE_CHECKING:
    from graphleaks.report.scores import CandidateTable


def write_report(report: AuditReport, out_dir: str | Path, *, html: bool = False,
                 scores: Sequence[CandidateTable] | None = None) -> tuple[Path, Path]:
    """Write ``report.json``, ``report.md`` (``report.html``, ``scores.csv``) as one folder.

    The files are written into a temporary sibling folder that is then renamed into place,
    so readers see all of them or none (a kill between two files leaves no report without
    its page). An existing ``out_dir`` is replaced only if it is a graphleaks audit report.

    Args:
        report: The report.
        out_dir: The report folder.
        html: Also write the self-contained ``report.html``.
        scores: Every candidate's score, written as ``scores.csv`` when given.

    Returns:
        The paths of ``report.json`` and ``report.md``.
    """
    from graphleaks._outputs import REPORT, publish_dir

    out = Path(out_dir)
    data = report.to_dict()

    def fill(tmp: Path) -> None:
        (tmp / "report.json").write_text(
            json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n", encoding="utf-8")
        (tmp / "report.md").write_text(render_markdown(report) + "\n", encoding="utf-8")
        if html:
            from graphleaks.report.html import render_html

            (tmp / "report.html").write_text(render_html(report), encoding="utf-8")
        if scores is not None:
            from graphleaks.report.graph_scores import is_graph_tables
            from graphleaks.report.scores import scores_csv

            if scores and is_graph_tables(scores):  # graph ids, sizes, SMILES, scaffolds
                from graphleaks.report.graph_scores import graph_scores_csv

                text = graph_scores_csv(scores)
            else:
                text = scores_csv(scores)
            (tmp / "scores.csv").write_text(text, encoding="utf-8")

    publish_dir(out, REPORT, fill)
    return out / "report.json", out / "report.md"
