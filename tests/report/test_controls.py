"""The control mapping: one table, read by Markdown, HTML, CycloneDX and SARIF."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from graphleaks.report.controls import (
    CONTROLS,
    control_tags,
    controls_for_task,
    coverage,
    render_controls_html,
    render_controls_markdown,
    unmapped_attacks,
)
from graphleaks.report.html import render_html
from graphleaks.report.markdown import render_markdown
from graphleaks.report.report import load_report
from graphleaks.threat import Task

V1 = Path(__file__).parent / "data" / "report_v1.json"


def test_every_task_of_graphleaks_tests_a_control_and_two_nist_classes_are_untested():
    for task in Task:
        assert controls_for_task(task.value), task
        assert "EU-AI-Act-Art-15(5)" in control_tags(task.value)
    assert controls_for_task("membership")[1].ref == "AITG-MOD-04"
    assert {c.ref for c in controls_for_task("attribute")} >= {"AITG-MOD-05",
                                                               "data reconstruction"}
    untested = [c.ref for c in CONTROLS if not c.tasks]
    assert untested == ["property inference", "model extraction"]
    assert len({c.id for c in CONTROLS}) == len(CONTROLS)
    assert all(" " not in c.id for c in CONTROLS)  # ids are SARIF tags


def test_every_registered_attack_is_mapped():
    from graphleaks.attacks import registry

    for name in registry:
        assert controls_for_task(registry.get(name).task.value), name


def test_coverage_of_a_report_names_its_attacks_and_what_is_not_covered():
    report = load_report(V1)  # confidence_mia, attribute_inference, link_stealing
    cov = {c.control.ref: c for c in coverage(report)}
    assert cov["AITG-MOD-04"].attacks == ("confidence_mia",)
    assert cov["AITG-MOD-05"].attacks == ("attribute_inference", "link_stealing")
    assert cov["Art. 15(5)"].status == "partly covered"  # poisoning, evasion untested
    assert "data poisoning" in cov["Art. 15(5)"].text()
    assert cov["model extraction"].status == "not covered"
    # a report of a membership attack only: inversion is not covered *by this report*
    only_mia = dataclasses.replace(report, attacks=report.attacks[:1])
    cov = {c.control.ref: c for c in coverage(only_mia)}
    assert cov["AITG-MOD-05"].status == "not covered"
    assert "ran no attack of task link" in cov["AITG-MOD-05"].why_not


def test_an_attack_of_an_unknown_task_is_listed_as_unmapped():
    report = load_report(V1)
    odd = dataclasses.replace(report.attacks[0], attack="future_attack", task="property")
    report = dataclasses.replace(report, attacks=[*report.attacks, odd])
    assert unmapped_attacks(report) == ["future_attack"]
    assert "future_attack" in "\n".join(render_controls_markdown(report))
    assert "future_attack" in render_controls_html(report)


def test_markdown_and_html_reports_carry_the_table():
    report = load_report(V1)
    md = render_markdown(report)
    assert "## Controls" in md
    for c in CONTROLS:
        assert f"| {c.label} |" in md
    page = render_html(report)
    assert "<h2>Controls</h2>" in page
    for c in CONTROLS:
        assert c.url in page and c.ref in page


def test_the_readme_table_is_this_mapping():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme[readme.index("## Evidence for auditors"):readme.index("## Python API")]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("control", "---"):
            rows[cells[0]] = cells[1]
    assert len(rows) == len(CONTROLS)
    for c in CONTROLS:
        (tasks,) = [t for label, t in rows.items() if label.startswith(c.label)]
        assert tasks == (", ".join(c.tasks) or "none"), c.label
