"""Reports are type-checked on load; unknown schema versions are refused, never gated."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from graphleaks.report.report import REPORT_SCHEMA_VERSION


def _good():
    """A fresh copy of the minimal valid report."""
    return json.loads(json.dumps(sys.modules["graphleaks_hostile_corpus"].MINIMAL_REPORT))


GOOD = _good()


def _write(hostile, report, name="report.json"):
    path = hostile.root / name
    path.write_text(json.dumps(report))
    return path


def test_the_good_report_passes(hostile):
    r = hostile.run("check", _write(hostile, GOOD), "--max", "auc=0.9")
    assert r.exit_code == 0, r.stderr


def test_newer_schema_is_refused_naming_both_versions(hostile):
    line = hostile.refused("check", _write(hostile, {**GOOD, "schema_version": 99}),
                           "--max", "auc=0.9")
    assert "99" in line and f"version {REPORT_SCHEMA_VERSION}" in line


@pytest.mark.parametrize("value", ["1", "one", 1.0, True, None, [1], 0])
def test_schema_version_must_be_an_integer(hostile, value):
    hostile.refused("check", _write(hostile, {**GOOD, "schema_version": value}),
                    "--max", "auc=0.9", match="schema_version")


def test_baseline_of_a_newer_schema(hostile):
    base = _write(hostile, {**GOOD, "schema_version": REPORT_SCHEMA_VERSION + 1}, "base.json")
    hostile.refused("check", _write(hostile, GOOD), "--baseline", base, match="baseline")


@pytest.mark.parametrize("edit", [
    lambda r: r.__setitem__("attacks", {"a": 1}),
    lambda r: r.__setitem__("attacks", ["x"]),
    lambda r: r["attacks"][0].__setitem__("attack", 3),
    lambda r: r["attacks"][0].__setitem__("metrics", []),
    lambda r: r["attacks"][0]["metrics"]["binary"].__setitem__("auc", {"value": "high"}),
    lambda r: r["attacks"][0]["metrics"]["binary"].__setitem__("auc", {"value": 0.5,
                                                                       "ci": [1]}),
    lambda r: r["attacks"][0]["metrics"]["binary"].__setitem__("auc", {"value": [0.5]}),
    lambda r: r.__setitem__("target", None),
    lambda r: r["target"].__setitem__("num_nodes", "2"),
    lambda r: r.__setitem__("seed", "0"),
    lambda r: r.pop("ledger"),
])
def test_report_fields_are_type_checked(hostile, edit):
    report = _good()
    edit(report)
    hostile.refused("check", _write(hostile, report), "--max", "auc=0.9")


def test_report_content_is_never_quoted(hostile):
    path = hostile.root / "report.json"
    path.write_text("root:x:0:0:SECRET-LINE\n")
    hostile.refused("check", path, "--max", "auc=0.9", absent=("SECRET",))


def test_runner_reads_the_one_schema_constant():
    from graphleaks.audit import runner

    assert runner.REPORT_SCHEMA_VERSION is REPORT_SCHEMA_VERSION


def test_no_non_members_is_refused(graph):
    from graphleaks.audit.runner import check_trainable
    from graphleaks.data.splits import MembershipSplit
    from graphleaks.errors import DataError

    n = graph.num_nodes
    split = MembershipSplit(kind="inductive", num_nodes=n, seed=0,
                            train=np.arange(0, 30), val=np.arange(30, 40),
                            test=np.array([], dtype=np.int64), aux=np.arange(40, n))
    with pytest.raises(DataError, match="non-members"):
        check_trainable(graph, split)
