"""The HTML of a link-prediction audit shows edge membership by endpoint-degree product (a
figure per bucket), names pairs, and appears only for link reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from graphleaks.audit.link_audit import audit_link_model, audit_link_scores
from graphleaks.data import tiny_graph
from graphleaks.data.pair_score_files import check_pair_scores
from graphleaks.data.pairs import undirected_pairs
from graphleaks.report.html import _risk_section
from graphleaks.report.link_sections import (
    PRODUCT_KEYS,
    bucket_figure,
    is_link_report,
    render_link_slices_html,
)
from graphleaks.report.report import load_report

ALT = "edge membership against endpoint-degree product"
FAST = {"attacks": ["edge_score_threshold"], "suite": "quick", "n_bootstrap": 30, "seed": 0}


def feature_dot(x: torch.Tensor, edge_index: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
    """An untrained pair scorer (the figure needs scores that vary with degree, not a
    leak): the endpoints' feature inner product plus their served degrees' product."""
    deg = torch.bincount(edge_index[0], minlength=x.shape[0]).float()
    return (x[pairs[0]] * x[pairs[1]]).sum(-1) + deg[pairs[0]] * deg[pairs[1]] / 10


@pytest.fixture(scope="module")
def link_run():
    g = tiny_graph()
    pairs = undirected_pairs(g.edge_index)
    members, held = pairs[:120], pairs[120:]
    return audit_link_model(feature_dot, g, members, held, **FAST), members, held


def test_link_html_draws_membership_by_degree_product(link_run):
    run, _, _ = link_run
    report = run.report
    assert is_link_report(report)
    keys = [k for k, _ in PRODUCT_KEYS]
    slices = report.attacks[0].metrics.slices
    assert any(k in slices and not slices[k].too_few for k in keys)  # something to draw
    assert bucket_figure(report, PRODUCT_KEYS, "endpoint-degree product") is not None
    section = _risk_section(report)  # the HTML report's dispatch
    assert "Per-edge risk: membership by endpoint degree" in section
    assert ALT in section and "<code>degree_product" in section
    assert "Per-node risk" not in section and "leakage against degree" not in section


def test_link_section_never_appears_in_a_node_report():
    # a stored node report whose attacks include link stealing (task "link", not an edge
    # membership audit): the node section, not the pair one
    node = load_report(Path(__file__).parent / "data" / "report_v1.json")
    assert "link" in [a.task for a in node.attacks]
    assert not is_link_report(node)
    section = _risk_section(node)
    assert "Per-node risk" in section
    assert "Per-edge risk" not in section and ALT not in section


def test_scores_only_link_report_says_why_there_is_no_figure(link_run):
    _, members, held = link_run
    pairs = np.concatenate([members, held])
    scores = check_pair_scores(pairs, np.linspace(-1, 1, len(pairs)), output="logits",
                               source="s.csv")
    report = audit_link_scores(scores, members, held, **FAST).report
    assert is_link_report(report)
    html = render_link_slices_html(report)
    assert "endpoint degrees are unknown" in html and ALT not in html
    assert ALT not in _risk_section(report)
