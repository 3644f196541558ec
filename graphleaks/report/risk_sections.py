"""Report sections for per-node risk: slice tables, the most exposed candidates, and a
leakage-against-degree plot; plus the labels that say what each attack's candidates are.

Renderers only: every number comes from the report (computed in :mod:`graphleaks.metrics`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphleaks._display import fmt_figure
from graphleaks.report._figures import figure, subplots
from graphleaks.report.scores import DEGREE_BUCKETS, TIE_BREAK

if TYPE_CHECKING:
    from graphleaks.metrics.binary import Estimate
    from graphleaks.report.report import AttackReport, AuditReport

#: What the positives and negatives of each task are.
SIDE_LABELS = {"membership": ("members", "non-members"), "link": ("edges", "non-edges"),
               "reconstruction": ("edges", "non-edges"),
               "edge_membership": ("member edges", "non-member pairs"),
               "attribute": ("nodes with known attribute", "nodes with unknown attribute"),
               "graph_membership": ("member graphs", "non-member graphs")}


def sides(task: str) -> tuple[str, str]:
    """Names of a task's positive and negative candidates."""
    return SIDE_LABELS.get(task, ("positives", "negatives"))


#: The unit a slice section is about, by the attacks' task (any other task: nodes).
RISK_UNITS = {"edge_membership": "edge", "graph_membership": "graph"}


def risk_unit(attacks: list[AttackReport]) -> str:
    """``graph`` or ``edge`` when every sliced attack is of that task, else ``node``."""
    units = {RISK_UNITS.get(a.task, "node") for a in attacks}
    return units.pop() if len(units) == 1 else "node"


def candidates_cell(attack: AttackReport) -> str:
    """E.g. ``542 members / 542 non-members`` or ``1276 edges / 1276 non-edges``."""
    b = attack.metrics.binary
    pos, neg = sides(attack.task)
    n_pos, n_neg = (None, None) if b is None else (b.n_pos, b.n_neg)
    return f"{n_pos} {pos} / {n_neg} {neg}"


def _est(e: Estimate | None) -> str:
    if e is None:
        return "–"
    return f"{fmt_figure(e.value)} [{fmt_figure(e.lo)}, {fmt_figure(e.hi)}]"


def _slice_rows(attack: AttackReport) -> list[tuple[str, str, str, str]]:
    pos, neg = sides(attack.task)
    rows = []
    for key, s in attack.metrics.slices.items():
        counts = f"{s.n_pos} {pos} / {s.n_neg} {neg}"
        if s.too_few:
            rows.append((key, counts, "too few for an interval", ""))
            continue
        rows.append((key, counts, _est(s.auc), _est(s.tpr_at_fpr.get(0.01))))
    return rows


def slice_methods(attack: AttackReport) -> str:
    """The interval methods of an attack's slices, e.g. ``delong, clopper-pearson-box``."""
    found: list[str] = []
    for s in attack.metrics.slices.values():
        for e in (s.auc, *s.tpr_at_fpr.values()):
            if e is not None and e.method not in found:
                found.append(e.method)
    return ", ".join(found)


def render_slices_markdown(report: AuditReport) -> str:
    """Slices of every attack, as Markdown (empty when no attack has slices)."""
    attacks = [a for a in report.attacks if a.metrics.slices]
    if not attacks:
        return ""
    lines = [f"## Per-{risk_unit(attacks)} risk: slices", "",
             "AUC and TPR@1%FPR with 95% intervals (of the method chosen for the attack: "
             "bootstrap, or analytic for large untied sets; each interval names its method "
             "in report.json) on slices of each attack's "
             "candidates: degree in the original graph (for a pair, its smaller endpoint "
             "degree), class (for a pair, same/different class) and split part. Gate one "
             "with `graphleaks check --max 'ATTACK[SLICE].tpr@1%fpr=0.1'`; every "
             "candidate's score is in `scores.csv`.", ""]
    for a in attacks:
        methods = slice_methods(a)
        lines += [f"### {a.attack}", ""]
        if methods:
            lines += [f"Interval methods: {methods}.", ""]
        lines += ["| slice | candidates | AUC | TPR@1%FPR |",
                  "|---|---|---|---|"]
        lines += [f"| `{k}` | {c} | {auc} | {tpr} |" for k, c, auc, tpr in _slice_rows(a)]
        lines.append("")
    return "\n".join(lines)


def degree_figure(report: AuditReport) -> Any | None:
    """TPR@1%FPR and AUC (with intervals) per degree bucket, one line per attack."""
    keys = [k for _, _, k in DEGREE_BUCKETS]
    series = []
    for a in report.attacks:
        if a.task == "graph_membership":  # whole graphs have no degree: never an empty plot
            continue
        sl = a.metrics.slices
        pts = []
        for i, k in enumerate(keys):
            s = sl.get(k)
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
            xs = [p[0] + dx for p in pts]
            ests = [p[1] if col == 1 else p[2] for p in pts]
            ys = [float(e.value) for e in ests]
            # clipped at 0: a report read from a file may carry an interval that misses its
            # estimate (written before intervals covered it); the page still renders
            lo = [max(0.0, y - float(e.lo)) for y, e in zip(ys, ests, strict=True)]
            hi = [max(0.0, float(e.hi) - y) for y, e in zip(ys, ests, strict=True)]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=name)
    for ax, title, base in ((axes[0], "TPR@1%FPR", 0.01), (axes[1], "AUC", 0.5)):
        ax.axhline(base, color="grey", ls="--", lw=1)
        ax.set_xticks(range(len(keys)), keys)
        ax.set_title(f"{title} by degree (95% CI)")
        ax.grid(True, alpha=0.3)
    axes[1].legend(fontsize=8)
    return fig


def _exposed_table(attack: AttackReport) -> str:
    rows = attack.exposure.get("most_exposed") or []
    if not rows:
        return ""
    e = html.escape
    pairs = "src" in rows[0]
    pos, _ = sides(attack.task)
    head = "<th>edge</th>" if pairs else "<th>node</th>"
    out = [f"<h3>{e(attack.attack)}: the {len(rows)} most exposed {e(pos)}</h3>"
           f"<p>Ordered by score; {e(TIE_BREAK)}.</p>"
           f"<table><tr><th>rank</th>{head}<th>degree</th><th>class</th><th>score</th></tr>"]
    for r in rows:
        who = f"{r['src']}–{r['dst']}" if pairs else str(r["node"])
        out.append(f'<tr><td class="num">{r["rank"]}</td><td>{e(who)}</td>'
                   f'<td class="num">{r["degree"]}</td><td>{e(str(r["class"]))}</td>'
                   f'<td class="num">{r["score"]:.4g}</td></tr>')
    out.append("</table>")
    return "".join(out)


def render_slices_html(report: AuditReport) -> str:
    """Per-node risk section of the HTML report: plot, most exposed candidates, slices."""
    attacks = [a for a in report.attacks if a.metrics.slices]
    if not attacks:
        return ""
    out = [f"<h2>Per-{risk_unit(attacks)} risk</h2><p>Leakage is not uniform: slices of "
           "each attack's "
           "candidates by degree (original graph; a pair's smaller endpoint degree), class "
           "and split part, with 95% intervals. Every candidate's score is in "
           "<code>scores.csv</code>.</p>"]
    fig = degree_figure(report)
    if fig is not None:
        out.append(figure(fig, "TPR@1%FPR (left) and AUC (right) per degree bucket; dashed: "
                           "chance.", "leakage against degree"))
    # the strongest membership attack's most exposed nodes first, then the others
    for a in attacks:
        out.append(_exposed_table(a))
    out.append(slice_tables_html(attacks, counts="candidates"))
    return "".join(out)


def slice_tables_html(attacks: Sequence[AttackReport], *, counts: str | None = None) -> str:
    """One HTML table of slices per attack: AUC and TPR@1%FPR with their intervals.

    Args:
        attacks: The attacks with slices.
        counts: Header of the count column; default: the attack's two sides
            (``members / non-members``, ``member edges / non-member pairs``, ...).
    """
    e = html.escape
    out = []
    for a in attacks:
        methods = slice_methods(a)
        note = f" (intervals: {e(methods)})" if methods else ""
        head = counts if counts is not None else " / ".join(sides(a.task))
        out.append(f"<h3>{e(a.attack)}: slices{note}</h3><table><tr><th>slice</th>"
                   f"<th>{e(head)}</th><th>AUC</th><th>TPR@1%FPR</th></tr>")
        for k, c, auc, tpr in _slice_rows(a):
            out.append(f"<tr><td><code>{e(k)}</code></td><td>{e(c)}</td>"
                       f'<td class="num">{e(auc)}</td><td class="num">{e(tpr)}</td></tr>')
        out.append("</table>")
    return "".join(out)


def render_attribute_markdown(report: AuditReport) -> str:
    """Attribute-inference results as a Markdown table (empty when none ran)."""
    attacks = [a for a in report.attacks if a.metrics.multiclass is not None]
    if not attacks:
        return ""
    lines = ["| attribute attack | nodes with known / unknown attribute | accuracy | "
             "gain over majority baseline | majority baseline accuracy |", "|---|---|---|---|---|"]
    for a in attacks:
        mc = a.metrics.multiclass
        assert mc is not None  # filtered above
        n_known = a.baseline.get("n_known")
        known = "?" if n_known is None else int(n_known)
        base = a.baseline.get("accuracy", mc.majority_baseline)
        lines.append(f"| {a.attack} | {known} / {mc.n} | {_est(mc.accuracy)} | "
                     f"{_est(mc.gain_over_baseline)} | "
                     f"{fmt_figure(base)} |")
    lines.append("")
    return "\n".join(lines)
