"""Every report writer handles every metric kind: an audit of every registered attack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphleaks.attacks import registry as attack_registry
from graphleaks.audit.runner import run_audit, train_target
from graphleaks.data.synthetic import csbm
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.report.html import render_html
from graphleaks.report.markdown import render_markdown
from graphleaks.report.report import AuditReport, load_report
from graphleaks.report.writers import write_report


@pytest.fixture(scope="module")
def full_report():  # noqa: ANN201 - an AuditReport
    graph = csbm(80, num_classes=3, num_features=8, feature_signal=1.0, avg_degree=4, seed=3)
    target = train_target(graph, spec=ArchitectureSpec(hidden=(16,), epochs=20, patience=0),
                          seed=0, dataset={"name": "synthetic-test"})
    return run_audit(target, attack_registry.names(), seed=0, n_bootstrap=20)


def test_every_attack_is_in_every_writer(full_report, tmp_path) -> None:
    kinds = {k for a in full_report.attacks for k in a.metrics.kinds}
    assert kinds == {"binary", "multiclass"}  # both kinds really reach the writers
    json_path, md_path = write_report(full_report, tmp_path)
    data = load_report(json_path)
    markdown = md_path.read_text()
    html = render_html(data)
    for name in attack_registry.names():
        assert name in markdown and name in html
        assert any(a.attack == name for a in data.attacks)
    json.loads(json_path.read_text())


def test_markdown_lists_an_unknown_metric_kind() -> None:
    # a report written by a newer producer with a metric kind this one has no record for
    d = json.loads((Path(__file__).parent / "data" / "report_v1.json").read_text())
    d["attacks"] = [{**d["attacks"][0], "attack": "future_attack",
                     "metrics": {"ranking": {"p@k": 1.0}}}]
    report = AuditReport.from_dict(d)
    assert report.attacks[0].metrics.kinds == ("ranking",)
    text = render_markdown(report)
    assert "future_attack" in text and "ranking" in text


def test_markdown_names_the_interval_method_of_each_metric(full_report, tmp_path) -> None:
    _, md_path = write_report(full_report, tmp_path)
    text = md_path.read_text()
    assert "interval methods of confidence_mia: " in text
    assert "percentile-bootstrap: " in text and "auc" in text
