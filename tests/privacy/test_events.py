"""Tests for graphleaks.privacy.events: validation, immutability, dict and DpEvent forms."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import dp_accounting
import pytest

from graphleaks.errors import InvalidConfigError
from graphleaks.privacy.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureEpsilonEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
    event_from_dict,
)

ALL_EVENTS: list[PrivacyEvent] = [
    GaussianEvent(2.0, 0.5),
    LaplaceEvent(3.0, 1.5),
    RandomizedResponseEvent(1.0, 7),
    PureEpsilonEvent(0.25),
    NonPrivateEvent(),
    PoissonSampledEvent(0.01, GaussianEvent(1.1)),
    SelfComposedEvent(GaussianEvent(4.0), 3),
    ComposedEvent(
        (
            SelfComposedEvent(PoissonSampledEvent(0.02, GaussianEvent(1.0)), 50),
            SelfComposedEvent(GaussianEvent(2.0, math.sqrt(2.0)), 2),
            RandomizedResponseEvent(2.0, 3),
            PureEpsilonEvent(1.0),
            LaplaceEvent(10.0),
        )
    ),
    ComposedEvent(()),
]


@pytest.mark.parametrize("event", ALL_EVENTS, ids=lambda e: type(e).__name__)
def test_dict_round_trip_through_json(event: PrivacyEvent) -> None:
    data = json.loads(json.dumps(event.to_dict()))
    assert data["kind"] == event.kind
    rebuilt = event_from_dict(data)
    assert rebuilt == event
    assert hash(rebuilt) == hash(event)


@pytest.mark.parametrize("event", ALL_EVENTS, ids=lambda e: type(e).__name__)
def test_events_are_frozen(event: PrivacyEvent) -> None:
    fields = dataclasses.fields(event)  # type: ignore[arg-type]
    name = fields[0].name if fields else "anything"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(event, name, 1.0)


def test_composed_event_stores_a_tuple() -> None:
    event = ComposedEvent([GaussianEvent(1.0), PureEpsilonEvent(1.0)])  # type: ignore[arg-type]
    assert isinstance(event.events, tuple)
    assert event == ComposedEvent((GaussianEvent(1.0), PureEpsilonEvent(1.0)))


def test_equality_depends_on_type_and_fields() -> None:
    assert GaussianEvent(1.0) == GaussianEvent(1, 1)
    assert GaussianEvent(1.0) != GaussianEvent(1.0, 2.0)
    assert PureEpsilonEvent(1.0) != RandomizedResponseEvent(1.0, 2)


def test_derived_quantities() -> None:
    assert GaussianEvent(3.0, 2.0).noise_multiplier == 1.5
    assert LaplaceEvent(4.0, 2.0).epsilon == 0.5
    rr = RandomizedResponseEvent(1.0, 4)
    # dp_accounting's RR keeps the input w.p. 1 - p + p/k: must equal e^ε/(e^ε + k - 1).
    keep = 1 - rr.noise_parameter + rr.noise_parameter / rr.k
    assert keep == pytest.approx(math.e / (math.e + 3), rel=1e-14)


@pytest.mark.parametrize(
    ("factory", "name"),
    [
        (lambda: GaussianEvent(0.0), "sigma"),
        (lambda: GaussianEvent(-1.0), "sigma"),
        (lambda: GaussianEvent(math.nan), "sigma"),
        (lambda: GaussianEvent(math.inf), "sigma"),
        (lambda: GaussianEvent(True), "sigma"),  # type: ignore[arg-type]
        (lambda: GaussianEvent("1.0"), "sigma"),  # type: ignore[arg-type]
        (lambda: GaussianEvent(1.0, 0.0), "sensitivity"),
        (lambda: LaplaceEvent(0.0), "scale"),
        (lambda: LaplaceEvent(1.0, -2.0), "sensitivity"),
        (lambda: RandomizedResponseEvent(0.0, 2), "epsilon"),
        (lambda: RandomizedResponseEvent(math.inf, 2), "epsilon"),
        (lambda: RandomizedResponseEvent(1.0, 1), "k"),
        (lambda: RandomizedResponseEvent(1.0, 2.0), "k"),  # type: ignore[arg-type]
        (lambda: PureEpsilonEvent(-0.1), "epsilon"),
        (lambda: PoissonSampledEvent(1.5, GaussianEvent(1.0)), "rate"),
        (lambda: PoissonSampledEvent(-0.1, GaussianEvent(1.0)), "rate"),
        (lambda: PoissonSampledEvent(0.1, 1.0), "event"),  # type: ignore[arg-type]
        (lambda: SelfComposedEvent(GaussianEvent(1.0), -1), "count"),
        (lambda: SelfComposedEvent(GaussianEvent(1.0), 2.5), "count"),  # type: ignore[arg-type]
        (lambda: SelfComposedEvent("x", 2), "event"),  # type: ignore[arg-type]
        (lambda: ComposedEvent((GaussianEvent(1.0), "x")), "events"),  # type: ignore[arg-type]
        (lambda: ComposedEvent(GaussianEvent(1.0)), "events"),  # type: ignore[arg-type]
    ],
)
def test_invalid_parameters_name_the_parameter(factory: Any, name: str) -> None:
    with pytest.raises(InvalidConfigError, match=rf"The {name} parameter of \w+Event must be"):
        factory()


def test_invalid_parameter_message_template() -> None:
    with pytest.raises(InvalidConfigError) as info:
        GaussianEvent(-1)
    assert str(info.value) == "The sigma parameter of GaussianEvent must be > 0. Got -1 instead."
    assert isinstance(info.value, ValueError)


def test_zero_count_and_zero_rate_are_allowed() -> None:
    assert SelfComposedEvent(GaussianEvent(1.0), 0).count == 0
    assert PoissonSampledEvent(0.0, GaussianEvent(1.0)).rate == 0.0
    assert PureEpsilonEvent(0.0).epsilon == 0.0


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"kind": "gaussianx", "sigma": 1.0}, "Unknown privacy event kind"),
        ({"sigma": 1.0}, "'kind' key"),
        ({"kind": "gaussian"}, "missing|sigma"),
        ({"kind": "self_composed", "event": {"kind": "gaussian", "sigma": 1.0}}, "count"),
        ({"kind": "gaussian", "sigma": 1.0, "bogus": 2}, "Malformed"),
        ({"kind": "gaussian", "sigma": -1.0}, "sigma parameter"),
        ({"kind": "composed", "events": [{"kind": "nope"}]}, "Unknown"),
    ],
)
def test_event_from_dict_rejects_malformed_input(data: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidConfigError, match=match):
        event_from_dict(data)


def test_to_dp_event_mirrors_dp_accounting_algebra() -> None:
    rr = RandomizedResponseEvent(math.log(3.0), 2)
    assert rr.noise_parameter == pytest.approx(0.5, rel=1e-14)  # 2 / (e^ε + 1)
    event = ComposedEvent(
        (
            SelfComposedEvent(PoissonSampledEvent(0.1, GaussianEvent(3.0, 2.0)), 5),
            LaplaceEvent(2.0, 0.5),
            rr,
            PureEpsilonEvent(1.0),
            NonPrivateEvent(),
        )
    )
    expected = dp_accounting.ComposedDpEvent(
        [
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(1.5)), 5
            ),
            dp_accounting.LaplaceDpEvent(4.0),
            dp_accounting.RandomizedResponseDpEvent(rr.noise_parameter, 2),
            dp_accounting.UnsupportedDpEvent(),
            dp_accounting.NonPrivateDpEvent(),
        ]
    )
    assert event.to_dp_event() == expected


def test_dp_accounting_accepts_converted_gaussian_events() -> None:
    from dp_accounting.rdp import RdpAccountant

    event = SelfComposedEvent(PoissonSampledEvent(0.04, GaussianEvent(1.5)), 10)
    accountant = RdpAccountant()
    assert accountant.supports(event.to_dp_event())
    assert not accountant.supports(PureEpsilonEvent(1.0).to_dp_event())
