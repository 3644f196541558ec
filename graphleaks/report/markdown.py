"""The Markdown rendering of an audit report (``report.md``).

Like every renderer it formats numbers computed in :mod:`graphleaks.metrics`; it computes
nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphleaks._display import fmt_figure
from graphleaks.report.report import (
    AttackReport,
    AuditReport,
    attack_cell,
    interval_methods_of,
    table_footnotes,
    target_label,
    user_model_facts,
)

if TYPE_CHECKING:
    from graphleaks.metrics.binary import Estimate
    from graphleaks.report.records import BoundReport, CanaryAudit, MetricReading


def _target_shown(report: AuditReport) -> str:
    label = target_label(report)
    return _code(label) if "model" in report.target.architecture else label


def _code(text: str) -> str:
    # a user's class or layer name, shown as code: a backtick inside cannot end the span
    return "`" + text.replace("`", "'") + "`"


def _fmt(x: Any) -> str:
    if isinstance(x, str):
        return x
    return fmt_figure(x)  # the one display rule (also HTML and the terminal verdict)


def _est(e: Estimate | MetricReading | None) -> str:
    if e is None:
        return "–"
    if e.ci is None:
        return _fmt(e.value)
    lo, hi = e.ci
    return f"{_fmt(e.value)} [{_fmt(lo)}, {_fmt(hi)}]"


def _verdict(bound: BoundReport) -> str:
    """The ledger comparison computed by the runner (same unit only), as a suffix."""
    cmp = bound.ledger_comparison
    if cmp is None or cmp.ledger_unit == "none":
        return ""
    return f" — **{cmp.text}**" if cmp.violation and cmp.sound else f" — {cmp.text}"


def _binary_rows(attacks: Sequence[AttackReport]) -> list[str]:
    """Table of the attacks with binary metrics (membership, link, reconstruction)."""
    from graphleaks.report.risk_sections import candidates_cell

    rows = [a for a in attacks if a.metrics.binary is not None]
    if not rows:
        return []
    lines = [
        "| attack | candidates | AUC | TPR@0.1%FPR | TPR@1%FPR | max advantage "
        "| accuracy at attack threshold | sound ε lower bound | optimistic ε bound |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in rows:
        b = a.metrics.binary
        assert b is not None  # filtered above
        acc = _est(b.at_threshold.accuracy) if b.at_threshold else "no threshold"
        sound, optimistic = (a.metrics.epsilon_lower_bound,
                             a.metrics.epsilon_lower_bound_max_over_thresholds)
        lines.append(
            f"| {attack_cell(a)} | {candidates_cell(a)} | {_est(b.auc)} | "
            f"{_est(b.tpr_at_fpr.get(0.001))} | {_est(b.tpr_at_fpr.get(0.01))} | "
            f"{_est(b.max_advantage)} | {acc} | "
            f"{_fmt(sound.bound.epsilon_lb) if sound else '–'} | "
            f"{_fmt(optimistic.bound.epsilon_lb) if optimistic else '–'} |"
        )
    return lines + ["", "Trivial baseline: AUC 0.5, advantage 0, TPR@FPR equal to the FPR.",
                    "", *(f"- {n}" for n in table_footnotes(rows)), ""]


def _other_rows(attacks: Sequence[AttackReport]) -> list[str]:
    """Attacks whose metrics are of a kind this writer has no table for: listed, never lost."""
    rows = [a for a in attacks if a.metrics.binary is None and a.metrics.multiclass is None]
    if not rows:
        return []
    lines = ["| attack | metrics |", "|---|---|"]
    for a in rows:
        lines.append(f"| {a.attack} | {', '.join(sorted(a.metrics.extra)) or '–'} "
                     "(see report.json) |")
    return lines + [""]


def _interval_methods(attacks: Sequence[AttackReport]) -> list[str]:
    """One line per attack naming the interval method of each metric (e.g. at a boundary)."""
    lines = []
    for a in attacks:
        found = interval_methods_of(a.metrics)
        if found:
            listed = "; ".join(f"{m}: {', '.join(paths)}" for m, paths in sorted(found.items()))
            lines.append(f"- interval methods of {a.attack}: {listed}")
    return lines + [""] if lines else []


def _eps(x: float) -> str:
    """The ledger's ε rounded for display (``∞`` for none)."""
    return fmt_figure(x)


def render_markdown(report: AuditReport) -> str:
    """A Markdown summary of a report."""
    t, led = report.target, report.ledger
    ds = t.dataset.get("name", "user graph") if t.dataset else "user graph"
    from graphleaks.report.risk_sections import (
        render_attribute_markdown,
        render_slices_markdown,
    )
    from graphleaks.report.verdict import render_verdict_markdown

    lines = [
        "# graphleaks audit report",
        "",
        render_verdict_markdown(report),
        f"Target: **{_target_shown(report)}** on **{ds}** "
        f"({t.num_nodes} nodes, {t.num_edges // 2} undirected edges), "
        f"{t.protocol} protocol, defense **{t.defense}**. Seed {report.seed}.",
        "",
        "| utility | train | val | test |",
        "|---|---|---|---|",
    ]
    u = t.utility
    for m in ("accuracy", "f1_macro"):
        lines.append(f"| {m} | " + " | ".join(_fmt(u.get(f"{p}_{m}")) for p in
                                              ("train", "val", "test")) + " |")
    facts = user_model_facts(report)
    if facts:
        lines.append("")
        lines += [f"- {k}: {_code(v) if k == 'hooked layers' and v[:4] != 'none' else v}"
                  for k, v in facts]
    lines += [
        "",
        f"Privacy ledger: unit **{led.unit.value}**, claimed ε = **{_eps(led.epsilon)}**, "
        f"δ = {led.delta}, accountant `{led.accountant}`, status {led.status.value}.",
    ]
    for note in led.notes:
        lines.append(f"- {note}")
    serving = report.serving
    if serving is not None:
        lines.append(f"- served model: {serving.fresh_releases} fresh release(s) of the "
                     f"private data answered during this audit; the API's ε after them is "
                     f"{_fmt(serving.epsilon_after_queries)} ({serving.policy})")
    lines += [
        "",
        "## Attacks",
        "",
        "Intervals are 95% intervals; the method of each is listed under the tables. "
        "Scores: higher = more likely positive.",
        "",
    ]
    lines += _binary_rows(report.attacks)
    lines.append(render_attribute_markdown(report))
    lines += _other_rows(report.attacks)
    lines += _interval_methods(report.attacks)
    lines += _canary_lines(report.canary_audits)
    for a in report.attacks:
        lines.append(f"### {a.attack}")
        lines.append("")
        tm = a.threat_model
        aware = ("knows the defense" if tm.defense_knowledge
                 else "defense-unaware (compare mode)")
        outputs = ", ".join(sorted(o.value for o in tm.outputs))
        lines.append(f"- threat model: {_value(tm.access)}, outputs {outputs}, "
                     f"{aware}; queries evaluated in the `{a.query_graph}` graph")
        am = a.metrics
        if am.oracle_balanced_accuracy is not None:
            lines.append(f"- oracle balanced accuracy (threshold chosen on the evaluation "
                         f"labels, an upper bound): {_fmt(am.oracle_balanced_accuracy.value)}")
        if am.paper_metric is not None:
            lines.append(f"- {am.paper_metric.name}: {_fmt(am.paper_metric.value)}")
        lb, lb_max = am.epsilon_lower_bound, am.epsilon_lower_bound_max_over_thresholds
        if lb:
            lines.append(f"- sound empirical ε lower bound {_fmt(lb.bound.epsilon_lb)} "
                         f"({lb.bound.unit} unit) at the attack's own threshold "
                         f"(claimed ε {_eps(led.epsilon)}, {led.unit.value} unit){_verdict(lb)}")
        if lb_max:
            lines.append(f"- optimistic ε bound (best threshold chosen on the evaluation "
                         f"labels): {_fmt(lb_max.bound.epsilon_lb)}{_verdict(lb_max)}")
        either = lb or lb_max
        if either:
            for assumption in either.bound.assumptions:
                lines.append(f"  - assumption: {assumption}")
        if a.compat_flags:
            lines.append(f"- **compatibility flags on:** {', '.join(a.compat_flags)} "
                         "(reproduces the original code, not the correct protocol)")
        for note in a.notes:
            lines.append(f"- {note}")
        lines.append("")
    lines.append(render_slices_markdown(report))
    from graphleaks.report.query_curves import render_query_curves_markdown

    lines += render_query_curves_markdown(report.config)
    from graphleaks.report.controls import render_controls_markdown

    lines += render_controls_markdown(report)
    return "\n".join(lines)


def _value(x: Any) -> str:
    """An enum member's value, or the text itself (threat-model fields may be either)."""
    return str(getattr(x, "value", x))


def _canary_lines(audits: Sequence[CanaryAudit]) -> list[str]:
    """Claimed beside audited ε per unit (one-run canary audits), violations flagged."""
    if not audits:
        return []
    lines = ["## Canary audits (one run)", "",
             "Audited ε and GDP μ are lower bounds at the stated confidence: ε from Steinke, "
             "Nasr & Jagielski (2023), μ from the one-run f-DP analysis of Mahloujifar, Melis & "
             "Chaudhuri (2025); an edge or node audit trained one extra target with the "
             "canaries, a node_feature audit ran the feature mechanism alone (no training).",
             "",
             "| unit | canaries (inserted) | attack | guesses / correct | claimed ε | audited ε "
             "| audited μ | verdict |", "|---|---|---|---|---|---|---|---|"]
    for a in audits:
        b = a.bound
        verdict = "**VIOLATION: audited ε above claimed ε**" if a.violation else "consistent"
        lines.append(f"| {a.unit} | {b.num_canaries} ({a.num_inserted}) | {a.attack} "
                     f"| {b.num_guesses} / {b.num_correct} | {_fmt(a.claimed_epsilon)} | "
                     f"{_fmt(b.epsilon_lb)} | {_fmt(b.mu_lb)} | {verdict} |")
    scopes = [f"- {a.unit}: audited {a.scope}" for a in audits if a.scope]
    return [*lines, "", *scopes, *([""] if scopes else [])]
