"""Every registered defense honours the Defense contract (design.md §2.3)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.data.synthetic import csbm
from graphleaks.defenses import registry
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.privacy.ledger import PrivacyLedger

NAMES = registry.names()
#: Settings that skip a defense's own long default schedule (LPGNN: 500 epochs after a
#: validation search over its steps, lr and dropout on an untuned graph); the contract is the
#: same, and tests/defenses/test_lpgnn.py runs the search itself.
CHEAP = {"lpgnn": {"epochs": 5, "x_steps": 2, "y_steps": 0, "lr": 0.01, "weight_decay": 0.0,
                   "dropout": 0.0}}
TESTS = Path(__file__).resolve().parents[1] / "defenses"


@pytest.fixture(scope="module")
def graph():  # noqa: ANN201
    return csbm(80, num_classes=2, num_features=6, avg_degree=6, seed=0)


@pytest.mark.parametrize("name", NAMES)
def test_construction_round_trip_and_repr(name):
    cls = registry.get(name)
    d = cls()
    assert cls(**dataclasses.asdict(d.config)).config == d.config
    assert type(d).__name__ in repr(d)


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter_rejected(name):
    with pytest.raises(InvalidConfigError):
        registry.get(name)(definitely_not_a_parameter=1)


@pytest.mark.parametrize("name", NAMES)
def test_nonpositive_epsilon_rejected(name, graph):
    cls = registry.get(name)
    if "epsilon" not in {f.name for f in dataclasses.fields(cls.Config)}:
        pytest.skip("no epsilon")
    split = MembershipSplit.draw(graph.num_nodes, seed=0)
    with pytest.raises(InvalidConfigError, match="epsilon"):
        cls(epsilon=0.0).fit(graph, split, model=ArchitectureSpec(epochs=2), seed=0)


@pytest.mark.parametrize("name", NAMES)
def test_fit_gives_target_with_consistent_ledger(name, graph):
    cls = registry.get(name)
    split = MembershipSplit.draw(graph.num_nodes, SplitConfig(kind="transductive"), seed=0)
    target = cls(**CHEAP.get(name, {})).fit(graph, split,
                                            model=ArchitectureSpec(epochs=5, hidden=(8,)),
                                            seed=0)
    ledger = target.ledger
    assert PrivacyLedger.from_dict(ledger.to_dict()) == ledger
    assert target.defense == name
    assert math.isinf(ledger.epsilon) == (name == "none")
    assert target.posteriors().shape == (graph.num_nodes, 2)


@pytest.mark.parametrize("name", NAMES)
def test_every_defense_has_its_test_module(name):
    module = registry.get(name).__module__.rsplit(".", 1)[-1]
    assert (TESTS / f"test_{module}.py").exists()
