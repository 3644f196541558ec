"""One-run privacy audits: ε and GDP μ lower bounds from guesses on random canaries.

Steinke, Nasr and Jagielski ("Privacy auditing with one (1) training run", NeurIPS 2023,
https://arxiv.org/abs/2305.08846): ``m`` canaries are each included independently with
probability 1/2; the auditor guesses "in" on ``k+`` of them, "out" on ``k−`` and abstains on
the rest. For an (ε, δ)-DP mechanism the number ``v`` of correct guesses among the ``r = k+ +
k−`` guesses satisfies (their Theorem 3.3 / Proposition 5.x)

``P[v ≥ t] ≤ P[Binomial(r, e^ε/(1+e^ε)) ≥ t] + 2·m·δ·α(t)``,
``α(t) = max_{1 ≤ i ≤ t} P[t > Binomial(r, q) ≥ t − i] / i``.

Inverting the test at level ``1 − confidence`` gives the largest ε that the observed ``v``
rejects: the audited ε lower bound. It holds with the stated confidence for any attack, so a
claimed ε below it means the claim (or the implementation, or the unit) is wrong.

Gaussian DP (Dong, Roth and Su 2022) is audited with the f-DP analysis of the same game by
Mahloujifar, Melis and Chaudhuri ("Auditing f-Differential Privacy in One Run", ICML 2025,
https://arxiv.org/abs/2410.22235), which uses the whole trade-off curve
``f_μ(α) = Φ(Φ⁻¹(1−α) − μ)`` instead of one (ε, δ) point. Write ``p_l = P[v = l]`` and, for
``i = 0..r``, ``R_i = Σ_{l≥i} l·p_l/m`` (the average over canaries of P[this canary is guessed
correctly and v ≥ i]) and ``H_i = Σ_{l≥i} (r−l)·p_l/m`` (the same for a wrong guess). Then
``R_i − R_{i+1} = i/(r−i)·(H_i − H_{i+1})`` and ``R_0 + H_0 = r/m``. Flipping one canary's coin
turns "this guess is right and v ≥ i+1" into "this guess is wrong and v ≥ i" for the same
output event, so f-DP with convexity of ``F(x) = f(1−x)`` (for GDP ``F(x) = Φ(Φ⁻¹(x) − μ)``)
gives ``H_i ≥ max(H_{i+1}, F(R_{i+1}))`` for ``i < r``.

The test. Suppose ``T = P[v ≥ c] ≥ τ``. Start the smallest sequence with all of τ at exactly
``c`` correct, ``r_c = τ·c/m, h_c = τ·(r−c)/m``, and go down greedily,
``h_i = max(h_{i+1}, F(r_{i+1}))``, ``r_i = r_{i+1} + κ_i·(h_i − h_{i+1})`` with
``κ_i = i/(r−i)`` (increasing in ``i``). If ``r_0 + h_0 > r/m`` the hypothesis "μ-GDP and
``P[v ≥ c] ≥ τ``" is impossible, so observing ``c`` correct guesses rejects μ-GDP at level τ.

Proof that every true sequence ends at least as high, ``R_0 + H_0 ≥ r_0 + h_0`` (this covers
both the descent and the start: no placement of the mass on ``c..r`` demands less). Write
``E_j(κ) = (R_j − r_j) − κ·(H_j − h_j)``, linear in κ. Claim: for ``j = c, …, 0``,
``E_j(κ) ≥ 0`` for every ``κ ∈ [−1, κ_{j−1}]`` (take ``κ_{−1} = 0``); by linearity it
suffices to check ``κ = −1`` (the totals: ``R_j + H_j ≥ r_j + h_j``) and ``κ = κ_{j−1}``;
``κ = 0`` (``R_j ≥ r_j``) lies in between.

* Start, ``j = c``. Let ``S = Σ_{l≥c} (l−c)·p_l/m ≥ 0``. Then ``R_c − r_c = c(T−τ)/m + S``
  and ``H_c − h_c = (r−c)(T−τ)/m − S``. At κ = −1 the sum is ``r(T−τ)/m ≥ 0``. At
  ``κ = κ_{c−1} = (c−1)/(r−c+1)``, ``κ·(r−c) ≤ c − 1 < c`` and ``−κ·S ≥ −S``, so
  ``E_c(κ) ≥ (c − κ(r−c))(T−τ)/m + (1+κ)·S ≥ 0``.
* Step ``i+1 → i`` when the greedy step is still (``h_i = h_{i+1}``, ``r_i = r_{i+1}``):
  the true sequence only grows (``R_i ≥ R_{i+1}``, ``H_i ≥ H_{i+1}``), so the totals keep
  ``E_i(−1) ≥ E_{i+1}(−1) ≥ 0``; and with ``X = H_{i+1} − h_{i+1}``,
  ``E_i(κ_{i−1}) = (R_{i+1} − r_{i+1}) − κ_{i−1}·X + (κ_i − κ_{i−1})(H_i − H_{i+1})
  ≥ max(0, κ_i·X) − κ_{i−1}·X ≥ 0``, using ``E_{i+1}(0) ≥ 0``, ``E_{i+1}(κ_i) ≥ 0`` and
  ``0 ≤ κ_{i−1} ≤ κ_i``.
* Step when the greedy step moves (``h_i = F(r_{i+1}) > h_{i+1}``): since
  ``R_{i+1} ≥ r_{i+1}`` (``E_{i+1}(0) ≥ 0``) and ``F`` is increasing,
  ``H_i ≥ F(R_{i+1}) ≥ h_i``. The recursions give
  ``E_i(κ) = E_{i+1}(κ_i) + (κ_i − κ)(H_i − h_i)``, which is ``≥ 0`` for every ``κ ≤ κ_i``,
  in particular on ``[−1, κ_{i−1}]``.

At ``j = 0``, ``E_0(−1) ≥ 0`` is the claim; with ``R_0 + H_0 = r/m`` it shows the test is
sound. The tests still check the start numerically (random placements of the mass on
``c..r``, and a no-shortcut reference).

The audited μ is the largest rejected μ at ``τ = 1 − confidence`` (rejection is monotone in μ,
so a bisection finds it); ``OneRunBound.mu_method`` names this analysis. The older, looser
route (μ-GDP ⇒ (ε, δ_μ(ε))-DP on an ε grid, Steinke et al.'s test, Bonferroni) stays as
:func:`one_run_mu_grid` for comparison only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.errors import InvalidConfigError

__all__ = [
    "OneRunBound",
    "check_canary_count",
    "epsilon_p_value",
    "fdp_rejects",
    "gdp_delta",
    "guess_count",
    "min_canaries",
    "one_run_bound",
    "one_run_epsilon",
    "one_run_mu",
    "one_run_mu_grid",
    "top_bottom_guesses",
]

EPS_GRID: tuple[float, ...] = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


def epsilon_p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """P-value of ``v`` correct guesses out of ``r`` under an (ε, δ)-DP null (Steinke et al.)."""
    # scipy is imported in the functions that compute, not at module level: the report
    # decoder imports OneRunBound, and reading a report (graphleaks check) must start fast
    from scipy.stats import binom

    q = 1.0 / (1.0 + math.exp(-epsilon))
    tail = float(binom.sf(v - 1, r, q))
    if delta <= 0.0 or v <= 0:
        return min(tail, 1.0)
    pmf = binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[Bin = v−i] for i = 1..v
    alpha = float(np.max(np.cumsum(pmf) / np.arange(1, v + 1)))
    return min(tail + 2.0 * m * delta * alpha, 1.0)


def one_run_epsilon(m: int, r: int, v: int, *, delta: float = 0.0,
                    confidence: float = 0.95) -> float:
    """Largest ε whose (ε, δ)-DP null is rejected at level ``1 − confidence`` (0 if none).

    Example:
        Five correct guesses out of five reject ε = 0 (``2^−5 < 0.05``); four cannot
        (:func:`min_canaries`):

        >>> round(one_run_epsilon(100, 5, 5), 3)
        0.198
        >>> one_run_epsilon(100, 4, 4)
        0.0
    """
    beta = 1.0 - confidence
    if epsilon_p_value(m, r, v, 0.0, delta) >= beta:
        return 0.0
    lo, hi = 0.0, 1.0
    while epsilon_p_value(m, r, v, hi, delta) < beta and hi < 100.0:
        lo, hi = hi, hi * 2.0
    for _ in range(40):
        mid = (lo + hi) / 2.0
        if epsilon_p_value(m, r, v, mid, delta) < beta:
            lo = mid
        else:
            hi = mid
    return lo


def gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-GDP (Dong, Roth, Su 2022, Corollary 2.13)."""
    from scipy.stats import norm

    if mu <= 0.0:
        return 0.0
    return float(norm.cdf(-epsilon / mu + mu / 2.0)
                 - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2.0))


MU_METHOD = "mahloujifar-fdp"
"""Name of the μ analysis reported with every bound (Mahloujifar, Melis, Chaudhuri 2025)."""


def fdp_rejects(m: int, r: int, v: int, mu: float, tau: float) -> bool:
    """Whether ``v`` correct guesses out of ``r`` (``m`` canaries) rule out "μ-GDP and
    P[≥ v correct] ≥ τ" (the one-run f-DP recursion of Mahloujifar, Melis and Chaudhuri).

    Runs the smallest feasible sequence from level ``v`` down to 0 (module docstring) and
    rejects when its total mass exceeds ``r/m``. The total only grows on the way down, and once
    a step leaves ``h`` unchanged every later step does too, so both end the loop early.
    """
    from scipy.special import ndtr, ndtri

    if v <= 0 or r <= 0 or mu <= 0.0:
        return False
    cap = r / m
    rr, hh = tau * v / m, tau * (r - v) / m
    if rr + hh > cap:
        return True
    for i in range(v - 1, -1, -1):
        lo = float(ndtr(ndtri(min(rr, 1.0)) - mu))  # F(R_{i+1}): wrong-guess mass f-DP forces
        if lo <= hh:
            return False  # stationary from here on: r_0 + h_0 = rr + hh <= cap
        rr += i / (r - i) * (lo - hh)
        hh = lo
        if rr + hh > cap:
            return True
    return rr + hh > cap


def one_run_mu(m: int, r: int, v: int, *, confidence: float = 0.95) -> float:
    """Largest μ whose μ-GDP null the one-run f-DP test rejects at ``1 − confidence``; 0 if none.

    Rejection is monotone in μ (a smaller μ has a pointwise larger ``F``, so its sequence is at
    least as large), so the rejected μ form an interval ``(0, μ*]`` found by bisection.
    """
    tau = 1.0 - confidence
    return _largest_rejected_mu(lambda mu: fdp_rejects(m, r, v, mu, tau), steps=40)


def _largest_rejected_mu(rejects: Callable[[float], bool], *, steps: int) -> float:
    """Largest μ in (0, 50] that ``rejects`` (monotone: rejected μ form an interval); 0 if none."""
    if not rejects(1e-6):
        return 0.0
    lo, hi = 1e-6, 1.0
    while rejects(hi) and hi < 50.0:
        lo, hi = hi, hi * 2.0
    for _ in range(steps):
        mid = (lo + hi) / 2.0
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _mu_rejected_grid(m: int, r: int, v: int, mu: float, beta: float) -> bool:
    level = beta / len(EPS_GRID)
    return any(epsilon_p_value(m, r, v, e, gdp_delta(mu, e)) < level for e in EPS_GRID)


def one_run_mu_grid(m: int, r: int, v: int, *, confidence: float = 0.95) -> float:
    """The older, looser μ bound: μ-GDP ⇒ (ε, δ_μ(ε))-DP, each ε of ``EPS_GRID`` tested with
    Steinke et al.'s test and a Bonferroni correction. Kept for comparison only."""
    beta = 1.0 - confidence
    return _largest_rejected_mu(lambda mu: _mu_rejected_grid(m, r, v, mu, beta), steps=30)


def min_canaries(confidence: float) -> int:
    """Fewest guesses that can reject ε = 0 at all: all correct must have ``2^−r < 1 − conf``.

    Example:
        >>> min_canaries(0.95)  # 2^-4 = 0.0625 is not below 0.05, 2^-5 = 0.03125 is
        5
    """
    return int(math.floor(math.log2(1.0 / (1.0 - confidence)))) + 1



def check_canary_count(num_canaries: int, guess_fraction: float, confidence: float, *,
                       most: int) -> None:
    """Refuse a canary count whose guesses could never reach ``confidence``.

    Raises:
        InvalidConfigError: Naming the smallest count that can, and the largest allowed.
    """
    need = min_canaries(confidence)
    lo = math.ceil(need / guess_fraction)
    if num_canaries < lo:
        raise InvalidConfigError(
            f"The num_canaries parameter must be in [{lo}, {most}] for confidence "
            f"{confidence:g} with guess_fraction {guess_fraction:g} (at least {need} "
            f"guesses). Got {num_canaries!r} instead.")


def guess_count(num_canaries: int, guess_fraction: float, confidence: float) -> int:
    """How many canaries an audit guesses on: the fraction asked for, but never fewer than
    :func:`min_canaries` (below which no guess set can reject ε = 0)."""
    return max(int(round(guess_fraction * num_canaries)), min_canaries(confidence))

def top_bottom_guesses(scores: npt.ArrayLike, k_pos: int, k_neg: int,
                       rng: np.random.Generator) -> np.ndarray:
    """Guesses +1 on the ``k_pos`` highest scores, −1 on the ``k_neg`` lowest, 0 elsewhere.

    Ties are broken by a random permutation, so equal scores carry no information.
    """
    s = np.asarray(scores, dtype=np.float64)
    perm = rng.permutation(len(s))
    order = perm[np.argsort(s[perm], kind="stable")]
    guesses = np.zeros(len(s), dtype=np.int64)
    if k_neg:
        guesses[order[:k_neg]] = -1
    if k_pos:
        guesses[order[len(s) - k_pos:]] = 1
    return guesses


@dataclass(frozen=True)
class OneRunBound:
    """An audited lower bound from one run.

    Attributes:
        num_canaries: m.
        num_guesses: r = k+ + k−.
        num_correct: v.
        epsilon_lb: Audited ε lower bound at ``confidence`` (for the given δ).
        mu_lb: Audited GDP μ lower bound at ``confidence``.
        delta: δ of the tested (ε, δ) hypotheses.
        confidence: Confidence level.
        mu_method: The analysis that produced ``mu_lb`` (``MU_METHOD``).
    """

    num_canaries: int
    num_guesses: int
    num_correct: int
    epsilon_lb: float
    mu_lb: float
    delta: float
    confidence: float
    mu_method: str = MU_METHOD

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict."""
        return asdict(self)


def one_run_bound(included: npt.ArrayLike, scores: npt.ArrayLike, *, k_pos: int, k_neg: int,
                  delta: float = 0.0, confidence: float = 0.95, seed: int) -> OneRunBound:
    """Guess on the top/bottom canaries by score and bound ε and μ from the correct guesses.

    Args:
        included: 0/1 per canary: whether it was inserted (the secret coin).
        scores: The attack's score per canary, higher = more likely inserted.
        k_pos: Number of "in" guesses (highest scores).
        k_neg: Number of "out" guesses (lowest scores).
        delta: δ of the audited guarantee.
        confidence: Confidence level in (0, 1).
        seed: Seed of the tie-breaking permutation.

    Raises:
        InvalidConfigError: On out-of-range arguments, or too few guesses for the confidence.
    """
    inc = np.asarray(included).astype(bool).reshape(-1)
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    m = len(inc)
    if not 0.0 < confidence < 1.0:
        raise InvalidConfigError(f"The confidence parameter must be in (0, 1). Got {confidence!r}"
                                 " instead.")
    if not 0.0 <= delta < 1.0:
        raise InvalidConfigError(f"The delta parameter must be in [0, 1). Got {delta!r} instead.")
    if len(s) != m or not np.all(np.isfinite(s)):
        raise InvalidConfigError("scores must be finite, one per canary")
    need = min_canaries(confidence)
    if k_pos < 0 or k_neg < 0 or k_pos + k_neg > m or k_pos + k_neg < need:
        raise InvalidConfigError(
            f"The number of guesses k_pos + k_neg must be in [{need}, {m}] (m canaries; fewer "
            f"cannot reach confidence {confidence:g}). Got {k_pos + k_neg} instead.")
    g = top_bottom_guesses(s, k_pos, k_neg, np.random.default_rng(seed))
    truth = np.where(inc, 1, -1)
    r = int(np.count_nonzero(g))
    v = int(np.sum(g == truth))
    return OneRunBound(
        num_canaries=m, num_guesses=r, num_correct=v,
        epsilon_lb=one_run_epsilon(m, r, v, delta=delta, confidence=confidence),
        mu_lb=one_run_mu(m, r, v, confidence=confidence), delta=float(delta),
        confidence=float(confidence),
    )
