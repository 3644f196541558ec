"""The CI privacy gate: compare a report with thresholds and a baseline report.

Each check reads an already computed estimate from the typed report (see
:data:`graphleaks.report.records.METRIC_READERS`) and, by default, gates on its **upper**
confidence bound: a build fails only when the interval reaches past the limit, so the
gate is conservative about leakage and a lucky point estimate cannot hide a leak.

Against a baseline report, a metric **rose** only when the new interval clears the
baseline's: the new lower bound exceeds the baseline's upper bound plus the tolerance. Two
runs of the same model therefore pass (their intervals overlap), a leakier model fails
against a safer one's baseline, and a safer one passes against a leakier one's. With
``bound = "value"`` (or a metric without an interval, such as ``epsilon_lb``) the point
estimates are compared instead.

A binary attack with fewer than :data:`~graphleaks.report.verdict.MIN_PER_SIDE` positives
or negatives (in the report or the baseline) is **not gated**: its check passes with the
message ``not gated: N positives / M negatives``, as the verdict calls it inconclusive.

A baseline audited on a different graph (another target fingerprint) is refused; one of
the same graph but another architecture or defense gates with a warning note.

Example:
    >>> from graphleaks.report.report import load_report
    >>> report = load_report("tests/report/data/report_v1.json")  # AUC 0.674 [0.404, 0.859]
    >>> gate = GateSpec(thresholds=(Threshold("auc", 0.9, "confidence_mia"),))
    >>> check_report(report, gate).passed
    True
    >>> check_report(report, GateSpec(thresholds=(Threshold("auc", 0.8, "confidence_mia"),))
    ...              ).passed
    False
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphleaks._registry import normalize_name
from graphleaks.errors import DataError, InvalidConfigError, one_line
from graphleaks.report.gates import (
    GateSpec,
    Threshold,
    check_metric,
    check_threshold,
    is_metric,
)
from graphleaks.report.records import MetricReading, Readings, slice_as_metrics

if TYPE_CHECKING:
    from graphleaks.report.report import AuditReport

SLICE_METRICS = ("auc", "tpr@1%fpr")

__all__ = ["GateCheck", "GateResult", "GateSpec", "Threshold", "check_report",
           "parse_threshold_option", "render_gate_markdown"]


@dataclass(frozen=True)
class GateCheck:
    """One gate condition and its outcome.

    Attributes:
        attack: Attack name.
        metric: Canonical metric name.
        kind: ``"threshold"`` (absolute limit) or ``"baseline"`` (limit = baseline + tolerance).
        limit: The largest allowed gated number.
        observed: The gated number (the bound chosen by ``bound``); None if not measured.
        value: The point estimate.
        ci: The confidence interval, when the metric has one.
        passed: Whether the condition holds (True for a check that is not gated).
        message: One line explaining the outcome.
        gated: False when the attack has too few positives or negatives to be graded.
    """

    attack: str
    metric: str
    kind: str
    limit: float
    observed: float | None
    value: float | None
    ci: tuple[float, float] | None
    passed: bool
    message: str
    gated: bool = True

    @property
    def name(self) -> str:
        """A stable identifier, e.g. ``confidence_mia auc <= 0.9 (threshold)``."""
        return f"{self.attack} {self.metric} <= {self.limit:.4g} ({self.kind})"


@dataclass(frozen=True)
class GateResult:
    """All checks of one report."""

    checks: tuple[GateCheck, ...]
    bound: str
    report_schema_version: int
    notes: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> tuple[GateCheck, ...]:
        """The checks that failed."""
        return tuple(c for c in self.checks if not c.passed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {"passed": self.passed, "bound": self.bound,
                "report_schema_version": self.report_schema_version,
                "notes": list(self.notes),
                "checks": [{"name": c.name, "attack": c.attack, "metric": c.metric,
                            "kind": c.kind, "limit": c.limit, "observed": c.observed,
                            "value": c.value, "ci": list(c.ci) if c.ci else None,
                            "passed": c.passed, "gated": c.gated, "message": c.message}
                           for c in self.checks]}


def _gated(est: MetricReading, bound: str) -> float:
    if bound == "value" or est.ci is None:
        return float(est.value)
    return float(est.ci[1] if bound == "upper" else est.ci[0])


def _attacks(report: AuditReport) -> dict[str, Readings]:
    return {a.attack: a.metrics.readings() for a in report.attacks}


def _check(attack: str, metric: str, kind: str, limit: float, est: MetricReading | None,
           bound: str, extra: str = "") -> GateCheck:
    if est is None:
        return GateCheck(attack, metric, kind, limit, None, None, None, False,
                         f"{attack}: {metric} was not measured{extra}")
    observed = _gated(est, bound)
    ci = est.ci
    passed = observed <= limit
    what = f"{bound} bound" if ci and bound != "value" else "value"
    verdict = "ok" if passed else "CROSSED"
    msg = (f"{attack}: {metric} {what} {observed:.4f} {'<=' if passed else '>'} "
           f"limit {limit:.4f}{extra} [{verdict}]")
    return GateCheck(attack, metric, kind, limit, observed, float(est.value),
                     (float(ci[0]), float(ci[1])) if ci else None, passed, msg)


def _too_few(*readings: Readings | None) -> str | None:
    """``not gated: ...`` when a binary side has fewer than the verdict's minimum, else None."""
    from graphleaks.report.verdict import MIN_PER_SIDE

    for r in readings:
        if r is None or r.n_pos is None or r.n_neg is None:
            continue
        if min(r.n_pos, r.n_neg) < MIN_PER_SIDE:
            return (f"not gated: {r.n_pos} positives / {r.n_neg} negatives (fewer than "
                    f"{MIN_PER_SIDE} of each, as the verdict's inconclusive)")
    return None


def _not_gated(attack: str, metric: str, kind: str, limit: float,
               est: MetricReading | None, why: str) -> GateCheck:
    ci = None if est is None or est.ci is None else (float(est.ci[0]), float(est.ci[1]))
    return GateCheck(attack, metric, kind, limit, None,
                     None if est is None else float(est.value), ci, True,
                     f"{attack}: {metric} {why}", gated=False)


def _rise(attack: str, metric: str, base: MetricReading, new: MetricReading | None,
          tol: float, bound: str) -> GateCheck:
    """Fails only when the new interval clears the baseline's by more than ``tol``."""
    intervals = bound != "value" and base.ci is not None
    ref = float(base.ci[1]) if intervals and base.ci is not None else float(base.value)
    limit = ref + tol
    if new is None:
        return GateCheck(attack, metric, "baseline", limit, None, None, None, False,
                         f"{attack}: {metric} was not measured (baseline {ref:.4f})")
    ci = None if new.ci is None else (float(new.ci[0]), float(new.ci[1]))
    observed = float(ci[0]) if intervals and ci is not None else float(new.value)
    passed = observed <= limit
    what = ("lower bound", "baseline upper bound") if intervals and ci is not None \
        else ("value", "baseline value")
    msg = (f"{attack}: {metric} {what[0]} {observed:.4f} {'<=' if passed else '>'} "
           f"{what[1]} {ref:.4f} + tolerance {tol:g} [{'ok' if passed else 'CROSSED'}]")
    return GateCheck(attack, metric, "baseline", limit, observed, float(new.value), ci,
                     passed, msg)


def _same_target(report: AuditReport, baseline: AuditReport) -> list[str]:
    """Refuse a baseline of another graph; a note for another architecture or defense."""
    bt, rt = baseline.target, report.target
    if bt.fingerprint and rt.fingerprint and bt.fingerprint != rt.fingerprint:
        # fingerprints are never quoted: they are read from files
        raise DataError("baseline: the baseline report was audited on a different graph than "
                        "the report (their target fingerprints differ); gate against a "
                        "baseline of this graph, or start one with --write-baseline")
    changed = [what for what, a, b in (("architecture", bt.architecture, rt.architecture),
                                      ("defense", bt.defense, rt.defense)) if a != b]
    if not changed:
        return []
    return [f"the baseline's target differs from the report's in its {' and '.join(changed)} "
            "(same graph): metrics are compared as a change of model"]


def check_report(
    report: AuditReport,
    gate: GateSpec,
    baseline: AuditReport | None = None,
) -> GateResult:
    """Evaluate a report (as from ``load_report``) against a gate.

    Reports and baselines of schema version 1 are read into the same typed records as
    version 2 (by :meth:`~graphleaks.report.report.AuditReport.from_json`), so an old CI
    baseline gates a new report.

    Args:
        report: The report to gate.
        gate: Thresholds, bound and tolerances. A threshold for one attack replaces the
            all-attack threshold of the same metric for that attack.
        baseline: A baseline report of the same graph; each metric in ``gate.metrics`` of
            each baseline attack fails only when the report's lower bound exceeds the
            baseline's upper bound plus its tolerance (point estimates with
            ``gate.bound == "value"``). An attack of the baseline that is missing from the
            report fails its checks.

    Raises:
        DataError: If a threshold names an attack that is not in the report, no attack
            reports a thresholded metric, or the baseline was audited on another graph.
        InvalidConfigError: If there is nothing to check.
    """
    if not gate.thresholds and baseline is None:
        raise InvalidConfigError("check: nothing to gate; give thresholds (--max or "
                                 "[gate.thresholds]) or a baseline report (--baseline)")
    attacks = _attacks(report)
    checks: list[GateCheck] = []
    notes: list[str] = []
    specific = {(th.attack, th.metric) for th in gate.thresholds if th.attack is not None}
    for th in gate.thresholds:
        if th.attack is not None and "[" in th.attack:
            targets = [th.attack]
            attacks[th.attack] = slice_entry(report, th.attack)
        elif th.attack is not None:
            if th.attack not in attacks:
                raise DataError(f"gate.thresholds.{th.attack}: attack {th.attack!r} is not in "
                                f"the report ({', '.join(attacks) or 'no attacks'})")
            targets = [th.attack]
        else:
            measured = [n for n, a in attacks.items() if a.get(th.metric)]
            if not measured:
                raise DataError(f"gate.thresholds.{th.metric}: no attack in the report "
                                f"measures {th.metric!r}")
            # an attack-specific threshold overrides the global one for that attack
            targets = [n for n in measured if (n, th.metric) not in specific]
        for name in targets:
            few = _too_few(attacks[name])
            est = attacks[name].get(th.metric)
            checks.append(_not_gated(name, th.metric, "threshold", th.limit, est, few) if few
                          else _check(name, th.metric, "threshold", th.limit, est, gate.bound))
    if baseline is not None:
        notes += _same_target(report, baseline)
        battacks = _attacks(baseline)
        for name, battack in battacks.items():
            mine = attacks.get(name)
            few = _too_few(battack, mine)
            for metric in gate.metrics:
                best = battack.get(metric)
                if best is None:
                    continue
                tol = gate.tolerances.get(metric, gate.tolerance)
                rest = mine.get(metric) if mine is not None else None
                if few:
                    limit = (float(best.ci[1]) if best.ci else float(best.value)) + tol
                    checks.append(_not_gated(name, metric, "baseline", limit, rest, few))
                else:
                    checks.append(_rise(name, metric, best, rest, tol, gate.bound))
    return GateResult(tuple(checks), gate.bound, report.schema_version, tuple(notes))


def _attack_name(name: str, known: Collection[str]) -> str | None:
    """The registered spelling of attack ``name``, or None when no attack has that name.

    ``known`` (canonical names, e.g. the gated report's attacks) is tried first: the registry
    imports every attack and torch with them, seconds a CI gate would pay on every build.
    """
    key = normalize_name(name)
    for k in known:
        if normalize_name(k) == key:
            return k
    from graphleaks.attacks import registry as attacks

    return attacks.get(name).name if name in attacks else None


def parse_threshold_option(item: str, known_attacks: Collection[str] = ()) -> Threshold:
    """Parse ``--max METRIC=LIMIT`` or ``--max ATTACK.METRIC=LIMIT``.

    Args:
        item: The option's value.
        known_attacks: Canonical attack names resolved without the attack registry (the
            gated report's attacks); any other name is looked up in the registry.

    Raises:
        InvalidConfigError: On bad syntax, an unknown metric or attack, or a limit outside
            [0, 1].
    """
    if not item.isprintable():
        # a newline or terminal escape in a slice key or limit: refused, and never echoed raw
        raise InvalidConfigError(f"--max {one_line(repr(item))} holds a control character "
                                 "(a newline, tab or escape); type the threshold on one line")
    key, sep, raw = item.rpartition("=")  # the last '=': slice keys may hold one
    if not sep:
        raise InvalidConfigError(f"--max {item!r} must look like METRIC=LIMIT or "
                                 "ATTACK.METRIC=LIMIT")
    attack: str | None = None
    metric = key.strip()
    # metric names contain dots ("tpr@0.1%fpr"): split off an attack only if it is one
    head, dot, tail = metric.partition(".")
    if dot and "[" not in metric and is_metric(metric):
        dot = ""  # a whole metric name: no attack to look up
    if "[" in metric:
        # ATTACK[SLICE].METRIC; the slice key may itself contain dots or '='
        name, _, rest = metric.partition("[")
        key, close, tail = rest.partition("].")
        canonical = _attack_name(name, known_attacks) if close and key else None
        if canonical is None:
            raise InvalidConfigError(f"--max {item!r} must look like ATTACK[SLICE].METRIC="
                                     "LIMIT, e.g. 'confidence_mia[degree<=2].tpr@1%fpr=0.1'")
        attack, metric, dot = f"{canonical}[{key}]", tail, ""
    if dot:
        canonical = _attack_name(head, known_attacks)
        if canonical is not None:
            attack, metric = canonical, tail
    where = f"--max {key.strip()}"
    m = check_metric(metric, where)
    if attack is not None and "[" in attack and m not in SLICE_METRICS:
        raise InvalidConfigError(f"{where}: slices measure {' and '.join(SLICE_METRICS)} only, "
                                 f"not {m!r}")
    try:
        value = float(raw)
    except ValueError:
        raise InvalidConfigError(f"{where}: threshold must be a number, got {raw!r}") from None
    return Threshold(m, check_threshold(m, value, where), attack)


def slice_entry(report: AuditReport, name: str) -> Readings:
    """The readings of slice ``ATTACK[KEY]`` (AUC and TPR@1%FPR), for gating.

    Raises:
        DataError: If the attack is not in the report, the slice key is unknown, or the
            slice has too few candidates for an interval.
    """
    attack, _, rest = name.partition("[")
    key = rest[:-1] if rest.endswith("]") else rest
    names = [a.attack for a in report.attacks]
    if attack not in names:
        raise DataError(f"--max {name}: attack {attack!r} is not in the report "
                        f"({', '.join(names) or 'no attacks'})")
    slices = report.attack(attack).metrics.slices
    if key not in slices:
        raise DataError(f"--max {name}: unknown slice {key!r} of {attack}; choose one of: "
                        f"{', '.join(slices) or 'none (re-run the audit with this version)'}")
    entry = slices[key]
    if entry.too_few:
        raise DataError(f"--max {name}: slice {key!r} has {entry.n_pos} positives and "
                        f"{entry.n_neg} negatives, too few for an interval (need 10 of "
                        "each); gate a wider slice or audit more candidates")
    return slice_as_metrics(entry).readings()


def _fmt_est(c: GateCheck) -> str:
    if c.value is None:
        return "not measured"
    if c.ci is None:
        return f"{c.value:.4f}"
    return f"{c.value:.4f} [{c.ci[0]:.4f}, {c.ci[1]:.4f}]"


def render_gate_markdown(result: GateResult, *, title: str = "graphleaks privacy gate") -> str:
    """A Markdown summary for a CI job summary (e.g. ``$GITHUB_STEP_SUMMARY``)."""
    n_fail = len(result.failures)
    status = ("✅ **passed**" if result.passed
              else f"❌ **failed**: {n_fail} of {len(result.checks)} checks crossed")
    lines = [f"## {title}", "", f"{status}. Gated on the **{result.bound}** "
             f"{'confidence bound' if result.bound != 'value' else 'point estimate'} "
             "(95% intervals); a baseline check fails when the report's lower bound exceeds "
             "the baseline's upper bound plus the tolerance.", ""]
    lines += ["| | attack | metric | kind | estimate [95% CI] | gated | limit |",
              "|---|---|---|---|---|---|---|"]
    for c in sorted(result.checks, key=lambda c: (c.passed, c.attack, c.metric, c.kind)):
        mark = "➖ not gated" if not c.gated else "✅" if c.passed else "❌"
        obs = "–" if c.observed is None else f"{c.observed:.4f}"
        lines.append(f"| {mark} | {c.attack} | `{c.metric}` | {c.kind} | {_fmt_est(c)} | "
                     f"{obs} | {c.limit:.4f} |")
    for note in result.notes:
        lines += ["", f"> note: {note}"]
    return "\n".join(lines) + "\n"
