import numpy as np
import pytest

from graphleaks.attacks import Output, registry
from graphleaks.attacks.base import Attack
from graphleaks.attacks.capabilities import (
    ALL_CAPABILITIES,
    Capability,
    derived_needs,
    narrowed_threat_model,
    partition,
    target_capabilities,
)
from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.audit.runner import run_audit
from graphleaks.audit.scores_only import TARGET_KIND, audit_scores, scores_target
from graphleaks.data.score_files import check_scores
from graphleaks.errors import CapabilityError

NAMES = list(registry)


@pytest.mark.parametrize("name", NAMES)
def test_needs_cover_the_outputs_an_attack_requires(name):
    attack = registry.get(name)()
    assert {Capability.of_output(o) for o in attack.requires} <= attack.needs()
    assert attack.needs()  # every attack needs something


@pytest.mark.parametrize("name", NAMES)
def test_narrowing_keeps_the_declared_threat_model_of_attacks_using_it_all(name):
    attack = registry.get(name)()
    if type(attack).needs is not Attack.needs:
        pytest.skip("declares its own needs")
    assert narrowed_threat_model(attack.threat_model, attack.needs()) == attack.threat_model


def test_confidence_mia_needs_follow_its_config():
    assert ConfidenceMIA().needs() >= {Capability.REFERENCE_MODELS, Capability.ARCHITECTURE}
    assert ConfidenceMIA(threshold="median").needs() == {Capability.POSTERIORS,
                                                         Capability.TRUE_LABELS}
    assert ConfidenceMIA(threshold="none", score="max").needs() == {Capability.POSTERIORS}


def test_every_attack_a_scores_only_target_accepts_runs_on_it():
    """Honesty property over the registry: a met need never fails at run time."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=60)
    ns = check_scores(p, rng.integers(0, 3, 60))
    target = scores_target(ns, np.arange(30))
    attacks = [registry.get(n)() for n in NAMES] + [ConfidenceMIA(threshold="median"),
                                                      ConfidenceMIA(threshold="none",
                                                                    score="max")]
    runnable, skipped = partition(attacks, target.capabilities(), TARGET_KIND)
    assert runnable and skipped
    for attack in runnable:  # named: any CapabilityError would be raised, not skipped
        report = audit_scores(p, ns.labels, np.arange(30), attacks=[attack], n_bootstrap=20)
        assert [a.attack for a in report.attacks] == [attack.name]


def test_trained_target_offers_everything_but_unexposed_outputs():
    assert target_capabilities(frozenset(Output)) == ALL_CAPABILITIES
    labels_only = target_capabilities(frozenset({Output.LABELS}))
    assert Capability.POSTERIORS not in labels_only and Capability.GRAPH in labels_only


def test_runner_refuses_a_named_attack_before_work_and_skips_it_by_default(
        trained_target, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("no attack may run")

    monkeypatch.setattr(ConfidenceMIA, "_score", boom)
    with pytest.raises(CapabilityError, match="POSTERIORS"):
        run_audit(trained_target, [ConfidenceMIA(threshold="none")], seed=0, n_bootstrap=20,
                  exposed=frozenset({Output.LABELS}))
    monkeypatch.undo()
    report = run_audit(trained_target, seed=0, n_bootstrap=20, suite="quick",
                       exposed=frozenset({Output.EMBEDDINGS}))
    why = report.config["skipped_attacks"]["confidence_mia"]
    assert "POSTERIORS" in why and "TRUE_LABELS" not in why


def test_derived_needs_from_threat_model_flags():
    tm = ConfidenceMIA.threat_model
    needs = derived_needs(frozenset({Output.POSTERIORS}), tm)
    assert needs == {Capability.POSTERIORS, Capability.TRUE_LABELS, Capability.FEATURES,
                     Capability.REFERENCE_MODELS, Capability.ARCHITECTURE}


def test_a_target_declaring_fewer_capabilities_gets_fewer_attacks(trained_target, monkeypatch):
    """The hook a foreign-model target uses: its own ``capabilities()`` narrows the list."""
    offered = ALL_CAPABILITIES - {Capability.ARCHITECTURE}
    monkeypatch.setattr(type(trained_target), "capabilities", lambda self: offered,
                        raising=False)
    with pytest.raises(CapabilityError, match="ARCHITECTURE"):
        run_audit(trained_target, [ConfidenceMIA()], seed=0, n_bootstrap=20)
    report = run_audit(trained_target, [ConfidenceMIA(threshold="none")], seed=0,
                       n_bootstrap=20)
    assert [a.attack for a in report.attacks] == ["confidence_mia"]
