"""The audit-owned shadow pool: one shadow per configuration, shared by the shadow attacks."""

import dataclasses

import numpy as np
import torch

import graphleaks.attacks._shadow as shadow_mod
from graphleaks.attacks._shadow import ShadowPool
from graphleaks.audit import run_audit


def _population(trained_target):
    from graphleaks.attacks.base import TargetView
    from graphleaks.attacks.confidence_mia import ConfidenceMIA

    tv = TargetView(trained_target, ConfidenceMIA.threat_model)
    return tv.population()[0], trained_target.spec, trained_target.num_classes




def test_pool_trains_once_per_configuration(trained_target, record_seeds):
    calls = record_seeds(shadow_mod, "train_shadow")
    pop, spec, c = _population(trained_target)
    spec = dataclasses.replace(spec, epochs=5)
    pool = ShadowPool(7)
    a = pool.get(pop, spec, c, 0)
    assert pool.get(pop, spec, c, 0) is a and calls == [pool.seed_of(0)]
    # anything that determines the model is in the key: index (seed), architecture, split
    b = pool.get(pop, spec, c, 1)
    d = pool.get(pop, dataclasses.replace(spec, hidden=(8,)), c, 0)
    e = pool.get(pop, spec, c, 0, member_frac=0.3)
    assert len({id(a), id(b), id(d), id(e)}) == 4 and len(pool) == 4
    np.testing.assert_array_equal(b.members, pool.get(pop, spec, c, 1).members)
    other = pop.clone()
    other.x = other.x + 1.0  # same shape, different content: a different population
    assert pool.get(other, spec, c, 0) is not a
    # the pool's seed fixes the shadow: a fresh pool with the same seed gives the same model
    again = ShadowPool(7).get(pop, spec, c, 0)
    np.testing.assert_array_equal(again.members, a.members)
    x = pop.x
    assert torch.equal(again.model(x, again.edges), a.model(x, a.edges))


def test_audit_shares_one_shadow(trained_target, record_seeds):
    calls = record_seeds(shadow_mod, "train_shadow")
    both = run_audit(trained_target, ["confidence_mia", "shadow_mia"], seed=0, n_bootstrap=20)
    assert len(calls) == 1
    for report in both.attacks:
        assert any("shared within the audit" in n for n in report.notes), report.notes
    # the shared shadow's seed is the audit's, not the co-running attacks': the same seed
    # gives each attack the same result alone as beside the other
    alone = [run_audit(trained_target, [a.attack], seed=0, n_bootstrap=20).attacks[0]
             for a in both.attacks]
    assert len(calls) == 3
    for a, b in zip(both.attacks, alone, strict=True):
        assert a.metrics.binary.auc.value == b.metrics.binary.auc.value
        assert a.notes == b.notes


def test_outside_an_audit_each_attack_trains_its_own(trained_target, record_seeds):
    from graphleaks.attacks.confidence_mia import ConfidenceMIA
    from graphleaks.attacks.harness import run_attack

    calls = record_seeds(shadow_mod, "train_shadow")
    r = run_attack(ConfidenceMIA(), trained_target, seed=0)
    assert len(calls) == 1 and not any("shared" in n for n in r.notes)
