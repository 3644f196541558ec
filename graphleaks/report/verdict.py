"""The verdict: one line per privacy risk, with a level, the attack behind it and a next step.

Levels come from documented thresholds on the **upper** 95 % confidence bound of each
attack's metrics, so a verdict of ``none`` means the data rule out a leak of that size, not
merely that the point estimate is small. The thresholds (also in the README):

================  =====================================  ===============================
level             membership / edges / reconstruction    attributes
                  (upper bound of TPR@1%FPR or of AUC)    (upper bound of accuracy gain
                                                          over the majority baseline)
================  =====================================  ===============================
severe            TPR@1%FPR >= 0.20 or AUC >= 0.85        gain >= 0.30
high              TPR@1%FPR >= 0.05 or AUC >= 0.70        gain >= 0.15
low               TPR@1%FPR >= 0.02 or AUC >= 0.55        gain >= 0.05
none              below all of the above                  below 0.05
miscalibrated     AUC interval entirely below 0.5         gain interval entirely below 0
inconclusive      fewer than 10 positives or negatives
================  =====================================  ===============================

``miscalibrated`` means the attack ranks members *below* non-members more often than chance:
its scores are informative but inverted or badly calibrated, which is never evidence of
"no leak". A risk's level is the highest level among its attacks; if every attack of a risk
is miscalibrated the risk is reported as miscalibrated.

The verdict reads metrics already computed by :mod:`graphleaks.metrics`; it computes none.

Example:
    >>> from graphleaks.report.records import MetricReading, Readings
    >>> r = Readings({"auc": MetricReading(0.8, (0.77, 0.83)),
    ...               "tpr@1%fpr": MetricReading(0.08, (0.04, 0.12))})
    >>> v = verdict_of([("confidence_mia", "membership", r)])
    >>> v[0].risk, v[0].level, v[0].attack
    ('membership', 'high', 'confidence_mia')
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from graphleaks._display import fmt_figure as _f
from graphleaks.report.records import AttackMetrics, MetricReading, Readings, decode_readings

RISKS = ("membership", "edges", "attributes", "reconstruction")
#: (level, TPR@1%FPR upper bound, AUC upper bound), checked from the top.
BINARY_THRESHOLDS: tuple[tuple[str, float, float], ...] = (
    ("severe", 0.20, 0.85), ("high", 0.05, 0.70), ("low", 0.02, 0.55))
#: (level, upper bound of the accuracy gain over the majority baseline).
GAIN_THRESHOLDS: tuple[tuple[str, float], ...] = (("severe", 0.30), ("high", 0.15),
                                                  ("low", 0.05))
_RISK_OF_TASK = {"membership": "membership", "link": "edges", "attribute": "attributes",
                 "reconstruction": "reconstruction"}
#: What to try when no sweep has been run: the defense whose privacy unit matches the risk.
DEFENSE_ADVICE = {
    "membership": ("gap_ndp", "node-level DP"),
    "edges": ("gap_edp", "edge-level DP"),
    "reconstruction": ("gap_edp", "edge-level DP (the structure the model encodes)"),
    "attributes": ("lpgnn", "local DP on node features"),
}
#: Fewest positives and negatives an attack needs before the verdict grades it.
MIN_PER_SIDE = 10
_RANK = {"inconclusive": -2, "miscalibrated": -1, "none": 0, "low": 1, "high": 2, "severe": 3}


class GradedAttack(Protocol):
    """What the verdict reads of one attack's outcome (a report's ``AttackReport``)."""

    @property
    def attack(self) -> str:
        """The attack's registry name."""

    @property
    def task(self) -> str:
        """Its task (``membership``, ``link``, ...)."""

    @property
    def metrics(self) -> AttackMetrics:
        """Its typed metrics."""


class GradedReport(Protocol):
    """What the verdict reads of a report (an ``AuditReport``; the verdict sits below it,
    since the report's JSON records its verdict)."""

    @property
    def attacks(self) -> Sequence[GradedAttack]:
        """The attacks' outcomes."""

    @property
    def config(self) -> Mapping[str, Any]:
        """The audit's configuration (``sweep_rows`` is read from it)."""


@dataclass(frozen=True)
class AttackLevel:
    """The level one attack reaches, and the numbers behind it."""

    attack: str
    level: str
    basis: str


@dataclass(frozen=True)
class RiskVerdict:
    """One risk's verdict line.

    Attributes:
        risk: ``membership``, ``edges``, ``attributes`` or ``reconstruction``.
        level: ``none``, ``low``, ``high``, ``severe``, ``miscalibrated`` or
            ``not assessed`` (no attack of this risk ran).
        attack: The strongest attack behind the level (None when not assessed).
        basis: The numbers that set the level.
        advice: What to do next.
    """

    risk: str
    level: str
    attack: str | None
    basis: str
    advice: str

    def line(self) -> str:
        """The verdict as one plain-text line."""
        who = f" ({self.attack}: {self.basis})" if self.attack else ""
        return f"{self.risk}: {self.level.upper()}{who}. {self.advice}"


def risk_of(attack: str, task: str) -> str:
    """The risk an attack measures: its class's ``risk`` attribute, else its task's."""
    from graphleaks.attacks import registry

    if attack in registry:
        risk = getattr(registry.get(attack), "risk", None)
        if isinstance(risk, str):
            return risk
    return _RISK_OF_TASK.get(task, task)


def _hi(est: MetricReading | None) -> float | None:
    if est is None:
        return None
    v = float(est.ci[1]) if est.ci else float(est.value)
    return v if math.isfinite(v) else None


def attack_level(name: str, readings: Readings) -> AttackLevel | None:
    """The level of one attack's metrics (None if it has no gradable metric)."""
    if readings.multiclass:
        gain = readings.get("gain_over_baseline")
        hi = _hi(gain)
        if gain is None or hi is None:
            return None
        basis = f"accuracy gain over majority baseline ≤ {_f(hi)} (95% upper bound)"
        if hi < 0:
            return AttackLevel(name, "miscalibrated", basis)
        level = next((lv for lv, t in GAIN_THRESHOLDS if hi >= t), "none")
        return AttackLevel(name, level, basis)
    auc = readings.get("auc")
    if auc is None:
        return None
    n_pos, n_neg = readings.n_pos, readings.n_neg
    if n_pos is not None and n_neg is not None and min(n_pos, n_neg) < MIN_PER_SIDE:
        # e.g. LinkTeller on a small node sample: one edge gives AUC 1.0 and means nothing
        return AttackLevel(name, "inconclusive", f"only {n_pos} positives / {n_neg} negatives "
                           f"(need {MIN_PER_SIDE} of each)")
    auc_hi = _hi(auc)
    tpr_hi = _hi(readings.get("tpr@1%fpr"))
    auc_txt = f"AUC {_f(auc.value)} ≤ {_f(auc_hi)}" if auc_hi is not None else "AUC –"
    tpr_txt = f"TPR@1%FPR ≤ {_f(tpr_hi)}" if tpr_hi is not None else "TPR@1%FPR –"
    basis = f"{auc_txt}, {tpr_txt} (95% upper bounds)"
    if auc_hi is not None and auc_hi < 0.5:
        lo = auc.ci[0] if auc.ci else auc.value
        return AttackLevel(name, "miscalibrated",
                           f"AUC interval [{_f(lo)}, {_f(auc_hi)}] lies entirely "
                           "below chance: the attack is miscalibrated, not evidence of no leak")
    for level, t_tpr, t_auc in BINARY_THRESHOLDS:
        if (tpr_hi is not None and tpr_hi >= t_tpr) or (auc_hi is not None and auc_hi >= t_auc):
            return AttackLevel(name, level, basis)
    return AttackLevel(name, "none", basis)


def _strength(readings: Readings) -> tuple[float, float]:
    return (_hi(readings.get("tpr@1%fpr")) or 0.0,
            _hi(readings.get("auc")) or _hi(readings.get("gain_over_baseline")) or 0.0)


def _advice(risk: str, level: str, sweep_rows: Sequence[Mapping[str, Any]] | None,
            attacks_of_risk: set[str]) -> str:
    if level in ("none", "not assessed"):
        return "Nothing to do for this risk at this audit's budget."
    if level == "inconclusive":
        return ("Too few candidates to grade; re-run with --suite thorough (more nodes "
                "sampled) or another attack of this risk.")
    if level == "miscalibrated":
        return ("Re-run with --suite thorough or another attack of this risk before "
                "concluding anything.")
    best = _best_sweep_row(sweep_rows or [], attacks_of_risk)
    if best is not None:
        return best
    defense, what = DEFENSE_ADVICE.get(risk, ("gap_ndp", "DP"))
    none_graded = ("The sweep has no defended run of these attacks that could be graded. "
                   if sweep_rows else "")
    return (f"{none_graded}Try {what}: graphleaks train --defense {defense} --epsilon 4 "
            "--out model-dp, then graphleaks audit --bundle model-dp.")


def _best_sweep_row(rows: Sequence[Mapping[str, Any]], attacks: set[str]) -> str | None:
    """The defended sweep unit with the lowest level on ``attacks``, then the best utility."""
    base_util = [float(r["utility"]["test_accuracy"]) for r in rows
                 if r.get("defense") == "none" and (r.get("utility") or {}).get("test_accuracy")
                 is not None]
    best: tuple[int, float, str] | None = None
    for r in rows:
        if r.get("defense") in (None, "none") or r.get("attack") not in attacks:
            continue
        lv = attack_level(str(r["attack"]), decode_readings(r.get("metrics") or {},
                                                             "sweep row metrics"))
        if lv is None or _RANK[lv.level] < 0:
            continue
        util = float((r.get("utility") or {}).get("test_accuracy", float("nan")))
        cost = (f"test accuracy {_f(util)}" + (f" vs {_f(base_util[0])} undefended"
                                                 if base_util else "")) if util == util else ""
        text = (f"In the sweep, {r['defense']} at ε = {r.get('epsilon')} brought "
                f"{r['attack']} to {lv.level.upper()}" + (f" at {cost}" if cost else "") + ".")
        key = (_RANK[lv.level], -util if util == util else 0.0, text)
        if best is None or key < best:
            best = key
    return best[2] if best else None


def compute_verdict(
    report: GradedReport, *, sweep_rows: Sequence[Mapping[str, Any]] | None = None
) -> list[RiskVerdict]:
    """One :class:`RiskVerdict` per risk, in the order of :data:`RISKS`.

    Args:
        report: The report.
        sweep_rows: Results-store rows of a sweep on this graph (``defense``, ``epsilon``,
            ``attack``, ``metrics``, ``utility``); when given, the advice names the defended
            unit that lowered the risk most, with its utility cost. By default, the rows the
            report recorded in its config (``sweep_rows``), if any.
    """
    if sweep_rows is None:
        sweep_rows = report.config.get("sweep_rows")
    return verdict_of([(a.attack, a.task, a.metrics.readings()) for a in report.attacks],
                      sweep_rows=sweep_rows)


def verdict_of(
    attacks: Sequence[tuple[str, str, Readings]], *,
    sweep_rows: Sequence[Mapping[str, Any]] | None = None,
) -> list[RiskVerdict]:
    """The verdict of ``(attack, task, readings)`` triples; see :func:`compute_verdict`."""
    by_risk: dict[str, list[tuple[AttackLevel, Readings]]] = {r: [] for r in RISKS}
    for name, task, readings in attacks:
        lv = attack_level(name, readings)
        if lv is not None:
            by_risk.setdefault(risk_of(lv.attack, task), []).append((lv, readings))
    out: list[RiskVerdict] = []
    for risk, items in by_risk.items():
        names = {lv.attack for lv, _ in items}
        if not items:
            out.append(RiskVerdict(risk, "not assessed", None, "",
                                   "No attack of this risk ran (narrowed with --attack, or "
                                   "the target does not expose what it needs)."))
            continue
        graded = [(lv, a) for lv, a in items if _RANK[lv.level] >= 0]
        pool = graded or items
        lv, _ = max(pool, key=lambda p: (_RANK[p[0].level], _strength(p[1])))
        out.append(RiskVerdict(risk, lv.level, lv.attack, lv.basis,
                               _advice(risk, lv.level, sweep_rows, names)))
    return out


def compact_sweep_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Results-store rows cut to what the verdict reads, to record in a report's config."""
    out = []
    for r in rows:
        readings = decode_readings(r.get("metrics") or {}, "results store metrics")
        wanted = ("auc", "tpr@1%fpr", "gain_over_baseline")
        keep = Readings({m: v for m in wanted if (v := readings.get(m)) is not None},
                        readings.n_pos, readings.n_neg, readings.multiclass).to_dict()
        out.append({"defense": r.get("defense"), "epsilon": r.get("epsilon"),
                    "attack": r.get("attack"), "seed": r.get("seed"), "metrics": keep,
                    "utility": {"test_accuracy": (r.get("utility") or {}).get("test_accuracy")}})
    return out


def verdict_dicts(verdict: Sequence[RiskVerdict]) -> list[dict[str, Any]]:
    """JSON form of a verdict."""
    return [asdict(v) for v in verdict]


def render_verdict_markdown(report: GradedReport) -> str:
    """The verdict as a Markdown section for the top of ``report.md``."""
    lines = ["## Verdict", "", "| risk | level | strongest attack | basis | next step |",
             "|---|---|---|---|---|"]
    for v in compute_verdict(report):
        lines.append(f"| {v.risk} | **{v.level}** | {v.attack or '–'} | {v.basis or '–'} | "
                     f"{v.advice} |")
    lines += ["", "Levels use the upper 95% confidence bound of TPR@1%FPR and AUC (accuracy "
              "gain for attributes); thresholds are in the README.", ""]
    return "\n".join(lines)


_COLOURS = {"inconclusive": "warn", "none": "ok", "low": "warn", "high": "bad", "severe": "bad",
            "miscalibrated": "warn", "not assessed": ""}


def render_verdict_html(report: GradedReport) -> str:
    """The verdict as an HTML section for the top of ``report.html``."""
    e = html.escape
    out = ['<h2>Verdict</h2><table><tr><th>risk</th><th>level</th><th>strongest attack</th>'
           "<th>basis</th><th>next step</th></tr>"]
    for v in compute_verdict(report):
        out.append(f"<tr><td><b>{e(v.risk)}</b></td><td><span class=\"badge "
                   f"{_COLOURS.get(v.level, '')}\">{e(v.level)}</span></td>"
                   f"<td>{e(v.attack or '–')}</td><td>{e(v.basis or '–')}</td>"
                   f"<td>{e(v.advice)}</td></tr>")
    out.append("</table><p class=\"sub\">Levels use the upper 95% confidence bound of "
               "TPR@1%FPR and AUC (accuracy gain over the majority baseline for attributes); "
               "thresholds are documented in the README.</p>")
    return "".join(out)
