"""The HTML of a graph-classifier audit shows leakage by class and by graph size, names
graphs (not nodes), and never draws the node report's degree plot."""

from __future__ import annotations

import numpy as np
import pytest

import graphleaks
from graphleaks.audit.graph_audit import audit_graph_scores_run
from graphleaks.data.graphsets import motif_graphs
from graphleaks.data.score_files import check_scores
from graphleaks.models.graph_classifier import GraphClassifierSpec, fit_graph_classifier
from graphleaks.models.graph_target import batch_graphs
from graphleaks.report.graph_sections import class_keys, is_graph_report, slice_figure
from graphleaks.report.html import render_html
from graphleaks.report.risk_sections import degree_figure

SPEC = GraphClassifierSpec(hidden=16, layers=2, epochs=30, patience=0, batch_size=8)


@pytest.fixture(scope="module")
def graph_report():
    gs = motif_graphs(100, seed=4)
    members, non = np.arange(40), np.arange(40, 80)
    model, _ = fit_graph_classifier(SPEC, [gs[int(i)] for i in members], gs.num_classes,
                                    seed=0)
    report = graphleaks.audit_model(model, gs, members=members, non_members=non, task="graph",
                                    attacks=["graph_confidence_mia"], n_bootstrap=30,
                                    suite="quick", seed=0)
    return gs, model, report


def test_graph_html_has_class_and_size_figures_and_no_degree_plot(graph_report):
    gs, _, report = graph_report
    assert is_graph_report(report)
    keys = class_keys(report)
    assert keys == [f"class={c}" for c in gs.class_names]  # the set's class order
    sizes = [k for k in report.attacks[0].metrics.slices if k.startswith("nodes")]
    assert sizes  # motif graphs of several sizes
    assert degree_figure(report) is None  # graphs have no degree slices: no empty plot
    page = render_html(report)
    assert "Per-graph risk: leakage by class and graph size" in page
    assert 'alt="leakage by class"' in page
    assert 'alt="leakage against graph size"' in page
    assert "leakage against degree" not in page and "Per-node risk" not in page
    assert "most exposed member graphs" in page
    # member counts per class in the tick labels are the slices' own counts
    fig = slice_figure(report, keys, "class", ordered=False)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    counts = [report.attacks[0].metrics.slices[k].n_pos for k in keys]
    assert labels == [f"{c}\n({n} members)" for c, n in zip(gs.class_names, counts,
                                                              strict=True)]


def test_scores_only_graph_html_says_sizes_are_unknown(graph_report):
    gs, model, _ = graph_report
    import torch

    ids = np.arange(80)
    x, ei, b = batch_graphs([gs[int(i)] for i in ids])
    with torch.no_grad():
        post = torch.softmax(model(x, ei, b), 1).numpy()
    ns = check_scores(post, gs.y.numpy()[ids], node_ids=ids, output="probabilities")
    run = audit_graph_scores_run(ns, np.arange(40), np.arange(40, 80), seed=0, n_bootstrap=30,
                                 suite="quick")
    page = render_html(run.report)
    assert "the graph sizes are unknown" in page
    assert 'alt="leakage by class"' in page and "leakage against degree" not in page


def test_slice_figure_draws_only_estimated_slices(graph_report):
    _, _, report = graph_report
    assert slice_figure(report, ["class=no-such-class"], "class") is None
    sizes = [k for k, s in report.attacks[0].metrics.slices.items()
             if k.startswith("nodes") and s.auc is not None]
    fig = slice_figure(report, [*sizes, "nodes>=31"], "graph size")
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == sizes
