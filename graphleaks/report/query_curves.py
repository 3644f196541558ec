"""Leakage against queries: typed records of a query-budget curve, its codec and renderings.

A curve runs an attack whose power grows with the queries it makes (LinkTeller's node
sample, the label-only MIA's perturbations) at each budget of a grid and records, per
budget, the queries it actually made, AUC and TPR at 1 % FPR with their intervals (computed
in :mod:`graphleaks.metrics` by :mod:`graphleaks.audit.query_curve`) and the verdict's level.
From the points follows the smallest budget at which each risk level is reached: what a
rate limit has to stay under.

A query is one inference-API request (one answer for every node it asks about): the unit of
:meth:`graphleaks.attacks.base.Attack.feature_queries`. The records live in ``report.json``
under ``config["query_curves"]``, written only when a grid was asked for, so a report
without one is unchanged. This module is torch-free: the ``--query-budgets`` option is
parsed here (:func:`parse_budgets`) for ``graphleaks audit --help`` to stay light.

Example:
    >>> parse_budgets("100,1000,10000")
    (100, 1000, 10000)
    >>> p = CurvePoint(budget=100, queries=100, setting={"n_nodes": 99}, n_pos=12,
    ...                n_neg=4839, auc=Estimate(0.9, 0.85, 0.95), tpr_at_1fpr=None,
    ...                level="severe")
    >>> c = QueryCurve("linkteller", "link", "edges", (p,))
    >>> c.first_budget("high"), c.first_budget("severe")
    (100, 100)
    >>> QueryCurves.from_dict(QueryCurves((100,), (c,)).to_dict(), "curve").curves[0] == c
    True
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphleaks._display import fmt_figure
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics.binary import Estimate

#: The attacks whose power grows with queries (the curve runner,
#: :mod:`graphleaks.audit.query_curve`, knows the config field each budget sets).
CURVE_ATTACK_NAMES: tuple[str, ...] = ("linkteller", "label_only_mia")
#: The default grid: 10², 10³ and 10⁴ queries per attack.
DEFAULT_BUDGETS: tuple[int, ...] = (100, 1_000, 10_000)
#: The graded levels, weakest first (the verdict's, :data:`graphleaks.report.verdict.
#: BINARY_THRESHOLDS`); a curve says at which budget each is first reached.
GRADED_LEVELS: tuple[str, ...] = ("low", "high", "severe")
#: Most budgets in a grid, and the largest budget: a grid is a handful of audits, each at
#: most this many queries per attack.
MAX_GRID = 12
MAX_BUDGET = 10_000_000
#: The unit a budget counts, as reports state it.
QUERY_UNIT = "inference-API requests (one answer for every node a request asks about)"
#: Key of ``report.config`` holding the curves.
CONFIG_KEY = "query_curves"
_RANK = {"none": 0, "low": 1, "high": 2, "severe": 3}


def parse_budgets(text: str, *, flag: str = "--query-budgets") -> tuple[int, ...]:
    """The budgets of a comma-separated grid, each a positive integer, strictly increasing.

    Raises:
        InvalidConfigError: One line naming ``flag``, the problem and the form expected;
            the text itself is not quoted beyond the offending item's position.
    """
    items = [s.strip().replace("_", "") for s in str(text).split(",")]
    if not items or any(not s for s in items):
        raise InvalidConfigError(f"{flag} needs a comma-separated list of query budgets, e.g. "
                                 f"{flag} 100,1000,10000 (an item is empty)")
    values = []
    for i, s in enumerate(items, 1):
        if not s.lstrip("+-").isdigit():
            raise InvalidConfigError(f"{flag}: item {i} is not an integer; give whole numbers "
                                     f"of queries, e.g. {flag} 100,1000,10000")
        values.append(int(s))
    return check_budgets(values, flag=flag)


def check_budgets(budgets: Sequence[int], *, flag: str = "budgets") -> tuple[int, ...]:
    """``budgets`` as a tuple, refused unless each is in ``[1, MAX_BUDGET]`` and they increase.

    Raises:
        InvalidConfigError: One line naming ``flag`` and the rule broken.
    """
    out = tuple(budgets)
    if not out:
        raise InvalidConfigError(f"{flag} is empty; give at least one query budget, e.g. "
                                 "100,1000,10000")
    if len(out) > MAX_GRID:
        raise InvalidConfigError(f"{flag} has {len(out)} budgets; at most {MAX_GRID} (each is "
                                 "one more run of every curve attack)")
    for i, b in enumerate(out, 1):
        if isinstance(b, bool) or not isinstance(b, int):
            raise InvalidConfigError(f"{flag}: budget {i} must be an integer")
        if b <= 0:
            raise InvalidConfigError(f"{flag}: budget {i} must be > 0 queries")
        if b > MAX_BUDGET:
            raise InvalidConfigError(f"{flag}: budget {i} is over the limit of {MAX_BUDGET:,} "
                                     "queries per attack; lower it")
    for i in range(1, len(out)):
        if out[i] <= out[i - 1]:
            raise InvalidConfigError(f"{flag} must be strictly increasing; budget {i + 1} is "
                                     f"not larger than budget {i}")
    return out


@dataclass(frozen=True)
class CurvePoint:
    """One attack at one budget.

    Attributes:
        budget: Most queries the attack was allowed.
        queries: Queries it made (counted at the target, never more than ``budget``).
        setting: The attack's configuration fields the budget set (``{"n_nodes": 99}``).
        n_pos: Positives of its challenge (None when it did not run).
        n_neg: Negatives of its challenge.
        auc: AUC with its 95 % interval (None: no metric at this budget).
        tpr_at_1fpr: TPR at 1 % FPR with its 95 % interval.
        level: The verdict's level of these metrics (``none`` ... ``severe``,
            ``inconclusive``, ``miscalibrated``), or None without a metric.
        note: Why there is no metric, or how the challenge was drawn.
    """

    budget: int
    queries: int
    setting: Mapping[str, Any]
    n_pos: int | None
    n_neg: int | None
    auc: Estimate | None
    tpr_at_1fpr: Estimate | None
    level: str | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {"budget": self.budget, "queries": self.queries, "setting": dict(self.setting),
                "n_pos": self.n_pos, "n_neg": self.n_neg,
                "auc": None if self.auc is None else self.auc.to_dict(),
                "tpr_at_1fpr": None if self.tpr_at_1fpr is None else self.tpr_at_1fpr.to_dict(),
                "level": self.level, "note": self.note}


@dataclass(frozen=True)
class QueryCurve:
    """One attack's leakage at each budget of the grid.

    Attributes:
        attack: Registry name.
        task: Its task (``link``, ``membership``).
        risk: The verdict's risk it measures (``edges``, ``membership``).
        points: One point per budget, in grid order.
        skipped: Why the attack could not run at all on this target ("" when it ran).
    """

    attack: str
    task: str
    risk: str
    points: tuple[CurvePoint, ...]
    skipped: str = ""

    def first_budget(self, level: str) -> int | None:
        """Smallest budget whose level is ``level`` or stronger (None: never reached).

        Only graded levels count: an ``inconclusive`` point (too few positives) reaches none.
        """
        want = _RANK[level]
        for p in self.points:
            if p.level in _RANK and _RANK[p.level] >= want:
                return p.budget
        return None

    def levels_reached(self) -> dict[str, int | None]:
        """:meth:`first_budget` of each graded level, weakest first."""
        return {lv: self.first_budget(lv) for lv in GRADED_LEVELS}

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary (with the smallest budget per level, for machines)."""
        return {"attack": self.attack, "task": self.task, "risk": self.risk,
                "points": [p.to_dict() for p in self.points], "skipped": self.skipped,
                "first_budget_at_level": self.levels_reached()}


@dataclass(frozen=True)
class QueryCurves:
    """Every curve of an audit, on one grid.

    Attributes:
        budgets: The grid.
        curves: One per curve attack.
        seed: The seed the curves ran with (same seed, same curves).
        unit: What one query is.
        notes: Attacks left out of the curves, and why.
    """

    budgets: tuple[int, ...]
    curves: tuple[QueryCurve, ...]
    seed: int = 0
    unit: str = QUERY_UNIT
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary (stored in ``report.config["query_curves"]``)."""
        return {"budgets": list(self.budgets), "seed": self.seed, "unit": self.unit,
                "curves": [c.to_dict() for c in self.curves], "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: Any, where: str) -> QueryCurves:
        """Decode :meth:`to_dict`'s form.

        Raises:
            DataError: One line naming the first malformed field; values are never quoted.
        """
        d = _obj(d, where)
        budgets = tuple(_int(b, f"{where}.budgets") for b in _list(d.get("budgets"),
                                                                    f"{where}.budgets"))
        curves = tuple(_curve(c, f"{where}.curves[{i}]")
                       for i, c in enumerate(_list(d.get("curves"), f"{where}.curves")))
        notes = tuple(_str(n, f"{where}.notes") for n in _list(d.get("notes", []),
                                                               f"{where}.notes"))
        return cls(budgets, curves, _int(d.get("seed", 0), f"{where}.seed"),
                   _str(d.get("unit", QUERY_UNIT), f"{where}.unit"), notes)


def curves_of(config: Mapping[str, Any]) -> QueryCurves | None:
    """The curves a report's ``config`` records, or None (no grid was asked for).

    Raises:
        DataError: If the record is malformed.
    """
    raw = config.get(CONFIG_KEY)
    return None if raw is None else QueryCurves.from_dict(raw, f"config.{CONFIG_KEY}")


# --------------------------------------------------------------------------- decoding


def _obj(d: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise DataError(f"{where} must be a JSON object; regenerate the report with graphleaks")
    return d


def _list(d: Any, where: str) -> list[Any]:
    if not isinstance(d, list):
        raise DataError(f"{where} must be a JSON list; regenerate the report with graphleaks")
    return d


def _int(x: Any, where: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise DataError(f"{where} must be an integer, got {type(x).__name__}")
    return x


def _opt_int(x: Any, where: str) -> int | None:
    return None if x is None else _int(x, where)


def _str(x: Any, where: str) -> str:
    if not isinstance(x, str):
        raise DataError(f"{where} must be a string, got {type(x).__name__}")
    return x


def _estimate(x: Any, where: str) -> Estimate | None:
    from graphleaks.report.records import decode_estimate

    return None if x is None else decode_estimate(x, where)


def _point(d: Any, where: str) -> CurvePoint:
    d = _obj(d, where)
    level = d.get("level")
    if level is not None:
        level = _str(level, f"{where}.level")
    return CurvePoint(
        budget=_int(d.get("budget"), f"{where}.budget"),
        queries=_int(d.get("queries"), f"{where}.queries"),
        setting=dict(_obj(d.get("setting", {}), f"{where}.setting")),
        n_pos=_opt_int(d.get("n_pos"), f"{where}.n_pos"),
        n_neg=_opt_int(d.get("n_neg"), f"{where}.n_neg"),
        auc=_estimate(d.get("auc"), f"{where}.auc"),
        tpr_at_1fpr=_estimate(d.get("tpr_at_1fpr"), f"{where}.tpr_at_1fpr"),
        level=level, note=_str(d.get("note", ""), f"{where}.note"))


def _curve(d: Any, where: str) -> QueryCurve:
    d = _obj(d, where)
    points = tuple(_point(p, f"{where}.points[{i}]")
                   for i, p in enumerate(_list(d.get("points"), f"{where}.points")))
    return QueryCurve(_str(d.get("attack"), f"{where}.attack"),
                      _str(d.get("task"), f"{where}.task"),
                      _str(d.get("risk"), f"{where}.risk"), points,
                      _str(d.get("skipped", ""), f"{where}.skipped"))


# --------------------------------------------------------------------------- renderings


def _est(e: Estimate | None) -> str:
    if e is None:
        return "–"
    return f"{fmt_figure(e.value)} [{fmt_figure(e.lo)}, {fmt_figure(e.hi)}]"


def _setting(p: CurvePoint) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(p.setting.items())) or "–"


def _budget(b: int | None) -> str:
    return "not reached" if b is None else f"{b:,}"


def assumed_budget(config: Mapping[str, Any]) -> str:
    """The query budget the verdict assumed, in words.

    An endpoint audit (``graphleaks audit endpoint --budget N``) records its budget for the
    whole audit in ``config["queries"]``: ``assumed budget: N queries for the whole audit``.
    A scores-only audit makes no queries; any other audit answers in process without a
    limit: ``unbounded in-process queries``. With curves, the text says where leakage at
    other budgets per attack is read.

    Example:
        >>> assumed_budget({})
        'unbounded in-process queries'
        >>> assumed_budget({"queries": {"budget": 1000, "made": 412}})
        'assumed budget: 1,000 queries for the whole audit (412 made)'
    """
    queries = config.get("queries")
    budget = queries.get("budget") if isinstance(queries, Mapping) else None
    if isinstance(budget, int) and not isinstance(budget, bool):
        made = queries.get("made") if isinstance(queries, Mapping) else None
        text = f"assumed budget: {budget:,} queries for the whole audit" + (
            f" ({made:,} made)" if isinstance(made, int) and not isinstance(made, bool)
            else "")
    elif "scores_only" in config:
        text = "no queries: the attacks read scores exported beforehand"
    else:
        text = "unbounded in-process queries"
    curves = config.get(CONFIG_KEY)
    if isinstance(curves, Mapping) and isinstance(curves.get("budgets"), list):
        grid = ", ".join(f"{b:,}" for b in curves["budgets"] if isinstance(b, int))
        text += (f"; leakage against queries at {grid} queries per attack: see the "
                 "query-budget curves")
    return text


def render_query_curves_markdown(config: Mapping[str, Any]) -> list[str]:
    """The curves as a Markdown section (empty when the report has none)."""
    curves = curves_of(config)
    if curves is None:
        return []
    lines = ["## Leakage against queries", "",
             f"Each attack re-run at each budget (seed {curves.seed}); a query is one "
             f"{curves.unit}. Intervals are 95% intervals.", "",
             "| attack | budget | queries made | setting | positives / negatives | AUC "
             "| TPR@1%FPR | level |", "|---|---|---|---|---|---|---|---|"]
    for c in curves.curves:
        if c.skipped:
            lines.append(f"| {c.attack} | – | – | – | – | – | – | skipped: {c.skipped} |")
            continue
        for p in c.points:
            sides = "–" if p.n_pos is None else f"{p.n_pos} / {p.n_neg}"
            level = p.level or (f"no metric: {p.note}" if p.note else "no metric")
            lines.append(f"| {c.attack} | {p.budget:,} | {p.queries:,} | {_setting(p)} | "
                         f"{sides} | {_est(p.auc)} | {_est(p.tpr_at_1fpr)} | {level} |")
    lines += ["", "Smallest budget at which each level is reached:", "",
              "| attack | risk | " + " | ".join(GRADED_LEVELS) + " |",
              "|---|---|" + "---|" * len(GRADED_LEVELS)]
    for c in curves.curves:
        if not c.skipped:
            lines.append(f"| {c.attack} | {c.risk} | " + " | ".join(
                _budget(b) for b in c.levels_reached().values()) + " |")
    lines.append("")
    lines += [f"- {n}" for n in curves.notes]
    return [*lines, ""] if curves.notes else lines


def query_curve_figure(curves: QueryCurves) -> Any:
    """AUC and TPR at 1 % FPR (with intervals) against the queries made, per attack."""
    from graphleaks.report._figures import subplots

    fig, (ax1, ax2) = subplots(1, 2, figsize=(10, 4))
    for c in curves.curves:
        for ax, read in ((ax1, "auc"), (ax2, "tpr_at_1fpr")):
            pts = [(p.queries, getattr(p, read)) for p in c.points
                   if getattr(p, read) is not None and p.queries > 0]
            if not pts:
                continue
            xs = [x for x, _ in pts]
            ys = [e.value for _, e in pts]
            err = [[max(0.0, e.value - e.lo) for _, e in pts],
                   [max(0.0, e.hi - e.value) for _, e in pts]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, label=c.attack)
    for ax, title, base in ((ax1, "AUC", 0.5), (ax2, "TPR at 1% FPR", 0.01)):
        ax.set_xscale("log")
        ax.set_xlabel("queries made (log)")
        ax.set_ylabel(title)
        ax.set_ylim(-0.02, 1.02)
        ax.axhline(base, color="grey", ls="--", lw=1, label="chance")
        for b in curves.budgets:
            ax.axvline(b, color="#c9ced6", lw=0.8, zorder=0)
        ax.set_title(f"{title} against queries")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    return fig


def render_query_curves_html(config: Mapping[str, Any]) -> str:
    """The curves as an HTML section with a figure ("" when the report has none)."""
    curves = curves_of(config)
    if curves is None:
        return ""
    from graphleaks.report._figures import figure

    e = html.escape
    out = ["<h2>Leakage against queries</h2>",
           f"<p>Each attack re-run at each budget (seed {curves.seed}); a query is one "
           f"{e(curves.unit)}. Intervals are 95% intervals.</p>"]
    if any(p.auc is not None for c in curves.curves for p in c.points):
        out.append(figure(query_curve_figure(curves), "AUC (left) and TPR at 1% FPR (right) "
                          "with 95% intervals against the queries each attack made; grey "
                          "lines mark the budgets.", "leakage against queries"))
    out.append("<table><tr><th>attack</th><th>budget</th><th>queries made</th><th>setting</th>"
               "<th>positives / negatives</th><th>AUC</th><th>TPR@1%FPR</th><th>level</th>"
               "</tr>")
    for c in curves.curves:
        if c.skipped:
            out.append(f"<tr><td>{e(c.attack)}</td><td colspan=\"7\">skipped: "
                       f"{e(c.skipped)}</td></tr>")
            continue
        for p in c.points:
            sides = "–" if p.n_pos is None else f"{p.n_pos} / {p.n_neg}"
            level = p.level or (f"no metric: {p.note}" if p.note else "no metric")
            out.append(f"<tr><td>{e(c.attack)}</td><td class=\"num\">{p.budget:,}</td>"
                       f"<td class=\"num\">{p.queries:,}</td><td>{e(_setting(p))}</td>"
                       f"<td class=\"num\">{sides}</td><td class=\"num\">{e(_est(p.auc))}</td>"
                       f"<td class=\"num\">{e(_est(p.tpr_at_1fpr))}</td><td>{e(level)}</td>"
                       "</tr>")
    out.append("</table><table><tr><th>attack</th><th>risk</th>" + "".join(
        f"<th>first budget at {e(lv)}</th>" for lv in GRADED_LEVELS) + "</tr>")
    for c in curves.curves:
        if not c.skipped:
            out.append(f"<tr><td>{e(c.attack)}</td><td>{e(c.risk)}</td>" + "".join(
                f"<td class=\"num\">{_budget(b)}</td>" for b in c.levels_reached().values())
                + "</tr>")
    out.append("</table>")
    if curves.notes:
        out.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in curves.notes) + "</ul>")
    return "".join(out)
