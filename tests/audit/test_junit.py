"""JUnit XML output of the privacy gate."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from graphleaks.audit.junit import to_junit_xml, write_junit
from graphleaks.audit.regression import check_report
from graphleaks.audit.spec import GateSpec, Threshold

REPORT = {"schema_version": 1, "attacks": [{"attack": "confidence_mia", "metrics": {
    "binary": {"auc": {"value": 0.7, "ci": [0.65, 0.75]},
               "tpr_at_fpr": {"0.01": {"value": 0.05, "ci": [0.0, 0.1]}}}}}]}


def test_one_testcase_per_check(tmp_path):
    gate = GateSpec(thresholds=(Threshold("auc", 0.6), Threshold("tpr@1%fpr", 0.5)))
    res = check_report(REPORT, gate)
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
