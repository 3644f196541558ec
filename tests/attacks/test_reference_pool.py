"""The audit-owned reference pool: one offline reference per configuration, shared by RMIA,
BASE and G-BASE."""

import numpy as np
import pytest
import torch

import graphleaks.attacks._references as ref_mod
from graphleaks.attacks._references import SIM_COMPLEMENT, SIM_TARGET, ReferencePool
from graphleaks.audit import run_audit

ATTACKS = ["rmia_mia", "base_mia", "gbase_mia"]




def _view(trained_target, pool=None):
    from graphleaks.attacks.base import TargetView
    from graphleaks.attacks.rmia_mia import RMIAMIA

    return TargetView(trained_target, RMIAMIA.threat_model, references=pool)


def _refs(tv, num, epochs=3, online=False):
    from graphleaks.seeding import Rngs

    cands = np.arange(5, dtype=np.int64)
    return ref_mod.train_references(tv, cands, tv.true_labels(cands), num=num, online=online,
                                    max_epochs=epochs, rngs=Rngs.from_seed(0))


def test_one_audit_trains_each_reference_once(trained_target, record_seeds):
    calls = record_seeds(ref_mod, "train_on_nodes")
    joint = run_audit(trained_target, ATTACKS, seed=0, n_bootstrap=20)
    # all three use the default 2 offline references: one pair, trained once for the audit
    assert len(calls) == 2 and len(set(calls)) == 2
    for report in joint.attacks:
        assert any("shared within the audit" in n for n in report.notes), report.notes
    # the pool's stream is the audit's: each attack alone gets the same result and notes
    for report in joint.attacks:
        alone = run_audit(trained_target, [report.attack], seed=0, n_bootstrap=20).attacks[0]
        assert alone.metrics.binary.auc.value == report.metrics.binary.auc.value
        assert alone.notes == report.notes
    assert len(calls) == 2 + 3 * 2


def test_larger_budget_reuses_the_first_pairs(trained_target, record_seeds):
    calls = record_seeds(ref_mod, "train_on_nodes")
    pool = ReferencePool(3)
    tv = _view(trained_target, pool)
    two = _refs(tv, 2)
    five = _refs(tv, 5)  # odd: pairs 0 and 1, then pair 2's first half only
    assert len(calls) == 5 and len(pool) == 5
    assert all(a is b for a, b in zip(two.models, five.models[:2], strict=True))
    pop = five.population
    for j in range(2):
        first, second = five.members[2 * j], five.members[2 * j + 1]
        # complementary halves of the population
        assert not np.intersect1d(first, second).size
        np.testing.assert_array_equal(np.sort(np.r_[first, second]), np.sort(pop))
    # tune_scale's simulated target (reference 0) and its left-out complement (reference 1)
    assert not np.intersect1d(five.members[SIM_TARGET], five.members[SIM_COMPLEMENT]).size
    assert five.shared_note is not None and five.notes[-1] == five.shared_note


def test_key_separates_models(trained_target, record_seeds):
    import dataclasses

    calls = record_seeds(ref_mod, "train_on_nodes")
    pool = ReferencePool(3)
    tv = _view(trained_target, pool)
    base = _refs(tv, 1)
    assert _refs(tv, 1).models[0] is base.models[0] and len(calls) == 1
    # another epoch cap is another model
    assert _refs(tv, 1, epochs=4).models[0] is not base.models[0]
    # another architecture is another model
    wider = dataclasses.replace(trained_target,
                                spec=dataclasses.replace(trained_target.spec, hidden=(8,)))
    assert _refs(_view(wider, pool), 1).models[0] is not base.models[0]
    # another pool seed gives other halves and seeds
    other = _refs(_view(trained_target, ReferencePool(4)), 1)
    assert not np.array_equal(other.members[0], base.members[0])
    assert len(calls) == 4


def test_key_covers_population_and_mechanism(trained_target):
    pool = ReferencePool(3)
    tv = _view(trained_target, pool)
    from graphleaks.attacks._shadow import KnownMechanism

    population, aux = tv.population()
    labels = torch.zeros(tv.num_nodes, dtype=torch.long)
    src = ref_mod._Sources(population, np.asarray(aux), tv.features(), tv.query_edges(), labels,
                           trained_target.spec, trained_target.num_classes, None, None, 3,
                           tv.num_nodes)
    import dataclasses

    other_pop = population.clone()
    other_pop.x = other_pop.x + 1.0
    keys = {src.key(),
            dataclasses.replace(src, population=other_pop).key(),
            dataclasses.replace(src, aux=src.aux[:-1]).key(),
            dataclasses.replace(src, num_classes=src.num_classes + 1).key(),
            dataclasses.replace(src, mechanism=KnownMechanism("lpgnet", {"epsilon": 1.0})).key(),
            dataclasses.replace(src, mechanism=KnownMechanism("lpgnet", {"epsilon": 2.0})).key(),
            dataclasses.replace(src, edges=src.edges[:, :-2]).key()}
    assert len(keys) == 7


def test_outside_an_audit_each_attack_trains_its_own(trained_target, record_seeds):
    from graphleaks.attacks.harness import run_attack
    from graphleaks.attacks.rmia_mia import RMIAMIA

    calls = record_seeds(ref_mod, "train_on_nodes")
    r = run_attack(RMIAMIA(num_references=2, ref_epochs=3), trained_target, seed=0)
    assert len(calls) == 2 and not any("shared" in n for n in r.notes)
    run_attack(RMIAMIA(num_references=2, ref_epochs=3), trained_target, seed=0)
    assert len(calls) == 4


@pytest.mark.parametrize("attack", ATTACKS)
def test_online_references_are_never_pooled(trained_target, record_seeds, attack):
    calls = record_seeds(ref_mod, "train_on_nodes")
    pool = ReferencePool(3)
    tv = _view(trained_target, pool)
    first = _refs(tv, 2, online=True)
    second = _refs(tv, 2, online=True)
    assert len(calls) == 4 and len(pool) == 0
    assert first.shared_note is None and first.models[0] is not second.models[0]
    overrides = {attack: {"variant": "online", "num_references": 2, "ref_epochs": 3}}
    from graphleaks.audit.suite import Suite

    report = run_audit(trained_target, [attack], seed=0, n_bootstrap=20,
                       suite=Suite("t", 20, overrides, "test"))
    assert not any("shared within the audit" in n for n in report.attacks[0].notes)


def test_tuned_scale_with_pooled_odd_budget(trained_target, record_seeds):
    from graphleaks.audit.suite import Suite

    calls = record_seeds(ref_mod, "train_on_nodes")
    cfg = {"num_references": 3, "ref_epochs": 3, "tune_scale": True}
    suite = Suite("t", 20, {"base_mia": cfg, "gbase_mia": {**cfg, "num_samples": 2}}, "test")
    joint = run_audit(trained_target, ["base_mia", "gbase_mia"], seed=0, suite=suite)
    # pair 0 and pair 1's first half, shared: 3 trainings for both attacks
    assert len(calls) == 3
    for report in joint.attacks:
        assert any("tuned: simulated-target AUC" in n for n in report.notes), report.notes
        assert any("shared within the audit" in n for n in report.notes)
