"""The edge attacks never reach the truth: only the edge harness holds labelled challenges."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import graphleaks

PACKAGE = Path(graphleaks.__file__).parent / "attacks" / "edge_membership"
HARNESS_ONLY = {"LabelledChallenge", "edge_challenge", "sample_challenge", "SAMPLERS"}


def _violations(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute):
            if node.attr in {"truth", "_truth"}:
                out.append(f"line {node.lineno}: .{node.attr}")
            if path.name != "base.py" and node.attr == "_target":
                out.append(f"line {node.lineno}: ._target (the view's private target)")
        elif isinstance(node, ast.Name) and node.id in HARNESS_ONLY:
            out.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.alias) and node.name in HARNESS_ONLY:
            out.append(f"line {node.lineno}: imports {node.name}")
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in PACKAGE.glob("*.py")
                                        if p.name != "harness.py"))
def test_edge_attack_modules_never_reach_the_truth(name):
    assert _violations(PACKAGE / name) == []


def test_the_scan_finds_a_truth_read(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from graphleaks.attacks.harness import LabelledChallenge\n"
                   "def _score(self, target, challenge, rngs):\n"
                   "    return challenge.truth + target._target.x\n")
    assert len(_violations(bad)) == 3


def test_the_view_serves_no_member_list():
    from graphleaks.attacks.edge_membership import LinkTargetView

    public = {n for n in dir(LinkTargetView) if not n.startswith("_")}
    assert not public & {"members", "non_members", "truth", "labels", "split"}
