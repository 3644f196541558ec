"""The truth boundary is structural: an attack cannot read the labels it is scored against.

The harness samples every challenge from the attack's declared spec and keeps the truth;
``_score`` gets a :class:`Challenge`, which has no truth field, and no attack module may
reach the truth (the harness's labelled challenges, the private edges, the target's split).
"""

import ast
import dataclasses
import re
import typing
from pathlib import Path

import numpy as np
import pytest

import graphleaks
from graphleaks.attacks import registry
from graphleaks.attacks.base import Attack, Challenge, Task
from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.attacks.harness import SAMPLERS, LabelledChallenge, run_attack, sample_challenge
from graphleaks.errors import InvalidConfigError

PACKAGE = Path(graphleaks.__file__).parent
ATTACKS = PACKAGE / "attacks"
# What only the harness may touch: its labelled challenges and the truth of each task.
HARNESS_ONLY = {"LabelledChallenge", "sample_challenge", "private_edges", "membership_challenge",
                "link_challenge", "sample_link_challenge", "SAMPLERS"}
SPLIT_PARTS = {"members", "nonmembers", "train", "val", "test", "aux", "training_edges"}


def test_challenge_has_no_truth():
    names = {f.name for f in dataclasses.fields(Challenge)}
    assert names == {"task", "candidates", "hints", "notes"}
    ch = Challenge(task=Task.MEMBERSHIP, candidates=np.arange(4))
    assert not any("truth" in a or "label" in a for a in dir(ch))


def test_no_module_holds_a_private_truth_field():
    # The truth used to ride on Challenge as ``_truth``; now only the harness holds it.
    holders = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
               if re.search(r"\b_truth\b", p.read_text(encoding="utf-8"))]
    assert holders == []


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    # base.py defines TargetView, which serves the target (and the auxiliary nodes of its
    # split) as the threat model grants.
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in {"truth", "_truth"}:
                out.append(f"line {node.lineno}: .{node.attr}")
            if path.name != "base.py" and node.attr == "_target":
                out.append(f"line {node.lineno}: ._target (the view's private target)")
            if (path.name != "base.py" and node.attr in SPLIT_PARTS
                    and isinstance(node.value, ast.Attribute)
                    and node.value.attr == "split"):
                out.append(f"line {node.lineno}: .split.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in HARNESS_ONLY:
            out.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.alias) and node.name in HARNESS_ONLY:
            out.append(f"line {node.lineno}: imports {node.name}")
    return out


@pytest.mark.parametrize("path", sorted(p.name for p in ATTACKS.glob("*.py")
                                        if p.name != "harness.py"))
def test_attack_modules_never_reach_the_truth(path):
    assert _violations(ATTACKS / path) == []


def test_attribute_override_reaches_only_the_spec():
    # AttributeInference(attribute=...) holds the values to infer, i.e. the truth: only
    # challenge_spec may read them, to hand them to the harness.
    tree = ast.parse((ATTACKS / "attribute_inference.py").read_text(encoding="utf-8"))
    readers = {fn.name for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
               for node in ast.walk(fn)
               if isinstance(node, ast.Attribute) and node.attr == "attribute"
               and isinstance(node.value, ast.Name) and node.value.id == "self"}
    assert readers == {"__init__", "challenge_spec"}


def test_the_scan_finds_a_truth_read(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from graphleaks.attacks.harness import LabelledChallenge\n"
                   "def _score(self, target, challenge, rngs):\n"
                   "    return challenge.truth + target._target.split.members\n")
    found = _violations(bad)
    assert len(found) == 4, found


@pytest.mark.parametrize("name", sorted(registry))
def test_every_attack_declares_a_spec_the_harness_samples(name):
    attack = registry.get(name)()
    spec = attack.challenge_spec()
    assert type(spec) in SAMPLERS and spec.task == attack.task
    hints = typing.get_type_hints(type(attack)._score)
    assert hints["challenge"] is Challenge


def test_score_receives_a_challenge_without_truth(trained_target):
    seen = []

    class Spy(ConfidenceMIA):
        def _score(self, target, challenge, rngs):
            seen.append(challenge)
            return super()._score(target, challenge, rngs)

    r = run_attack(Spy(threshold="none"), trained_target, seed=0)
    assert type(seen[0]) is Challenge
    lc = sample_challenge(Spy(threshold="none"), trained_target, seed=0)
    assert isinstance(lc, LabelledChallenge)
    # The truth reaches the result only through the harness, after scoring.
    assert r.labels.sum() * 2 == len(r.labels)


def test_spec_for_another_task_or_unknown_spec_is_refused(trained_target):
    from graphleaks.attacks.base import NodePairsSpec

    class Confused(ConfidenceMIA):
        def challenge_spec(self):  # type: ignore[override]
            return NodePairsSpec(n_nodes=10)

    with pytest.raises(InvalidConfigError, match="spec NodePairsSpec is for link"):
        sample_challenge(Confused(), trained_target, seed=0)

    class Odd(ConfidenceMIA):
        def challenge_spec(self):  # type: ignore[override]
            return object()

    with pytest.raises(InvalidConfigError, match="cannot sample"):
        sample_challenge(Odd(), trained_target, seed=0)


def test_known_edge_hints_need_graph_knowledge(trained_target):
    from graphleaks.attacks.link_stealing import LinkStealingAttack

    attack = LinkStealingAttack(attack=3)
    attack.threat_model = dataclasses.replace(attack.threat_model, graph_knowledge="none")
    with pytest.raises(InvalidConfigError, match="graph knowledge"):
        sample_challenge(attack, trained_target, seed=0)


def test_labelled_challenge_needs_one_label_per_candidate():
    with pytest.raises(InvalidConfigError, match="3 candidates"):
        LabelledChallenge(Challenge(task=Task.MEMBERSHIP, candidates=np.arange(3)),
                          np.zeros(2))


def test_attack_subclass_needs_no_sampling_code():
    # A membership attack defines _score only; the default spec is the harness's.
    assert "challenge_spec" not in ConfidenceMIA.__dict__
    assert Attack.challenge_spec is ConfidenceMIA.challenge_spec
