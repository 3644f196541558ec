"""The default audit: every registered attack, all report files, verdict first."""

from __future__ import annotations

import json

import pytest

from graphleaks.attacks import registry
from graphleaks.attacks.base import Output
from graphleaks.audit.runner import audit_with_scores
from graphleaks.audit.suite import SUITES, applicable_attacks, build_attack, get_suite
from graphleaks.errors import InvalidConfigError
from graphleaks.report.scores import CSV_COLUMNS
from graphleaks.report.writers import write_report


@pytest.fixture(scope="module")
def audit_dir(trained_target, tmp_path_factory):  # noqa: ANN001, ANN201
    run = audit_with_scores(trained_target, seed=0, suite="quick", n_bootstrap=50)
    out = tmp_path_factory.mktemp("audit")
    write_report(run.report, out, html=True, scores=run.tables)
    return out


def test_every_registered_attack_in_all_three_files(audit_dir):
    data = json.loads((audit_dir / "report.json").read_text())
    md = (audit_dir / "report.md").read_text()
    page = (audit_dir / "report.html").read_text()
    assert [a["attack"] for a in data["attacks"]] == list(registry)
    for name in registry:
        assert name in md and name in page
    # the verdict comes before the target description in both renderings
    assert md.index("## Verdict") < md.index("Target:") < md.index("## Attacks")
    assert page.index("<h2>Verdict</h2>") < page.index("<h2>Target</h2>")
    for risk in ("membership", "edges", "attributes", "reconstruction"):
        assert f"| {risk} | **" in md
    # attribute inference attacked the simulated DeepWalk release: its own attributes line
    assert [v["risk"] for v in data["verdict"] if v["risk"] != "target"] == [
        "membership", "edges", "attributes", "attributes", "reconstruction"]
    assert [v["artefact"] for v in data["verdict"] if v["risk"] == "attributes"] == [
        None, "DeepWalk release of the graph, not the model"]


def test_labels_say_what_candidates_are_and_baseline_is_an_accuracy(audit_dir):
    data = json.loads((audit_dir / "report.json").read_text())
    md = (audit_dir / "report.md").read_text()
    assert "members / non-members |" not in md  # the old unlabelled column header
    by = {a["attack"]: a for a in data["attacks"]}
    assert "edges /" in md and "non-edges" in md and "nodes with known / unknown attribute" in md
    base = by["attribute_inference"]["baseline"]["accuracy"]
    assert 0.0 <= base <= 1.0
    assert base == pytest.approx(by["attribute_inference"]["metrics"]["multiclass"]
                                 ["majority_baseline"], abs=0.2)


def test_scores_csv_has_every_candidate_with_ids_or_endpoints(audit_dir):
    data = json.loads((audit_dir / "report.json").read_text())
    lines = (audit_dir / "scores.csv").read_text().splitlines()
    assert tuple(lines[0].split(",")) == CSV_COLUMNS
    rows = [dict(zip(CSV_COLUMNS, ln.split(","), strict=True)) for ln in lines[1:]]
    for a in data["attacks"]:
        mine = [r for r in rows if r["attack"] == a["attack"]]
        if "binary" in a["metrics"]:
            b = a["metrics"]["binary"]
            assert len(mine) == b["n_pos"] + b["n_neg"]
        pairs = a["task"] == "link"
        assert all((r["src"] != "" and r["dst"] != "") == pairs for r in mine)
        assert all((r["node"] != "") == (not pairs) for r in mine)


def test_slices_with_intervals_in_report(audit_dir):
    data = json.loads((audit_dir / "report.json").read_text())
    sl = next(a for a in data["attacks"] if a["attack"] == "confidence_mia")["metrics"]["slices"]
    assert {"degree<=2", "degree=3-5", "degree=6-10", "degree>=11"} <= set(sl)
    measured = [s for s in sl.values() if not s.get("too_few")]
    assert measured
    for s in measured:
        lo, hi = s["binary"]["auc"]["ci"]
        assert lo <= s["binary"]["auc"]["value"] <= hi
    page = (audit_dir / "report.html").read_text()
    assert "Per-node risk" in page and "most exposed" in page


def test_suite_budgets_apply_only_to_fields_an_attack_has():
    assert build_attack("lira_mia", get_suite("quick")).config.num_references == 2
    assert build_attack("lira_mia", get_suite("thorough")).config.num_references == 16
    # user parameters win over the suite
    assert build_attack("lira_mia", get_suite("quick"), {"num_references": 4}) \
        .config.num_references == 4
    assert build_attack("link_stealing", SUITES["quick"]).config == \
        registry.get("link_stealing").Config()


def test_unknown_suite_names_the_choices():
    with pytest.raises(InvalidConfigError, match="quick, standard, thorough"):
        get_suite("fast")


def test_exposure_restricts_the_default_suite():
    names = applicable_attacks(frozenset({Output.POSTERIORS}))
    assert "confidence_mia" in names and "graph_reconstruction" not in names
