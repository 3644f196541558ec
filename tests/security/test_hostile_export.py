"""``graphleaks export`` refuses bad input in one ``error:`` line, exit 2, writing nothing.

A missing or foreign report, an output file graphleaks did not write (even one that
mentions graphleaks), a link, an unknown gate metric, gate options without ``--sarif`` and
the missing ``evidence`` extra: every refusal leaves the folder byte-for-byte unchanged.
"""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("cyclonedx.validation.json", reason="needs graphleaks[evidence]")


def test_no_output_asked(hostile):
    report = hostile.report(hostile.root)
    hostile.refused("export", report, match="--cyclonedx FILE, --sarif FILE")


def test_missing_and_foreign_reports(hostile):
    hostile.refused("export", hostile.root / "nope.json", "--sarif", "g.sarif",
                    match="does not exist")
    other = hostile.root / "sbom.json"
    other.write_text(json.dumps({"bomFormat": "CycloneDX", "kind": "graphleaks"}))
    hostile.refused("export", other, "--cyclonedx", "b.json", "--sarif", "g.sarif",
                    match="not a graphleaks audit report", absent=("CycloneDX",))


@pytest.mark.parametrize("flag", ["--cyclonedx", "--sarif"])
def test_a_file_graphleaks_did_not_write_is_never_replaced(hostile, flag):
    report = hostile.report(hostile.root)
    # another tool's file that names graphleaks, but not at the place graphleaks writes it
    foreign = hostile.root / "evidence.json"
    foreign.write_text(json.dumps({"$schema": "x", "version": "2.1.0", "runs": [
        {"tool": {"driver": {"name": "codeql", "rules": [{"id": "graphleaks"}]}}}]},
        indent=2))
    other = "--sarif" if flag == "--cyclonedx" else "--cyclonedx"
    hostile.refused("export", report, flag, foreign, other, "fresh.json",
                    match="was not written by graphleaks")


def test_links_are_refused(hostile):
    report = hostile.report(hostile.root)
    os.symlink(hostile.root / "elsewhere.sarif", hostile.root / "link.sarif")
    hostile.refused("export", report, "--sarif", "link.sarif", match="symbolic link")


@pytest.mark.parametrize(("args", "match"), [
    (("--max", "aucc=0.5"), "unknown metric"),
    (("--max", "auc=1.5"), "[0, 1]"),
    (("--max", "shadow_mia[degree<=2].auc=0.5"), "not in the report"),
    (("--tolerance", "0.1"), "nothing to gate"),
    (("--bound", "mid", "--max", "auc=0.5"), "--bound"),
])
def test_bad_gate_options_write_neither_file(hostile, args, match):
    report = hostile.report(hostile.root)
    hostile.refused("export", report, "--cyclonedx", "b.json", "--sarif", "g.sarif", *args,
                    match=match)


def test_gate_options_need_sarif_and_the_two_files_differ(hostile):
    report = hostile.report(hostile.root)
    hostile.refused("export", report, "--cyclonedx", "b.json", "--max", "auc=0.5",
                    match="add --sarif FILE")
    hostile.refused("export", report, "--cyclonedx", "x.json", "--sarif", "x.json",
                    match="different files")


def test_cyclonedx_without_the_extra_names_it(hostile, monkeypatch):
    import graphleaks.report.mlbom as mlbom

    monkeypatch.setattr(mlbom, "validator_available", lambda: False)
    report = hostile.report(hostile.root)
    hostile.refused("export", report, "--cyclonedx", "b.json", "--sarif", "g.sarif",
                    match="pip install 'graphleaks[evidence]'")
