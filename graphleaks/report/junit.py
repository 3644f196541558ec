"""JUnit XML for the CI privacy gate: one ``<testcase>`` per gate check.

Jenkins, GitLab, GitHub test reporters and most CI systems read this format.

Example:
    >>> from graphleaks.report.regression import GateCheck, GateResult
    >>> c = GateCheck("confidence_mia", "auc", "threshold", 0.6, 0.7, 0.65, (0.6, 0.7),
    ...               False, "crossed")
    >>> xml = to_junit_xml(GateResult((c,), "upper", 1))
    >>> 'failures="1"' in xml
    True
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from graphleaks._io import write_texts_atomically
from graphleaks.report.regression import GateResult


def to_junit_xml(result: GateResult, *, suite: str = "graphleaks-privacy-gate") -> str:
    """The JUnit XML text of a gate result."""
    failures = len(result.failures)
    root = ET.Element("testsuites", name=suite, tests=str(len(result.checks)),
                      failures=str(failures), errors="0")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(result.checks)),
                       failures=str(failures), errors="0", skipped="0")
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", name="bound", value=result.bound)
    ET.SubElement(props, "property", name="report_schema_version",
                  value=str(result.report_schema_version))
    for note in result.notes:
        ET.SubElement(props, "property", name="note", value=note)
    for c in result.checks:
        tc = ET.SubElement(ts, "testcase", classname=f"graphleaks.privacy.{c.attack}",
                           name=f"{c.metric} <= {c.limit:.4g} ({c.kind})", time="0")
        if not c.passed:
            fail = ET.SubElement(tc, "failure", message=c.message, type="PrivacyThreshold")
            fail.text = c.message
        else:
            out = ET.SubElement(tc, "system-out")
            out.text = c.message
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(result: GateResult, path: str | Path, **kwargs: str) -> Path:
    """Write :func:`to_junit_xml` atomically to ``path``."""
    p = Path(path)
    write_texts_atomically({p: to_junit_xml(result, **kwargs)})
    return p
