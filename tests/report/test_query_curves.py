"""Query-budget curve records: levels reached, the codec's refusals, the renderings."""

from __future__ import annotations

import pytest

from graphleaks.errors import DataError
from graphleaks.metrics.binary import Estimate
from graphleaks.report.query_curves import (
    CurvePoint,
    QueryCurve,
    QueryCurves,
    assumed_budget,
    render_query_curves_html,
    render_query_curves_markdown,
)
from graphleaks.report.verdict import query_budget_notes


def _point(budget: int, level: str | None, auc: float | None = 0.8) -> CurvePoint:
    est = None if auc is None else Estimate(auc, auc - 0.05, min(1.0, auc + 0.05))
    return CurvePoint(budget, budget, {"num_queries": budget - 1}, 50, 50, est, est, level)


def _curves() -> QueryCurves:
    c = QueryCurve("label_only_mia", "membership", "membership", (
        _point(10, "inconclusive"), _point(100, "low"), _point(1000, "severe")))
    skipped = QueryCurve("linkteller", "link", "edges", (), "needs FEATURE_QUERIES")
    return QueryCurves((10, 100, 1000), (c, skipped), seed=4, notes=("lira_mia has no curve",))


def test_levels_count_only_graded_points_and_stronger_levels_reach_weaker_ones():
    c = _curves().curves[0]
    assert c.levels_reached() == {"low": 100, "high": 1000, "severe": 1000}
    never = QueryCurve("x", "membership", "membership", (_point(10, "none"),
                                                         _point(20, None, auc=None)))
    assert never.levels_reached() == {"low": None, "high": None, "severe": None}


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda d: d.update(budgets="100"), "budgets"),
    (lambda d: d["curves"][0]["points"][0].update(queries=1.5), "points[0].queries"),
    (lambda d: d["curves"][0]["points"][0].update(auc={"value": 1}), "points[0].auc"),
    (lambda d: d["curves"][0].update(attack=3), "curves[0].attack"),
    (lambda d: d.update(curves={}), "curves"),
])
def test_malformed_records_are_refused_naming_the_field(mutate, where):  # noqa: ANN001
    d = _curves().to_dict()
    mutate(d)
    with pytest.raises(DataError, match=where.replace("[", r"\[").replace("]", r"\]")):
        QueryCurves.from_dict(d, "curves")


def test_the_assumed_budget_in_words():
    assert assumed_budget({}) == "unbounded in-process queries"
    assert assumed_budget({"queries": {"budget": 5000, "made": 4999}}) == \
        "assumed budget: 5,000 queries for the whole audit (4,999 made)"
    assert assumed_budget({"scores_only": {}}).startswith("no queries")
    with_curves = assumed_budget({"query_curves": _curves().to_dict()})
    assert with_curves.endswith("at 10, 100, 1,000 queries per attack: see the query-budget "
                                "curves")


def test_verdict_notes_name_the_smallest_budget_per_level():
    assert query_budget_notes({}) == []
    notes = query_budget_notes({"query_curves": _curves().to_dict()})
    assert notes[0].startswith("query budget: unbounded in-process queries")
    assert notes[1] == "label_only_mia (membership) against queries: low from 100 queries; " \
                       "high from 1,000 queries; severe from 1,000 queries"
    assert notes[2] == "linkteller has no query-budget curve: needs FEATURE_QUERIES"
    assert query_budget_notes({"queries": {"budget": 10}}) == [
        "query budget: assumed budget: 10 queries for the whole audit"]


def test_renderings():
    config = {"query_curves": _curves().to_dict()}
    md = "\n".join(render_query_curves_markdown(config))
    assert "| label_only_mia | 100 | 100 | num_queries=99 | 50 / 50 | 0.800 [0.750, 0.850] |" in md
    assert "| label_only_mia | membership | 100 | 1,000 | 1,000 |" in md
    assert "skipped: needs FEATURE_QUERIES" in md and "- lira_mia has no curve" in md
    page = render_query_curves_html(config)
    assert "data:image/png;base64," in page and "first budget at severe" in page
    assert render_query_curves_markdown({}) == [] and render_query_curves_html({}) == ""
