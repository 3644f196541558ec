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


V1 = Path(__file__).parent / "data" / "report_v1.json"


def _edited_v1(auc_ci: tuple[float, float], epsilon: float) -> AuditReport:
    d = json.loads(V1.read_text())
    d["ledger"]["epsilon"] = epsilon
    b = d["attacks"][0]["metrics"]["binary"]
    b["auc"] = {"value": (auc_ci[0] + auc_ci[1]) / 2, "ci": list(auc_ci),
                "method": "percentile-bootstrap"}
    return AuditReport.from_dict(d)


def test_tables_flag_an_auc_interval_below_chance_and_round_the_claimed_epsilon() -> None:
    r = _edited_v1((0.452, 0.492), 0.9999999999994884)  # embedding_cluster's 0.473 case
    md, page, data = render_markdown(r), render_html(r), json.loads(r.to_json())
    assert "| confidence_mia (⚠ miscalibrated) |" in md
    assert "| link_stealing |" in md  # its AUC interval reaches above 0.5: not flagged
    assert 'confidence_mia</b> <span class="badge warn">miscalibrated</span>' in page
    assert "the AUC interval lies entirely below 0.5" in md and \
        "the AUC interval lies entirely below 0.5" in page
    flags = {a["attack"]: a["metrics"]["binary"]["miscalibrated"] for a in data["attacks"]
             if "binary" in a["metrics"]}
    assert flags == {"confidence_mia": True, "link_stealing": False}
    # one display rule: 1 in Markdown and HTML, full precision in report.json
    assert "claimed ε = **1**" in md and "0.99999" not in md and "0.99999" not in page
    assert '<div class="k">claimed ε</div><div class="v">1</div>' in page
    assert data["ledger"]["epsilon"] == 0.9999999999994884
    # the two ε bounds are labelled columns; the TPR@FPR rule is stated under the table
    for text in (md, page):
        assert "sound ε lower bound" in text and "optimistic ε bound" in text
        assert "best real threshold with FPR" in text  # this v1 report's rule


def test_a_new_report_states_the_randomised_tpr_rule(full_report) -> None:
    md, page = render_markdown(full_report), render_html(full_report)
    for text in (md, page):
        assert "inside a group of tied scores" in text and "interpolated along" in text
