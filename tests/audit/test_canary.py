"""Soundness and power of the one-run canary audit (issue 13, deliverables 5 and 6)."""

import dataclasses
import math

import pytest

from graphleaks.audit.canary import CanaryConfig, canary_audit
from graphleaks.data.splits import SplitConfig
from graphleaks.defenses.edgerand import EdgeRand, edgerand_replace_probability
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec

SPEC = ArchitectureSpec(hidden=(16,), epochs=15, patience=0)
SPLIT = SplitConfig(train_frac=0.5, val_frac=0.1, test_frac=0.2)


class _TenthNoiseEdgeRand(EdgeRand):
    """Test fixture, never shipped: EdgeRand whose randomisation is divided by 10.

    Its replace probability is s/10 while the ledger still claims the configured ε, the kind
    of implementation bug the audit must catch. No ``name``: it stays out of the registry.
    """

    def _fit(self, graph, split, spec, seed):
        s = edgerand_replace_probability(self.config.epsilon) / 10.0
        weak = dataclasses.replace(self.config, epsilon=math.log(2.0 / s - 1.0))
        target = EdgeRand(weak)._fit(graph, split, spec, seed)
        return dataclasses.replace(
            target, ledger=dataclasses.replace(target.ledger, epsilon=self.config.epsilon))


def _audit(graph, defense, seed, **kw):
    return canary_audit(graph, defense=defense, spec=SPEC, split=SPLIT, num_canaries=600,
                        seed=seed, **kw)


@pytest.mark.parametrize("name", ["edgerand", "lapgraph", "eclipse_strict"])
@pytest.mark.parametrize("epsilon", [1.0])
def test_verified_mechanism_never_flagged(small_graph, name, epsilon):
    for seed in range(5):
        a = _audit(small_graph, name, seed, defense_params={"epsilon": epsilon})
        assert a.claimed_epsilon == pytest.approx(epsilon)
        assert not a.violation, (name, epsilon, seed, a.audited_epsilon)


def test_edgerand_audit_is_tight_enough_to_mean_something(small_graph):
    a = _audit(small_graph, "edgerand", 0, defense_params={"epsilon": 4.0})
    assert a.attack == "released" and a.audited_epsilon > 1.5


def test_broken_fixture_caught_at_epsilon_one(small_graph):
    a = _audit(small_graph, _TenthNoiseEdgeRand(epsilon=1.0), 0)
    assert a.claimed_epsilon == 1.0 and a.violation and a.audited_epsilon > 1.5


def test_eclipse_paper_mode_contradicts_its_claim(small_graph):
    # Its singular vectors are not privatized (defenses.md, flaw #7): the audit finds it.
    a = _audit(small_graph, "eclipse", 0, defense_params={"epsilon": 1.0})
    assert a.claimed_epsilon == 1.0 and a.violation


def test_non_private_target_leaks_its_canary_edges(small_graph):
    a = _audit(small_graph, "none", 0)
    assert a.attack == "influence" and a.audited_epsilon > 1.0 and not a.violation
    assert a.to_dict()["claimed_epsilon"] == "inf"


def test_node_unit_runs_against_non_private_target(small_graph):
    a = _audit(small_graph, "none", 0, unit="node")
    assert a.unit == "node" and a.attack == "loss" and a.bound.num_guesses == 300
    assert a.num_inserted + 0 > 250


def test_same_seed_same_audit(small_graph):
    a = _audit(small_graph, "edgerand", 3, defense_params={"epsilon": 2.0})
    b = _audit(small_graph, "edgerand", 3, defense_params={"epsilon": 2.0})
    assert a == b


def test_unit_the_defense_does_not_protect(small_graph):
    with pytest.raises(InvalidConfigError, match=r"unit parameter.*protects unit edge; valid: "
                                                 r"edge\. Got 'node'"):
        _audit(small_graph, "edgerand", 0, unit="node")


def test_too_few_canaries_for_the_confidence(small_graph):
    with pytest.raises(InvalidConfigError, match=r"num_canaries parameter must be in \[10, "):
        canary_audit(small_graph, defense="edgerand", num_canaries=8, seed=0)
    with pytest.raises(InvalidConfigError, match=r"num_canaries.*\[175, "):
        CanaryConfig(num_canaries=100, confidence=0.99, guess_fraction=0.04).check()


def test_attack_must_fit_unit():
    with pytest.raises(InvalidConfigError, match="attack parameter"):
        CanaryConfig(unit="node", attack="released").check()


def test_report_shows_claimed_beside_audited_and_flags_violation(small_graph):
    from graphleaks.report.markdown import _canary_lines

    ok = _audit(small_graph, "edgerand", 0, defense_params={"epsilon": 1.0})
    bad = _audit(small_graph, _TenthNoiseEdgeRand(epsilon=1.0), 0)
    text = "\n".join(_canary_lines([ok, bad]))
    assert "| edge | 600 (" in text and "| released |" in text
    assert text.count("VIOLATION") == 1 and "consistent" in text


def test_an_audit_trains_the_target_once(small_graph, monkeypatch):
    calls = []
    fit = EdgeRand.fit

    def counting_fit(self, *args, **kwargs):
        calls.append(1)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(EdgeRand, "fit", counting_fit)
    _audit(small_graph, "edgerand", 0, defense_params={"epsilon": 1.0})
    assert len(calls) == 1
