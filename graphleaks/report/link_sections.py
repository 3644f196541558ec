"""The per-pair risk section of a link-prediction report: membership by endpoint degree.

An edge-membership audit (``config["task"] == "link"``) slices every attack's candidate
pairs by endpoint degree, counted in the public graph without the candidate pairs (the
smaller endpoint's, the larger's and their product;
:func:`graphleaks.report.edge_scores.edge_slice_masks`) and, on a user–item graph, by item
popularity. This section draws TPR@1%FPR and AUC with their 95 % intervals per
endpoint-degree-product bucket (are edges between low-degree nodes the most exposed?), the
same per item-popularity half when the graph is bipartite (MINER, CIKM 2024: interactions
with long-tail items leak most), then the most exposed member edges and every slice table.
The node report's leakage-against-degree plot is not drawn: a pair has two degrees.

Renderers only: every number comes from the report (computed in :mod:`graphleaks.metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphleaks.report._figures import figure
from graphleaks.report.edge_scores import PRODUCT_BUCKETS
from graphleaks.report.graph_sections import slice_figure
from graphleaks.report.risk_sections import _exposed_table, slice_tables_html

if TYPE_CHECKING:
    from graphleaks.report.report import AuditReport

EDGE_TASK = "edge_membership"
PRODUCT_PREFIX = "degree_product"
#: The endpoint-degree-product slice keys, lowest bucket first, with their tick labels.
PRODUCT_KEYS: tuple[tuple[str, str], ...] = tuple(
    (f"{PRODUCT_PREFIX}{key}", key.lstrip("=").replace("<=", "≤").replace("-", "–"))
    for _, _, key in PRODUCT_BUCKETS)
POPULARITY_KEYS: tuple[tuple[str, str], ...] = (
    ("item_popularity=head", "popular items (head)"),
    ("item_popularity=tail", "long-tail items"))


def is_link_report(report: AuditReport) -> bool:
    """Whether the report audits a pair scorer (its candidates are node pairs)."""
    return report.config.get("task") == "link" or (
        bool(report.attacks) and all(a.task == EDGE_TASK for a in report.attacks))


def _estimated(report: AuditReport, key: str) -> bool:
    return any((s := a.metrics.slices.get(key)) is not None and s.auc is not None
               and 0.01 in s.tpr_at_fpr for a in report.attacks)


def bucket_figure(report: AuditReport, keys: tuple[tuple[str, str], ...],
                  what: str) -> Any | None:
    """TPR@1%FPR and AUC per slice of ``keys`` (key, tick label) that any attack has an
    estimate on, ticks relabelled; None when there is none (no empty figure)."""
    kept = [(k, label) for k, label in keys if _estimated(report, k)]
    if not kept:
        return None
    fig = slice_figure(report, [k for k, _ in kept], what)
    if fig is None:
        return None
    for ax in fig.axes:
        ax.set_xticks(range(len(kept)), [label for _, label in kept], fontsize=8)
    return fig


def render_link_slices_html(report: AuditReport) -> str:
    """Per-edge risk section of the HTML report: membership by endpoint-degree product (and
    item popularity), the most exposed member edges and every slice table; a note instead
    of the figure when the audit had no graph (exported scores)."""
    out = ["<h2>Per-edge risk: membership by endpoint degree</h2><p>Leakage is not uniform "
           "over edges: slices of each attack's candidate pairs by the product of their "
           "endpoints' degrees (and the smaller and larger degree, in the tables), counted in "
           "the served graph without the candidate pairs, with 95% intervals. A slice with "
           "too few member or non-member pairs has no 1% FPR point and is left out of the "
           "figure. Every pair's score is in <code>scores.csv</code>.</p>"]
    attacks = [a for a in report.attacks if a.metrics.slices]
    fig = bucket_figure(report, PRODUCT_KEYS, "endpoint-degree product")
    if fig is not None:
        out.append(figure(fig, "TPR@1%FPR (left) and AUC (right) per bucket of the endpoint-"
                               "degree product (public graph); dashed: chance.",
                          "edge membership against endpoint-degree product"))
    elif not any(k in a.metrics.slices for a in attacks for k, _ in PRODUCT_KEYS):
        out.append('<p class="sub">No degree-product figure: the endpoint degrees are unknown '
                   "(an audit from exported pair scores has no graph).</p>")
    else:
        out.append('<p class="sub">No degree-product figure: every bucket is too small for a '
                   "1% FPR point (see the slice tables).</p>")
    fig = bucket_figure(report, POPULARITY_KEYS, "item popularity")
    if fig is not None:
        out.append(figure(fig, "TPR@1%FPR (left) and AUC (right) for interactions with popular "
                               "and long-tail items; dashed: chance.",
                          "edge membership by item popularity"))
    for a in report.attacks:
        out.append(_exposed_table(a))
    out.append(slice_tables_html(attacks))
    return "".join(out)


__all__ = ["PRODUCT_KEYS", "bucket_figure", "is_link_report", "render_link_slices_html"]
