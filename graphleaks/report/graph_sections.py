"""The per-graph risk section of a graph-classifier report: leakage by class and graph size.

A graph audit (``config["task"] == "graph"``) slices every attack's candidate graphs by
size (``nodes<=10`` ...), class (``class=NAME``) and, for molecules, scaffold
(:func:`graphleaks.report.graph_scores.graph_slice_masks`). This section draws two figures,
TPR@1%FPR and AUC with their 95 % intervals per size bucket and per class (class counts in
the tick labels, so a minority class is seen as one), lists the most exposed member graphs
(with their SMILES when known) and the slice tables. The node report's leakage-against-
degree plot is not drawn: graphs have no degree slices.

Renderers only: every number comes from the report (computed in :mod:`graphleaks.metrics`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphleaks.report._figures import figure, subplots
from graphleaks.report.graph_scores import SIZE_BUCKETS
from graphleaks.report.risk_sections import slice_tables_html

if TYPE_CHECKING:
    from graphleaks.metrics.binary import Estimate
    from graphleaks.report.report import AttackReport, AuditReport

CLASS_PREFIX = "class="
GRAPH_TASK = "graph_membership"


def is_graph_report(report: AuditReport) -> bool:
    """Whether the report audits a graph classifier (its candidates are whole graphs)."""
    return report.config.get("task") == "graph" or (
        bool(report.attacks) and all(a.task == GRAPH_TASK for a in report.attacks))


def class_keys(report: AuditReport) -> list[str]:
    """The class slice keys present, in the graph set's class order when the report has it."""
    present = {k for a in report.attacks for k in a.metrics.slices if k.startswith(CLASS_PREFIX)}
    order = report.target.dataset.get("classes") if isinstance(report.target.dataset,
                                                                dict) else None
    keys = [f"{CLASS_PREFIX}{c}" for c in order or () if f"{CLASS_PREFIX}{c}" in present]
    return keys + sorted(present - set(keys))


def _tick(report: AuditReport, key: str) -> str:
    """A slice key as a tick label; a class carries its member count (from any attack:
    every attack scores the same candidates)."""
    if not key.startswith(CLASS_PREFIX):
        return key
    for a in report.attacks:
        s = a.metrics.slices.get(key)
        if s is not None:
            return f"{key[len(CLASS_PREFIX):]}\n({s.n_pos} members)"
    return key[len(CLASS_PREFIX):]


def slice_figure(report: AuditReport, keys: Sequence[str], what: str, *,
                 ordered: bool = True) -> Any | None:
    """TPR@1%FPR (left) and AUC (right), with intervals, per slice in ``keys`` that any
    attack has an estimate on; one series per attack, joined by lines when the slices are
    ``ordered`` (sizes), markers only when not (classes). None when no attack has an
    estimate on any of them (no empty figure)."""

    def estimated(k: str) -> bool:
        return any((s := a.metrics.slices.get(k)) is not None and s.auc is not None
                   and 0.01 in s.tpr_at_fpr for a in report.attacks)

    keys = [k for k in keys if estimated(k)]
    series: list[tuple[str, list[tuple[int, Estimate, Estimate]]]] = []
    for a in report.attacks:
        pts = []
        for i, k in enumerate(keys):
            s = a.metrics.slices.get(k)
            if s is not None and s.auc is not None and 0.01 in s.tpr_at_fpr:
                pts.append((i, s.auc, s.tpr_at_fpr[0.01]))
        if pts:
            series.append((a.attack, pts))
    if not series:
        return None
    fig, axes = subplots(1, 2, figsize=(10, 3.8))
    for j, (name, pts) in enumerate(series):
        dx = (j - (len(series) - 1) / 2) * 0.06
        for ax, col in ((axes[0], 2), (axes[1], 1)):
            ests: list[Estimate] = [p[2] if col == 2 else p[1] for p in pts]
            ys = [float(e.value) for e in ests]
            # clipped at 0: an interval read from an old file may miss its estimate
            lo = [max(0.0, y - float(e.lo)) for y, e in zip(ys, ests, strict=True)]
            hi = [max(0.0, float(e.hi) - y) for y, e in zip(ys, ests, strict=True)]
            ax.errorbar([p[0] + dx for p in pts], ys, yerr=[lo, hi], marker="o", capsize=3,
                        label=name, ls="-" if ordered else "none")
    ticks = [_tick(report, k) for k in keys]
    for ax, title, base in ((axes[0], "TPR@1%FPR", 0.01), (axes[1], "AUC", 0.5)):
        ax.axhline(base, color="grey", ls="--", lw=1)
        ax.set_xticks(range(len(keys)), ticks, fontsize=8)
        ax.set_title(f"{title} by {what} (95% CI)")
        ax.grid(True, alpha=0.3)
    axes[1].legend(fontsize=8)
    return fig


def _exposed_graphs(attack: AttackReport) -> str:
    rows = attack.exposure.get("most_exposed") or []
    if not rows:
        return ""
    e = html.escape
    smiles = any("smiles" in r for r in rows)
    out = [f"<h3>{e(attack.attack)}: the {len(rows)} most exposed member graphs</h3>"
           "<p>Ordered by score; ties by graph id.</p><table><tr><th>rank</th><th>graph</th>"
           + ("<th>SMILES</th>" if smiles else "")
           + "<th>nodes</th><th>class</th><th>score</th></tr>"]
    for r in rows:
        nodes = r.get("num_nodes", r.get("degree", -1))
        out.append(f'<tr><td class="num">{r["rank"]}</td><td>{e(str(r["node"]))}</td>'
                   + (f"<td><code>{e(str(r.get('smiles', '')))}</code></td>" if smiles else "")
                   + f'<td class="num">{e(str(nodes)) if int(nodes) >= 0 else "?"}</td>'
                   f'<td>{e(str(r["class"]))}</td><td class="num">{float(r["score"]):.4g}</td>'
                   "</tr>")
    out.append("</table>")
    return "".join(out)


def render_graph_slices_html(report: AuditReport) -> str:
    """Per-graph risk section of the HTML report: leakage by graph size and by class, the
    most exposed member graphs, and every slice table (empty when no attack has slices)."""
    attacks = [a for a in report.attacks if a.metrics.slices]
    if not attacks:
        return ""
    out = ["<h2>Per-graph risk: leakage by class and graph size</h2><p>Leakage is not "
           "uniform: slices of each attack's candidate graphs by size (number of nodes), "
           "class and, for molecules, Bemis–Murcko scaffold, with 95% intervals. A slice "
           "with too few member or non-member graphs has no 1% FPR point and is left out "
           "of the figures. Every graph's score is in <code>scores.csv</code>.</p>"]
    sizes = [k for _, _, k in SIZE_BUCKETS]
    fig = slice_figure(report, sizes, "graph size")
    if fig is not None:
        out.append(figure(fig, "TPR@1%FPR (left) and AUC (right) per graph-size bucket "
                               "(nodes per graph); dashed: chance.",
                          "leakage against graph size"))
    elif not any(k in a.metrics.slices for a in attacks for k in sizes):
        out.append('<p class="sub">No size figure: the graph sizes are unknown (an audit '
                   "from exported scores).</p>")
    else:
        out.append('<p class="sub">No size figure: every size bucket is too small for a 1% '
                   "FPR point.</p>")
    fig = slice_figure(report, class_keys(report), "class", ordered=False)
    if fig is not None:
        out.append(figure(fig, "TPR@1%FPR (left) and AUC (right) per class, member graphs "
                               "of each class in brackets: is a minority class more exposed? "
                               "Dashed: chance.", "leakage by class"))
    else:
        out.append('<p class="sub">No class figure: every class slice is too small for a 1% '
                   "FPR point (see the slice tables).</p>")
    for a in attacks:
        out.append(_exposed_graphs(a))
    out.append(slice_tables_html(attacks))
    return "".join(out)


__all__ = ["class_keys", "is_graph_report", "render_graph_slices_html", "slice_figure"]
