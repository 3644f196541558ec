import math

import numpy as np
import pytest
from scipy.stats import binom

from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.one_run import (
    epsilon_p_value,
    gdp_delta,
    min_canaries,
    one_run_bound,
    one_run_epsilon,
    one_run_mu,
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
