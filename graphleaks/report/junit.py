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

from graphleaks._outputs import (
    XML_DECLARATION,
    XML_GENERATOR,
    OutputFile,
    is_junit_xml,
    publish_files,
)
from graphleaks.report.regression import GateResult


def to_junit_xml(result: GateResult, *, suite: str = "graphleaks-privacy-gate") -> str:
    """The JUnit XML text of a gate result."""
    failures = len(result.failures)
    skipped = sum(not c.gated for c in result.checks)
    root = ET.Element("testsuites", name=suite, tests=str(len(result.checks)),
                      failures=str(failures), errors="0")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(result.checks)),
                       failures=str(failures), errors="0", skipped=str(skipped))
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", name="bound", value=result.bound)
    ET.SubElement(props, "property", name="report_schema_version",
                  value=str(result.report_schema_version))
    for note in result.notes:
        ET.SubElement(props, "property", name="note", value=note)
    for c in result.checks:
        tc = ET.SubElement(ts, "testcase", classname=f"graphleaks.privacy.{c.attack}",
                           name=f"{c.metric} <= {c.limit:.4g} ({c.kind})", time="0")
        if not c.gated:  # too few positives or negatives to grade
            ET.SubElement(tc, "skipped", message=c.message)
        elif not c.passed:
            fail = ET.SubElement(tc, "failure", message=c.message, type="PrivacyThreshold")
            fail.text = c.message
        else:
            out = ET.SubElement(tc, "system-out")
            out.text = c.message
    ET.indent(root)
    # with the default suite name the text starts with JUNIT_HEAD: declaration, generator
    # comment, root element; that is how a rerun recognises the file as its own
    return XML_DECLARATION + XML_GENERATOR + "\n" + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(result: GateResult, path: str | Path, *, flag: str = "path",
                **kwargs: str) -> Path:
    """Write :func:`to_junit_xml` atomically to ``path``.

    An existing file is replaced only when it is the gate's own JUnit XML; a link is never
    written through (:func:`graphleaks._outputs.check_output_file`).

    Raises:
        InvalidConfigError: If ``path`` is a link or someone else's file (``flag`` names it).
    """
    p = Path(path)
    publish_files([OutputFile(p, flag, to_junit_xml(result, **kwargs), is_junit_xml)])
    return p
