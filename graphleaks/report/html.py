"""A self-contained HTML audit report with matplotlib figures embedded as base64 PNG.

The file needs no network and no JavaScript: styles are inline and figures are
``data:image/png;base64`` images. Like every renderer it formats numbers computed in
:mod:`graphleaks.metrics` and computes no metric itself. ROC curves come from the report's
``metrics.roc`` record when present, or else from
:func:`graphleaks.metrics.binary.roc_curve` on ``AttackResult`` objects passed in.

Example:
    >>> from graphleaks.audit.spec import parse_spec, run_spec
    >>> spec = parse_spec({"target": {"dataset": "synthetic",
    ...     "synthetic": {"num_nodes": 60, "num_features": 8},
    ...     "architecture": {"epochs": 20}}, "audit": {"n_bootstrap": 20},
    ...     "attacks": {"confidence_mia": {"threshold": "none"}}})
    >>> page = render_html(run_spec(spec))
    >>> page.startswith("<!DOCTYPE html>") and "data:image/png;base64," in page
    True
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from graphleaks._display import fmt_figure
from graphleaks._outputs import HTML_HEAD, OutputFile, is_html_page, publish_files
from graphleaks.report._figures import figure, subplots
from graphleaks.report.controls import render_controls_html
from graphleaks.report.records import MetricReading, decode_readings
from graphleaks.report.report import (
    AuditReport,
    interval_methods_of,
    table_footnotes,
    target_label,
    user_model_facts,
)
from graphleaks.report.risk_sections import candidates_cell

TABLE_METRICS = ("auc", "tpr@0.1%fpr", "tpr@1%fpr", "tpr@10%fpr", "max_advantage",
                 "accuracy")
MC_METRICS = ("attribute_accuracy", "f1_micro", "f1_macro", "gain_over_baseline")
_BASELINE_KEY = {"auc": "auc", "max_advantage": "advantage", "advantage": "advantage",
                 "accuracy": "accuracy"}

CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;margin:0;
background:#f5f6f8;color:#1d2330;line-height:1.45}
main{max-width:1100px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:8px 0 4px}h2{font-size:20px;margin:32px 0 8px;
border-bottom:2px solid #d8dce3;padding-bottom:4px}h3{font-size:16px;margin:20px 0 6px}
.sub{color:#5b6475;margin:0 0 16px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.card{background:#fff;border:1px solid #dfe3ea;border-radius:8px;padding:10px 14px;
min-width:150px}.card .k{font-size:12px;color:#5b6475;text-transform:uppercase;
letter-spacing:.04em}.card .v{font-size:20px;font-weight:600}
table{border-collapse:collapse;background:#fff;margin:8px 0 12px;font-size:14px}
th,td{border:1px solid #dfe3ea;padding:5px 10px;text-align:left}
th{background:#eef1f5;font-weight:600}td.num{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
.ci{color:#5b6475;font-size:12px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;
font-weight:600}.ok{background:#dcf5e3;color:#12632b}.bad{background:#fde2e1;color:#9b1c1c}
.warn{background:#fff3cd;color:#7a5200}
figure{background:#fff;border:1px solid #dfe3ea;border-radius:8px;padding:8px;margin:10px 0;
display:inline-block}figure img{display:block;max-width:100%}
figcaption{font-size:13px;color:#5b6475;padding:4px 6px 0;max-width:640px}
ul{margin:4px 0 8px}code{background:#eef1f5;padding:0 4px;border-radius:3px}
footer{margin-top:32px;font-size:12px;color:#5b6475}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _f(x: Any, digits: int | None = None) -> str:
    """A figure for the page: the one display rule of the reports unless ``digits`` is given
    (the gate's 4-decimal limits, which must match the terminal's gate messages)."""
    if x is None:
        return "–"
    if isinstance(x, str):
        return _e(x)
    if isinstance(x, float) and not math.isfinite(x):
        return "∞" if x > 0 else "–"
    return fmt_figure(x) if digits is None else f"{x:.{digits}f}"


def _est_cell(est: MetricReading | None) -> str:
    if est is None:
        return '<td class="num">–</td>'
    ci = est.ci
    inner = _f(est.value)
    if ci:
        inner += f'<br><span class="ci">[{_f(ci[0])}, {_f(ci[1])}]</span>'
    return f'<td class="num">{inner}</td>'


def roc_points(
    report: AuditReport, results: Sequence[Any] | None = None
) -> dict[str, tuple[list[float], list[float]]]:
    """ROC points per attack: the report's ``metrics.roc``, else from ``results``."""
    out: dict[str, tuple[list[float], list[float]]] = {}
    for a in report.attacks:
        roc = a.metrics.roc
        if roc is not None:
            out[a.attack] = (list(roc.fpr), list(roc.tpr))
    for r in results or []:
        if r.attack in out or str(getattr(r.task, "value", r.task)) == "attribute":
            continue
        from graphleaks.metrics.binary import roc_curve

        fpr, tpr, _ = roc_curve(r.scores, r.labels)
        out[r.attack] = (fpr.tolist(), tpr.tolist())
    return out


def roc_figure(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> Any:
    """ROC curves on log–log axes with the chance diagonal."""
    fig, ax = subplots(figsize=(5.6, 4.6))
    lo = 1.0
    for name, (fpr, tpr) in curves.items():
        pts = [(f, t) for f, t in zip(fpr, tpr, strict=False) if f > 0 and t > 0]
        if not pts:
            continue
        lo = min(lo, min(p[0] for p in pts))
        ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", label=name, lw=1.8)
    lo = max(min(lo, 1e-3), 1e-5)
    ax.plot([lo, 1], [lo, 1], ls="--", color="grey", lw=1, label="chance (TPR = FPR)")
    for f in (1e-3, 1e-2):
        if f >= lo:
            ax.axvline(f, color="#c9ced6", lw=0.8, zorder=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, 1)
    ax.set_ylim(lo, 1.05)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title("ROC (log–log)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower right", fontsize=9)
    return fig


def forest_figure(report: AuditReport, metrics: Sequence[str] = ("auc", "tpr@1%fpr",
                                                                 "max_advantage")) -> Any:
    """Point estimates with confidence intervals, per attack and metric, with baselines."""
    attacks = [a for a in report.attacks if a.metrics.binary is not None]
    fig, axes = subplots(1, len(metrics), figsize=(3.3 * len(metrics),
                                                       0.55 * max(2, len(attacks)) + 1.2),
                             sharey=True, squeeze=False)
    names = [a.attack for a in attacks]
    for ax, m in zip(axes[0], metrics, strict=False):
        for i, a in enumerate(attacks):
            est = a.metrics.readings().get(m)
            if est is None:
                continue
            v = est.value
            ci = est.ci or (v, v)
            # clipped at 0: an interval read from an older report may miss its estimate
            ax.errorbar([v], [i], xerr=[[max(0.0, v - ci[0])], [max(0.0, ci[1] - v)]],
                        fmt="o", color="#2563eb", capsize=4)
        base = {"auc": 0.5, "max_advantage": 0.0}.get(m)
        if m.startswith("tpr@"):
            base = {"tpr@0.1%fpr": 0.001, "tpr@1%fpr": 0.01, "tpr@10%fpr": 0.1}[m]
        if base is not None:
            ax.axvline(base, color="#dc2626", ls="--", lw=1, label="trivial baseline")
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(m)
        ax.grid(True, axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(names)), names)
    axes[0][0].set_ylim(-0.7, len(names) - 0.3)
    axes[0][-1].legend(loc="lower right", fontsize=8)
    return fig


def privacy_utility_figure(
    rows: Sequence[Mapping[str, Any]], *, metric: str = "auc", utility: str = "test_accuracy"
) -> Any:
    """Attack ``metric`` (with CI) and target ``utility`` against ε, one line per
    (defense, attack). Rows are results-store rows (see ``ResultsStore.rows``) or dicts with
    ``defense``, ``attack``, ``epsilon``, ``metrics`` and ``utility``.
    """
    fig, (ax1, ax2) = subplots(1, 2, figsize=(10, 4))
    groups: dict[tuple[str, str], list[tuple[float, float, float, float, float]]] = {}
    utils: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        eps = r.get("epsilon")
        x = math.inf if eps is None else float(eps)
        est = decode_readings(r.get("metrics") or {}, "results store metrics").get(metric)
        if est is not None:
            ci = est.ci or (est.value, est.value)
            groups.setdefault((r["defense"], r["attack"]), []).append(
                (x, est.value, ci[0], ci[1], 0.0))
        u = (r.get("utility") or {}).get(utility)
        if u is not None:
            utils.setdefault(r["defense"], []).append((x, float(u)))
    finite = [x for g in groups.values() for x, *_ in g if math.isfinite(x)] or [1.0]
    inf_x = max(finite) * 4  # where the non-private (ε = ∞) points are drawn

    def _x(x: float) -> float:
        return inf_x if not math.isfinite(x) else x

    for (defense, attack), pts in sorted(groups.items()):
        pts.sort()
        xs = sorted({p[0] for p in pts})
        mean = [sum(p[1] for p in pts if p[0] == x) / sum(1 for p in pts if p[0] == x)
                for x in xs]
        lo = [min(p[2] for p in pts if p[0] == x) for x in xs]
        hi = [max(p[3] for p in pts if p[0] == x) for x in xs]
        X = [_x(x) for x in xs]
        (line,) = ax1.plot(X, mean, marker="o", label=f"{defense} · {attack}")
        ax1.fill_between(X, lo, hi, alpha=0.15, color=line.get_color())
    for defense, upts in sorted(utils.items()):
        xs = sorted({p[0] for p in upts})
        mean = [sum(p[1] for p in upts if p[0] == x) / sum(1 for p in upts if p[0] == x)
                for x in xs]
        ax2.plot([_x(x) for x in xs], mean, marker="s", label=defense)
    for ax, ylab in ((ax1, metric), (ax2, utility)):
        ax.set_xscale("log")
        ax.set_xlabel("ε (rightmost: no defense, ε = ∞)")
        ax.set_ylabel(ylab)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    if metric == "auc":
        ax1.axhline(0.5, color="grey", ls="--", lw=1)
    ax1.set_title(f"privacy: attack {metric} (band: CI range over seeds)")
    ax2.set_title(f"utility: {utility}")
    return fig


def _target_section(report: AuditReport) -> str:
    t, led = report.target, report.ledger
    ds = (t.dataset or {}).get("name", "user graph")
    private = math.isfinite(led.epsilon) and led.status.value != "non_private"
    cards = [("dataset", ds), ("model" if "model" in t.architecture else "architecture",
                               target_label(report)),
             ("defense", t.defense), ("protocol", t.protocol),
             ("nodes / edges", f"{t.num_nodes} / {t.num_edges // 2}"),
             ("claimed ε", "∞ (none)" if not private else fmt_figure(led.epsilon)),
             ("test accuracy", _f(t.utility.get("test_accuracy")))]
    out = ['<h2>Target</h2><div class="cards">']
    out += [f'<div class="card"><div class="k">{_e(k)}</div><div class="v">{_e(v)}</div></div>'
            for k, v in cards]
    out.append("</div>")
    u = t.utility
    out.append("<table><tr><th>utility</th><th>train</th><th>val</th><th>test</th></tr>")
    for m in ("accuracy", "f1_macro", "f1_micro"):
        if any(f"{p}_{m}" in u for p in ("train", "val", "test")):
            out.append(f"<tr><td>{_e(m)}</td>" + "".join(
                f'<td class="num">{_f(u.get(f"{p}_{m}"))}</td>' for p in ("train", "val", "test"))
                + "</tr>")
    out.append("</table>")
    facts = user_model_facts(report)
    if facts:
        out.append("<ul>" + "".join(f"<li>{_e(k)}: {_e(v)}</li>" for k, v in facts) + "</ul>")
    split = t.split_sizes
    out.append("<p>Split sizes: " + ", ".join(f"{_e(k)} {_e(v)}" for k, v in split.items())
               + f". Target fingerprint <code>{_e(t.fingerprint)}</code>.</p>")
    out.append("<h3>Privacy ledger</h3><table>")
    rows = (("unit", led.unit.value), ("epsilon", _eps(led.epsilon)), ("delta", led.delta),
            ("accountant", led.accountant), ("status", led.status.value))
    for k, v in rows:
        out.append(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>")
    out.append("</table>")
    if led.notes:
        out.append("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in led.notes) + "</ul>")
    return "".join(out)


def _eps(x: float) -> str:
    return fmt_figure(x)


def _binary_table(report: AuditReport, gate: Any | None) -> str:
    attacks = [a for a in report.attacks if a.metrics.binary is not None]
    if not attacks:
        return ""
    out = ["<table><tr><th>attack</th><th>candidates</th>"]
    out += [f"<th>{_e(m)}</th>" for m in TABLE_METRICS[:-1]]
    out += ["<th>accuracy at the attack's threshold</th><th>sound ε lower bound</th>"
            "<th>optimistic ε bound</th>"]
    if gate is not None:
        out.append("<th>gate</th>")
    out.append("</tr>")
    for a in attacks:
        lb = a.metrics.epsilon_lower_bound
        opt = a.metrics.epsilon_lower_bound_max_over_thresholds
        readings = a.metrics.readings()
        b = a.metrics.binary
        flag = (' <span class="badge warn">miscalibrated</span>'
                if b is not None and b.miscalibrated else "")
        out.append(f"<tr><td><b>{_e(a.attack)}</b>{flag}</td>"
                   f'<td>{_e(candidates_cell(a))}</td>')
        out += [_est_cell(readings.get(m)) for m in TABLE_METRICS]
        out.append(f'<td class="num">{_f(lb.bound.epsilon_lb) if lb else "–"}</td>')
        out.append(f'<td class="num">{_f(opt.bound.epsilon_lb) if opt else "–"}</td>')
        if gate is not None:
            mine = [c for c in gate.checks if c.attack == a.attack]
            bad = [c for c in mine if not c.passed]
            badge = ('<span class="badge bad">crossed</span>' if bad else
                     '<span class="badge ok">pass</span>' if mine else "–")
            out.append(f"<td>{badge}</td>")
        out.append("</tr>")
    out.append('<tr><td><i>trivial baseline</i></td><td></td>')
    base = attacks[0].baseline
    for m in TABLE_METRICS:
        if m in _BASELINE_KEY and _BASELINE_KEY[m] in base:
            out.append(f'<td class="num">{_f(base[_BASELINE_KEY[m]])}</td>')
        elif m.startswith("tpr@"):
            out.append('<td class="num">= FPR</td>')
        else:
            out.append("<td></td>")
    out.append("<td></td><td></td>" + ("<td></td>" if gate is not None else "")
               + "</tr></table>")
    notes = table_footnotes(attacks)
    out.append('<ul class="sub">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    return "".join(out)


def _multiclass_table(report: AuditReport) -> str:
    attacks = [a for a in report.attacks if a.metrics.multiclass is not None]
    if not attacks:
        return ""
    out = ["<h3>Attribute inference</h3><table><tr><th>attack</th>"
           "<th>nodes with known / unknown attribute</th>"]
    out += [f"<th>{_e(m)}</th>" for m in MC_METRICS]
    out += ["<th>majority baseline accuracy</th></tr>"]
    for a in attacks:
        mc = a.metrics.multiclass
        assert mc is not None  # filtered above
        known = a.baseline.get("n_known")
        known_txt = "?" if known is None else str(int(known))
        readings = a.metrics.readings()
        out.append(f"<tr><td><b>{_e(a.attack)}</b></td>"
                   f"<td class=\"num\">{known_txt} / {mc.n}</td>")
        out += [_est_cell(readings.get(m)) for m in MC_METRICS]
        out.append(f'<td class="num">{_f(mc.majority_baseline)}</td></tr>')
    out.append("</table>")
    return "".join(out)


def _attack_details(report: AuditReport) -> str:
    out = []
    led = report.ledger
    for a in report.attacks:
        tm = a.threat_model
        outputs = ", ".join(sorted(o.value for o in tm.outputs))
        items = [f"task <b>{_e(a.task)}</b>; threat model {_e(_value(tm.access))}, "
                 f"outputs {_e(outputs)}, graph knowledge "
                 f"{_e(_value(tm.graph_knowledge))}, "
                 + ("knows the defense" if tm.defense_knowledge else "defense-unaware")
                 + "; queries in the "
                 f"<code>{_e(a.query_graph)}</code> graph"]
        if a.config:
            items.append("config: " + ", ".join(f"<code>{_e(k)}={_e(v)}</code>"
                                                for k, v in sorted(a.config.items())))
        o = a.metrics.oracle_balanced_accuracy
        if o is not None:
            items.append(f"oracle balanced accuracy (threshold chosen on the evaluation labels, "
                         f"an upper bound): {_f(o.value)}")
        lb = a.metrics.epsilon_lower_bound
        if lb is not None:
            cmp = lb.ledger_comparison
            flag = ""
            if cmp is not None and cmp.violation:  # same-unit comparisons only (the runner's)
                flag = f' <span class="badge bad">{_e(cmp.text)}</span>'
            elif cmp is not None and cmp.ledger_unit != "none":
                flag = f" — {_e(cmp.text)}"
            items.append(f"empirical ε lower bound {_f(lb.bound.epsilon_lb)} "
                         f"({_e(lb.bound.unit)} unit) at "
                         f"{_f(lb.bound.confidence, 2)} confidence (claimed ε "
                         f"{_e(_eps(led.epsilon))}, {_e(led.unit.value)} unit){flag}")
        found = interval_methods_of(a.metrics)
        if found:
            items.append("interval methods: " + "; ".join(
                f"{_e(m)}: {_e(', '.join(paths))}" for m, paths in sorted(found.items())))
        if a.compat_flags:
            items.append('<span class="badge warn">compatibility flags on</span> '
                         + _e(", ".join(a.compat_flags)))
        items += [_e(n) for n in a.notes]
        out.append(f"<h3>{_e(a.attack)}</h3><ul>"
                   + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
    return "".join(out)


def _value(x: Any) -> str:
    """An enum member's value, or the text itself (threat-model fields may be either)."""
    return str(getattr(x, "value", x))


def _verdict_section(report: AuditReport) -> str:
    from graphleaks.report.verdict import render_verdict_html

    return render_verdict_html(report)


def _risk_section(report: AuditReport) -> str:
    from graphleaks.report.graph_sections import is_graph_report, render_graph_slices_html
    from graphleaks.report.risk_sections import render_slices_html

    if is_graph_report(report):  # leakage by class and graph size; graphs have no degree
        return render_graph_slices_html(report)
    from graphleaks.report.link_sections import is_link_report, render_link_slices_html

    if is_link_report(report):  # a pair has two degrees: membership by their product
        return render_link_slices_html(report)
    return render_slices_html(report)


def _gate_section(gate: Any) -> str:
    status = ('<span class="badge ok">passed</span>' if gate.passed else
              f'<span class="badge bad">failed: {len(gate.failures)} crossed</span>')
    out = [f"<h2>Privacy gate {status}</h2><p>Gated on the <b>{_e(gate.bound)}</b> "
           "confidence bound.</p><table><tr><th></th><th>attack</th><th>metric</th>"
           "<th>kind</th><th>gated</th><th>limit</th></tr>"]
    for c in gate.checks:
        badge = ('<span class="badge warn">not gated</span>' if not getattr(c, "gated", True)
                 else '<span class="badge ok">ok</span>' if c.passed
                 else '<span class="badge bad">crossed</span>')
        out.append(f"<tr><td>{badge}</td><td>{_e(c.attack)}</td><td>{_e(c.metric)}</td>"
                   f"<td>{_e(c.kind)}</td><td class=\"num\">{_f(c.observed, 4)}</td>"
                   f"<td class=\"num\">{_f(c.limit, 4)}</td></tr>")
    out.append("</table>")
    return "".join(out)


def render_html(
    report: AuditReport,
    *,
    results: Sequence[Any] | None = None,
    tradeoff: Sequence[Mapping[str, Any]] | None = None,
    gate: Any | None = None,
    title: str = "graphleaks audit report",
) -> str:
    """Render a report as one self-contained HTML page.

    Args:
        report: The report (from the runner, or ``load_report``).
        results: Optional ``AttackResult`` objects, used for ROC curves when the report has
            no ``metrics.roc`` records.
        tradeoff: Optional rows for the privacy–utility plot (results-store rows of a sweep
            over several ε); the plot is drawn when they span at least two ε values.
        gate: Optional :class:`~graphleaks.report.regression.GateResult` to show.
        title: Page title.
    """
    body = [f"<h1>{_e(title)}</h1>"]
    cfg = report.config
    sub = [f"seed {_e(report.seed)}", f"report schema {_e(report.schema_version)}",
           f"graphleaks {_e(report.versions.get('graphleaks', '?'))}"]
    if cfg.get("spec_hash"):
        sub.append(f"spec <code>{_e(cfg['spec_hash'])}</code>")
    body.append(f'<p class="sub">{" · ".join(sub)}</p>')
    body.append(_verdict_section(report))
    if gate is not None:
        body.append(_gate_section(gate))
    body.append(_target_section(report))
    body.append("<h2>Attacks</h2><p>Values with 95% intervals in brackets (the attack "
                "details name each interval's method: stratified bootstrap, or analytic "
                "intervals chosen once per attack on its whole candidate set). Scores: higher = "
                "more likely positive. TPR@x%FPR is the true "
                "positive rate at a false positive rate of x (a fraction, not a percent).</p>")
    body.append(_binary_table(report, gate))
    body.append(_multiclass_table(report))
    if any(a.metrics.binary is not None for a in report.attacks):
        body.append(figure(forest_figure(report), "Estimates with 95% intervals; dashed red: "
                            "what an adversary gets without looking at the target.",
                            "metric estimates with confidence intervals"))
    curves = roc_points(report, results)
    if curves:
        body.append(figure(roc_figure(curves), "ROC curves on log–log axes: the low-FPR "
                            "region (left) is where membership leakage matters. Grey lines "
                            "mark FPR 0.1% and 1%.", "ROC curves on log-log axes"))
    else:
        body.append('<p class="sub">No ROC curves: the report has no <code>roc</code> '
                    "points and no attack results were given.</p>")
    if tradeoff:
        eps = {r.get("epsilon") for r in tradeoff}
        if len(eps) >= 2:
            body.append("<h2>Privacy–utility trade-off</h2>")
            body.append(figure(privacy_utility_figure(tradeoff), "Attack AUC (left) and "
                                "target test accuracy (right) against the privacy budget ε.",
                                "privacy-utility trade-off"))
    body.append(_risk_section(report))
    from graphleaks.report.query_curves import render_query_curves_html

    body.append(render_query_curves_html(report.config))
    body.append("<h2>Attack details</h2>")
    body.append(_attack_details(report))
    body.append(render_controls_html(report))
    versions = ", ".join(f"{_e(k)} {_e(v)}" for k, v in sorted(report.versions.items()))
    body.append(f"<footer>Library versions: {versions}.</footer>")
    # HTML_HEAD (with its generator <meta>) lets a later run recognise the page as its own
    return (HTML_HEAD + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><link rel=\"icon\" href=\"data:,\">"
            f"<style>{CSS}</style></head><body><main>"
            + "\n".join(body) + "</main></body></html>\n")


def write_html(report: AuditReport, path: str | Path, *, flag: str = "path",
               **kwargs: Any) -> Path:
    """Write :func:`render_html` atomically to ``path`` (``report.html`` if a folder).

    An existing file is replaced only when it is a page graphleaks wrote; a link is never
    written through (:func:`graphleaks._outputs.check_output_file`).

    Raises:
        InvalidConfigError: If ``path`` is a link or someone else's file (``flag`` names it).
    """
    p = Path(path)
    if p.is_dir() and not p.is_symlink():
        p = p / "report.html"
    publish_files([OutputFile(p, flag, render_html(report, **kwargs), is_html_page)])
    return p
