"""JUnit XML output of the privacy gate."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from graphleaks.report.gates import GateSpec, Threshold
from graphleaks.report.junit import to_junit_xml, write_junit
from graphleaks.report.regression import check_report
from graphleaks.report.report import load_report

V1 = Path(__file__).parent / "data" / "report_v1.json"


def test_one_testcase_per_check(tmp_path):
    # confidence_mia of the committed report: AUC 0.674 [0.404, 0.859], TPR@1%FPR <= 0.481
    gate = GateSpec(thresholds=(Threshold("auc", 0.6, "confidence_mia"),
                                Threshold("tpr@1%fpr", 0.5, "confidence_mia")))
    res = check_report(load_report(V1), gate)
    path = write_junit(res, tmp_path / "sub" / "gate.xml")
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert len(cases) == 2
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 1 and failed[0].get("classname") == "graphleaks.privacy.confidence_mia"
    assert "auc" in failed[0].find("failure").get("message")
    assert to_junit_xml(res).startswith("<?xml")
