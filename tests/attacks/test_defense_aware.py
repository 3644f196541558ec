"""Defense-aware adversaries: shadow/reference models through the target's defense (issue 15)."""

from __future__ import annotations

import math

import pytest
import torch

from graphleaks.attacks._shadow import KnownMechanism, mechanism_of, train_shadow
from graphleaks.attacks.base import TargetView
from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.link_stealing import LinkStealingAttack
from graphleaks.attacks.lira_mia import LiRAMIA
from graphleaks.attacks.shadow_mia import ShadowMIA
from graphleaks.audit.runner import run_audit, train_target
from graphleaks.data.synthetic import csbm
from graphleaks.defenses.lpgnn import LPGNNModel


@pytest.fixture(scope="module")
def graph():
    return csbm(200, seed=0)


@pytest.fixture(scope="module")
def lpgnn_target(graph):
    return train_target(graph, defense="lpgnn", seed=0,
                        defense_params={"epsilon": 1.0, "epochs": 20})


def test_population_carries_the_known_mechanism(lpgnn_target):
    aware = TargetView(lpgnn_target, ShadowMIA.threat_model)
    pop, _ = aware.population()
    mech = mechanism_of(pop)
    assert isinstance(mech, KnownMechanism) and mech.defense == "lpgnn"
    assert mech.config["epsilon"] == 1.0
    unaware_tm = type(ShadowMIA.threat_model)(**{
        **ShadowMIA.threat_model.__dict__, "defense_knowledge": False})
    pop2, _ = TargetView(lpgnn_target, unaware_tm).population()
    assert mechanism_of(pop2) is None


def test_undefended_target_has_no_mechanism(graph):
    t = train_target(graph, seed=0)
    pop, _ = TargetView(t, ShadowMIA.threat_model).population()
    assert mechanism_of(pop) is None


def test_train_shadow_goes_through_the_defense_with_independent_noise(lpgnn_target):
    pop, _ = TargetView(lpgnn_target, ShadowMIA.threat_model).population()
    shadow = train_shadow(pop, lpgnn_target.spec, lpgnn_target.num_classes, seed=1)
    assert shadow.served is not None and isinstance(shadow.model, LPGNNModel)
    assert shadow.served.ledger.epsilon == lpgnn_target.ledger.epsilon
    assert shadow.served.ledger.unit == lpgnn_target.ledger.unit
    # the shadow is queried with its own privatised features, not the clean ones
    assert not torch.equal(shadow.features, pop.x)
    other = train_shadow(pop, lpgnn_target.spec, lpgnn_target.num_classes, seed=2)
    assert not torch.equal(other.features, shadow.features)  # independent noise


@pytest.mark.parametrize("attack", [
    ShadowMIA(classifier="logreg"), ConfidenceMIA(), LiRAMIA(num_references=2, ref_epochs=5),
    LinkStealingAttack(attack=5, epochs=2)])
def test_flag_is_recorded_and_changes_the_adversary(lpgnn_target, attack):
    aware = run_attack(attack, lpgnn_target, seed=0)
    unaware = run_attack(attack, lpgnn_target, seed=0, defense_aware=False)
    assert aware.threat_model.defense_knowledge and not unaware.threat_model.defense_knowledge
    assert any("through the target's defense lpgnn" in n for n in aware.notes)
    assert any("defense-unaware" in n for n in unaware.notes)
    if isinstance(attack, ConfidenceMIA):
        assert aware.threshold != unaware.threshold  # calibrated on different shadows
    else:
        assert not (aware.scores == unaware.scores).all()


def test_report_records_the_flag(lpgnn_target):
    rep = run_audit(lpgnn_target, [ConfidenceMIA()], seed=0, n_bootstrap=5,
                    defense_aware=False)
    assert rep.attacks[0].threat_model.defense_knowledge is False
    assert "defense-unaware" in rep.to_json() or "defense_knowledge" in rep.to_json()


def test_gap_references_through_gap_keep_epsilon_and_drop_the_serving_budget(graph):
    t = train_target(graph, defense="gap_edp", seed=0, defense_params={
        "epsilon": 2.0, "encoder_epochs": 5, "epochs": 5, "query_budget": 2.0})
    mech = KnownMechanism.of(t)
    assert mech is not None and mech.config["delta"] == t.ledger.delta  # same δ, not re-derived
    pop, _ = TargetView(t, LiRAMIA.threat_model).population()
    ref = mech.fit(pop, _split(pop.num_nodes), t.spec, seed=5, max_epochs=2)
    assert math.isclose(ref.ledger.epsilon, t.ledger.epsilon, rel_tol=1e-6)
    assert ref.model.release_guard is not None and ref.model.release_guard.budget is None
    r = run_attack(LiRAMIA(num_references=2, ref_epochs=3), t, seed=0)
    assert r.scores.shape == r.labels.shape


def _split(n):  # noqa: ANN001, ANN202
    from graphleaks.data.splits import MembershipSplit

    return MembershipSplit.draw(n, seed=0)


def test_population_without_edges_is_a_one_line_error(lpgnn_target):
    from torch_geometric.data import Data

    from graphleaks.errors import DataError

    pop, _ = TargetView(lpgnn_target, ShadowMIA.threat_model).population()
    bare = Data(x=pop.x, edge_index=torch.empty(2, 0, dtype=torch.long), y=pop.y,
                num_nodes=pop.num_nodes)
    bare.mechanism = mechanism_of(pop)
    with pytest.raises(DataError, match="defense_aware=False"):
        train_shadow(bare, lpgnn_target.spec, lpgnn_target.num_classes, seed=0)


@pytest.mark.parametrize("name", ["rmia_mia", "base_mia", "gbase_mia"])
def test_reference_attacks_train_their_references_through_the_defense(lpgnn_target, name):
    from graphleaks.attacks import registry

    attack = registry.get(name)(num_references=1, ref_epochs=5)
    aware = run_attack(attack, lpgnn_target, seed=0)
    assert any("defense-aware adversary" in n for n in aware.notes)
    unaware = run_attack(attack, lpgnn_target, seed=0, defense_aware=False)
    assert any("defense-unaware" in n for n in unaware.notes)
    assert not (aware.scores == unaware.scores).all()
