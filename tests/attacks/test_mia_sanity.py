"""Negative controls for every registered attack, by task: no signal where there is none.

The attack lists come from the registry, so an attack joins these controls by registering
(one module and its own test file). Budgets come from :data:`CONTROLS`, a suite whose ``"*"``
overrides apply to any attack whose config has the field; an attack it does not know runs
with its defaults.

Membership:
* A target trained on randomly permuted labels with early stopping on validation accuracy
  learns nothing transferable and stops almost at once, so it carries no membership signal.
* A "membership" split drawn from the same nodes (all non-members, labelled at random) has no
  signal whatever the target: any AUC away from 0.5 would mean the attack leaks labels.

Link: the attack's own sampled challenge, keeping only its non-edges (per-candidate hints
kept alongside), half of them labelled "edge" at random. An AUC away from 0.5 means the
attack leaks labels. (Labelling the first half instead, as the harness orders positives,
would not do: pairs among a node sample are ordered by node, and scores legitimately differ
by node.)

Attribute: the permuted labels of the random-label target are independent of the graph, so
no embedding release reveals them.
"""

import dataclasses

import numpy as np
import pytest
import torch

from graphleaks.attacks import registry
from graphleaks.attacks.base import Challenge, Task
from graphleaks.attacks.harness import LabelledChallenge, run_attack, sample_challenge
from graphleaks.attacks.shadow_mia import ShadowMIA
from graphleaks.audit.runner import train_target
from graphleaks.audit.suite import Suite, build_attack
from graphleaks.data.splits import SplitConfig
from graphleaks.metrics import binary_metrics
from graphleaks.metrics.multiclass import multiclass_metrics
from graphleaks.models.gnn import ArchitectureSpec

CONTROLS = Suite("controls", 300, {
    "*": {"num_references": 2, "ref_epochs": 20, "num_samples": 2, "num_queries": 16,
          "ae_epochs": 100, "kmeans_init": 2, "n_nodes": 40, "max_epochs": 100,
          "n_subgraphs": 2, "subgraph_size": 30, "walks_per_node": 3, "walk_length": 20},
    "confidence_mia": {"threshold": "none"},
    "shadow_mia": {"classifier": "logreg"},
    "link_stealing": {"epochs": 5, "eval_fraction": 0.5},
    "lira_mia": {"num_references": 8},
})

#: Variants beyond each attack's default config, for protocols the default does not reach.
VARIANTS: dict[Task, list[tuple[str, dict[str, object]]]] = {
    Task.MEMBERSHIP: [("rmia_mia", {"variant": "online"})],
    Task.LINK: [("link_stealing", {"attack": 3})],  # the known-pairs hints
}


def _cases(task: Task) -> list[tuple[str, dict[str, object]]]:
    names = sorted(n for n in registry if registry.get(n).task == task)
    extra = [(n, p) for n, p in VARIANTS.get(task, []) if n in names]
    return [(n, {}) for n in names] + extra


def _ids(cases: list[tuple[str, dict[str, object]]]) -> list[str]:
    return [n + "".join(f"-{k}={v}" for k, v in p.items()) for n, p in cases]


MEMBERSHIP = _cases(Task.MEMBERSHIP)
LINK = _cases(Task.LINK)
ATTRIBUTE = _cases(Task.ATTRIBUTE)


def test_every_registered_attack_has_a_control():
    covered = {n for n, _ in MEMBERSHIP + LINK + ATTRIBUTE}
    assert covered == set(registry), "a task without negative controls: add them here"


@pytest.fixture(scope="module")
def random_label_target(small_graph):
    g = small_graph.clone()
    perm = torch.from_numpy(np.random.default_rng(0).permutation(g.num_nodes))
    g.y = g.y[perm]
    spec = ArchitectureSpec(hidden=(32,), epochs=100, patience=10)
    return train_target(g, spec=spec, seed=0,
                        split=SplitConfig(train_frac=0.3, val_frac=0.1, test_frac=0.3))


def _assert_no_signal(r, name):
    m = binary_metrics(r.scores, r.labels, n_bootstrap=300, seed=0)
    assert m.auc.lo <= 0.5 <= m.auc.hi, (name, m.auc.lo, m.auc.hi)


def test_the_controls_catch_a_leak(trained_target):
    # An attack that knew the labels (here smuggled in by the test) fails every control.
    from graphleaks.attacks.base import AttackScores
    from graphleaks.attacks.confidence_mia import ConfidenceMIA

    lc = _non_edges_only(LabelledChallenge(
        Challenge(task=Task.MEMBERSHIP, candidates=np.arange(100)), np.zeros(100, np.int64)))

    class Cheat(ConfidenceMIA):  # unregistered: it defines no name of its own
        def _score(self, target, challenge, rngs):
            return AttackScores(lc.truth + 0.1 * rngs.numpy.random(len(lc.truth)))

    r = run_attack(Cheat(threshold="none"), trained_target, seed=0, challenge=lc)
    with pytest.raises(AssertionError):
        _assert_no_signal(r, "cheat")


@pytest.mark.parametrize(("name", "params"), MEMBERSHIP, ids=_ids(MEMBERSHIP))
def test_random_label_target_has_no_signal(random_label_target, name, params):
    r = run_attack(build_attack(name, CONTROLS, params), random_label_target, seed=0)
    _assert_no_signal(r, name)


@pytest.mark.parametrize(("name", "params"), MEMBERSHIP, ids=_ids(MEMBERSHIP))
def test_same_node_split_has_no_signal(trained_target, name, params):
    rng = np.random.default_rng(1)
    pool = rng.permutation(np.concatenate([trained_target.split.nonmembers,
                                           trained_target.split.val]))
    cands = np.sort(pool[:-10])
    truth = np.zeros(len(cands), dtype=np.int64)
    truth[rng.permutation(len(cands))[: len(cands) // 2]] = 1
    ch = LabelledChallenge(
        Challenge(task=Task.MEMBERSHIP, candidates=cands,
                  hints={"known_members": pool[-10:-5], "known_nonmembers": pool[-5:]}),
        truth)
    r = run_attack(build_attack(name, CONTROLS, params), trained_target, seed=0, challenge=ch)
    _assert_no_signal(r, name)


def _non_edges_only(lc: LabelledChallenge) -> LabelledChallenge:
    keep = lc.truth == 0
    n = len(lc.truth)
    ch = lc.challenge
    # Per-candidate hints (one row per candidate, e.g. TIA's subgraph ids) follow the filter.
    hints = {k: (np.asarray(v)[keep] if len(v) == n else v) for k, v in ch.hints.items()}
    m = int(keep.sum())
    truth = np.zeros(m, dtype=np.int64)
    truth[np.random.default_rng(1).permutation(m)[: m // 2]] = 1
    return LabelledChallenge(dataclasses.replace(ch, candidates=ch.candidates[keep],
                                                 hints=hints), truth)


@pytest.mark.parametrize(("name", "params"), LINK, ids=_ids(LINK))
def test_non_edges_labelled_as_edges_have_no_signal(trained_target, name, params):
    attack = build_attack(name, CONTROLS, params)
    lc = _non_edges_only(sample_challenge(attack, trained_target, seed=0))
    assert len(lc.truth) >= 40
    r = run_attack(attack, trained_target, seed=0, challenge=lc)
    _assert_no_signal(r, name)


@pytest.mark.parametrize(("name", "params"), ATTRIBUTE, ids=_ids(ATTRIBUTE))
def test_attribute_independent_of_the_graph_does_not_leak(random_label_target, name, params):
    r = run_attack(build_attack(name, CONTROLS, params), random_label_target, seed=0)
    m = multiclass_metrics(r.labels, r.scores, y_train=r.train_labels, n_bootstrap=300, seed=0)
    assert not m.leaks, (name, m.accuracy, m.majority_baseline)


def test_protocol_knobs_recorded(trained_target):
    r = run_attack(ShadowMIA(classifier="logreg"), trained_target, seed=0)
    assert r.query_graph == "target"
    cfg = r.config
    assert {"balanced", "posterior", "top_k"} <= set(cfg)
    assert dataclasses.asdict(ShadowMIA().config)["compat_duddu_protocol"] is False
