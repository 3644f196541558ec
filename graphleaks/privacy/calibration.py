"""Noise calibration: pure functions from a privacy budget (ε, δ, Δ, …) to a noise scale.

* :func:`calibrate_noise_multiplier` inverts any accountant on any event family that is
  monotone in one noise multiplier (e.g. GAP-NDP's shared σ over encoder DP-SGD, aggregation
  and classifier DP-SGD), by bracketed bisection on log σ.
* :func:`calibrate_gaussian_sigma` is the common case: ``compositions`` Gaussian releases of
  sensitivity Δ.
* :func:`analytic_gaussian_sigma` is the exact single-release Gaussian calibration of Balle &
  Wang (2018); :func:`classic_gaussian_sigma` the textbook formula, kept for reproducing
  papers that use it (valid only for ε < 1); :func:`laplace_scale` the Laplace scale.

Every calibrated σ is *conservative*: the returned value satisfies ε(σ) ≤ target for the
chosen accountant (bisection returns the upper end of its bracket), and ε(σ) is within
``rtol`` (1e-6 by default) relative of the target unless ε(σ) is flat or stepped there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from graphleaks.errors import InvalidConfigError
from graphleaks.privacy import accounting
from graphleaks.privacy.accounting import Accountant, _check_accountant
from graphleaks.privacy.events import (
    GaussianEvent,
    PrivacyEvent,
    SelfComposedEvent,
    _check_int,
    _check_real,
)

__all__ = [
    "MAX_NOISE_MULTIPLIER",
    "analytic_gaussian_sigma",
    "calibrate_gaussian_sigma",
    "calibrate_noise_multiplier",
    "classic_gaussian_sigma",
    "laplace_scale",
]

MAX_NOISE_MULTIPLIER = 1e6
"""Calibration gives up (budget too small) when σ would exceed this multiple of Δ."""

_MIN_NOISE_MULTIPLIER = 1e-9
_RTOL_EPSILON = 1e-6  # stop when ε(σ) is within this relative distance below the target
_RTOL_SIGMA = 1e-12  # ... or when the bracket is this narrow (flat or stepped ε(σ))
_MAX_ITER = 400
_DOUBLING = math.log(2.0)  # first bracket step in log σ for a rough initial guess
_SMALL_STEP = 1e-3  # first bracket step in log σ for a near-exact initial guess


def _check_budget(owner: str, epsilon: float, delta: float) -> tuple[float, float]:
    eps = _check_real(owner, "epsilon", epsilon, low=0.0)
    dlt = _check_real(owner, "delta", delta, low=0.0, high=1.0)
    return eps, dlt


class _Unreachable(Exception):
    """The target is not met even at the largest allowed noise multiplier."""

    def __init__(self, value_at_cap: float) -> None:
        super().__init__(value_at_cap)
        self.value_at_cap = value_at_cap


def _too_small(
    owner: str, epsilon: float, delta: float, detail: str, accountant: str = "analytic"
) -> InvalidConfigError:
    hint = ""
    if accountant == "rdp":
        # dp_accounting's default RDP orders stop at α = 1024, which floors the certified ε.
        floor = math.log1p(-1.0 / 1024.0) - (math.log(delta) + math.log(1024.0)) / 1023.0
        hint = (
            f" With accountant='rdp' (orders up to 1024) no noise certifies epsilon below "
            f"about {floor:.3g} at this delta; try accountant='pld' for very small budgets."
        )
    return InvalidConfigError(
        f"The epsilon parameter of {owner} is too small to calibrate: {detail} "
        f"(epsilon={epsilon!r}, delta={delta!r}). Raise epsilon or delta.{hint}"
    )


def _bisect_log(
    fn: Callable[[float], float],
    target: float,
    *,
    initial: float,
    max_multiplier: float,
    first_step: float = _DOUBLING,
    rtol: float = _RTOL_EPSILON,
) -> float:
    """Smallest x (to tolerance) with fn(x) ≤ target, for fn non-increasing in x > 0.

    The bracket is grown from ``initial`` in log steps that start at ``first_step`` and
    double (a small first step makes a good initial guess cheap), then bisected in log space
    until ``target − fn(hi) ≤ rtol·target`` or the bracket is 1e-12 relative wide. Returns
    the upper end of the final bracket, so ``fn(result) <= target`` holds.

    Raises:
        _Unreachable: If ``fn(max_multiplier) > target``.
    """
    x = min(max(initial, _MIN_NOISE_MULTIPLIER), max_multiplier)
    value = fn(x)
    step = first_step
    if value <= target:
        lo = hi = x
        f_hi = value
        while True:
            lo = hi * math.exp(-step)
            if lo < _MIN_NOISE_MULTIPLIER:
                return hi  # the budget is met by (almost) no noise at all
            f_lo = fn(lo)
            if f_lo > target:
                break
            hi, f_hi = lo, f_lo
            step *= 2.0
    else:
        lo = hi = x
        f_hi = value
        while True:
            if hi >= max_multiplier:
                raise _Unreachable(f_hi)
            lo = hi
            hi = min(hi * math.exp(step), max_multiplier)
            f_hi = fn(hi)
            if f_hi <= target:
                break
            step *= 2.0
    for _ in range(_MAX_ITER):
        if target - f_hi <= rtol * target or hi / lo - 1.0 <= _RTOL_SIGMA:
            break
        mid = math.sqrt(lo * hi)
        f_mid = fn(mid)
        if f_mid <= target:
            hi, f_hi = mid, f_mid
        else:
            lo = mid
    return hi


def calibrate_noise_multiplier(
    build_event: Callable[[float], PrivacyEvent],
    epsilon: float,
    delta: float,
    *,
    accountant: Accountant = "rdp",
    initial: float = 1.0,
    max_multiplier: float = MAX_NOISE_MULTIPLIER,
    rtol: float = _RTOL_EPSILON,
) -> float:
    """The smallest noise multiplier m with ``ε(build_event(m), δ) ≤ epsilon``.

    The bracket [lo, hi] with ε(lo) > target ≥ ε(hi) is found by doubling/halving from
    ``initial``, then bisected on log m until ε(hi) is within ``rtol`` relative of the
    target (or the bracket is 1e-12 relative wide). ``build_event`` must give an ε that is
    non-increasing in m, which holds for any event whose noise scales with m.

    Args:
        build_event: Maps a noise multiplier to the event it produces.
        epsilon: Target ε (> 0, finite).
        delta: Target δ in (0, 1).
        accountant: ``"rdp"``, ``"pld"`` or ``"analytic"`` (see :mod:`.accounting`).
        initial: Starting guess for m (a good one saves accountant calls).
        max_multiplier: Give up above this m.
        rtol: Stop once ``epsilon − ε(m) ≤ rtol·epsilon`` (ε(m) never exceeds the target).

    Returns:
        The calibrated multiplier (conservative: its ε does not exceed the target).

    Raises:
        InvalidConfigError: If an argument is out of range, or the target is not reachable
            with m ≤ ``max_multiplier`` (the message names ``epsilon``).
    """
    owner = "calibrate_noise_multiplier"
    eps, dlt = _check_budget(owner, epsilon, delta)
    acct = _check_accountant(owner, accountant)
    start = _check_real(owner, "initial", initial, low=0.0)
    cap = _check_real(owner, "max_multiplier", max_multiplier, low=0.0)
    tol = _check_real(owner, "rtol", rtol, low=0.0, high=1.0)

    def fn(mult: float) -> float:
        return accounting.epsilon(build_event(mult), dlt, accountant=acct)  # type: ignore[arg-type]

    try:
        return _bisect_log(fn, eps, initial=start, max_multiplier=cap, rtol=tol)
    except _Unreachable as exc:
        raise _too_small(
            owner,
            eps,
            dlt,
            f"a noise multiplier of {cap:g} still gives epsilon={exc.value_at_cap:.6g}",
            acct,
        ) from exc


def calibrate_gaussian_sigma(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    compositions: int = 1,
    accountant: Accountant = "rdp",
) -> float:
    """The Gaussian noise std σ making ``compositions`` releases (ε, δ)-DP together.

    Each release adds N(0, σ²) to a quantity of L2 sensitivity Δ; the event charged is
    ``SelfComposedEvent(GaussianEvent(σ, Δ), compositions)``. With ``accountant="analytic"``
    (or ``"pld"``) this reproduces GAP-EDP's per-hop σ (``defenses.md`` §3.3: ε=1, δ=1e-7,
    K=2 → 6.617); ``"rdp"`` gives a somewhat larger, still valid σ.

    Args:
        epsilon: Target ε (> 0, finite).
        delta: Target δ in (0, 1).
        sensitivity: L2 sensitivity Δ of one release (> 0).
        compositions: Number of releases K (≥ 1), e.g. GAP's hops.
        accountant: ``"rdp"``, ``"pld"`` or ``"analytic"``.

    Returns:
        σ (absolute std, i.e. noise multiplier × Δ), with ε(σ) ≤ ``epsilon``.

    Raises:
        InvalidConfigError: If an argument is out of range, or the budget needs
            σ > 1e6·Δ (the message names ``epsilon``).

    Example:
        >>> round(calibrate_gaussian_sigma(1.0, 1e-7, compositions=2, accountant="analytic"), 3)
        6.617
    """
    owner = "calibrate_gaussian_sigma"
    eps, dlt = _check_budget(owner, epsilon, delta)
    sens = _check_real(owner, "sensitivity", sensitivity, low=0.0)
    count = _check_int(owner, "compositions", compositions, low=1)
    acct = _check_accountant(owner, accountant)
    # K Gaussian releases are exactly one Gaussian with multiplier m/√K: the analytic value
    # is the exact answer for "analytic", ≈ exact for "pld" and a lower bound for "rdp".
    guess = _analytic_multiplier(eps, dlt, owner) * math.sqrt(count)

    def fn(mult: float) -> float:
        event = SelfComposedEvent(GaussianEvent(mult), count)
        return accounting.epsilon(event, dlt, accountant=acct)  # type: ignore[arg-type]

    try:
        mult = _bisect_log(
            fn, eps, initial=guess, max_multiplier=MAX_NOISE_MULTIPLIER, first_step=_SMALL_STEP
        )
    except _Unreachable as exc:
        raise _too_small(
            owner,
            eps,
            dlt,
            f"sigma={MAX_NOISE_MULTIPLIER:g}*sensitivity still gives epsilon="
            f"{exc.value_at_cap:.6g}",
            acct,
        ) from exc
    return mult * sens


def _analytic_multiplier(eps: float, dlt: float, owner: str) -> float:
    """Exact Gaussian multiplier for one release, by bisection on log σ of log δ(ε, σ)."""
    log_target = math.log(dlt)

    def fn(mult: float) -> float:
        # δ(ε, σ) is decreasing in σ; compare in log space (δ as small as 1e-300 is fine).
        return accounting._log_gaussian_delta(eps, mult) - log_target

    try:
        return _bisect_log(fn, 0.0, initial=1.0, max_multiplier=MAX_NOISE_MULTIPLIER)
    except _Unreachable as exc:
        raise _too_small(
            owner,
            eps,
            dlt,
            f"it needs a noise multiplier above {MAX_NOISE_MULTIPLIER:g}",
        ) from exc


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The exact Gaussian σ for one (ε, δ)-DP release (Balle & Wang 2018).

    Bisection on log σ of δ(ε, σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)
    (:func:`~graphleaks.privacy.accounting.analytic_gaussian_delta`, via
    ``scipy.special.log_ndtr``), valid for every ε > 0, unlike :func:`classic_gaussian_sigma`.
    LPGNN's ``AnalyticGaussian`` uses this calibration (with δ = 1e-10).

    Args:
        epsilon: ε (> 0, finite).
        delta: δ in (0, 1).
        sensitivity: L2 sensitivity Δ (> 0).

    Returns:
        The smallest σ (to 1e-12 relative) with δ(ε, σ) ≤ δ.

    Raises:
        InvalidConfigError: If an argument is out of range or σ would exceed 1e6·Δ.

    Example:
        >>> round(analytic_gaussian_sigma(1.0, 1e-7), 3)  # GAP σ_eff at ε = 1
        4.679
    """
    owner = "analytic_gaussian_sigma"
    eps, dlt = _check_budget(owner, epsilon, delta)
    sens = _check_real(owner, "sensitivity", sensitivity, low=0.0)
    return _analytic_multiplier(eps, dlt, owner) * sens


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The textbook Gaussian σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Theorem A.1).

    **Valid only for ε < 1.** The theorem's proof needs ε < 1; above it the formula can
    under-noise. It is provided, without a range check, to reproduce papers that use it
    outside its range (Eclipse, ``defenses.md`` §4.2 and flaw #8); prefer
    :func:`analytic_gaussian_sigma`, which is valid everywhere and never larger for ε < 1.

    Args:
        epsilon: ε (> 0, finite).
        delta: δ in (0, 1).
        sensitivity: L2 sensitivity Δ (> 0).

    Returns:
        σ.

    Raises:
        InvalidConfigError: If an argument is out of range.

    Example:
        >>> round(classic_gaussian_sigma(0.99, 1e-6, math.sqrt(2)), 2)  # Eclipse, ε = 1
        7.57
    """
    owner = "classic_gaussian_sigma"
    eps, dlt = _check_budget(owner, epsilon, delta)
    sens = _check_real(owner, "sensitivity", sensitivity, low=0.0)
    return sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """The Laplace scale b = Δ₁/ε giving pure ε-DP.

    Args:
        epsilon: ε (> 0, finite).
        sensitivity: L1 sensitivity Δ₁ (> 0).

    Returns:
        b.

    Raises:
        InvalidConfigError: If an argument is out of range.

    Example:
        >>> laplace_scale(0.5, 2.0)
        4.0
    """
    owner = "laplace_scale"
    eps = _check_real(owner, "epsilon", epsilon, low=0.0)
    sens = _check_real(owner, "sensitivity", sensitivity, low=0.0)
    return sens / eps
