r"""Pure functions that turn privacy-event records into ε.

Three accountants are available:

``"rdp"``
    dp_accounting's :class:`~dp_accounting.rdp.RdpAccountant` (Rényi DP, default orders,
    improved RDP→(ε,δ) conversion of Balle et al. 2020). An upper bound; the usual choice.
``"pld"``
    dp_accounting's :class:`~dp_accounting.pld.PLDAccountant` (privacy-loss distributions,
    pessimistic discretisation 1e-4). Nearly tight, never larger than ``"rdp"`` beyond
    discretisation error, and slower (≈1 s for thousands of subsampled steps).
``"analytic"``
    The exact (ε,δ) curve of the Gaussian mechanism (Balle & Wang 2018,
    :func:`analytic_gaussian_epsilon`); only for events whose Gaussian part is not
    subsampled. This is what GAP's autodp ``ExactGaussianMechanism`` computes, so it
    reproduces the GAP-EDP σ table (``defenses.md`` §3.3).

How an event is charged (all are standard, sound composition results):

* Plain Gaussian releases compose exactly into one Gaussian with noise multiplier
  :math:`(\sum_i c_i/m_i^2)^{-1/2}` (``c_i`` repetitions of multiplier ``m_i``); the same
  collapse is used inside a Poisson subsample (one sample, several Gaussian queries).
* Pure-ε records (:class:`~graphleaks.privacy.events.LaplaceEvent`,
  :class:`~graphleaks.privacy.events.RandomizedResponseEvent`,
  :class:`~graphleaks.privacy.events.PureEpsilonEvent`) compose by basic composition: their
  ε add up. An event made only of pure-ε records is (Σε, 0)-DP and its ε does not depend on
  δ or on the accountant.
* Poisson subsampling of a pure ε-DP mechanism at rate q gives
  :math:`\log(1 + q(e^\varepsilon - 1))`-DP (amplification by subsampling, add/remove-one).
  Nested Poisson samples multiply their rates.
* Mixed events (a Gaussian part and a pure part) are (ε_pure + ε_acc(δ), δ)-DP by basic
  composition of (ε_pure, 0) with (ε_acc, δ). Laplace releases can also be handed to the
  dp_accounting accountant together with the Gaussians (it supports ``LaplaceDpEvent`` and,
  for PLD, Poisson-subsampled Laplace); both bounds hold, and :func:`epsilon` returns the
  smaller. Randomized response and :class:`~graphleaks.privacy.events.PureEpsilonEvent` are
  always added separately: dp_accounting supports randomized response only under the
  replace-one relations, not the add/remove-one relation the other records use.
* :class:`~graphleaks.privacy.events.NonPrivateEvent` anywhere (outside a rate-0 sample)
  makes ε infinite.

Unsupported structures (a Poisson subsample of a mixture of Gaussian and pure-ε records, or
of a composition that itself contains subsampling) raise
:class:`~graphleaks.errors.InvalidConfigError`.

The neighbouring relation is dp_accounting's ``ADD_OR_REMOVE_ONE`` throughout; what a
"record" is (an edge, a node, a node's label) is the ledger's
:class:`~graphleaks.privacy.ledger.PrivacyUnit`, decided by the mechanism's sensitivity.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

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
    _check_real,
    _fail,
)

__all__ = [
    "ACCOUNTANTS",
    "Accountant",
    "accountant_name",
    "api_epsilon",
    "analytic_gaussian_delta",
    "analytic_gaussian_epsilon",
    "describe_accounting",
    "epsilon",
    "is_pure",
    "pure_epsilon",
]

Accountant = Literal["rdp", "pld", "analytic"]
"""The accountant names accepted by :func:`epsilon`."""

ACCOUNTANTS: tuple[str, ...] = ("rdp", "pld", "analytic")

BASIC_COMPOSITION = "basic_composition"
"""The accountant string recorded for events made only of pure-ε records."""


# --------------------------------------------------------------------------------------------
# Exact Gaussian (Balle & Wang 2018)
# --------------------------------------------------------------------------------------------


def _log_gaussian_delta(eps: float, mult: float) -> float:
    """log δ(ε) of the Gaussian mechanism with noise multiplier ``mult`` (stable in log space)."""
    from scipy.special import log_ndtr

    a = 1.0 / (2.0 * mult) - eps * mult
    b = -1.0 / (2.0 * mult) - eps * mult
    log_a = float(log_ndtr(a))
    log_b = float(log_ndtr(b))
    ratio = eps + log_b - log_a
    if ratio >= 0.0:  # only through rounding: δ is 0 to machine precision
        return -math.inf
    return log_a + math.log1p(-math.exp(ratio))


def analytic_gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    r"""The exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    .. math::
        \delta(\varepsilon) = \Phi\!\left(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}
        {\Delta}\right) - e^{\varepsilon}\,\Phi\!\left(-\frac{\Delta}{2\sigma} -
        \frac{\varepsilon\sigma}{\Delta}\right)

    evaluated in log space (``scipy.special.log_ndtr``) so that δ down to 1e-300 is exact.

    Args:
        epsilon: ε ≥ 0.
        sigma: Noise standard deviation (> 0).
        sensitivity: L2 sensitivity Δ (> 0).

    Returns:
        The smallest δ for which the mechanism is (ε, δ)-DP.

    Raises:
        InvalidConfigError: If an argument is out of range.

    Example:
        >>> round(analytic_gaussian_delta(1.0, 1.0), 6)
        0.126937
    """
    owner = "analytic_gaussian_delta"
    eps = _check_real(owner, "epsilon", epsilon, low=0.0, low_open=False)
    sig = _check_real(owner, "sigma", sigma, low=0.0)
    sens = _check_real(owner, "sensitivity", sensitivity, low=0.0)
    return math.exp(_log_gaussian_delta(eps, sig / sens))


def _gaussian_epsilon(mult: float, delta: float) -> float:
    """Exact ε(δ) for noise multiplier ``mult``, by bisection on ε (δ(ε) is decreasing)."""
    if delta <= 0.0:
        return math.inf
    log_delta = math.log(delta)
    if _log_gaussian_delta(0.0, mult) <= log_delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while _log_gaussian_delta(hi, mult) > log_delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e12:  # δ this small is not reachable in double precision
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _log_gaussian_delta(mid, mult) > log_delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    return hi


def analytic_gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The exact ε(δ) of one Gaussian release (inverse of :func:`analytic_gaussian_delta`).

    The returned ε is the upper end of a bisection bracket, so the mechanism is
    (ε, δ)-DP at the returned value (to within 1e-13 relative).

    Args:
        sigma: Noise standard deviation (> 0).
        delta: Target δ in [0, 1); δ = 0 gives ``inf``.
        sensitivity: L2 sensitivity Δ (> 0).

    Returns:
        ε ≥ 0.

    Raises:
        InvalidConfigError: If an argument is out of range.

    Example:
        >>> round(analytic_gaussian_epsilon(4.679, 1e-7), 4)
        0.9999
    """
    owner = "analytic_gaussian_epsilon"
    sig = _check_real(owner, "sigma", sigma, low=0.0)
    dlt = _check_real(owner, "delta", delta, low=0.0, low_open=False, high=1.0)
    sens = _check_real(owner, "sensitivity", sensitivity, low=0.0)
    return _gaussian_epsilon(sig / sens, dlt)


# --------------------------------------------------------------------------------------------
# Normalising an event tree into a charge plan
# --------------------------------------------------------------------------------------------


@dataclass
class _PureAtom:
    """A pure-ε part that dp_accounting may also be able to charge (Laplace, sampled Laplace)."""

    epsilon: float
    count: int
    dp_event: tuple[Any, ...]  # ("laplace", mult) or ("sampled_laplace", mult, rate)


@dataclass
class _Plan:
    """The flattened charges of an event."""

    non_private: bool = False
    gaussian_precision: float = 0.0  # Σ count / multiplier²
    sampled_gaussians: dict[tuple[float, float], int] = field(default_factory=dict)
    laplace: list[_PureAtom] = field(default_factory=list)
    pure: float = 0.0  # RR, PureEpsilon, amplified composites: always basic composition

    def merge(self, other: _Plan) -> None:
        self.non_private = self.non_private or other.non_private
        self.gaussian_precision += other.gaussian_precision
        for key, count in other.sampled_gaussians.items():
            self.sampled_gaussians[key] = self.sampled_gaussians.get(key, 0) + count
        self.laplace.extend(other.laplace)
        self.pure += other.pure

    @property
    def has_gaussian(self) -> bool:
        return self.gaussian_precision > 0.0 or bool(self.sampled_gaussians)

    @property
    def pure_total(self) -> float:
        return self.pure + sum(a.epsilon * a.count for a in self.laplace)

    @property
    def is_empty(self) -> bool:
        return not (self.non_private or self.has_gaussian or self.laplace or self.pure > 0.0)


def _plan(event: PrivacyEvent, count: int = 1) -> _Plan:
    plan = _Plan()
    if count == 0:
        return plan
    if isinstance(event, GaussianEvent):
        plan.gaussian_precision = count / event.noise_multiplier**2
    elif isinstance(event, LaplaceEvent):
        plan.laplace.append(_PureAtom(event.epsilon, count, ("laplace", event.noise_multiplier)))
    elif isinstance(event, (RandomizedResponseEvent, PureEpsilonEvent)):
        plan.pure = count * event.epsilon
    elif isinstance(event, NonPrivateEvent):
        plan.non_private = True
    elif isinstance(event, SelfComposedEvent):
        plan = _plan(event.event, count * event.count)
    elif isinstance(event, ComposedEvent):
        for sub in event.events:
            plan.merge(_plan(sub, count))
    elif isinstance(event, PoissonSampledEvent):
        plan = _plan_sampled(event, count)
    else:  # pragma: no cover - every PrivacyEvent subclass is handled above
        raise InvalidConfigError(f"Unsupported privacy event {event!r}.")
    return plan


def _plan_sampled(event: PoissonSampledEvent, count: int) -> _Plan:
    rate = event.rate
    inner = _plan(event.event, 1)
    plan = _Plan()
    if rate == 0.0 or inner.is_empty:
        return plan
    if rate == 1.0:
        return _plan(event.event, count)
    if inner.non_private:
        plan.non_private = True
        return plan
    only_plain_gaussian = (
        inner.gaussian_precision > 0.0
        and not inner.sampled_gaussians
        and not inner.laplace
        and inner.pure == 0.0
    )
    if only_plain_gaussian:
        key = (rate, inner.gaussian_precision**-0.5)
        plan.sampled_gaussians[key] = count
        return plan
    if (
        len(inner.sampled_gaussians) == 1
        and inner.gaussian_precision == 0.0
        and not inner.laplace
        and inner.pure == 0.0
    ):
        [((inner_rate, mult), inner_count)] = list(inner.sampled_gaussians.items())
        if inner_count == 1:  # a Poisson sample of a Poisson sample is one Poisson sample
            plan.sampled_gaussians[(rate * inner_rate, mult)] = count
            return plan
    if not inner.has_gaussian:
        amplified = math.log1p(rate * math.expm1(inner.pure_total))
        single_laplace = (
            inner.pure == 0.0
            and len(inner.laplace) == 1
            and inner.laplace[0].count == 1
            and inner.laplace[0].dp_event[0] == "laplace"
        )
        if single_laplace:
            mult = inner.laplace[0].dp_event[1]
            plan.laplace.append(_PureAtom(amplified, count, ("sampled_laplace", mult, rate)))
        else:
            plan.pure = count * amplified
        return plan
    raise InvalidConfigError(
        "Unsupported privacy event: a PoissonSampledEvent must wrap only Gaussian releases "
        "(one sample, several queries), a single Poisson-sampled Gaussian, or only pure-ε "
        f"releases. Got {event.to_dict()!r}."
    )


def _dp_event_of(spec: tuple[Any, ...]) -> Any:
    import dp_accounting

    if spec[0] == "laplace":
        return dp_accounting.LaplaceDpEvent(spec[1])
    return dp_accounting.PoissonSampledDpEvent(spec[2], dp_accounting.LaplaceDpEvent(spec[1]))


def _make_accountant(accountant: str) -> Any:
    try:
        if accountant == "rdp":
            from dp_accounting.rdp import RdpAccountant

            return RdpAccountant()
        from dp_accounting.pld import PLDAccountant

        return PLDAccountant()
    except ImportError as exc:  # pragma: no cover - dp-accounting is a dependency
        raise ImportError(
            f"accountant={accountant!r} needs the dp-accounting package "
            "(pip install dp-accounting); accountant='analytic' works without it."
        ) from exc


class _DropDpAccounting(logging.Filter):
    """Drops the records dp_accounting's own modules log (by the file that logged them)."""

    def filter(self, record: logging.LogRecord) -> bool:
        path = record.pathname.replace("\\", "/")
        return "/dp_accounting/" not in path


@contextlib.contextmanager
def quiet_dp_accounting() -> Iterator[None]:
    """Silence dp_accounting's numerical warnings for one accounting call, unless verbose.

    Its RDP accountant logs, through absl, a "_compute_log_a_frac failed to converge ...
    Excluding this order" warning for every order it drops (about 400 lines per GAP-NDP
    audit); its PLD code logs on the root logger. The orders are excluded either way and the
    ε stays a valid bound, so these lines are kept only when graphleaks logs at INFO or
    below (the CLI's ``-v``). Records are filtered on the ``absl`` and root loggers for the
    duration of the call only, and only those logged from dp_accounting's files: nothing
    is configured at import and other libraries' messages pass.
    """
    if logging.getLogger("graphleaks").isEnabledFor(logging.INFO):
        yield
        return
    drop = _DropDpAccounting()
    loggers = (logging.getLogger("absl"), logging.getLogger())
    for lg in loggers:
        lg.addFilter(drop)
    try:
        yield
    finally:
        for lg in loggers:
            lg.removeFilter(drop)


def _accountant_epsilon(accountant: str, dp_events: list[Any], delta: float) -> float:
    import dp_accounting

    acct = _make_accountant(accountant)
    composed = dp_accounting.ComposedDpEvent(dp_events)
    if not acct.supports(composed):  # pragma: no cover - the plan only emits supported events
        raise InvalidConfigError(f"dp_accounting {accountant} cannot charge {composed!r}.")
    with quiet_dp_accounting():
        acct.compose(composed)
        return float(acct.get_epsilon(delta))


def _gaussian_dp_events(plan: _Plan) -> list[Any]:
    import dp_accounting

    events: list[Any] = []
    if plan.gaussian_precision > 0.0:
        events.append(dp_accounting.GaussianDpEvent(plan.gaussian_precision**-0.5))
    for (rate, mult), count in sorted(plan.sampled_gaussians.items()):
        step = dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(mult))
        events.append(dp_accounting.SelfComposedDpEvent(step, count))
    return events


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def _check_accountant(owner: str, accountant: Any) -> str:
    if accountant not in ACCOUNTANTS:
        choices = ", ".join(repr(a) for a in ACCOUNTANTS)
        raise _fail(owner, "accountant", f"one of {{{choices}}}", accountant)
    return str(accountant)


def _check_event_arg(owner: str, event: Any) -> PrivacyEvent:
    if not isinstance(event, PrivacyEvent):
        raise _fail(owner, "event", "a PrivacyEvent", event)
    return event


def is_pure(event: PrivacyEvent) -> bool:
    """True when ``event`` is (ε, 0)-DP, i.e. made only of pure-ε records (or nothing).

    Args:
        event: An event record.

    Returns:
        Whether basic composition alone charges the event.

    Raises:
        InvalidConfigError: If the event structure is unsupported.
    """
    plan = _plan(_check_event_arg("is_pure", event))
    return not plan.non_private and not plan.has_gaussian


def pure_epsilon(event: PrivacyEvent) -> float:
    """The basic-composition ε of a pure event (see :func:`is_pure`).

    Args:
        event: An event record made only of pure-ε records.

    Returns:
        The summed (and, under Poisson subsampling, amplified) ε.

    Raises:
        InvalidConfigError: If the event has a Gaussian or non-private part.

    Example:
        >>> from graphleaks.privacy.events import PureEpsilonEvent, RandomizedResponseEvent
        >>> from graphleaks.privacy.events import ComposedEvent
        >>> pure_epsilon(ComposedEvent((PureEpsilonEvent(1.0), RandomizedResponseEvent(2.0, 7))))
        3.0
    """
    plan = _plan(_check_event_arg("pure_epsilon", event))
    if plan.non_private or plan.has_gaussian:
        raise InvalidConfigError(
            "pure_epsilon needs an event made only of pure-ε records (Laplace, randomized "
            "response, PureEpsilon); this one has a Gaussian or non-private part. Use "
            "graphleaks.privacy.accounting.epsilon(event, delta) instead."
        )
    return plan.pure_total


def epsilon(event: PrivacyEvent, delta: float, *, accountant: Accountant = "rdp") -> float:
    """The ε for which ``event`` is (ε, δ)-DP.

    See the module docstring for how each record is charged.

    Args:
        event: The event record (possibly composed) to charge.
        delta: Target δ in [0, 1). A pure event ignores it; δ = 0 with a Gaussian part
            gives ``inf``.
        accountant: ``"rdp"`` (default), ``"pld"`` or ``"analytic"``.

    Returns:
        ε ≥ 0, or ``inf`` for a non-private event.

    Raises:
        InvalidConfigError: If an argument is out of range, the event structure is
            unsupported, or ``accountant="analytic"`` meets a subsampled Gaussian.

    Example:
        >>> from graphleaks.privacy.events import GaussianEvent, SelfComposedEvent
        >>> pma = SelfComposedEvent(GaussianEvent(6.617), 2)  # GAP-EDP, 2 hops
        >>> round(epsilon(pma, 1e-7, accountant="analytic"), 3)
        1.0
    """
    owner = "epsilon"
    _check_event_arg(owner, event)
    dlt = _check_real(owner, "delta", delta, low=0.0, low_open=False, high=1.0)
    acct = _check_accountant(owner, accountant)
    plan = _plan(event)
    if plan.non_private:
        return math.inf
    if not plan.has_gaussian:
        return plan.pure_total
    if dlt == 0.0:
        return math.inf
    if acct == "analytic":
        if plan.sampled_gaussians:
            raise InvalidConfigError(
                "accountant='analytic' charges only plain Gaussian releases; this event has a "
                "Poisson-subsampled Gaussian. Use accountant='rdp' or accountant='pld'."
            )
        return plan.pure_total + _gaussian_epsilon(plan.gaussian_precision**-0.5, dlt)
    gaussians = _gaussian_dp_events(plan)
    # Bound B: every pure part by basic composition.
    best = plan.pure_total + _accountant_epsilon(acct, gaussians, dlt)
    # Bound A: Laplace parts charged by the accountant where it supports them.
    if plan.laplace:
        acct_obj = _make_accountant(acct)
        extra: list[Any] = []
        pure_rest = plan.pure
        for atom in plan.laplace:
            dp_event = _dp_event_of(atom.dp_event)
            if acct_obj.supports(dp_event):
                extra.append(_self_compose(dp_event, atom.count))
            else:
                pure_rest += atom.epsilon * atom.count
        if extra:
            best = min(best, pure_rest + _accountant_epsilon(acct, gaussians + extra, dlt))
    return best


def _self_compose(dp_event: Any, count: int) -> Any:
    import dp_accounting

    return dp_event if count == 1 else dp_accounting.SelfComposedDpEvent(dp_event, count)


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def accountant_name(accountant: Accountant) -> str:
    """The accountant and its library version, as recorded in a ledger.

    Args:
        accountant: ``"rdp"``, ``"pld"`` or ``"analytic"``.

    Returns:
        E.g. ``"dp_accounting.rdp 0.6.0"``, ``"dp_accounting.pld 0.6.0"`` or
        ``"graphleaks.analytic_gaussian (scipy 1.17.1)"``.

    Raises:
        InvalidConfigError: If the accountant is unknown.
    """
    acct = _check_accountant("accountant_name", accountant)
    if acct == "analytic":
        return f"graphleaks.analytic_gaussian (scipy {_version('scipy')})"
    return f"dp_accounting.{acct} {_version('dp-accounting')}"


def describe_accounting(event: PrivacyEvent, accountant: Accountant = "rdp") -> str:
    """The accountant string for a ledger that charges ``event`` with ``accountant``.

    A pure event is charged by basic composition alone (``"basic_composition"``); a mixed
    one by the accountant plus basic composition of its pure parts.

    Args:
        event: The event record.
        accountant: The accountant passed to :func:`epsilon`.

    Returns:
        A human-readable accountant description including library versions.

    Raises:
        InvalidConfigError: If the accountant is unknown or the event unsupported.
    """
    acct = _check_accountant("describe_accounting", accountant)
    plan = _plan(_check_event_arg("describe_accounting", event))
    if plan.non_private:
        return "none (non-private event)"
    if not plan.has_gaussian:
        return BASIC_COMPOSITION
    name = accountant_name(acct)  # type: ignore[arg-type]
    if plan.laplace or plan.pure > 0.0:
        return f"{name} + {BASIC_COMPOSITION}"
    return name


def api_epsilon(
    training: PrivacyEvent, release: PrivacyEvent, releases: int, delta: float, *,
    accountant: Accountant = "rdp",
) -> float:
    """ε of a served model after ``releases`` fresh releases on top of its training release.

    A model that adds noise at inference (GAP's aggregation) answers queries on its training
    graph from the training release, for free; every query on other inputs is a new release
    of the private data. The API's guarantee is the composition of both.

    Args:
        training: The training event (the ledger's record).
        release: The event of one fresh release.
        releases: How many fresh releases were served (>= 0).
        delta: Target δ.
        accountant: As in :func:`epsilon`.

    Returns:
        ε of ``training ∘ release^releases``.

    Example:
        >>> from graphleaks.privacy.events import GaussianEvent, SelfComposedEvent
        >>> one = SelfComposedEvent(GaussianEvent(6.617), 2)
        >>> api_epsilon(one, one, 0, 1e-7, accountant="analytic") < api_epsilon(
        ...     one, one, 3, 1e-7, accountant="analytic")
        True
    """
    if releases < 0:
        raise InvalidConfigError(f"The releases parameter of api_epsilon must be >= 0. Got "
                                 f"{releases!r} instead.")
    if releases == 0:
        return epsilon(training, delta, accountant=accountant)
    from graphleaks.privacy.events import ComposedEvent, SelfComposedEvent

    return epsilon(ComposedEvent((training, SelfComposedEvent(release, releases))), delta,
                   accountant=accountant)
