"""Immutable privacy-event records: what a mechanism did, as data.

A defense does not compute its own ε. It emits event records (one Gaussian per aggregation
hop, a Poisson-subsampled Gaussian per DP-SGD step, a randomized response per label, ...),
and :mod:`graphleaks.privacy.accounting` turns the records into ε. The records mirror
dp_accounting's ``DpEvent`` algebra (``dp_accounting/dp_event.py``) and convert to it with
:meth:`PrivacyEvent.to_dp_event`; they add two pure-ε records that dp_accounting lacks a
direct event for under the add/remove-one relation (k-ary randomized response and a generic
pure ε-DP mechanism such as LPGNN's multi-bit encoder).

Every record validates its parameters on construction, is hashable, and round-trips through
JSON-safe dictionaries (:meth:`PrivacyEvent.to_dict`, :func:`event_from_dict`), which is how
a :class:`~graphleaks.privacy.ledger.PrivacyLedger` stores them.

Example:
    >>> from graphleaks.privacy.events import (
    ...     GaussianEvent, PoissonSampledEvent, SelfComposedEvent, event_from_dict)
    >>> step = PoissonSampledEvent(0.01, GaussianEvent(1.1))
    >>> training = SelfComposedEvent(step, 1000)
    >>> event_from_dict(training.to_dict()) == training
    True
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

from graphleaks.errors import InvalidConfigError

__all__ = [
    "ComposedEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "NonPrivateEvent",
    "PoissonSampledEvent",
    "PrivacyEvent",
    "PureEpsilonEvent",
    "RandomizedResponseEvent",
    "SelfComposedEvent",
    "event_from_dict",
]


# --------------------------------------------------------------------------------------------
# Validation helpers shared by the privacy modules (one message template, as in
# graphleaks._validation: "The {name} parameter of {owner} must be {expected}. Got {v} instead.")
# --------------------------------------------------------------------------------------------


def _fail(owner: str, name: str, expected: str, value: Any) -> InvalidConfigError:
    return InvalidConfigError(
        f"The {name} parameter of {owner} must be {expected}. Got {value!r} instead."
    )


def _check_real(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float | None = None,
    low_open: bool = True,
    high: float | None = None,
    high_open: bool = True,
    allow_inf: bool = False,
) -> float:
    """Validate a real number against an interval and return it as ``float``.

    Raises:
        InvalidConfigError: If ``value`` is not a real number, is NaN, is infinite while
            ``allow_inf`` is False, or lies outside the interval.
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise _fail(owner, name, "a real number", value)
    number = float(value)
    if math.isnan(number):
        raise _fail(owner, name, "a real number, not NaN", value)
    if math.isinf(number) and not allow_inf:
        raise _fail(owner, name, "finite", value)
    if low is not None and (number <= low if low_open else number < low):
        if high is None:
            raise _fail(owner, name, f"{'>' if low_open else '>='} {low:g}", value)
        raise _fail(owner, name, _interval(low, low_open, high, high_open), value)
    if high is not None and (number >= high if high_open else number > high):
        if low is None:
            raise _fail(owner, name, f"{'<' if high_open else '<='} {high:g}", value)
        raise _fail(owner, name, _interval(low, low_open, high, high_open), value)
    return number


def _interval(low: float, low_open: bool, high: float, high_open: bool) -> str:
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    return f"in {left}{low:g}, {high:g}{right}"


def _check_int(owner: str, name: str, value: Any, *, low: int) -> int:
    """Validate an integer ``>= low`` (bools rejected) and return it as ``int``.

    Raises:
        InvalidConfigError: If ``value`` is not an integer or is below ``low``.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise _fail(owner, name, f"an integer >= {low}", value)
    if int(value) < low:
        raise _fail(owner, name, f"an integer >= {low}", value)
    return int(value)


def _check_event(owner: str, name: str, value: Any) -> PrivacyEvent:
    if not isinstance(value, PrivacyEvent):
        raise _fail(owner, name, "a PrivacyEvent", value)
    return value


# --------------------------------------------------------------------------------------------
# Event records
# --------------------------------------------------------------------------------------------

_REGISTRY: dict[str, type[PrivacyEvent]] = {}


class PrivacyEvent(ABC):
    """Base class of the immutable event records.

    Subclasses are frozen dataclasses with a unique ``kind`` string, which is the ``"kind"``
    key of their dictionary form.
    """

    kind: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if isinstance(kind, str):
            _REGISTRY[kind] = cls

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dictionary with a ``"kind"`` key; inverse of :func:`event_from_dict`."""

    @abstractmethod
    def to_dp_event(self) -> Any:
        """The equivalent ``dp_accounting.DpEvent``.

        Records without a dp_accounting counterpart under the add/remove-one relation
        (:class:`PureEpsilonEvent`) map to ``dp_accounting.UnsupportedDpEvent``, which every
        dp_accounting accountant refuses; :mod:`graphleaks.privacy.accounting` handles them
        itself.
        """


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """One release of the Gaussian mechanism.

    Attributes:
        sigma: Standard deviation of the added noise (absolute, not a multiplier).
        sensitivity: L2 sensitivity Δ₂ of the released quantity.
    """

    kind: ClassVar[str] = "gaussian"
    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "sigma", _check_real(owner, "sigma", self.sigma, low=0.0))
        object.__setattr__(
            self, "sensitivity", _check_real(owner, "sensitivity", self.sensitivity, low=0.0)
        )

    @property
    def noise_multiplier(self) -> float:
        """``sigma / sensitivity``, the only quantity the guarantee depends on."""
        return self.sigma / self.sensitivity

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`PrivacyEvent.to_dict`."""
        return {"kind": self.kind, "sigma": self.sigma, "sensitivity": self.sensitivity}

    def to_dp_event(self) -> Any:
        """``GaussianDpEvent(noise_multiplier)``."""
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.noise_multiplier)


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """One release of the Laplace mechanism; pure ``sensitivity / scale``-DP.

    Attributes:
        scale: The Laplace scale b (density ∝ exp(−|x|/b)).
        sensitivity: L1 sensitivity Δ₁ of the released quantity.
    """

    kind: ClassVar[str] = "laplace"
    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "scale", _check_real(owner, "scale", self.scale, low=0.0))
        object.__setattr__(
            self, "sensitivity", _check_real(owner, "sensitivity", self.sensitivity, low=0.0)
        )

    @property
    def noise_multiplier(self) -> float:
        """``scale / sensitivity``."""
        return self.scale / self.sensitivity

    @property
    def epsilon(self) -> float:
        """The pure-DP ε of one release, ``sensitivity / scale``."""
        return self.sensitivity / self.scale

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`PrivacyEvent.to_dict`."""
        return {"kind": self.kind, "scale": self.scale, "sensitivity": self.sensitivity}

    def to_dp_event(self) -> Any:
        """``LaplaceDpEvent(noise_multiplier)``."""
        import dp_accounting

        return dp_accounting.LaplaceDpEvent(self.noise_multiplier)


@dataclass(frozen=True)
class RandomizedResponseEvent(PrivacyEvent):
    """k-ary randomized response: keep the value with probability e^ε/(e^ε+k−1).

    Pure ε-DP (ε-LDP per respondent) under the replace-one relation of local DP.

    Attributes:
        epsilon: The privacy parameter ε (> 0, finite; use :class:`NonPrivateEvent` for none).
        k: The number of categories (≥ 2).
    """

    kind: ClassVar[str] = "randomized_response"
    epsilon: float
    k: int

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "epsilon", _check_real(owner, "epsilon", self.epsilon, low=0.0))
        object.__setattr__(self, "k", _check_int(owner, "k", self.k, low=2))

    @property
    def noise_parameter(self) -> float:
        """dp_accounting's p: with probability p the output is uniform over all k values."""
        return self.k / (math.exp(self.epsilon) + self.k - 1)

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`PrivacyEvent.to_dict`."""
        return {"kind": self.kind, "epsilon": self.epsilon, "k": self.k}

    def to_dp_event(self) -> Any:
        """``RandomizedResponseDpEvent(noise_parameter, num_buckets=k)``.

        dp_accounting supports this event only under the replace-one relations; graphleaks'
        accountant therefore charges randomized response as pure ε instead.
        """
        import dp_accounting

        return dp_accounting.RandomizedResponseDpEvent(self.noise_parameter, self.k)


@dataclass(frozen=True)
class PureEpsilonEvent(PrivacyEvent):
    """Any mechanism proven pure ε-DP, e.g. LPGNN's multi-bit feature encoder.

    Attributes:
        epsilon: The pure-DP ε (≥ 0, finite).
    """

    kind: ClassVar[str] = "pure_epsilon"
    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "epsilon",
            _check_real(type(self).__name__, "epsilon", self.epsilon, low=0.0, low_open=False),
        )

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`PrivacyEvent.to_dict`."""
        return {"kind": self.kind, "epsilon": self.epsilon}

    def to_dp_event(self) -> Any:
        """``UnsupportedDpEvent()``: dp_accounting has no generic pure-ε event."""
        import dp_accounting

        return dp_accounting.UnsupportedDpEvent()


@dataclass(frozen=True)
class PoissonSampledEvent(PrivacyEvent):
    """Run ``event`` on a Poisson subsample (each record kept independently with ``rate``).

    Attributes:
        rate: The inclusion probability q in [0, 1].
        event: The mechanism applied to the subsample.
    """

    kind: ClassVar[str] = "poisson_sampled"
    rate: float
    event: PrivacyEvent

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(
            self,
            "rate",
            _check_real(
                owner, "rate", self.rate, low=0.0, low_open=False, high=1.0, high_open=False
            ),
        )
        _check_event(owner, "event", self.event)

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`PrivacyEvent.to_dict`."""
        return {"kind": self.kind, "rate": self.rate, "event": self.event.to_dict()}

    def to_dp_event(self) -> Any:
        """``PoissonSampledDpEvent(rate, event.to_dp_event())``."""
        import dp_accounting

        return dp_accounting.PoissonSampledDpEvent(self.rate, self.event.to_dp_event())


@dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """``event`` repeated ``count`` times (adaptive composition).

    Attributes:
        event: The repeated mechanism.
        count: How many times it runs (≥ 0; 0 is a no-op).
    """

    kind: ClassVar[str] = "self_composed"
    event: PrivacyEvent
    count: int

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _check_event(owner, "event", self.event)
        object.__setattr__(self, "count", _check_int(owner, "count", self.count, low=0))

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`PrivacyEvent.to_dict`."""
        return {"kind": self.kind, "event": self.event.to_dict(), "count": self.count}

    def to_dp_event(self) -> Any:
        """``SelfComposedDpEvent(event.to_dp_event(), count)``."""
        import dp_accounting

        return dp_accounting.SelfComposedDpEvent(self.event.to_dp_event(), self.count)


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """Several mechanisms run in sequence on the same data (adaptive composition).

    Attributes:
        events: The composed mechanisms (any iterable is stored as a tuple; may be empty).
    """

    kind: ClassVar[str] = "composed"
    events: tuple[PrivacyEvent, ...]

    def __post_init__(self) -> None:
        owner = type(self).__name__
        if isinstance(self.events, PrivacyEvent) or not isinstance(self.events, Iterable):
            raise _fail(owner, "events", "an iterable of PrivacyEvent", self.events)
        events = tuple(self.events)
        for event in events:
            _check_event(owner, "events", event)
        object.__setattr__(self, "events", events)

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`PrivacyEvent.to_dict`."""
        return {"kind": self.kind, "events": [e.to_dict() for e in self.events]}

    def to_dp_event(self) -> Any:
        """``ComposedDpEvent([e.to_dp_event() for e in events])``."""
        import dp_accounting

        return dp_accounting.ComposedDpEvent([e.to_dp_event() for e in self.events])


@dataclass(frozen=True)
class NonPrivateEvent(PrivacyEvent):
    """A release with no privacy guarantee (ε = ∞), e.g. exact edges used by a model."""

    kind: ClassVar[str] = "non_private"

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`PrivacyEvent.to_dict`."""
        return {"kind": self.kind}

    def to_dp_event(self) -> Any:
        """``NonPrivateDpEvent()``."""
        import dp_accounting

        return dp_accounting.NonPrivateDpEvent()


def event_from_dict(data: dict[str, Any]) -> PrivacyEvent:
    """Rebuild an event from :meth:`PrivacyEvent.to_dict` output.

    Args:
        data: A dictionary with a ``"kind"`` key and the record's fields.

    Returns:
        The event record.

    Raises:
        InvalidConfigError: If the kind is unknown or a field is missing or invalid.
    """
    if not isinstance(data, dict) or "kind" not in data:
        raise _fail("event_from_dict", "data", "a dictionary with a 'kind' key", data)
    kind = data["kind"]
    try:
        if kind == ComposedEvent.kind:
            return ComposedEvent(tuple(event_from_dict(e) for e in data["events"]))
        if kind == SelfComposedEvent.kind:
            return SelfComposedEvent(event_from_dict(data["event"]), data["count"])
        if kind == PoissonSampledEvent.kind:
            return PoissonSampledEvent(data["rate"], event_from_dict(data["event"]))
        cls = _REGISTRY.get(kind) if isinstance(kind, str) else None
        if cls is None:
            known = ", ".join(sorted(_REGISTRY))
            raise InvalidConfigError(f"Unknown privacy event kind {kind!r}; known kinds: {known}.")
        fields = {k: v for k, v in data.items() if k != "kind"}
        return cls(**fields)
    except KeyError as exc:
        raise InvalidConfigError(
            f"Privacy event of kind {kind!r} is missing the field {exc.args[0]!r}."
        ) from exc
    except TypeError as exc:
        if isinstance(exc, InvalidConfigError):
            raise
        raise InvalidConfigError(f"Malformed privacy event of kind {kind!r}: {exc}") from exc
