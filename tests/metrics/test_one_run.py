import math

import numpy as np
import pytest
from scipy.special import ndtr, ndtri
from scipy.stats import binom

from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.one_run import (
    MU_METHOD,
    epsilon_p_value,
    fdp_rejects,
    gdp_delta,
    min_canaries,
    one_run_bound,
    one_run_epsilon,
    one_run_mu,
    one_run_mu_grid,
    top_bottom_guesses,
)


def test_pure_dp_p_value_is_binomial_tail():
    q = math.exp(1.0) / (1 + math.exp(1.0))
    assert epsilon_p_value(100, 50, 40, 1.0, 0.0) == pytest.approx(binom.sf(39, 50, q))


def test_delta_only_loosens():
    assert epsilon_p_value(1000, 500, 400, 1.0, 1e-4) > epsilon_p_value(1000, 500, 400, 1.0, 0.0)


def test_epsilon_bound_inverts_the_test():
    eps = one_run_epsilon(1000, 1000, 731, confidence=0.95)
    assert 0.7 < eps < 1.0  # randomized response at ε = 1 gives 731/1000 correct on average
    assert epsilon_p_value(1000, 1000, 731, eps - 1e-3, 0.0) < 0.05
    assert epsilon_p_value(1000, 1000, 731, eps + 1e-3, 0.0) >= 0.05


def test_chance_level_gives_zero():
    assert one_run_epsilon(1000, 1000, 500) == 0.0
    assert one_run_mu(1000, 1000, 500) == 0.0


def test_more_correct_guesses_more_epsilon_and_mu():
    assert one_run_epsilon(1000, 500, 450) > one_run_epsilon(1000, 500, 400)
    assert one_run_mu(1000, 500, 450) > one_run_mu(1000, 500, 400) > 0


def test_gdp_delta():
    # δ(0) = Φ(μ/2) − Φ(−μ/2) = 2Φ(0.5) − 1 for μ = 1 (the total variation distance)
    assert gdp_delta(1.0, 0.0) == pytest.approx(2 * 0.6914624612740131 - 1, abs=1e-9)
    assert gdp_delta(1.0, 10.0) < 1e-10


def test_min_canaries():
    assert min_canaries(0.95) == 5  # 2^-5 < 0.05 <= 2^-4
    assert one_run_epsilon(5, 5, 5) > 0 and one_run_epsilon(4, 4, 4) == 0


def test_guesses_top_and_bottom_with_random_ties():
    g = top_bottom_guesses([0.1, 0.9, 0.5, 0.7, 0.2], 2, 1, np.random.default_rng(0))
    np.testing.assert_array_equal(g, [-1, 1, 0, 1, 0])
    ties = [top_bottom_guesses(np.zeros(10), 1, 0, np.random.default_rng(s)).argmax()
            for s in range(20)]
    assert len(set(ties)) > 3


def test_bound_from_perfect_scores():
    rng = np.random.default_rng(0)
    inc = rng.random(200) < 0.5
    b = one_run_bound(inc, inc.astype(float), k_pos=50, k_neg=50, seed=0)
    assert b.num_guesses == 100 and b.num_correct == 100 and b.epsilon_lb > 2.5


def test_too_few_guesses_refused():
    with pytest.raises(InvalidConfigError, match=r"k_pos \+ k_neg must be in \[5, 10\]"):
        one_run_bound(np.ones(10), np.ones(10), k_pos=2, k_neg=2, seed=0)


# --- GDP μ: the one-run f-DP analysis (Mahloujifar, Melis, Chaudhuri 2025) -------------------


def _chain_total(r0, h0, c, r, mu):
    """The recursion written out with no shortcuts, vectorized over starting points."""
    rr, hh = np.asarray(r0, float), np.asarray(h0, float)
    for i in range(c - 1, -1, -1):
        hn = np.maximum(hh, ndtr(ndtri(np.clip(rr, 0.0, 1.0)) - mu))
        rr, hh = rr + i / (r - i) * (hn - hh), hn
    return rr + hh


def test_fdp_rejects_matches_the_plain_recursion():
    rng = np.random.default_rng(3)
    for _ in range(300):
        m = int(rng.integers(10, 300))
        r = int(rng.integers(5, m + 1))
        v = int(rng.integers(1, r + 1))
        mu, tau = float(rng.uniform(0.05, 5.0)), float(rng.choice([0.05, 0.01, 0.2]))
        total = _chain_total(tau * v / m, tau * (r - v) / m, v, r, mu)
        if abs(total - r / m) > 1e-9:
            assert fdp_rejects(m, r, v, mu, tau) == bool(total > r / m)


def test_mass_at_exactly_v_correct_is_the_least_demanding_start():
    # Any distribution of the mass τ over v..r correct guesses starts the recursion from
    # (R_v, H_v); the bound starts from all of it at v, which must give the smallest total.
    rng = np.random.default_rng(4)
    for _ in range(60):
        m = int(rng.integers(20, 300))
        r = int(rng.integers(5, m + 1))
        v = int(rng.integers(1, r + 1))
        mu, tau = float(rng.uniform(0.1, 4.0)), float(rng.uniform(0.001, 0.3))
        w = rng.dirichlet(np.full(r - v + 1, rng.uniform(0.05, 2.0)), size=100)
        lv = np.arange(v, r + 1)
        tails = _chain_total(tau * (w @ lv) / m, tau * (w @ (r - lv)) / m, v, r, mu)
        start = _chain_total(tau * v / m, tau * (r - v) / m, v, r, mu)
        assert tails.min() >= start - 1e-12


def test_mu_rejection_is_monotone_and_the_bound_inverts_it():
    mu = one_run_mu(1000, 500, 450)
    assert fdp_rejects(1000, 500, 450, mu * 0.999, 0.05)
    assert not fdp_rejects(1000, 500, 450, mu * 1.001, 0.05)
    grid = [fdp_rejects(1000, 500, 450, x, 0.05) for x in np.linspace(0.01, 3.0, 60)]
    assert grid == sorted(grid, reverse=True)  # True ... True False ... False


def _gaussian_games(mu, m, k, seeds):
    """v for top/bottom-k guesses on exact μ-GDP canaries: score = μ·coin + N(0, 1)."""
    out = []
    for s in range(seeds):
        rng = np.random.default_rng(s)
        coin = rng.random(m) < 0.5
        g = top_bottom_guesses(rng.normal(size=m) + mu * coin, k, k, rng)
        out.append(int(np.sum(g == np.where(coin, 1, -1))))
    return out


@pytest.mark.parametrize(("mu", "m", "k"), [(1.0, 1000, 50), (2.0, 300, 30)])
def test_mu_bound_sound_on_exact_gaussian_canaries(mu, m, k):
    # Each canary's coin moves only its own score by μ: the game is exactly μ-GDP per canary,
    # so the 95 % bound may exceed μ in at most ~5 % of games (binomial slack: ≤ 10 of 200).
    lbs = np.array([one_run_mu(m, 2 * k, v) for v in _gaussian_games(mu, m, k, 200)])
    assert np.sum(lbs > mu) <= 10
    assert np.median(lbs) > 0.4 * mu  # and it is not vacuous


@pytest.mark.parametrize(("m", "r", "v"), [(1000, 500, 450), (1000, 100, 90), (200, 100, 100),
                                           (1000, 1000, 731)])
def test_mu_bound_at_least_as_tight_as_the_eps_grid(m, r, v):
    new, old = one_run_mu(m, r, v), one_run_mu_grid(m, r, v)
    assert old > 0 and new >= old


def test_broken_mechanism_caught():
    # Claimed μ = 0.5 but the noise was divided by 10 (true μ = 5): caught in every game.
    claimed = 0.5
    lbs = [one_run_mu(1000, 200, v) for v in _gaussian_games(10 * claimed, 1000, 100, 20)]
    assert min(lbs) > claimed


def test_bound_reports_its_mu_method():
    rng = np.random.default_rng(0)
    inc = rng.random(200) < 0.5
    d = one_run_bound(inc, inc.astype(float), k_pos=50, k_neg=50, seed=0).to_dict()
    assert d["mu_method"] == MU_METHOD == "mahloujifar-fdp"
    assert d["mu_lb"] == pytest.approx(one_run_mu(200, 100, 100))
