"""Every registered attack honours the Attack contract (design.md §2.3)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from graphleaks.attacks import Output, registry
from graphleaks.attacks.harness import run_attack
from graphleaks.errors import CapabilityError, InvalidConfigError

NAMES = registry.names()
TESTS = Path(__file__).resolve().parents[1] / "attacks"


@pytest.mark.parametrize("name", NAMES)
def test_default_construction_config_round_trip_and_repr(name):
    cls = registry.get(name)
    attack = cls()
    assert cls(**dataclasses.asdict(attack.config)).config == attack.config
    assert type(attack).__name__ in repr(attack)
    assert attack.name == name


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter_rejected(name):
    with pytest.raises(InvalidConfigError):
        registry.get(name)(definitely_not_a_parameter=1)


@pytest.mark.parametrize("name", NAMES)
def test_invalid_config_values_rejected(name, trained_target):
    cls = registry.get(name)
    for f in dataclasses.fields(cls.Config):
        bad = None
        if "choices" in f.metadata:
            bad = "__invalid__"
        elif "range" in f.metadata:
            lo, hi = f.metadata["range"]
            bad = (lo - 1) if lo is not None else (hi + 1)
        if bad is None:
            continue
        with pytest.raises(InvalidConfigError, match=f.name):
            run_attack(cls(**{f.name: bad}), trained_target, seed=0)


@pytest.mark.parametrize("name", NAMES)
def test_capability_error_when_outputs_missing(name, trained_target):
    cls = registry.get(name)
    if not cls.requires:
        pytest.skip("needs no output")
    with pytest.raises(CapabilityError, match="requires"):
        run_attack(cls(), trained_target, seed=0, exposed=frozenset({Output.LABELS}) - cls.requires)


@pytest.mark.parametrize("name", NAMES)
def test_scores_shape_finite_and_deterministic(name, trained_target):
    cls = registry.get(name)
    a = run_attack(cls(), trained_target, seed=3)
    b = run_attack(cls(), trained_target, seed=3)
    assert a.scores.shape == a.labels.shape and a.scores.ndim == 1
    assert np.all(np.isfinite(a.scores))
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.attack == name


@pytest.mark.parametrize("name", NAMES)
def test_every_attack_has_its_test_module(name):
    module = registry.get(name).__module__.rsplit(".", 1)[-1]
    assert (TESTS / f"test_{module}.py").exists()
